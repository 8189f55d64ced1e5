"""Real GGUF files no one here wrote: llama.cpp's vocabulary-only test files (a SentencePiece
and a BPE tokenizer, real headers from llama.cpp's converter, zero tensors). They end a few
bytes before the next alignment boundary, which llama.cpp accepts: never "truncated"."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.core.model.gguf_facts import facts_from_gguf
from advisor.core.model.gguf_file import InvalidModelError, read_gguf_header
from tests.conftest import _in_process

VOCAB = Path(__file__).resolve().parents[1] / "fixtures" / "vocab"
FILES = ["ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"]


@pytest.mark.parametrize("name", FILES)
def test_the_header_reads_with_its_tokenizer_and_no_tensors(name):
    header = read_gguf_header(VOCAB / name)
    assert header.tensors == () and header.version == 3
    tokens = header.get("tokenizer.ggml.tokens")
    assert (
        len(tokens) == {"ggml-vocab-llama-spm.gguf": 32_000, "ggml-vocab-gpt-2.gguf": 50_257}[name]
    )
    assert header.get("tokenizer.ggml.model") == ("llama" if "spm" in name else "gpt2")


@pytest.mark.parametrize("name", FILES)
def test_a_vocabulary_is_one_sentence_never_truncated(name, tmp_path):
    with pytest.raises(InvalidModelError) as err:
        facts_from_gguf(VOCAB / name)
    message = str(err.value)
    assert "holds a vocabulary" in message and "truncated" not in message
    done = _in_process(["inspect", str(VOCAB / name)], tmp_path)
    assert done.returncode == 2
    assert "holds a vocabulary" in done.stderr and "truncated" not in done.stderr

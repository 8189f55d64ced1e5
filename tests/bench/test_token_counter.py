"""Token counts from the model's own tokenizer (llama.cpp, vocabulary only, in a child process)
against llama.cpp's own reference tokenisations of real vocabularies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.core.traffic import TrafficImportError
from tests.conftest import advisor_cli

pytestmark = pytest.mark.llama
VOCAB = Path(__file__).resolve().parents[1] / "fixtures" / "vocab"
SEP = "\n__ggml_vocab_test__\n"


def _cases(name: str) -> list[tuple[str, int]]:
    """(text, number of tokens) as llama.cpp's test-tokenizer-0 reads them."""
    raw = (VOCAB / f"{name}.inp").read_bytes().decode("utf-8")
    texts = raw.split(SEP)
    outs = (VOCAB / f"{name}.out").read_text(encoding="utf-8").split("\n")
    outs = outs[: len(texts)]
    assert len(texts) == len(outs) > 10
    return [(t, len(o.split())) for t, o in zip(texts, outs, strict=True)]


@pytest.mark.parametrize("name", ["ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"])
def test_counts_match_llama_cpp_reference_tokenisations(name):
    from advisor.bench.token_counter import ModelTokenCounter

    cases = _cases(name)
    with ModelTokenCounter(VOCAB / name) as counter:
        assert counter.exact and name in counter.name
        counts = counter.count([t for t, _ in cases])
    wrong = [(t[:30], c, n) for (t, n), c in zip(cases, counts, strict=True) if c != n]
    assert not wrong, wrong


def test_a_file_that_is_not_a_model_is_one_sentence(tmp_path):
    from advisor.bench.token_counter import ModelTokenCounter

    bad = tmp_path / "notes.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(TrafficImportError) as err, ModelTokenCounter(bad) as counter:
        counter.count(["hello"])
    message = str(err.value)
    assert "notes.gguf" in message and "estimate" in message and "\n" not in message


def test_import_with_a_model_counts_exactly_and_says_so(tmp_path):
    log = tmp_path / "chat.jsonl"
    rows = [
        {"request": {"messages": [{"role": "user", "content": text}]},
         "response": {"choices": [{"index": 0, "message": {"role": "assistant",
                                                            "content": "Fine."}}]},
         "start_time": 1_717_236_000 + 60 * i, "end_time": 1_717_236_010 + 60 * i}
        for i, text in enumerate(["Hello world", "What is the capital of France?"])
    ]  # fmt: skip
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    model = VOCAB / "ggml-vocab-llama-spm.gguf"
    out = advisor_cli("workload", "import", str(log), "--model", str(model), "--name", "c",
                      "--json", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)["stats"]
    assert stats["tokens"] == "exact" and "own tokenizer" in stats["counter"]
    from advisor.bench.token_counter import ModelTokenCounter

    with ModelTokenCounter(model) as counter:
        prompts = counter.count(["Hello world", "What is the capital of France?"])
    assert stats["prompt_tokens_median"] == pytest.approx(sum(prompts) / 2)

"""Token counting with the model's own tokenizer, in the benchmark's child process.

`python -m advisor.bench tokenize MODEL.gguf` (the frozen app: `--bench-child tokenize
MODEL.gguf`) loads only the vocabulary of the model (llama.cpp's `vocab_only`: no weights are
read, a few MB for any model size), then answers batches: the parent writes one JSON array of
strings per line on stdin, the child writes one JSON array of token counts per line on
stdout. The first line it writes is `{"ready": true, "name": ...}` or `{"error": ...}`.
Counts are of the text alone (no BOS or other special tokens added, special-token text not
parsed), the figure a chat template's per-message overhead is then added to by the caller.
Only the child process imports this (it loads llama.cpp).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def tokenize_main(model_path: str) -> int:
    """Serve token counts for `model_path` until stdin closes."""
    from advisor.bench.child import _die_with_parent, _event_stream

    _die_with_parent()
    out = _event_stream()

    def say(obj: object) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        from llama_cpp import llama_cpp as C

        from advisor.bench import llama_lib

        llama_lib.init_backend()
        params = C.llama_model_default_params()
        params.vocab_only = True
        params.n_gpu_layers = 0
        model = C.llama_model_load_from_file(str(model_path).encode("utf-8"), params)
    except Exception as exc:  # llama.cpp missing or broken: one sentence to the parent
        say({"error": f"llama.cpp could not start ({exc.__class__.__name__}: {exc})."})
        return 1
    if not model:
        say(
            {
                "error": "llama.cpp could not read the vocabulary of "
                f"{Path(model_path).name}; the file may be damaged or not a GGUF model.",
                "details": llama_lib.recent_log(),
            }
        )
        return 1
    vocab = C.llama_model_get_vocab(model)
    say({"ready": True, "name": Path(model_path).name})
    for line in sys.stdin:
        try:
            texts = json.loads(line)
            counts = [_count(C, vocab, t) for t in texts]
        except (ValueError, TypeError) as exc:
            say({"error": f"malformed request ({exc})"})
            continue
        say(counts)
    C.llama_model_free(model)
    return 0


def _count(C, vocab, text: str) -> int:
    data = text.encode("utf-8", "surrogatepass")
    if not data:
        return 0
    # asked for 0 tokens, llama_tokenize returns minus the count it needs: no buffer at all
    n = C.llama_tokenize(vocab, data, len(data), None, 0, False, False)
    if n == -(2**31):  # the count overflows int32: more than 2 billion tokens in one text
        raise ValueError("text too long to tokenize")
    return abs(int(n))

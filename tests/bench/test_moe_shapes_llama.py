"""The bundled llama.cpp on the new mixture-of-experts shapes: it names each full-size layout as
the real model and counts its parameters as the facts do, and a cut-down file of each loads,
decodes, and gets the KV cache the facts predict.

llama.cpp runs in a child process (it can crash); the child reads llama.cpp's own log."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from advisor.bench.synth import write_synthetic_gguf
from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape

pytestmark = [pytest.mark.llama, pytest.mark.slow]

# what llama.cpp calls each full-size layout (llama_model_type_name): it picks the type from
# the layer count, width and experts, so a wrong layout is an unknown type ("?B")
MODEL_TYPES = {
    "glm-4.5-air": "106B.A12B",
    "glm-4.5": "355B.A32B",
    "qwen3-235b-a22b": "235B.A22B",
    "llama-4-scout-17b-16e": "17Bx16E (Scout)",
    "deepseek-v3-671b": "671B",
    "ernie-4.5-21b-a3b": "21B.A3B",
    "mixtral-8x22b": "8x22B",
}

# the cut-down files: (blocks, weights) with real random weights up to about 5 GB; past that a
# sparse file (zeros: the same tensors, loaded and run the same way) keeps the disk free.
# Scout needs 4 blocks for one that attends to all tokens; GLM 3 for dense, experts and MTP.
SMALL = {
    "glm-4.5-air": (3, "random"),
    "glm-4.5": (3, "sparse"),
    "qwen3-235b-a22b": (2, "random"),
    "llama-4-scout-17b-16e": (4, "sparse"),
    "deepseek-v3-671b": (2, "sparse"),
    "ernie-4.5-21b-a3b": (3, "random"),
    "mixtral-8x22b": (2, "random"),
}

# loads the model with the app's CPU settings (no AMX repacking). "report": llama.cpp logs to
# stderr as it loads (the parent stops it once the report is out); "decode": keeps the log, makes
# a 256-token context, decodes a few tokens and prints what it saw as JSON
CHILD = r"""
import json, math, sys
from llama_cpp import llama_cpp as C
from advisor.bench import llama_lib
path, mode = sys.argv[1], sys.argv[2]
if mode == "report":
    C.llama_backend_init()
else:
    llama_lib.init_backend(keep_log_lines=100_000)
p = C.llama_model_default_params()
p.use_extra_bufts = False
if mode == "report":
    p.use_mmap = False
    p.no_alloc = True
model = C.llama_model_load_from_file(path.encode(), p)
out = {"log": "".join(llama_lib._LOG_LINES)}
if mode == "decode" and model:
    out["n_params"] = C.llama_model_n_params(model)
    out["size"] = C.llama_model_size(model)
    cp = C.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch = 256, 32, 32
    cp.n_threads = cp.n_threads_batch = 2
    cp.swa_full = False
    ctx = C.llama_init_from_model(model, cp)
    n_vocab = C.llama_vocab_n_tokens(C.llama_model_get_vocab(model))
    tokens = [1] + [300 + i for i in range(7)]
    decoded, finite = [], True
    for step in range(4):
        arr = (C.llama_token * len(tokens))(*tokens)
        assert C.llama_decode(ctx, C.llama_batch_get_one(arr, len(tokens))) == 0
        logits = C.llama_get_logits_ith(ctx, -1)
        row = [logits[i] for i in range(n_vocab)]
        finite = finite and all(math.isfinite(v) for v in row)
        tokens = [max(range(n_vocab), key=row.__getitem__)]
        decoded.append(tokens[0])
    out.update(decoded=decoded, finite=finite, log="".join(llama_lib._LOG_LINES))
print(json.dumps(out))
"""


def _decode(path) -> dict:
    """What the child saw: llama.cpp's log, its parameter count and size, the tokens decoded."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), "decode"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("{")), None)
    if line is None:
        return {"log": f"exit status {done.returncode}\n{done.stderr}"}
    return json.loads(line)


def _info(log: str, key: str) -> str:
    m = re.search(rf"print_info: {re.escape(key)}\s*=\s*(.+)", log)
    assert m, f"llama.cpp printed no {key}:\n{log[-3000:]}"
    return m.group(1).strip()


def _report(path) -> str:
    """llama.cpp's log of a file up to its report (print_info), which comes before any weight
    is read: the loader is stopped there."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "report"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "model params" in line:
                break
    finally:
        proc.kill()
        proc.wait()
    return "".join(lines)


@pytest.mark.parametrize("shape_id", sorted(MODEL_TYPES))
def test_llama_cpp_names_the_full_size_model_and_counts_its_parameters(tmp_path, shape_id):
    path = tmp_path / f"{shape_id}.gguf"
    write_synthetic_gguf(path, shape_id, "q4_k_m", sparse=True)  # no disk used
    try:
        log = _report(path)
    finally:
        path.unlink()
    facts = facts_from_shape(get_shape(shape_id), "q4_k_m")
    assert _info(log, "model type") == MODEL_TYPES[shape_id]
    # "671.03 B": two decimals of billions
    assert float(_info(log, "model params").split()[0]) == pytest.approx(
        facts.n_params / 1e9, abs=0.006
    )
    shape = get_shape(shape_id)
    assert int(_info(log, "n_layer")) == shape.n_main_layers
    assert int(_info(log, "n_head_kv")) == facts.n_kv_heads
    assert int(_info(log, "n_embd_k_gqa")) == facts.n_kv_heads * facts.head_dim


@pytest.mark.parametrize("shape_id", sorted(SMALL))
def test_cut_down_model_loads_decodes_and_caches_what_the_facts_say(tmp_path, shape_id):
    layers, weights = SMALL[shape_id]
    path = tmp_path / f"{shape_id}-L{layers}.gguf"
    result = write_synthetic_gguf(
        path, shape_id, "q4_k_m", n_layers=layers, sparse=weights == "sparse"
    )
    try:
        out = _decode(path)
    finally:
        path.unlink()
    log = out["log"]
    assert "decoded" in out, log[-3000:]
    facts = facts_from_shape(get_shape(shape_id).with_layers(layers), "q4_k_m")
    assert out["n_params"] == facts.n_params
    assert out["size"] == facts.weights_bytes
    assert result.file_bytes > facts.weights_bytes
    assert len(out["decoded"]) == 4 and out["finite"]
    # llama.cpp's KV cache, every cache of the context summed (Scout has a second one for its
    # chunked layers): 256 cells, each what the facts say a token costs
    caches = re.findall(r"llama_kv_cache: size = +([\d.]+) MiB \( *(\d+) cells, +(\d+) layers", log)
    assert caches, log[-3000:]
    kv_mib = sum(float(size) for size, _, _ in caches)
    assert all(int(cells) == 256 for _, cells, _ in caches)
    assert kv_mib == pytest.approx(256 * facts.kv_bytes_per_token("f16") / 2**20, abs=0.006)
    if not facts.kv_stores_values:  # MLA: the cache holds K only
        assert re.search(r"V \(f16\): +0\.00 MiB", log)

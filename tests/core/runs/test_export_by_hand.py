"""Exports written out by hand: the exact llama-bench and llama-batched-bench command lines for
non-default settings (flags as llama-bench's --help spells them), a Markdown row, CSV cells and
the file kinds. A shared result has to reproduce, so every character counts."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from advisor.core.model.facts import facts_from_shape
from advisor.core.model.shapes import get_shape
from advisor.core.predict.advising.explain import finish_run
from advisor.core.runs.config import BenchConfig, TestSpec
from advisor.core.runs.export import (
    batched_bench_command,
    export_runs,
    llama_bench_command,
    to_csv_text,
    to_json_text,
    to_markdown,
)
from advisor.core.runs.results import LlamaInfo, RunHardware
from advisor.core.runs.stats import summarise_samples


def _run(config: BenchConfig, **kw):
    facts = facts_from_shape(get_shape("llama-2-7b"), "q4_0")
    tests = [
        summarise_samples(TestSpec("prefill", 512, 0, 0, 1), [0.5, 0.5], 0.02),  # 1024 t/s
        summarise_samples(TestSpec("decode", 0, 128, 0, 1), [4.0, 4.0], 0.02),  # 32 t/s
    ]
    llama = LlamaInfo(backends=("CUDA",), threads=8, gpu_layers=99, llama_cpp_commit="abc1234",
                      llama_cpp_python_version="0.3.36")  # fmt: skip
    hardware = RunHardware(device_name="RTX 4090")
    return finish_run("run-1", config, facts, tests, hardware=hardware, llama=llama,
                      app_version="2.0.0", catalogue_date="2026-11-01", **kw)  # fmt: skip


def test_default_settings_add_no_flags():
    run = _run(BenchConfig(model_path="/m/llama 2.gguf", reps=5))
    assert llama_bench_command(run) == "llama-bench -m '/m/llama 2.gguf' -p 512 -n 128 -r 5"


def test_every_non_default_setting_is_spelled_as_llama_bench_spells_it():
    c = BenchConfig(model_path="/m/a.gguf", n_prompt=(512, 0), n_gen=(0, 64), depths=(0, 4096),
                    reps=3, threads=6, gpu_layers=0, n_batch=1024, n_ubatch=256, flash_attn="on",
                    cache_type_k="q8_0", cache_type_v="q4_0", use_mmap=False)  # fmt: skip
    assert llama_bench_command(_run(c)) == (
        "llama-bench -m /m/a.gguf -p 512 -n 64 -d 0,4096 -r 3 -t 6 -ngl 0 -b 1024 -ub 256 "
        "-ctk q8_0 -ctv q4_0 -fa 1 -mmp 0"
    )
    off = replace(c, flash_attn="off", use_mmap=True, n_prompt=(0,), n_gen=(0,), depths=(0,))
    assert llama_bench_command(_run(off)) == (
        "llama-bench -m /m/a.gguf -p 0 -n 0 -r 3 -t 6 -ngl 0 -b 1024 -ub 256 -ctk q8_0 "
        "-ctv q4_0 -fa 0"
    )


def test_batched_decode_gets_its_own_command():
    c = BenchConfig(model_path="/m/a.gguf", n_gen=(0, 64, 128), batches=(1, 4, 8), threads=4,
                    flash_attn="off")  # fmt: skip
    # the largest batch x (1 prompt token + 64 generated) must fit the context
    assert batched_bench_command(c) == (
        "llama-batched-bench -m /m/a.gguf -c 520 -npp 1 -ntg 64 -npl 4,8 -t 4 -fa off"
    )
    assert llama_bench_command(_run(c)).endswith(
        "\n# batched decode (tgNxB): " + batched_bench_command(c)
    )
    assert batched_bench_command(replace(c, batches=(1,))) is None
    assert "-npl 2 " in batched_bench_command(replace(c, batches=(1, 2)))
    assert batched_bench_command(replace(c, n_gen=(0,))) is None
    on = batched_bench_command(replace(c, flash_attn="on", model_path=None, threads=None))
    assert on == "llama-batched-bench -m MODEL.gguf -c 520 -npp 1 -ntg 64 -npl 4,8 -fa on"


def test_markdown_row_and_provenance_by_hand():
    run = _run(BenchConfig(model_path="/m/a.gguf", reps=2, bandwidth_spec_bytes_per_s=1008e9))
    text = to_markdown(run)
    m = run.model
    size = f"{m.weights_bytes / 2**30:.2f} GiB"
    params = f"{m.n_params / 1e9:.2f} B"
    decode = run.tests[1]
    ceiling = 1008e9 / decode.bytes_per_token
    gbs = 32 * decode.bytes_per_token / 1e9
    row = (f"| llama Q4_0 | {size} | {params} | CUDA | tg128 | 32.00 ± 0.00 | {ceiling:.1f} "
           f"| {32 / ceiling:.0%} | {gbs:.1f} |")  # fmt: skip
    assert row in text.splitlines()
    assert f"| llama Q4_0 | {size} | {params} | CUDA | pp512 | 1024.00 ± 0.00 | n/a | n/a |  |" in (
        text.splitlines()
    )
    assert text.startswith("# Llama 2 7B (Q4_0) on RTX 4090\n")
    assert "llama-cpp-python 0.3.36, backend CUDA, 8 threads, 2 repetitions." in text
    assert ("Made with LLM Hardware Advisor 2.0.0; llama.cpp abc1234; llama-cpp-python 0.3.36; "
            "catalogue of 2026-11-01.") in text  # fmt: skip
    assert "```\nllama-bench -m /m/a.gguf -p 512 -n 128 -r 2\n```" in text
    # with a compute figure the prefill row shows its ceiling
    peak = _run(BenchConfig(model_path="/m/a.gguf", reps=2, peak_flops_per_s=100e12))
    pp = peak.tests[0]
    assert f"| pp512 | 1024.00 ± 0.00 | {pp.prefill_ceiling_tps:.0f} | " in to_markdown(peak)
    busy = replace(run, notes=("Other programs used 50% of the CPU.",))
    assert "\n> Other programs used 50% of the CPU.\n" in to_markdown(busy)
    old = replace(run, app_version="", catalogue_date="", llama=LlamaInfo())
    assert "Made with LLM Hardware Advisor not recorded; llama.cpp not recorded;" in to_markdown(
        old
    )


def test_csv_cells_by_hand():
    run = _run(BenchConfig(model_path="/m/a.gguf", bandwidth_spec_bytes_per_s=1008e9))
    rows = list(csv.DictReader(io.StringIO(to_csv_text([run, run]))))
    assert len(rows) == 4
    pp, tg = rows[0], rows[1]
    got = (pp["test"], pp["kind"], pp["n_prompt"], pp["tokens_per_s"])
    assert got == ("pp512", "prefill", "512", "1024")
    assert (tg["test"], tg["tokens_per_s"], tg["stddev"], tg["per_stream_tps"]) == (
        "tg128",
        "32",
        "0",
        "32",
    )
    assert tg["decode_ceiling_tps"] == f"{run.tests[1].decode_ceiling_tps:.6g}"
    assert pp["decode_ceiling_tps"] == "" and pp["per_stream_tps"] == ""
    assert (tg["device"], tg["backend"], tg["threads"], tg["gpu_layers"]) == ("RTX 4090", "CUDA",
                                                                            "8", "99")  # fmt: skip
    assert (tg["busy"], tg["noisy"], tg["other_cpu_load"]) == ("False", "False", "0.02")
    assert (tg["app_version"], tg["llama_cpp_commit"], tg["catalogue_date"]) == (
        "2.0.0",
        "abc1234",
        "2026-11-01",
    )


def test_json_is_one_object_for_one_run_and_a_list_for_more():
    run = _run(BenchConfig())
    one = json.loads(to_json_text([run]))
    assert isinstance(one, dict) and one["id"] == "run-1"
    assert isinstance(json.loads(to_json_text([run, run])), list)


def test_the_file_name_chooses_the_format(tmp_path):
    run = _run(BenchConfig(model_path="/m/a.gguf"))
    assert export_runs([run], tmp_path / "r.CSV").read_text().startswith("run_id,created_at,")
    assert json.loads(export_runs([run], tmp_path / "r.json").read_text())["id"] == "run-1"
    assert export_runs([run], tmp_path / "r.markdown").read_text().startswith("# Llama 2 7B")
    two = export_runs([run, run], tmp_path / "two.md").read_text()
    assert two.count("# Llama 2 7B") == 2 and "\n\n\n# Llama 2 7B" in two
    with pytest.raises(ValueError, match=r"Cannot export to '\.txt'; use \.csv, \.json or \.md\."):
        export_runs([run], tmp_path / "r.txt")
    assert not (tmp_path / "r.txt").exists()


def test_a_run_without_repacked_weights_says_so_beside_the_command():
    plain = BenchConfig(model_path="/m/a.gguf", reps=5, repack=False)
    command = llama_bench_command(_run(plain))
    first, note = command.split("\n")
    assert first == "llama-bench -m /m/a.gguf -p 512 -n 128 -r 5"
    assert note.startswith("# ") and "-ot '.*=CPU'" in note

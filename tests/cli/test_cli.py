"""The command-line contract of DESIGN.md: --json with stable keys in SI units, one-line errors
with exit status 2, tables otherwise."""

from __future__ import annotations

import json

import pytest

from advisor.entry import main
from tests.conftest import advisor_cli

run = advisor_cli


def test_inspect_json_keys(tiny_model, tmp_path):
    out = run("inspect", str(tiny_model), "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    for key in (
        "architecture",
        "n_params",
        "weights_bytes",
        "active_weights_bytes",
        "n_layers",
        "n_heads",
        "n_kv_heads",
        "head_dim",
        "context_length",
        "kv_bytes_per_token",
    ):
        assert key in d, key
    assert d["architecture"] == "qwen2" and d["n_layers"] == 2
    assert d["kv_bytes_per_token"] == 2 * 2 * 2 * 64 * 2  # layers x kv heads x (k+v) x dim x f16


def test_inspect_table_is_readable(tiny_model, capsys):
    assert main(["inspect", str(tiny_model)]) == 0
    text = capsys.readouterr().out
    assert "architecture" in text and "qwen2" in text and "KV cache per token" in text


def test_shapes_json_has_sizes_per_quant(tmp_path):
    out = run("shapes", "--json", home=tmp_path)
    shapes = {s["id"]: s for s in json.loads(out.stdout)}
    nemo = shapes["mistral-nemo-12b"]
    assert nemo["weights_bytes"]["q4_k_m"] == pytest.approx(7.47e9, rel=0.03)
    assert nemo["kv_bytes_per_token"] == 163_840
    assert shapes["qwen3-30b-a3b"]["active_params"] < shapes["qwen3-30b-a3b"]["n_params"] / 5


def test_devices_search_lists_the_resolved_device_first(tmp_path):
    for name, expected in (
        ("RTX 4090", "GeForce RTX 4090"),
        ("M3 Max 30-core GPU", "Apple M3 Max (30-core GPU)"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM5"),
    ):
        out = run("devices", "--search", name, "--json", home=tmp_path)
        assert out.returncode == 0, out.stderr
        found = json.loads(out.stdout)
        assert found[0]["name"] == expected
        assert found[0]["memory_bandwidth_bytes_per_s"] == found[0]["memory_bandwidth_gbs"] * 1e9
    out = run("devices", "--json", home=tmp_path)
    assert len(json.loads(out.stdout)) >= 150


@pytest.mark.llama
def test_detect_json_on_this_machine(tmp_path):
    out = run("detect", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    import psutil

    assert d["ram"]["total_bytes"] == psutil.virtual_memory().total
    assert d["cpu"]["logical_cores"] == psutil.cpu_count()
    assert d["measured_bandwidth_bytes_per_s"] > 1e9
    assert 0 < d["measured_bandwidth_probe_s"] < 3
    assert "CPU" in d["backend"]["backends"]
    no_probe = json.loads(run("detect", "--json", "--no-probe", home=tmp_path).stdout)
    assert no_probe["measured_bandwidth_bytes_per_s"] is None


def test_project_json_contract(tmp_path):
    out = run(
        "project",
        "--shape",
        "mistral-nemo-12b",
        "--quant",
        "q4_k_m",
        "--from-device",
        "Apple M4 Pro 20-core GPU",
        "--from-tg",
        "29.2",
        "--from-pp",
        "284",
        "--to",
        "RTX 4070",
        "--to",
        "RTX 4090",
        "--json",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    targets = d["targets"]
    assert [t["device"] for t in targets] == ["GeForce RTX 4070", "GeForce RTX 4090"]
    for t in targets:
        for key in (
            "device",
            "backend",
            "fits",
            "decode_tps",
            "decode_tps_low",
            "decode_tps_high",
            "prefill_tps",
            "decode_ceiling_tps",
            "prefill_ceiling_tps",
            "ttft_s",
            "request_s",
            "basis",
        ):
            assert key in t, key
        assert t["fits"] == "yes" and t["basis"] in ("published", "modelled")
    r4070, r4090 = targets
    assert 1.7 < r4090["decode_tps"] / r4070["decode_tps"] < 2.05
    assert r4090["prefill_tps"] / r4070["prefill_tps"] > 2
    assert "RTX 4090" in d["verdicts"][-1]["sentence"]


def test_project_from_a_saved_run(tiny_run, tmp_path):
    """A run measured on a CPU the catalogue does not know still calibrates projections."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(tiny_run.to_json()))
    out = run(
        "project",
        "--shape",
        "qwen2.5-0.5b",
        "--quant",
        "q4_0",
        "--result",
        str(path),
        "--to",
        "RTX 4090",
        "--json",
        home=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["reference"]["device"] == tiny_run.hardware.device_name
    assert d["reference"]["tg_tps"] == pytest.approx(tiny_run.test("tg32").tokens_per_s)
    assert d["targets"][0]["basis"] == "published"  # the 4090 has published results


def test_errors_are_one_line_exit_2(tmp_path):
    out = run("inspect", str(tmp_path / "none.gguf"), home=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "Traceback" not in out.stderr
    out = run("bench", home=tmp_path)
    assert out.returncode == 2 and "model file or --synthetic" in out.stderr


def test_a_name_that_fits_several_variants_is_listed_or_asked(tmp_path):
    out = run("devices", "--search", "M4 Max", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    names = [d["name"] for d in json.loads(out.stdout)]
    assert names[:2] == ["Apple M4 Max (32-core GPU)", "Apple M4 Max (40-core GPU)"]
    out = run("project", "--shape", "llama-3-8b", "--to", "M4 Max", home=tmp_path)
    assert out.returncode == 2
    line = out.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "32-core GPU), 410 GB/s" in line and "40-core GPU), 546 GB/s" in line
    out = run("project", "--shape", "llama-3-8b", "--to", "M4 Max 32-core GPU", "--json",
              home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["targets"][0]["device_id"] == "apple-m4-max-32c"


def test_many_users_show_each_users_speed_and_all_users_together(tmp_path):
    args = ("project", "--shape", "llama-3.1-8b", "--to", "RTX 4090", "--workload", "many-users",
            "--concurrency", "16")  # fmt: skip
    d = json.loads(run(*args, "--json", home=tmp_path).stdout)["targets"][0]
    out = run(*args, home=tmp_path)
    assert out.returncode == 0, out.stderr
    header, _, row = out.stdout.splitlines()[1:4]
    assert "each of 16" in header and "all users" in header
    cells = row.split()
    assert f"{d['per_user_tps']:.1f}" in cells and f"{d['aggregate_tps']:,.0f}" in cells
    one = run("project", "--shape", "llama-3.1-8b", "--to", "RTX 4090", home=tmp_path).stdout
    assert "all users" not in one


def test_the_prefill_figure_has_its_band_beside_it(tmp_path):
    args = ("project", "--shape", "llama-3.1-8b", "--to", "RTX 4090")
    d = json.loads(run(*args, "--json", home=tmp_path).stdout)["targets"][0]
    out = run(*args, home=tmp_path)
    assert out.returncode == 0, out.stderr
    header, _, row = out.stdout.splitlines()[1:4]
    assert header.split()[-6:] == ["t/s", "band", "first", "token", "price", "basis"]
    band = f"{d['prefill_tps_low']:,.0f}-{d['prefill_tps_high']:,.0f}"
    assert f"{d['prefill_tps']:,.0f}" in row.split() and band in row.split()
    assert d["prefill_tps_low"] < d["prefill_tps"] < d["prefill_tps_high"]


def test_a_chip_named_by_its_cpu_points_to_its_gpu(tmp_path):
    out = run("project", "--shape", "qwen3-30b-a3b", "--to", "Ryzen AI Max+ 395", home=tmp_path)
    assert out.returncode == 0, out.stderr
    hint = [line for line in out.stdout.splitlines() if "is the chip's CPU" in line]
    assert hint == [
        "  Ryzen AI Max+ 395 is the chip's CPU; its GPU, 'Radeon 8060S (Ryzen AI Max+ 395)' "
        "(rocm, vulkan), usually runs llama.cpp faster: add --to 'Radeon 8060S (Ryzen AI Max+ "
        "395)'."
    ]
    both = run("project", "--shape", "qwen3-30b-a3b", "--to", "Ryzen AI Max+ 395", "--to",
               "Radeon 8060S (Ryzen AI Max+ 395)", home=tmp_path)  # fmt: skip
    assert both.returncode == 0 and "is the chip's CPU" not in both.stdout
    fits = run("fits", "--device", "Ryzen AI Max+ 395", home=tmp_path)
    assert fits.returncode == 0, fits.stderr
    assert fits.stdout.splitlines()[1].endswith(
        "usually runs llama.cpp faster: try --device 'Radeon 8060S (Ryzen AI Max+ 395)'."
    )
    gpu = run("fits", "--device", "Radeon 8060S (Ryzen AI Max+ 395)", home=tmp_path)
    assert "is the chip's CPU" not in gpu.stdout


def test_one_device_named_twice_is_projected_once(tmp_path):
    names = ("RTX 4090", "rtx 4090", "2x RTX 4090", "GeForce RTX 4090")
    to = [arg for name in names for arg in ("--to", name)]
    out = run("project", "--shape", "llama-3.1-8b", *to, "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    targets = json.loads(out.stdout)["targets"]
    assert [(t["device_id"], t["count"]) for t in targets] == [
        ("nvidia-geforce-rtx-4090", 1), ("nvidia-geforce-rtx-4090", 2)
    ]  # fmt: skip


def test_a_small_speed_keeps_its_decimal_in_the_band(tmp_path):
    out = run("project", "--shape", "llama-3.1-70b", "--to", "RTX 4090", "--ram-gb", "64",
              "--ram-bandwidth-gbs", "40", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    row = out.stdout.splitlines()[3]
    band = next(c for c in row.split() if "-" in c and c[0].isdigit())
    low, high = (float(x) for x in band.split("-"))
    assert low < high < 10 and "." in band


def test_two_of_a_chip_that_is_not_a_card_is_refused_in_one_line(tmp_path):
    for name in ("2x M4 Max (40-core GPU)", "2x Ryzen AI Max+ 395", "3x Ryzen 9 7950X"):
        out = run("project", "--shape", "llama-3.1-8b", "--to", name, home=tmp_path)
        assert out.returncode == 2, (name, out.stdout)
        line = out.stderr.strip()
        assert "\n" not in line and "is not a graphics card" in line, line
    assert run("project", "--shape", "llama-3.1-8b", "--to", "2x RTX 3090",
               home=tmp_path).returncode == 0  # fmt: skip


def test_a_memory_size_the_device_does_not_come_with_is_refused(tmp_path):
    def project_(*args):
        return run("project", "--shape", "llama-3.1-70b", *args, home=tmp_path)

    out = project_("--to", "M4 Max (40-core GPU)", "--memory-gb", "100")
    assert out.returncode == 2
    assert out.stderr.strip() == ("advisor: Apple M4 Max (40-core GPU) comes with 48, 64 or 128 "
                                  "GB; --memory-gb 100 is not one of them.")  # fmt: skip
    assert project_("--to", "M4 Max (40-core GPU)", "--memory-gb", "64").returncode == 0
    # a CPU takes whatever RAM is fitted, up to its largest
    assert project_("--to", "Ryzen 9 7950X", "--memory-gb", "64").returncode == 0
    out = project_("--to", "Ryzen 9 7950X", "--memory-gb", "256")
    assert out.returncode == 2 and "takes up to 128 GB" in out.stderr
    # the whole catalogue: the devices that come with that size
    d = json.loads(project_("--memory-gb", "24", "--json").stdout)
    names = {t["device"] for t in d["targets"]}
    assert "GeForce RTX 4090" in names and "GeForce RTX 5090" not in names
    assert all(t["memory_gb"] == 24 for t in d["targets"])


def test_the_heading_names_a_synthetic_models_quantisation_once(tiny_model, tmp_path):
    out = run("project", "--model", str(tiny_model), "--to", "RTX 4090", home=tmp_path)
    assert out.returncode == 0, out.stderr
    heading = out.stdout.splitlines()[0]
    assert heading.count("Q4_0") == 1 and "random weights" in heading, heading
    shape = run("project", "--shape", "llama-3.1-8b", "--to", "RTX 4090", home=tmp_path).stdout
    assert shape.startswith("Llama 3.1 8B (Q4_K_M, 4.91 GB)")


def test_fits_for_many_users_says_the_speed_is_each_users(tmp_path):
    out = run("fits", "--device", "DGX Spark", "--workload", "many-users", "--min-tps", "5",
              home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "decoding at least 5 tokens/s each" in lines[0]
    assert "t/s each of 32" in lines[1] and "decode t/s" not in lines[1]
    one = run("fits", "--device", "DGX Spark", home=tmp_path)
    assert "decode t/s" in one.stdout.splitlines()[1]


def test_a_projection_from_your_run_answers_in_seconds_and_money(tmp_path):
    out = run("project", "--shape", "mistral-nemo-12b", "--quant", "q4_k_m", "--from-device",
              "Apple M4 Pro 20-core GPU", "--from-tg", "29.2", "--from-pp", "284", "--to",
              "RTX 4090", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = next(
        i for i, line in enumerate(lines) if line.startswith('For "Chat" the GeForce RTX 4090')
    )
    assert lines[at + 1].startswith("Chat: ") and "a whole answer takes" in lines[at + 1]
    assert "instead of 18 s" in lines[at + 1]  # 500 tokens at the measured 29.2 t/s, and the prompt
    # the price every answer shows: the 4090's dated used street price, with its kind and date
    assert lines[at + 2].startswith("GeForce RTX 4090: $2,470 (used, 2026-04), $")


def test_project_states_your_measurement_as_people_read_it(tmp_path):
    out = run("project", "--shape", "llama-2-7b", "--quant", "q4_0", "--from-device",
              "RTX 3060 12GB", "--from-tg", "92.157333", "--from-pp", "2100.5", "--to",
              "RTX 4090", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("Calibrated with"))
    assert line.endswith(": 92.2 t/s decode, 2,100 t/s prefill"), line

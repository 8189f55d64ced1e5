"""`advisor project` for a model bigger than the card: the placement is an input (--cpu-moe,
--gpu-layers, --ubatch), the host is the user's computer (--ram-gb, --ram-bandwidth-gbs,
--ram-speed, --pcie-gbs, or the machine a --result run was measured on), and the answer names
what lives where, what a token reads from RAM and the command that runs it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from advisor.core.infra.units import GiB
from advisor.core.runs.results import RunHardware
from tests.conftest import advisor_cli

QWEN = ("project", "--shape", "qwen3-30b-a3b", "--quant", "q4_k_m", "--json")
HOST = ("--ram-gb", "64", "--ram-bandwidth-gbs", "60")


def _one(*args: str, home) -> dict:
    out = advisor_cli(*args, home=home)
    assert out.returncode == 0, out.stderr
    targets = json.loads(out.stdout)["targets"]
    assert len(targets) == 1
    return targets[0]


def test_decode_falls_as_more_experts_stay_in_ram(tmp_path):
    rows = {
        n: _one(*QWEN, "--to", "RTX 3060 12GB", *HOST, "--cpu-moe", str(n), home=tmp_path)
        for n in (24, 32, 40, 48)
    }
    decode = [rows[n]["decode_tps"] for n in sorted(rows)]
    from_ram = [rows[n]["placement"]["ram_bytes_per_token"] for n in sorted(rows)]
    assert decode == sorted(decode, reverse=True) and len(set(decode)) == 4, decode
    assert from_ram == sorted(from_ram) and from_ram[0] > 0, from_ram
    for n, t in rows.items():
        assert t["fits"] == "hybrid"
        assert t["decode_basis"] == "modelled"  # the card's published results are full offload
        block = t["placement"]
        assert block["llama_args"][-2:] == ["--n-cpu-moe", str(n)]
        assert f"--n-cpu-moe {n}" in block["command"]
        assert "system RAM" in block["where"] and block["chosen_by"] == "you"
        assert block["ram_bandwidth_basis"] == "measured"
    # the sum of the two sides' reads is the model's active bytes, wherever they are
    blocks = [t["placement"] for t in rows.values()]
    totals = {round(b["ram_bytes_per_token"] + b["gpu_bytes_per_token"], -6) for b in blocks}
    assert len(totals) == 1


def test_too_few_experts_in_ram_is_a_sentence_naming_the_fix(tmp_path):
    t = _one(*QWEN, "--to", "RTX 3060 12GB", *HOST, "--cpu-moe", "4", home=tmp_path)
    assert t["fits"] == "no" and not t["decode_tps"]
    assert any("higher --cpu-moe" in n for n in t["notes"]), t["notes"]


def test_without_a_placement_the_app_proposes_the_fastest_that_fits(tmp_path):
    t = _one(*QWEN, "--to", "RTX 3060 12GB", *HOST, home=tmp_path)
    block = t["placement"]
    assert t["fits"] == "hybrid" and block["chosen_by"].startswith("the app")
    assert block["command"].startswith("llama-server -m MODEL.gguf -ngl 99 --n-cpu-moe ")
    n = int(block["llama_args"][-1])
    # the proposal is at least as fast as its neighbours the user could have chosen
    for other in (n + 1, n + 8):
        chosen = _one(*QWEN, "--to", "RTX 3060 12GB", *HOST, "--cpu-moe", str(other),
                      home=tmp_path)  # fmt: skip
        assert chosen["decode_tps"] <= t["decode_tps"] * 1.0001
    # on a 24 GB card the whole model fits: the command keeps every layer on it
    t = _one(*QWEN, "--to", "RTX 4090", *HOST, home=tmp_path)
    assert t["fits"] == "yes" and t["placement"]["llama_args"] == ["-ngl", "99"]
    assert t["placement"]["ram_bytes_per_token"] == 0


def test_gpt_oss_120b_on_a_4090_with_64_gb_runs_hybrid(tmp_path):
    t = _one("project", "--shape", "gpt-oss-120b", "--to", "RTX 4090", *HOST, "--json",
             home=tmp_path)  # fmt: skip
    assert t["fits"] == "hybrid" and 10 < t["decode_tps"] < 80, t
    assert "--n-cpu-moe" in t["placement"]["command"]
    # with 32 GB of RAM the experts have nowhere to go
    t = _one("project", "--shape", "gpt-oss-120b", "--to", "RTX 4090", "--ram-gb", "32",
             "--json", home=tmp_path)  # fmt: skip
    assert t["fits"] == "no" and "however the layers are placed" in " ".join(t["notes"])


def test_faster_ram_and_a_faster_link_help_where_physics_says(tmp_path):
    args = ("project", "--shape", "gpt-oss-120b", "--to", "RTX 4090", "--ram-gb", "64",
            "--cpu-moe", "24", "--json")  # fmt: skip
    slow = _one(*args, "--ram-speed", "DDR4-3200", "--ram-channels", "2", home=tmp_path)
    fast = _one(*args, "--ram-speed", "DDR5-6000", "--ram-channels", "2", home=tmp_path)
    assert slow["placement"]["ram_bandwidth_basis"] == "rated"
    assert slow["placement"]["ram_bandwidth_bytes_per_s"] == pytest.approx(51.2e9)
    assert fast["decode_tps"] > slow["decode_tps"] * 1.3  # RAM reads dominate the token
    assert fast["prefill_tps"] == pytest.approx(slow["prefill_tps"], rel=0.02)  # the link does
    # a card on a riser (PCIe 3.0 x4, 3.9 GB/s) copies the prompt's experts slower; a rate
    # above the card's own link (PCIe 4.0 x16 on a 4090) is no faster than that link
    riser = _one(*args, "--ram-speed", "DDR4-3200", "--pcie-gbs", "3.9", home=tmp_path)
    assert riser["prefill_tps"] < slow["prefill_tps"] / 1.5
    assert riser["placement"]["link_basis"] == "given"
    beyond = _one(*args, "--ram-speed", "DDR4-3200", "--pcie-gbs", "50", home=tmp_path)
    assert beyond["placement"]["link_bytes_per_s"] == pytest.approx(16 * 1.969e9)
    # a bigger micro-batch copies the experts once for more tokens
    big = _one(*args, "--ram-speed", "DDR4-3200", "--prompt", "4096", "--answer", "100",
               "--ubatch", "2048", home=tmp_path)  # fmt: skip
    small = _one(*args, "--ram-speed", "DDR4-3200", "--prompt", "4096", "--answer", "100",
                 home=tmp_path)  # fmt: skip
    assert big["prefill_tps"] > small["prefill_tps"] * 2


def test_an_assumed_ram_bandwidth_widens_the_band(tmp_path):
    args = ("project", "--shape", "gpt-oss-120b", "--to", "RTX 4090", "--ram-gb", "64",
            "--cpu-moe", "24", "--json")  # fmt: skip
    measured = _one(*args, "--ram-bandwidth-gbs", "50", home=tmp_path)
    assumed = _one(*args, home=tmp_path)  # no detection cached in this app folder
    assert assumed["placement"]["ram_bandwidth_basis"] == "assumed"

    def width(t):
        return t["decode_tps_high"] / t["decode_tps_low"]

    assert width(assumed) > width(measured) * 1.2


@pytest.mark.parametrize(
    "extra",
    [
        ("--cpu-moe", "-1"),
        ("--cpu-moe", "nan"),
        ("--gpu-layers", "1e9"),
        ("--ubatch", "0"),
        ("--ram-speed", "fast"),
        ("--ram-channels", "0"),
        ("--pcie-gbs", "inf"),
        ("--ram-channels", "4"),  # without --ram-speed and nothing detected
    ],
)
def test_bad_placement_and_host_input_is_one_sentence(tmp_path, extra):
    out = advisor_cli(*QWEN, "--to", "RTX 3060 12GB", *extra, home=tmp_path)
    assert out.returncode == 2, (out.stdout[-300:], out.stderr)
    assert out.stderr.strip().count("\n") == 0 and "Traceback" not in out.stderr


def _run_on(tiny_run, hardware: RunHardware, tmp_path):
    run = replace(tiny_run, hardware=hardware, config=replace(tiny_run.config, gpu_layers=999))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run.to_json()))
    return path


FOURTY_NINETY = dict(
    device_name="GeForce RTX 4090", device_id="nvidia-geforce-rtx-4090", backend="cuda",
    spec_bandwidth_bytes_per_s=1008e9, peak_flops_per_s=165e12, device_class="nvidia_consumer",
)  # fmt: skip


def test_a_run_from_a_4090_pc_projects_with_that_pcs_ram(tiny_run, tmp_path):
    """A 4090 owner's run, imported: the other cards go into *their* PC (128 GB, 85 GB/s
    measured), not this machine's RAM and not the defaults."""
    hw = RunHardware(**FOURTY_NINETY, ram_total_bytes=128 * GiB, ram_bandwidth_bytes_per_s=85e9,
                     ram_bandwidth_basis="measured", ram_description="DDR5-6000, 2 channels",
                     pcie_gen=4, pcie_lanes=16)  # fmt: skip
    path = _run_on(tiny_run, hw, tmp_path)
    out = advisor_cli("project", "--shape", "gpt-oss-120b", "--result", str(path), "--to",
                      "RTX 3090", "--json", home=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["host"]["ram_bytes"] == 128 * GiB
    assert data["host"]["ram_bandwidth_bytes_per_s"] == 85e9
    assert data["host"]["ram_bandwidth_basis"] == "measured"
    assert data["host"]["link_basis"] == "detected"
    t = data["targets"][0]
    assert t["fits"] == "hybrid" and t["placement"]["ram_bandwidth_bytes_per_s"] == 85e9
    # the user's own choice still wins over the run's
    out = advisor_cli("project", "--shape", "gpt-oss-120b", "--result", str(path), "--to",
                      "RTX 3090", "--ram-gb", "32", "--json", home=tmp_path)  # fmt: skip
    assert json.loads(out.stdout)["targets"][0]["fits"] == "no"


def test_a_run_saved_before_hosts_were_kept_uses_its_ram_size(tiny_run, tmp_path):
    path = _run_on(tiny_run, RunHardware(**FOURTY_NINETY, ram_total_bytes=96 * GiB), tmp_path)
    out = advisor_cli("project", "--shape", "gpt-oss-120b", "--result", str(path), "--to",
                      "RTX 3090", "--json", home=tmp_path)  # fmt: skip
    host = json.loads(out.stdout)["host"]
    assert host["ram_bytes"] == 96 * GiB and host["ram_bandwidth_basis"] == "assumed"

"""One answer per question: a History run made on another machine gives the same decode and
prefill numbers through `advisor project --result RUN.json` and through the app's Compare and
Charts pages (they all ask advisor.usecases, which asks predict.reference.device_for_run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from advisor.core.runs.results import RunHardware
from advisor.gui.table_models import OBJECT_ROLE

TARGETS = {"nvidia-geforce-rtx-4090": "RTX 4090", "apple-m4-max-40c": "M4 Max 40-core GPU"}


def _cli(home, model, *args):
    """`advisor project` for the run's own model (the 2-layer file it measured)."""
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "project", "--model", str(model), *args, "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _runs(tiny_run):
    """The recorded run, as if made on a GPU of another machine and on another machine's CPU."""
    gpu = RunHardware(
        device_name="GeForce RTX 3090",
        device_id="nvidia-geforce-rtx-3090",
        backend="cuda",
        spec_bandwidth_bytes_per_s=936e9,
        peak_flops_per_s=71e12,
        device_class="nvidia_consumer",
    )
    cpu = RunHardware(
        device_name="Somebody's Ryzen (16 cores)",
        backend="cpu",
        spec_bandwidth_bytes_per_s=83.2e9,
        peak_flops_per_s=2.0e12,
        device_class="cpu_desktop",
        ram_total_bytes=64 * 2**30,
    )
    on_gpu = replace(tiny_run.config, gpu_layers=999)  # every layer on the GPU
    return {
        "gpu": replace(tiny_run, hardware=gpu, config=on_gpu),
        "cpu": replace(tiny_run, hardware=cpu),
    }


def _compare_page(make_window, qtbot, run):
    """The app's Compare page for the chat workload, with the run open and the table filled."""
    window, services = make_window()
    services.open_run(run)
    window.show_page("Compare all devices")
    compare = window.compare
    compare.workload.setCurrentIndex(compare.workload.findData("chat"))
    compare.refresh()
    qtbot.waitUntil(lambda: compare.model.rowCount() > 100, timeout=20_000)
    return compare


@pytest.mark.parametrize("kind", ["gpu", "cpu"])
def test_a_run_from_another_machine_gives_the_same_numbers_everywhere(
    make_window, qtbot, tiny_run, tiny_model, tmp_path, kind
):
    run = _runs(tiny_run)[kind]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run.to_json()))
    cli = _cli(tmp_path, tiny_model, "--result", str(path), "--workload", "chat",
               *[a for name in TARGETS.values() for a in ("--to", name)])  # fmt: skip
    by_id = {t["device_id"]: t for t in cli["targets"]}
    assert cli["reference"]["device"] == run.hardware.device_name

    compare = _compare_page(make_window, qtbot, run)
    rows = {
        compare.model.row_object(r).device_id: compare.model.row_object(r)
        for r in range(compare.model.rowCount())
    }
    for device_id in TARGETS:
        gui, line = rows[device_id], by_id[device_id]
        assert gui.basis == line["basis"]
        assert gui.decode_tps == pytest.approx(line["decode_tps"], rel=1e-9)
        assert gui.prefill_tps == pytest.approx(line["prefill_tps"], rel=1e-9)


def test_the_charts_draw_what_the_command_line_projects_for_the_run(
    make_window, qtbot, tiny_run, tiny_model, tmp_path
):
    run = _runs(tiny_run)["gpu"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run.to_json()))
    window, services = make_window()
    services.open_run(run)
    window.show_page("Charts")  # a hidden page draws when it is shown
    charts = window.charts
    qtbot.waitUntil(lambda: charts.depth_predicted.getData()[0] is not None, timeout=10_000)
    assert "GeForce RTX 3090" in charts.caption.text()  # the run's device, not this machine
    xs, ys = charts.depth_predicted.getData()
    i = len(xs) // 2
    cli = _cli(tmp_path, tiny_model, "--result", str(path), "--to", "RTX 3090", "--backend", "cuda",
               "--prompt", "0", "--answer", "2", "--depth", str(int(xs[i])))  # fmt: skip
    assert cli["targets"][0]["decode_tps"] == pytest.approx(float(ys[i]), rel=1e-9)
    assert np.all(np.isfinite(ys))


def test_the_compare_verdict_gives_the_price_the_command_line_gives(
    make_window, qtbot, tiny_run, tiny_model, tmp_path
):
    run = _runs(tiny_run)["gpu"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run.to_json()))
    env = {**os.environ, "ADVISOR_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "project", "--model", str(tiny_model), "--result",
         str(path), "--workload", "chat", "--to", "RTX 4090"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("GeForce RTX 4090: $"))
    price = line.removeprefix("GeForce RTX 4090: ")
    # the price every answer shows: the card's dated used street price, its kind and month
    assert price.startswith("$2,470 (used, 2026-04), $") and price.endswith(" per 1x of speed-up.")

    compare = _compare_page(make_window, qtbot, run)
    row = next(
        r for r in range(compare.proxy.rowCount())
        if compare.proxy.index(r, 0).data(OBJECT_ROLE).device_id == "nvidia-geforce-rtx-4090"
    )  # fmt: skip
    compare.table.selectRow(row)
    qtbot.waitUntil(lambda: "(used, 2026-04)" in compare.verdict.text(), timeout=20_000)
    assert price in compare.verdict.text()

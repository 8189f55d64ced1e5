"""Screenshots of every page of the real app window at 1280x800, light and dark.

    .venv/bin/python docs/screenshots/take.py          # docs/screenshots/<page>-<theme>.png
    ONLY=upgrade,compare .venv/bin/python docs/screenshots/take.py   # those pages alone
    ONLY=upgrade-hybrid .venv/bin/python docs/screenshots/take.py    # gpt-oss 120B over card + RAM

The window is the app's own (build_window, this machine's real detection, the real history of
a scratch ADVISOR_HOME with one real benchmark in it: made with `advisor bench` first when
there is none). Each theme runs in its own process, as the app picks its palette at start-up.
Pages are switched the way the navigation does it and grabbed once their work has finished.
Runs on a virtual screen (QT_QPA_PLATFORM=offscreen by default; xcb under Xvfb works too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(os.environ.get("OUT", Path(__file__).parent))
HOME = Path(os.environ.get("ADVISOR_SHOT_HOME", "/tmp/advisor-shots-home"))
SHOTS = {
    "machine": "This machine",
    "model": "Model",
    "benchmark": "Benchmark",
    "upgrade": "Upgrade",
    "workload": "Your workload",
    "charts": "Charts",
    "compare": "Compare all devices",
    "history": "History",
}


def ensure_runs() -> None:
    if list((HOME / "data" / "runs").glob("*.json")):
        return
    env = {**os.environ, "ADVISOR_HOME": str(HOME)}
    for args in (
        ["--synthetic", "qwen2.5-0.5b:q4_0", "--pp", "512", "--tg", "128", "--reps", "2"],
        ["--synthetic", "llama-3.2-1b:q4_0", "--pp", "512", "--tg", "128", "--depth", "0,4096",
         "--batch", "1,4", "--reps", "2"],
    ):  # fmt: skip
        subprocess.run([sys.executable, "-m", "advisor", "bench", *args, "--quiet"], env=env,
                       check=True)  # fmt: skip


def ensure_workload() -> None:
    """One imported workload: a 3 MB OpenAI-style log from benchmarks/make_openai_jsonl.py
    (multi-turn chats of a small team, seeded)."""
    if list(HOME.rglob("workloads.json")):
        return
    repo = Path(__file__).resolve().parents[2]
    log = HOME / "team-traffic.jsonl"
    HOME.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(repo / "benchmarks/make_openai_jsonl.py"), str(log),
                    "--size-mb", "3"], check=True, capture_output=True)  # fmt: skip
    env = {**os.environ, "ADVISOR_HOME": str(HOME)}
    subprocess.run([sys.executable, "-m", "advisor", "workload", "import", str(log), "--name",
                    "my team"], env=env, check=True, capture_output=True)  # fmt: skip


def wait(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def wait_for(app, ready, seconds: float = 60) -> None:
    """Pump events until `ready()` (a page's work has landed) or `seconds` pass."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not ready():
        app.processEvents()
        time.sleep(0.02)


def _drawn(curve) -> bool:
    xs = curve.getData()[0]
    return xs is not None and len(xs) > 0


def shoot(theme: str) -> None:
    os.environ["ADVISOR_HOME"] = str(HOME)
    os.environ["ADVISOR_THEME"] = theme
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from advisor.core.infra.paths import app_paths
    from advisor.gui.app import build_window
    from advisor.gui.qt import QtCore, QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    window, services = build_window(app_paths(), app)
    window.resize(1280, 800)
    window.show()
    services.detect()
    window.history.reload()

    def resume(runs: list) -> None:
        # once, as the app does: opening a run reloads the history, which would resume again
        window.history.loaded.disconnect(resume)
        if runs:
            services.open_run(runs[0])

    window.history.loaded.connect(resume)
    wait(app, 12)  # detection (cached after the first), the newest run reopened, projections
    only = [x for x in os.environ.get("ONLY", "").split(",") if x]  # ONLY=upgrade,compare
    for name, page in SHOTS.items():
        if only and name not in only:
            continue
        window.show_page(page)
        if page == "Upgrade":
            wait_for(app, lambda: window.upgrade.model.rowCount() > 0
                     and "Best" in window.upgrade.answer.text())  # fmt: skip
        if page == "Your workload":
            wait_for(app, lambda: window.workload.saved.count() > 0)
            window.workload.size_button.click()
            wait_for(app, lambda: " at once" in window.workload.answer.text())
        if page == "Charts":  # the depth and many-users curves are projected in a worker
            wait_for(app, lambda: _drawn(window.charts.depth_predicted))
        if page == "Compare all devices":  # select once the table's projections are in
            wait_for(app, lambda: window.compare.model.rowCount() > 150)
            window.compare.filter.setText("RTX 40")
            wait(app, 2)
            table = window.compare.table
            table.selectRow(1)
            flags = QtCore.QItemSelectionModel.SelectionFlag
            table.selectionModel().select(table.model().index(2, 0), flags.Select | flags.Rows)
        wait(app, 4)
        window.grab().save(str(OUT / f"{name}-{theme}.png"))
    if not only or "upgrade-hybrid" in only:
        hybrid_shot(app, window, services, theme)
    services.bench.shutdown()


def hybrid_shot(app, window, services, theme: str) -> None:
    """gpt-oss 120B, bigger than any consumer card, on a PC with 64 GB of RAM read at 30 GB/s:
    the Upgrade page ranks cards that run it with the experts in RAM, the fastest selected."""
    services.choose_shape("gpt-oss-120b", "mxfp4")
    window.show_page("Upgrade")
    panel = window.upgrade
    for field, text in ((panel.host.ram, "64"), (panel.host.speed, "30")):
        field.setText(text)
        field.editingFinished.emit()
    wait_for(app, lambda: panel.ranking is not None
             and any("faster RAM" in c.kind for c in panel.ranking.candidates))  # fmt: skip
    wait(app, 5)  # the RAM size and its speed each re-rank: let the second one land
    hybrid = [c for c in panel.ranking.candidates if c.projection.fits == "hybrid"]
    if hybrid:
        panel.table.selectRow(panel.ranking.candidates.index(hybrid[0]))
        wait_for(app, lambda: "llama-server -m MODEL.gguf" in panel.answer.text())
    wait(app, 3)
    window.grab().save(str(OUT / f"upgrade-hybrid-{theme}.png"))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        shoot(sys.argv[1])
    else:
        ensure_runs()
        ensure_workload()
        for theme in ("light", "dark"):
            subprocess.run([sys.executable, __file__, theme], check=True)
        print(f"screenshots in {OUT}")

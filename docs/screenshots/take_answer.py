"""Screenshots of the answer after a quiet run and after a disturbed one (other programs used
62% of the CPU while it ran), Upgrade and Compare, light and dark, at 1280x800.

    .venv/bin/python docs/screenshots/take_answer.py   # docs/screenshots/answer-*.png

The run is the recorded one the tests use (qwen2.5-0.5b Q4_0 on this project's 2-core machine);
the disturbed run is the same with the load other programs put on the CPU, alone in a scratch
history (no quiet run of the model to fall back on). Offscreen, as take.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("OUT", Path(__file__).parent))
RUN = REPO / "tests" / "gui" / "data" / "run-qwen05b-q4_0-xeon.json"


def shoot(theme: str, kind: str) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from take import wait, wait_for

    home = Path(tempfile.mkdtemp(prefix="advisor-answer-shots-"))
    os.environ["ADVISOR_HOME"] = str(home)
    os.environ["ADVISOR_THEME"] = theme
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from advisor.core.infra.paths import app_paths
    from advisor.core.runs.history import History
    from advisor.core.runs.results import RunResult
    from advisor.gui.app import build_window
    from advisor.gui.qt import QtWidgets

    run = RunResult.from_json(json.loads(RUN.read_text()))
    if kind == "disturbed":
        tests = tuple(replace(t, other_cpu_load=0.62) for t in run.tests)
        run = replace(run, id="disturbed", tests=tests, busy=True)
    paths = app_paths()
    paths.ensure()
    History(paths.data / "runs").save(run)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    window, services = build_window(paths, app)
    window.resize(1280, 800)
    window.show()
    services.detect()
    services.warm_up()
    window.history.reload()
    wait(app, 3)
    services.open_run(run)
    window.show_page("Upgrade")
    wait_for(app, lambda: "Chat:" in window.upgrade.answer.text())
    wait(app, 2)
    window.grab().save(str(OUT / f"answer-upgrade-{kind}-{theme}.png"))
    window.show_page("Compare all devices")
    wait_for(app, lambda: window.compare.model.rowCount() > 150)
    window.compare.filter.setText("RTX 50")
    wait(app, 1)
    window.compare.table.selectRow(1)
    wait(app, 3)
    window.grab().save(str(OUT / f"answer-compare-{kind}-{theme}.png"))
    services.bench.shutdown()
    window.close()
    services.tasks.shutdown(3000)
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        shoot(sys.argv[1], sys.argv[2])
    else:
        for kind in ("quiet", "disturbed"):
            for theme in ("light", "dark"):
                subprocess.run([sys.executable, __file__, theme, kind], check=True)
        print(f"screenshots in {OUT}")

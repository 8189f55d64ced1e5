"""`advisor --smoke-test`: prove an installed (or frozen) app works end to end, headless.

Builds the window offscreen, writes a tiny synthetic GGUF, runs a short pp/tg benchmark
through the real child process, prints the result and exits 0; anything else exits 1.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time


def run_smoke_test() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = tempfile.mkdtemp(prefix="advisor-smoke-")
    os.environ["ADVISOR_HOME"] = home
    started = time.perf_counter()
    from advisor import __version__
    from advisor.bench.controller import BenchJob
    from advisor.bench.synth import write_synthetic_gguf
    from advisor.core.infra.paths import app_paths
    from advisor.core.runs.config import BenchConfig
    from advisor.core.runs.results import RunResult

    print(f"advisor {__version__} smoke test (frozen: {bool(getattr(sys, 'frozen', False))})")
    from advisor.gui.app import build_window
    from advisor.gui.qt import QtWidgets

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["advisor"])
    window, _ = build_window(app_paths(), app)
    window.show()
    app.processEvents()
    print(f"window: {window.windowTitle()!r}, {window.nav.count()} pages")
    model = os.path.join(home, "smoke.gguf")
    write_synthetic_gguf(model, "qwen2.5-0.5b", "q4_0", n_layers=1)
    print(f"model: {os.path.getsize(model) / 1e6:.0f} MB synthetic qwen2.5-0.5b, 1 layer")
    final = None
    for event in BenchJob(
        BenchConfig(model_path=model, n_prompt=(32,), n_gen=(8,), reps=1), home=home
    ).events():
        final = event
    window.close()
    if not isinstance(final, RunResult):
        print(f"FAILED: {getattr(final, 'message', final)}\n{getattr(final, 'details', '')}")
        return 1
    for t in final.tests:
        print(f"{t.name}: {t.tokens_per_s:,.1f} tokens/s")
    print(
        f"backend {','.join(final.llama.backends)}; "
        f"smoke test passed in {time.perf_counter() - started:.1f} s"
    )
    return 0


def main() -> int:
    """Run the smoke test and leave without interpreter finalisation: PySide6 can abort while
    tearing down Qt objects at exit, which would turn a passed test into a crash."""
    try:
        code = run_smoke_test()
    except Exception:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

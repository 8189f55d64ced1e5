"""Where the program starts: the app (no command, or `gui`), the command line, the frozen
app's own benchmark child, or the packaged smoke test. It only dispatches; the front ends
never import each other."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from advisor.core.infra.errors import EXIT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `advisor` command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if getattr(sys, "frozen", False):  # the frozen app is also the projections' child process
        import multiprocessing

        multiprocessing.freeze_support()
    if args[:1] == ["--bench-child"]:  # the frozen app runs its own benchmark child process
        from advisor.bench.preload import llama_before_numpy

        llama_before_numpy()  # before the child's imports load numpy (advisor/bench/preload.py)
        from advisor.bench.child import main as child_main

        return child_main(args[1:])
    from advisor.startup import cpu_check_message

    problem = cpu_check_message()
    if problem:
        print(f"advisor: {problem}", file=sys.stderr)
        if not args or args[0] == "gui":
            show_startup_problem(problem)
        return EXIT_FAILED
    if args[:1] == ["--smoke-test"]:
        from advisor.smoke import main as smoke_main

        return smoke_main()
    if not args or (args[0] == "gui" and len(args) <= 2 and "--help" not in args):
        return gui_main(args[1] if len(args) == 2 else None)
    from advisor.cli import main as cli_main

    return cli_main(args)


def gui_main(model: str | None = None) -> int:
    """Open the desktop app."""
    from advisor.core.infra.paths import app_paths
    from advisor.startup import route_output_to_log

    route_output_to_log(app_paths().log_file)
    from advisor.gui.app import run_app

    return run_app(model)


def show_startup_problem(message: str) -> None:
    """A windowed app cannot print: show the one sentence in a message box."""
    try:
        from PySide6 import QtWidgets

        app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["advisor"])
        QtWidgets.QMessageBox.critical(None, "LLM Hardware Advisor", message)
        del app
    except Exception:  # no display: the stderr line is all we can do
        pass

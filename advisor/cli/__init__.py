"""The command line: the same engine as the app, for scripting, CI and support.

Every command takes --json (stable keys, SI units) and otherwise prints a readable table. A
mistake is one line on stderr and exit status 2; a failed run is exit status 1; never a Python
traceback for a mistake. Commands (advisor.cli.commands) return their output; `main` renders
it once and maps errors to exit codes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from advisor.core.infra.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, AdvisorError

COMMANDS = (
    "detect",
    "inspect",
    "shapes",
    "devices",
    "synth",
    "project",
    "upgrade",
    "bench",
    "fits",
    "workload",
)


def _command(name: str) -> Callable[..., object]:
    from importlib import import_module

    module = import_module(f"advisor.cli.commands.{name}")
    return module.run  # type: ignore[no-any-return]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command of the `advisor` command line; the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _terminate_through_cleanup()
    try:
        return _dispatch(argv)
    except AdvisorError as exc:
        print(f"advisor: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("advisor: cancelled.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug of ours: one line for the user, the traceback in the log
        return _report_bug(exc, argv)


def _terminate_through_cleanup() -> None:
    """SIGTERM (a `kill`, a closing terminal, a service manager) ends the command the way
    Ctrl-C does: through every `finally`, so a half-written file is removed, not left behind.
    Python's default is to die on the spot."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    import contextlib

    # not allowed here (an embedding host): keep the default
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGTERM, stop)


def _dispatch(argv: list[str]) -> int:
    from advisor.cli.output import render
    from advisor.cli.parser import build_parser

    args = build_parser().parse_args(argv)
    if args.version:
        from advisor.cli.version import version_output

        render(version_output(), args.json)
        return EXIT_OK
    if args.command in (None, "gui"):  # the app itself starts from advisor.entry
        build_parser().print_help()
        return EXIT_OK
    output = _command(args.command)(args)
    render(output, args.json)  # type: ignore[arg-type]
    error = getattr(output, "error", None)
    if error is not None:
        raise error
    return EXIT_OK


def _report_bug(exc: Exception, argv: list[str]) -> int:
    """An unexpected error: one line on stderr with the log's path (or stderr alone when the
    log cannot be written), the traceback in the log."""
    import logging

    from advisor.core.infra.logs import setup_logging
    from advisor.core.infra.paths import app_paths

    where = ""
    try:
        from advisor.core.infra.logs import logging_to_file

        paths = app_paths()
        setup_logging(paths, component="cli")
        if logging_to_file():
            logging.getLogger("advisor.cli").exception("unexpected error in %s", argv)
            where = f"; details are in {paths.log_file}"
        else:
            where = f"; no details were kept (the log folder {paths.logs} cannot be used)"
    except Exception:  # nothing more to tell: the one sentence below still goes out
        pass
    print(
        f"advisor: unexpected error ({exc.__class__.__name__}: {exc}){where}. This is a bug; "
        "please report it.",
        file=sys.stderr,
    )
    return EXIT_FAILED


__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK", "main"]

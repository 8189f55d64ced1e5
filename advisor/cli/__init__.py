"""The command line: the same engine as the app, for scripting, CI and support.

Every command takes --json (stable keys, SI units) and otherwise prints a readable table. A
mistake is one line on stderr and exit status 2; a failed run is exit status 1; never a Python
traceback for a mistake. Commands (advisor.cli.commands) return their output; `main` renders
it once and maps errors to exit codes.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence

from advisor.cli.output import printable
from advisor.core.infra import notices
from advisor.core.infra.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    AdvisorError,
    RunError,
    is_users_situation,
    os_reason,
)

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
    _start_logging()
    notices.take()  # a sentence left by an earlier command of this process is not this one's
    try:
        code = _dispatch(argv)
    except AdvisorError as exc:
        _say(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        _say("cancelled.")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        if not is_users_situation(exc):
            return _report_bug(exc, argv)
        # a full disk, a permission, a read-only folder: the user's situation, not a bug
        logging.getLogger("advisor.cli").info("%s in %s", exc, argv, exc_info=True)
        _say(os_error_sentence(exc))
        return EXIT_FAILED
    except Exception as exc:  # a bug of ours: one line for the user, the traceback in the log
        return _report_bug(exc, argv)
    for note in notices.take():
        print(f"advisor: note: {printable(note)}", file=sys.stderr)
    return code


def _say(sentence: str) -> None:
    """The one line on stderr: the sentence, then whatever was told meanwhile (a damaged
    file set aside) in the same line, every control character escaped."""
    told = " ".join(notices.take())
    print(f"advisor: {printable(sentence)}" + (f" {printable(told)}" if told else ""),
          file=sys.stderr)  # fmt: skip


def os_error_sentence(exc: OSError) -> str:
    """One sentence for an OSError that reached the top: which file or folder, and why."""
    where = exc.filename if exc.filename is not None else "A file the app needs"
    return (
        f"{where} cannot be used ({os_reason(exc)}); check it, free some space, or set "
        "ADVISOR_HOME to another folder."
    )


def _start_logging() -> None:
    """The log, opened at the start (never in the middle of reporting a failure)."""
    import contextlib

    from advisor.core.infra.logs import setup_logging
    from advisor.core.infra.paths import app_paths

    with contextlib.suppress(Exception):  # it never raises; if it did, the command still runs
        setup_logging(app_paths(), component="cli")


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
    try:
        render(output, args.json)  # type: ignore[arg-type]
        sys.stdout.flush()  # a full disk under a redirect fails here, not in the exit's flush
    except BrokenPipeError:
        raise
    except OSError as exc:  # the output's own file, not one of the app's
        raise RunError(
            f"The output could not be written ({os_reason(exc)}); free some space, or send it "
            "to another file."
        ) from exc
    error = getattr(output, "error", None)
    if error is not None:
        raise error
    return EXIT_OK


def _report_bug(exc: Exception, argv: list[str]) -> int:
    """An unexpected error: one line on stderr with the log's path (or stderr alone when the
    log cannot be written), the traceback in the log."""
    where = ""
    try:
        from advisor.core.infra.logs import log_file_in_use, setup_logging
        from advisor.core.infra.paths import app_paths

        paths = app_paths()
        setup_logging(paths, component="cli")
        log_file = log_file_in_use()
        if log_file is not None:
            logging.getLogger("advisor.cli").error(
                "unexpected error in %s", argv, exc_info=(type(exc), exc, exc.__traceback__)
            )
            where = f"; details are in {log_file}"
        else:
            where = f"; no details were kept (the log folder {paths.logs} cannot be used)"
    except Exception:  # nothing more to tell: the one sentence below still goes out
        pass
    _say(
        f"unexpected error ({exc.__class__.__name__}: {exc}){where}. This is a bug; "
        "please report it."
    )
    return EXIT_FAILED


__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK", "main"]

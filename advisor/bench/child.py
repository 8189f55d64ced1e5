"""The child process that runs llama.cpp, and its protocol with the parent.

The parent starts `python -m advisor.bench run` (or the frozen app with `--bench-child run`),
writes one JSON line `{"config": ..., "hardware": ..., "home": ...}` on stdin and keeps stdin
open; writing `cancel` asks the child to stop. The child writes JSON-line events on stdout:
progress, then exactly one result or one error. Anything llama.cpp prints goes to stderr,
never into the event stream. If the parent goes away (stdin closes), the child stops too.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from typing import IO, Any

from advisor.core.infra.errors import AdvisorError, is_users_situation, os_reason
from advisor.core.infra.paths import app_paths
from advisor.core.infra.serde import to_json
from advisor.core.runs.events import BenchRequest, Failure, event_to_json

PARENT_GONE_EXIT_S = 2.0


class Emitter:
    """Thread-safe writer of JSON-line events (the runner's loop and callbacks both emit)."""

    def __init__(self, stream: IO[str]):
        self._stream = stream
        self._lock = threading.Lock()

    def emit(self, event: Any) -> None:
        line = json.dumps(
            event_to_json(event), ensure_ascii=False, allow_nan=False, default=_default
        )
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


def _default(obj: Any) -> Any:
    if isinstance(obj, float):
        return None
    if hasattr(obj, "to_json"):
        return obj.to_json()
    return str(obj)


def _die_with_parent() -> None:
    """On Linux, have the kernel kill us if the parent dies (no orphaned llama.cpp)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _event_stream() -> IO[str]:
    """Keep the real stdout for events; point fd 1 at stderr so stray C output cannot mix in."""
    sys.stdout.flush()
    events_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(events_fd, "w", encoding="utf-8", buffering=1)


def _watch_stdin(cancel: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "cancel":
            cancel.set()
    # stdin closed: the parent is gone or gave up on us
    cancel.set()
    timer = threading.Timer(PARENT_GONE_EXIT_S, lambda: os._exit(3))
    timer.daemon = True
    timer.start()


def run_main() -> int:
    _die_with_parent()
    out = Emitter(_event_stream())
    try:
        request = BenchRequest.from_json(json.loads(sys.stdin.readline() or "{}"))
    except ValueError as exc:
        out.emit(Failure("The benchmark process received a malformed request.", repr(exc)))
        return 2
    cancel = threading.Event()
    threading.Thread(target=_watch_stdin, args=(cancel,), daemon=True, name="stdin-watch").start()
    try:
        paths = app_paths(request.home).ensure()
    except OSError as exc:
        out.emit(Failure(f"The app's folders cannot be used ({os_reason(exc)}).", repr(exc)))
        return 1

    from advisor.bench.runner import run_benchmark

    try:
        for event in run_benchmark(
            request.config,
            paths=paths,
            cancel=cancel,
            side_channel=out.emit,
            hardware=request.hardware,
        ):
            out.emit(event)
    except AdvisorError as exc:  # a sentence of ours (the disk cannot hold the model ...)
        out.emit(Failure(str(exc), traceback.format_exc()))
        return 1
    except Exception as exc:  # still exactly one error event
        out.emit(Failure(_failure_sentence(exc), traceback.format_exc()))
        return 1
    return 0


def _failure_sentence(exc: Exception) -> str:
    """A full disk or a permission is the user's situation, said as such; anything else is a
    bug of ours."""
    if is_users_situation(exc):
        assert isinstance(exc, OSError)
        where = exc.filename if exc.filename is not None else "a file it needs"
        return (
            f"The benchmark could not use {where} ({os_reason(exc)}); free some space or check "
            "the folder, then try again."
        )
    return f"The benchmark failed unexpectedly ({exc.__class__.__name__}: {exc})."


def backend_main() -> int:
    """Print what the installed llama.cpp was built with, as one JSON object."""
    out = _event_stream()
    try:
        from advisor.bench.llama_lib import backend_info

        info = to_json(backend_info())
    except Exception as exc:
        info = {"available": False, "error": f"{exc.__class__.__name__}: {exc}"}
    out.write(json.dumps(info) + "\n")
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "run"
    if command == "run":
        return run_main()
    if command == "backend":
        return backend_main()
    if command == "tokenize" and len(args) == 2:
        from advisor.bench.tokenize import tokenize_main

        return tokenize_main(args[1])
    print(f"unknown child command {command!r}", file=sys.stderr)
    return 2

"""The parent side of a benchmark: start the child, read its events, cancel, watch over it.

Used by the CLI and (through a thin Qt adapter) by the GUI. Whatever happens in the child
(a crash, a kill, a hang, running out of memory) ends here as exactly one `RunResult` or one
`Failure`, and no child process is left behind.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from advisor.core.runs.config import BenchConfig
from advisor.core.runs.events import BenchRequest, Failure, Progress, event_from_json
from advisor.core.runs.results import RunHardware, RunResult

CANCEL_GRACE_S = 2.0
DEFAULT_WATCHDOG_S = 300.0


def child_command(command: str = "run", *args: str) -> list[str]:
    """How to start the child: the frozen app re-runs itself, a source install runs -m."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--bench-child", command, *args]
    return [sys.executable, "-m", "advisor.bench", command, *args]


def _popen_kwargs() -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NO_WINDOW | subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True  # a terminal's Ctrl-C goes to us, we stop the child
    return kwargs


# signals of a crash inside llama.cpp's kernels (not a kill from outside, not a cancel)
WINDOWS_ACCESS_VIOLATION = (3221225477, -1073741819)  # 0xC0000005, unsigned and signed
CRASH_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGSEGV", "SIGBUS", "SIGILL") if hasattr(signal, name)
)
RETRY_MESSAGE = (
    "llama.cpp crashed with its repacked CPU weights; measuring again with its plain kernels"
)


def crashed_in_kernels(returncode: int | None) -> bool:
    """Did the child die of a crash signal (or, on Windows, an access violation)?"""
    if returncode is None:
        return False
    if returncode < 0:
        return -returncode in CRASH_SIGNALS
    return sys.platform == "win32" and returncode in WINDOWS_ACCESS_VIOLATION


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "The benchmark process stopped without a result."
    if returncode < 0:
        sig = -returncode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == getattr(signal, "SIGKILL", 9):
            return (
                "The benchmark process was killed (SIGKILL), most likely because the "
                "machine ran out of memory; try a smaller model or context."
            )
        return f"llama.cpp crashed during the benchmark ({name}); see the details."
    if sys.platform == "win32" and returncode in WINDOWS_ACCESS_VIOLATION:
        return "llama.cpp crashed during the benchmark (access violation); see the details."
    return f"The benchmark process stopped unexpectedly (exit code {returncode}); see the details."


class BenchJob:
    """One benchmark in a child process. Iterate `events()`; call `cancel()` from any thread."""

    def __init__(
        self,
        config: BenchConfig,
        *,
        hardware: RunHardware | None = None,
        home: str | None = None,
        watchdog_s: float = DEFAULT_WATCHDOG_S,
        command: list[str] | None = None,
    ):
        self.config = config
        self.hardware = hardware or RunHardware()
        self.home = home if home is not None else os.environ.get("ADVISOR_HOME")
        self.watchdog_s = watchdog_s
        self.command = command or child_command("run")
        self.proc: subprocess.Popen[str] | None = None
        self._events: queue.Queue[Any] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=60)
        self._cancel_requested = threading.Event()

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            **_popen_kwargs(),
        )
        request = BenchRequest(self.config, self.hardware, self.home)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request.to_json()) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # the child died at once; events() reports it
        threading.Thread(target=self._read_stdout, daemon=True, name="bench-stdout").start()
        threading.Thread(target=self._read_stderr, daemon=True, name="bench-stderr").start()
        if self._cancel_requested.is_set():  # Cancel was pressed while the child started
            self.cancel()

    def _read_stdout(self) -> None:
        assert self.proc and self.proc.stdout
        for line in self.proc.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                self._events.put(event_from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                self._stderr.append(f"[unparsed output] {line[:500]}")
        self._events.put(None)  # EOF

    def _read_stderr(self) -> None:
        assert self.proc and self.proc.stderr
        for line in self.proc.stderr:
            self._stderr.append(line.rstrip())

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def cancel(self) -> None:
        """Ask the child to stop; kill it if it has not within CANCEL_GRACE_S."""
        self._cancel_requested.set()
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write("cancel\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            pass
        threading.Thread(target=self._escalate, daemon=True, name="bench-cancel").start()

    def _escalate(self) -> None:
        proc = self.proc
        if proc is None:
            return
        try:
            proc.wait(timeout=CANCEL_GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()

    def _close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        for stream in (proc.stdin,):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=CANCEL_GRACE_S)
        except subprocess.TimeoutExpired:
            self.kill()
            proc.wait(timeout=10)

    def _child_cpu_seconds(self) -> float | None:
        """CPU seconds the child has used so far (None when it cannot be read)."""
        if self.proc is None:
            return None
        try:
            import psutil

            times = psutil.Process(self.proc.pid).cpu_times()
            return times.user + times.system
        except Exception:  # gone, or not permitted: the watchdog keeps its own clock
            return None

    # --- events ------------------------------------------------------------------------

    def events(self) -> Iterator[Progress | Failure | RunResult]:
        """Progress events, then exactly one RunResult or Failure. Always reaps the child.

        A child that crashes inside llama.cpp with its repacked CPU weights on (the AMX
        kernels of some Intel Xeons segfault at the first decode: llama.cpp issue 20824) is
        started once more with them off; the run then says so in its notes."""
        for event in self._events_once():
            if (
                isinstance(event, Failure)
                and not event.cancelled
                and self.config.repack
                and not self._cancel_requested.is_set()
                and self.proc is not None
                and crashed_in_kernels(self.proc.returncode)
            ):
                yield Progress("loading", 0, 1, message=RETRY_MESSAGE)
                self._restart(replace(self.config, repack=False))
                yield from self._events_once()
                return
            yield event

    def _restart(self, config: BenchConfig) -> None:
        self.config = config
        self.proc = None
        self._events = queue.Queue()
        self._stderr.clear()

    def _events_once(self) -> Iterator[Progress | Failure | RunResult]:
        if self.proc is None:
            self.start()
        last_change = time.monotonic()
        last_cpu = 0.0
        last_progress: tuple[Any, ...] | None = None
        try:
            while True:
                try:
                    event = self._events.get(timeout=1.0)
                except queue.Empty:
                    busy = self._child_cpu_seconds()
                    if busy is not None and busy > last_cpu + 0.5:
                        # no event, but llama.cpp is computing (a long prompt on a slow CPU)
                        last_cpu, last_change = busy, time.monotonic()
                    if time.monotonic() - last_change > self.watchdog_s:
                        self.kill()
                        yield Failure(
                            f"llama.cpp stopped responding for {self.watchdog_s:.0f} s, so the "
                            "benchmark was stopped; try again, or a smaller model.",
                            self.stderr_tail,
                        )
                        return
                    continue
                if event is None:  # the child closed its output
                    assert self.proc is not None
                    try:
                        self.proc.wait(timeout=CANCEL_GRACE_S)
                    except subprocess.TimeoutExpired:
                        self.kill()
                        self.proc.wait(timeout=10)
                    if self._cancel_requested.is_set():
                        yield Failure("The benchmark was cancelled.", cancelled=True)
                    else:
                        yield Failure(_describe_exit(self.proc.returncode), self.stderr_tail)
                    return
                if isinstance(event, Progress):
                    key = (event.phase, event.step, event.total, event.tokens_per_s, event.message)
                    if key != last_progress:
                        last_progress = key
                        last_change = time.monotonic()
                    yield event
                    continue
                if isinstance(event, Failure) and self._cancel_requested.is_set():
                    event = Failure("The benchmark was cancelled.", event.details, cancelled=True)
                yield event  # the one result or error
                return
        finally:
            self._close()


def run_child_json(command: str, timeout_s: float = 30.0) -> dict[str, Any]:
    """Run a short child command (e.g. 'backend') and return its JSON answer."""
    try:
        out = subprocess.run(
            child_command(command),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            **_popen_kwargs(),
        )
    except subprocess.TimeoutExpired:
        return {"available": False, "error": f"llama.cpp did not answer within {timeout_s:.0f} s"}
    except OSError as exc:
        return {"available": False, "error": str(exc)}
    for line in out.stdout.splitlines()[::-1]:
        try:
            return json.loads(line)
        except ValueError:
            continue
    tail = out.stderr.strip().splitlines()[-3:]
    return {"available": False, "error": "llama.cpp could not start: " + " ".join(tail)}

"""Hostile files for the red-team table (issue 40's classes), and the checks every case makes:
one line on stderr that starts with 'advisor:', no traceback, no 'unexpected error'."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import _in_process

DEEP = 100_000  # far past any limit: the standard decoder recurses once per level
DIGITS = 5_000  # past Python's own limit of 4,300 digits for turning text into a number

USER = {"role": "user", "content": "hello there, how are you?"}
ANSWER = {"role": "assistant", "content": "fine, thanks"}
JSONL_LINE = json.dumps(
    {"request": {"messages": [USER]}, "response": {"choices": [{"message": ANSWER}]}}
)
CONVERSATION = {
    "mapping": {
        "a": {"message": {"author": {"role": "user"}, "content": {"parts": ["hello"]}},
              "parent": None, "children": ["b"]},
        "b": {"message": {"author": {"role": "assistant"}, "content": {"parts": ["hi!"]}},
              "parent": "a", "children": []},
    },
    "current_node": "b",
    "create_time": 1_700_000_000,
}  # fmt: skip
LM_STUDIO = {
    "name": "x",
    "createdAt": 1_700_000_000_000,
    "messages": [{"versions": [{"type": "singleStep", "role": "user",
                                "content": [{"type": "text", "text": "hi"}]}],
                  "currentlySelected": 0}],
}  # fmt: skip


def bomb(key: str = "x") -> str:
    """An object nested DEEP levels: {"x": {"x": ... 1 ...}}."""
    return f'{{"{key}": ' * DEEP + "1" + "}" * DEEP


def huge() -> str:
    return "9" * DIGITS


def hostile_files(folder: Path) -> dict[str, Path]:
    """One file per hostile class of issue 40, by name."""
    files = {
        # a whole document refused: one sentence, exit 2
        "lm studio nesting bomb": json.dumps({**LM_STUDIO, "deep": "@"}).replace('"@"', bomb()),
        "lm studio huge number": json.dumps({**LM_STUDIO, "n": "@"}).replace('"@"', huge()),
        "json lines: only a nesting bomb": '{"request": ' + bomb() + "}\n",
        "chatgpt: every item a bomb": "[" + bomb("mapping") + ", " + bomb("mapping") + "]",
        "run file nesting bomb": "[" * DEEP,
        "run file huge number": '{"id": "x", "created_at": ' + huge() + "}",
        # one bad item among good ones: skipped and counted, the rest imported
        "json lines: first line a bomb": '{"request": ' + bomb() + "}\n" + JSONL_LINE + "\n",
        "json lines: a huge number": '{"usage": {"prompt_tokens": '
        + huge()
        + "}}\n"
        + JSONL_LINE
        + "\n",
        "chatgpt: one item a bomb": "["
        + json.dumps(CONVERSATION)
        + ", "
        + bomb("mapping")
        + ", "
        + json.dumps(CONVERSATION)
        + "]",
        "server log: a 5,000-digit number": (
            "slot launch_slot_: id  0 | task 5 | processing task\n"
            f"slot update_slots: id  0 | task 5 | new prompt, task.n_tokens = {huge()}\n"
            "slot print_timing: id  0 | task 5 | prompt eval time = 38.03 ms / 11 tokens\n"
            "slot print_timing: id  0 | task 5 | eval time = 38.03 ms / 12 tokens\n"
            "slot print_timing: id  0 | task 5 | total time = 76.06 ms / 23 tokens\n"
            "slot      release: id  0 | task 5 | stop processing: n_tokens = 23\n"
        ),
    }
    out = {}
    for name, text in files.items():
        path = folder / (name.replace(" ", "-").replace(":", "").replace(",", "") + ".json")
        path.write_text(text, encoding="utf-8")
        out[name] = path
    return out


def one_line(done: subprocess.CompletedProcess) -> str:
    """The one stderr line of a command that failed or told something."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr[-2000:]
    line = lines[0]
    assert line.startswith("advisor: "), line
    assert "Traceback" not in done.stderr and "unexpected error" not in line, line
    assert "This is a bug" not in line, line
    return line


def snapshot(home: Path) -> dict[str, bytes]:
    """Every file the app keeps (not its log, lock files or caches), by path."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.suffix not in (".log", ".lock") and "cache" not in p.parts
    }


def advisor_process(home: Path, *args: str) -> subprocess.Popen:
    """`advisor ARGS` as its own process (stdout and stderr kept)."""
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "advisor", *args], env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


# a benchmark's own writes, without llama.cpp: a run into the history, the hardware cache,
# and a setting, as `advisor bench` and the app do while imports run beside them
BENCH_WRITES = """
import json, sys, time
from pathlib import Path
from advisor.core.infra.paths import app_paths
from advisor.core.infra.settings import SettingsStore
from advisor.core.runs.history import History
from advisor.core.runs.results import RunResult
paths = app_paths(sys.argv[1]).ensure()
run = json.loads(Path(sys.argv[2]).read_text())
history = History(paths.data / "runs")
for i in range(int(sys.argv[3])):
    history.save(RunResult.from_json({**run, "id": f"{sys.argv[4]}-{i}"}))
    SettingsStore.open(paths.settings_file).update(reps=1 + i % 9)
"""


def all_json_files_valid(home: Path) -> int:
    """Every *.json the app keeps parses; how many there are."""
    n = 0
    for path in home.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))
        n += 1
    return n


def wait_all(procs: list[subprocess.Popen], timeout_s: float = 300) -> list[tuple[int, str]]:
    """(exit status, stderr) of each process, in order."""
    deadline = time.monotonic() + timeout_s
    out = []
    for p in procs:
        _, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        out.append((p.returncode, err))
    return out


def seed_workloads(home: Path, *names: str) -> Path:
    """A home whose store holds `names` (imported for real); the traffic file used."""
    log = home.parent / "seed.jsonl"
    log.write_text(JSONL_LINE + "\n", encoding="utf-8")
    for name in names:
        done = _in_process(["workload", "import", str(log), "--name", name], home)
        assert done.returncode == 0, done.stderr
    return log


def saved_names(home: Path) -> set[str]:
    doc = json.loads((home / "data" / "workloads.json").read_text(encoding="utf-8"))
    return set(doc["workloads"])


def fail_writes(monkeypatch, err: int) -> None:
    """Every atomic write fails as a full disk (ENOSPC) or an unwritable folder (EACCES)
    would: injected, since this CI runs as root and root writes anywhere."""
    from advisor.core.infra import atomic

    def refuse(*args, **kwargs):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)


def deny_reading(monkeypatch, denied: Path) -> None:
    """Reading this one file fails as a file without read permission would (injected: this
    CI runs as root, and root reads anything); every other file reads as usual."""
    real_read = Path.read_bytes

    def read(path: Path) -> bytes:
        if path == denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", read)

"""The red-team table: hostile values and files given to every command.

Each case asserts what a person must see: a non-zero exit (2 for a mistake), one line on
stderr that starts with "advisor:", no traceback, no "unexpected error", and the saved
history, settings and workloads byte-for-byte unchanged afterwards. Nothing here runs
llama.cpp: every refusal happens in the validators before any work starts (`bench` cases are
run in-process for that reason, with the benchmark child never started).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _in_process

NUMBERS = ("0", "-1", "nan", "inf", "-inf", "1e30", "abc", "", "0x10", "1,5")
SHAPE = ("--shape", "llama-3.2-1b", "--quant", "q4_0")
PROJECT = ("project", *SHAPE, "--to", "RTX 4090")


def _cases() -> list[tuple[str, tuple[str, ...], int]]:
    """(case id, argv, expected exit code)."""
    out: list[tuple[str, tuple[str, ...], int]] = []

    def add(name: str, argv: tuple[str, ...], code: int = 2) -> None:
        out.append((name, argv, code))

    # bench: every numeric option, every hostile value (refused before the child starts)
    for opt in ("--pp", "--tg", "--reps", "--depth", "--batch", "--threads", "--gpu-layers",
                "--batch-size", "--ubatch-size", "--layers"):  # fmt: skip
        for v in NUMBERS:
            if opt in ("--pp", "--tg", "--depth", "--gpu-layers") and v == "0":
                continue  # no prefill test, no decode test, depth 0, no GPU layers: valid
            if opt in ("--pp", "--tg", "--depth", "--batch") and v == "1,5":
                continue  # a list of two values
            add(f"bench {opt} {v!r}", ("bench", "--synthetic", "llama-3.2-1b:q4_0", opt, v))
    add("bench --threads huge", ("bench", "--synthetic", "llama-3.2-1b:q4_0", "--threads",
                                 "100000"))  # fmt: skip
    add("bench --batch 100000", ("bench", "--synthetic", "llama-3.2-1b:q4_0", "--batch",
                                 "100000"))  # fmt: skip
    small = ("--batch-size", "256", "--ubatch-size", "512")
    add("bench --ubatch above --batch-size", ("bench", "--synthetic", "llama-3.2-1b:q4_0", *small))
    for v in ("0", "-1", "nan", "inf", "abc"):
        add(f"bench --watchdog {v!r}", ("bench", "--synthetic", "llama-3.2-1b:q4_0",
                                        "--watchdog", v))  # fmt: skip
    add("bench --layers 100000 (refused before writing)", ("bench", "--synthetic",
        "llama-3.2-1b:q4_0", "--layers", "100000"))  # fmt: skip
    add("bench unknown shape", ("bench", "--synthetic", "llama-9-900b:q4_0"))
    add("bench unknown quant", ("bench", "--synthetic", "llama-3.2-1b:q3_zz"))
    add("bench no model", ("bench",))
    # project: the measured figures and the host
    for opt in ("--from-tg", "--from-pp", "--memory-gb", "--ram-gb", "--ram-bandwidth-gbs",
                "--depth", "--concurrency", "--prompt", "--answer"):  # fmt: skip
        for v in NUMBERS:
            if opt in ("--depth", "--prompt") and v == "0":
                continue
            extra = ("--from-device", "RTX 3060") if opt.startswith("--from-") else ()
            add(f"project {opt} {v!r}", (*PROJECT, *extra, opt, v))
    add("project unknown device", ("project", *SHAPE, "--to", "RTX 9999 Ultra"))
    add("project unknown workload", (*PROJECT, "--workload", "gaming"))
    add("project unknown backend", (*PROJECT, "--backend", "opencl"))
    add("project unknown --from-backend", (*PROJECT, "--from-device", "RTX 3060", "--from-tg",
                                           "30", "--from-backend", "foo"))  # fmt: skip
    add("project --from-tg without device", (*PROJECT, "--from-tg", "30"))
    add("project absurd measured decode", (*PROJECT, "--from-device", "RTX 3060", "--from-tg",
                                           "90000"))  # fmt: skip
    # fits and workload size
    for v in NUMBERS:
        if v == "0":
            continue  # --min-tps 0 means "no minimum"
        add(f"fits --min-tps {v!r}", ("fits", "--device", "RTX 4090", "--min-tps", v))
    for opt in ("--ttft", "--min-tps", "--peak"):
        for v in ("0", "-1", "nan", "inf", "1e30", "abc"):
            add(f"workload size {opt} {v!r}", ("workload", "size", "chat", "--device",
                                                "RTX 4090", *SHAPE, opt, v))  # fmt: skip
    add("workload size unknown", ("workload", "size", "nobody", "--device", "RTX 4090"))
    add("workload import preset name", ("workload", "import", "{team}", "--name", "chat"))
    add("workload import bad format", ("workload", "import", "{team}", "--format", "csv"))
    add("workload import long name", ("workload", "import", "{team}", "--name", "x" * 200))
    add("workload delete unknown", ("workload", "delete", "nobody"))
    # synth
    add("synth unknown shape", ("synth", "{tmp}/a.gguf", "--shape", "nope-7b"))
    add("synth unknown quant", ("synth", "{tmp}/a.gguf", "--shape", "llama-3.2-1b", "--quant",
                                "q9_9"))  # fmt: skip
    for v in ("0", "-1", "nan", "1000", "abc"):
        add(f"synth --layers {v!r}", ("synth", "{tmp}/a.gguf", "--shape", "llama-3.2-1b",
                                      "--layers", v))  # fmt: skip
    add("synth onto a folder", ("synth", "{tmp}", "--shape", "llama-3.2-1b", "--layers", "1"))
    add("synth over a file", ("synth", "{existing}", "--shape", "llama-3.2-1b", "--layers", "1"))
    add("bench with no test at all", ("bench", "--synthetic", "llama-3.2-1b:q4_0", "--pp", "0",
                                      "--tg", "0"))  # fmt: skip
    # files the app reads
    for name in ("missing", "folder", "empty", "text", "devzero", "huge", "array", "wrongtypes",
                 "nan"):  # fmt: skip
        add(f"project --result {name}", ("project", *SHAPE, "--result", f"{{{name}}}"))
    for name in ("missing", "folder", "empty", "text", "devzero"):
        add(f"inspect {name}", ("inspect", f"{{{name}}}"))
        add(f"workload import {name}", ("workload", "import", f"{{{name}}}"))
    return out


CASES = _cases()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "inputs"
    tmp.mkdir()
    (tmp / "folder").mkdir()
    (tmp / "empty").write_bytes(b"")
    (tmp / "text").write_text("<html>Rate limit exceeded</html>\n", encoding="utf-8")
    (tmp / "existing.gguf").write_bytes(b"keep me")
    huge = tmp / "huge.json"
    with huge.open("wb") as fh:  # sparse: past the run-file size cap without using the disk
        fh.seek(300 * 2**20)
        fh.write(b"}")
    (tmp / "array.json").write_text("[1, 2, 3]", encoding="utf-8")
    (tmp / "wrongtypes.json").write_text(
        json.dumps({"id": 5, "tests": "many", "model": [], "created_at": {}}), encoding="utf-8"
    )
    (tmp / "nan.json").write_text('{"id": "x", "tests": [{"tokens_per_s": NaN}]}')
    team = tmp / "team.jsonl"
    team.write_text(
        json.dumps({"request": {"messages": [{"role": "user", "content": "hi"}]},
                    "response": {"choices": [{"message": {"role": "assistant",
                                                           "content": "hello"}}]}}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    return {
        "tmp": str(tmp),
        "missing": str(tmp / "nowhere.json"),
        "folder": str(tmp / "folder"),
        "empty": str(tmp / "empty"),
        "text": str(tmp / "text"),
        "devzero": "/dev/zero" if os.path.exists("/dev/zero") else str(tmp / "empty"),
        "huge": str(huge),
        "array": str(tmp / "array.json"),
        "wrongtypes": str(tmp / "wrongtypes.json"),
        "nan": str(tmp / "nan.json"),
        "existing": str(tmp / "existing.gguf"),
        "team": str(team),
    }


def _snapshot(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".jsonl") and "cache" not in p.parts
    }


@pytest.fixture(scope="module")
def seeded_home(tmp_path_factory) -> Path:
    """An app folder with one saved workload and settings, so 'unchanged' means something;
    made once, copied for each case."""
    h = tmp_path_factory.mktemp("seeded") / "home"
    h.mkdir()
    log = h.parent / "seed.jsonl"
    log.write_text(
        json.dumps({"request": {"messages": [{"role": "user", "content": "hello there"}]},
                    "response": {"choices": [{"message": {"role": "assistant",
                                                           "content": "hi"}}]}}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    done = _in_process(["workload", "import", str(log), "--name", "seed"], h)
    assert done.returncode == 0, done.stderr
    from advisor.core.infra.paths import app_paths
    from advisor.core.infra.settings import SettingsStore

    store = SettingsStore.open(app_paths(h).ensure().settings_file)
    store.update(budget_usd=1200)
    store.flush()
    return h


@pytest.fixture
def home(tmp_path: Path, seeded_home: Path) -> Path:
    h = tmp_path / "home"
    shutil.copytree(seeded_home, h)
    os.environ["ADVISOR_HOME"] = str(h)
    return h


@pytest.fixture
def no_benchmark(monkeypatch):
    """A hostile value that got past the validators would start llama.cpp: fail instead."""
    from advisor.bench import controller

    def refuse(self):
        raise AssertionError("the benchmark started: the input was not refused")

    monkeypatch.setattr(controller.BenchJob, "start", refuse)
    monkeypatch.setattr(controller, "run_child_json", lambda *a, **k: {"available": False})


@pytest.mark.parametrize(("name", "argv", "code"), CASES, ids=[c[0] for c in CASES])
def test_hostile_input_is_one_sentence_and_nothing_changes(
    name, argv, code, files, home, no_benchmark
):
    args = [a.format(**files) for a in argv]
    before = _snapshot(home)
    done = _in_process(args, home)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == code, (name, done.returncode, done.stderr, done.stdout[-300:])
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert line.startswith("advisor: ") and line.rstrip().endswith((".", ")", "?")), line
    assert "Traceback" not in done.stderr and "unexpected" not in line.lower(), line
    assert _snapshot(home) == before
    if "existing" in " ".join(argv):
        assert Path(files["existing"]).read_bytes() == b"keep me"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize(
    "argv",
    [
        ("inspect", "{fifo}"),
        ("workload", "import", "{fifo}"),
        ("project", *SHAPE, "--result", "{fifo}"),
    ],
    ids=["inspect", "workload import", "project --result"],
)
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(argv, tmp_path):
    """Opening a FIFO blocks until someone writes: the app must look before it opens. Run in a
    child process with a timeout, so a regression fails instead of hanging the suite."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    args = [a.format(fifo=fifo) for a in argv]
    env = {**os.environ, "ADVISOR_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr


def test_the_table_is_large():
    assert len(CASES) >= 190

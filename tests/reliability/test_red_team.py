"""The red-team table: hostile values and files given to every command; then a class per
item of issue 40 (imports at the same moment, a damaged store, a full or unwritable folder,
hostile JSON, the crash path, the app's start, the smaller items).

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
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conftest import _in_process
from tests.reliability.hostile import (
    BENCH_WRITES,
    CONVERSATION,
    JSONL_LINE,
    LM_STUDIO,
    advisor_process,
    all_json_files_valid,
    hostile_files,
    one_line,
    snapshot,
    wait_all,
)

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


# --- issue 40: what version 2 added (imports, the workload store, run files, settings) -----


def _seed_workloads(home: Path, *names: str) -> Path:
    """A home whose store holds `names` (imported for real); the traffic file used."""
    log = home.parent / "seed.jsonl"
    log.write_text(JSONL_LINE + "\n", encoding="utf-8")
    for name in names:
        done = _in_process(["workload", "import", str(log), "--name", name], home)
        assert done.returncode == 0, done.stderr
    return log


def _saved_names(home: Path) -> set[str]:
    doc = json.loads((home / "data" / "workloads.json").read_text(encoding="utf-8"))
    return set(doc["workloads"])


class TestConcurrentImportsLoseNothing:
    """Imports started at the same moment (a script, `xargs -P`, the app beside the command
    line) each keep their workload, beside a benchmark writing its own files."""

    def _rounds(self, tmp_path, rounds: int, imports: int, bench) -> list[int]:
        home = tmp_path / "home"
        log = _seed_workloads(home, "before")
        found = []
        for r in range(rounds):
            names = [f"r{r}-w{i}" for i in range(imports)]
            procs = [bench(home, r)] + [
                advisor_process(home, "workload", "import", str(log), "--name", n) for n in names
            ]
            results = wait_all(procs)
            for code, err in results:
                assert code == 0 and "Traceback" not in err, err[-2000:]
            saved = _saved_names(home)
            assert {"before", *names} <= saved, sorted({"before", *names} - saved)
            found.append(len(saved))
            assert all_json_files_valid(home) > 0
        return found

    def test_four_imports_and_a_benchmark_writer_twice(self, tmp_path, tiny_run):
        run = tmp_path / "run.json"
        run.write_text(json.dumps(tiny_run.to_json()), encoding="utf-8")

        def bench(home: Path, r: int) -> subprocess.Popen:
            argv = [sys.executable, "-c", BENCH_WRITES, str(home), str(run), "5", f"round{r}"]
            return subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)

        found = self._rounds(tmp_path, rounds=2, imports=4, bench=bench)
        assert found == [5, 9]
        assert len(list((tmp_path / "home" / "data" / "runs").glob("*.json"))) == 10

    @pytest.mark.slow
    @pytest.mark.llama
    def test_eight_imports_and_a_real_benchmark_twenty_times(self, tmp_path):
        def bench(home: Path, r: int) -> subprocess.Popen:
            return advisor_process(home, "bench", "--synthetic", "qwen2.5-0.5b:q4_0",
                                   "--layers", "2", "--pp", "16", "--tg", "8", "--reps", "1",
                                   "--quiet")  # fmt: skip

        found = self._rounds(tmp_path, rounds=20, imports=8, bench=bench)
        expected = [1 + 8 * (r + 1) for r in range(20)]
        runs = list((tmp_path / "home" / "data" / "runs").glob("*.json"))
        print(
            f"\n[concurrency] 20 rounds of 8 imports + a benchmark: {found[-1]} of "
            f"{expected[-1]} workloads present, {len(runs)} runs, every file valid JSON"
        )
        assert found == expected
        assert len(runs) == 20


def _damage(home: Path, how: str) -> None:
    """Damage the saved workload 'bad' (or the whole file) the way a hand edit or a sync tool
    does."""
    path = home / "data" / "workloads.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    record = doc["workloads"]["bad"]
    if how == "wrong type":
        record["stats"]["requests"] = "many"
    elif how == "missing key":
        del record["numbers"]
    elif how == "NaN":
        record["stats"]["answer_tokens_median"] = float("nan")
    elif how == "folder":
        path.unlink()
        path.mkdir()
        return
    elif how == "deep nesting":
        path.write_text('{"schema": 1, "workloads": ' + "[" * 100_000, encoding="utf-8")
        return
    elif how == "truncated":
        path.write_text(path.read_text(encoding="utf-8")[:200], encoding="utf-8")
        return
    elif how in ("one record a nesting bomb", "one record a huge number"):
        hostile = "[" * 100_000 + "]" * 100_000 if "bomb" in how else "9" * 5000
        record["saved_at_s"] = "@"
        path.write_text(json.dumps(doc).replace('"@"', hostile), encoding="utf-8")
        return
    path.write_text(json.dumps(doc), encoding="utf-8")


DAMAGES = ["wrong type", "missing key", "NaN", "folder", "deep nesting", "truncated",
           "one record a nesting bomb", "one record a huge number"]  # fmt: skip
WHOLE = {"folder", "deep nesting", "truncated"}  # the file as a whole is set aside


class TestDamagedStore:
    """A damaged saved-workloads file: each command works with the good records, or says in
    one sentence what was set aside and where; never 'unexpected error'."""

    COMMANDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "list": ("workload", "list"),
        "size": ("workload", "size", "good", "--device", "RTX 4090"),
        "project": ("project", "--shape", "llama-3.2-1b", "--quant", "q4_0", "--to", "RTX 4090",
                    "--workload", "good"),
        "fits": ("fits", "--device", "RTX 4090", "--workload", "good"),
        "delete": ("workload", "delete", "good"),
    }  # fmt: skip

    @pytest.mark.parametrize("how", DAMAGES)
    @pytest.mark.parametrize("command", list(COMMANDS))
    def test_the_command_works_or_says_what_was_set_aside(self, tmp_path, how, command):
        home = tmp_path / "home"
        _seed_workloads(home, "good", "bad")
        _damage(home, how)
        done = _in_process(list(self.COMMANDS[command]), home)
        line = one_line(done)
        aside = list((home / "data").glob("workloads.corrupt-*"))
        assert len(aside) == 1 and aside[0].name in line and str(home / "data") in line, line
        if how in WHOLE:  # the good workload went aside with the file: named, not lost
            assert done.returncode in (0, 2), done.stderr
        else:  # the good record still works
            assert done.returncode == 0, done.stderr
            assert "'bad'" in line
            assert ("serves" if command == "size" else "good") in done.stdout
            assert ("good" in _saved_names(home)) == (command != "delete")
        again = _in_process(list(self.COMMANDS["list"]), home)
        assert again.returncode == 0 and not again.stderr.strip()  # healed once, for good
        assert "set aside as damaged are kept in" in again.stdout

    def test_a_name_that_went_aside_with_the_file_says_where(self, tmp_path):
        home = tmp_path / "home"
        _seed_workloads(home, "kept", "bad")
        _damage(home, "truncated")
        _in_process(["workload", "list"], home)  # this one set it aside and said so
        done = _in_process([*self.COMMANDS["project"][:-1], "kept"], home)
        assert done.returncode == 2
        line = one_line(done)
        assert "Unknown workload 'kept'" in line and str(home / "data") in line

    @pytest.mark.parametrize("command", ["import", "delete", "list"])
    def test_a_store_that_cannot_be_read_now_is_never_replaced(
        self, tmp_path, monkeypatch, command
    ):
        """A workloads file the user cannot read (no permission; injected, as this CI runs as
        root): a change is refused in one sentence, the file left as it is."""
        home = tmp_path / "home"
        log = _seed_workloads(home, "earlier")
        store = home / "data" / "workloads.json"
        before = snapshot(home)
        real_read = Path.read_bytes

        def denied(path: Path) -> bytes:
            if path == store:
                raise PermissionError(13, "Permission denied", str(path))
            return real_read(path)

        monkeypatch.setattr(Path, "read_bytes", denied)
        argv = {
            "import": ["workload", "import", str(log), "--name", "new"],
            "delete": ["workload", "delete", "earlier"],
            "list": ["workload", "list"],
        }
        done = _in_process(argv[command], home)
        monkeypatch.undo()
        line = one_line(done)
        assert "cannot be read now (permission denied)" in line and str(store) in line, line
        assert done.returncode == (0 if command == "list" else 1)
        assert snapshot(home) == before and _saved_names(home) == {"earlier"}


def _fail_writes(monkeypatch, err: int) -> None:
    """Every atomic write fails as a full disk (ENOSPC) or an unwritable folder (EACCES)
    would: injected, since this CI runs as root and root writes anywhere."""
    from advisor.core.infra import atomic

    def refuse(*args, **kwargs):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)


class TestFullOrUnwritableFolderDuringImport:
    @pytest.mark.parametrize(("err", "why"), [(28, "the disk is full"),
                                              (13, "permission denied")])  # fmt: skip
    def test_one_sentence_naming_the_folder_and_earlier_workloads_intact(
        self, tmp_path, monkeypatch, err, why
    ):
        home = tmp_path / "home"
        log = _seed_workloads(home, "earlier")
        before = snapshot(home)
        _fail_writes(monkeypatch, err)
        done = _in_process(["workload", "import", str(log), "--name", "new"], home)
        monkeypatch.undo()
        assert done.returncode == 1
        line = one_line(done)
        assert why in line and str(home / "data") in line and "'new'" in line, line
        assert snapshot(home) == before
        assert _saved_names(home) == {"earlier"}

    def test_a_really_full_disk_as_a_real_process(self, tmp_path):
        """The app's whole folder on a 192 KiB filesystem, filled: the import (and its log)
        meet a real ENOSPC from the kernel."""
        import errno

        mount = tmp_path / "tiny-fs"
        mount.mkdir()
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=192k", "tmpfs", str(mount)],
                              capture_output=True)  # fmt: skip
        if made.returncode != 0:
            pytest.skip("cannot mount a small filesystem here")
        try:
            home = mount / "home"
            log = _seed_workloads(tmp_path / "seed-home", "x")
            first = advisor_process(home, "workload", "import", str(log), "--name", "earlier")
            assert wait_all([first])[0][0] == 0
            with open(mount / "filler", "wb", buffering=0) as fh:
                try:
                    while True:
                        fh.write(b"\0" * 4096)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
            before = snapshot(home)
            (code, err), = wait_all([advisor_process(home, "workload", "import", str(log),
                                                     "--name", "new")])  # fmt: skip
            assert code == 1 and "Traceback" not in err, err
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert len(lines) == 1 and "the disk is full" in lines[0], err
            assert snapshot(home) == before and _saved_names(home) == {"earlier"}
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)

    @pytest.mark.slow
    def test_a_benchmark_on_a_full_disk_says_so_as_the_users_situation(self, tmp_path):
        """The synthetic model cannot be written: its sentence, not 'failed unexpectedly
        (SynthError: ...)' (a real process on a 512 KiB filesystem)."""
        mount = tmp_path / "tiny-fs"
        mount.mkdir()
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
                              capture_output=True)  # fmt: skip
        if made.returncode != 0:
            pytest.skip("cannot mount a small filesystem here")
        try:
            (code, err), = wait_all([advisor_process(
                mount / "home", "bench", "--synthetic", "qwen2.5-0.5b:q4_0", "--layers", "2",
                "--pp", "16", "--tg", "8", "--reps", "1", "--quiet")])  # fmt: skip
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)
        assert code == 1
        line = one_line(subprocess.CompletedProcess([], code, "", err))
        assert "free on the disk" in line and "unexpectedly" not in line, line

    def test_an_os_error_in_the_benchmark_child_is_the_users_situation(self):
        from advisor.bench.child import _failure_sentence

        full = OSError(28, "No space left on device", "/home/u/.cache/model.gguf")
        assert _failure_sentence(full) == (
            "The benchmark could not use /home/u/.cache/model.gguf (the disk is full); free "
            "some space or check the folder, then try again."
        )
        assert "failed unexpectedly (KeyError" in _failure_sentence(KeyError("x"))  # a bug


REFUSED = ["lm studio nesting bomb", "lm studio huge number", "json lines: only a nesting bomb",
           "chatgpt: every item a bomb"]  # fmt: skip
SKIPPED = ["json lines: first line a bomb", "json lines: a huge number",
           "chatgpt: one item a bomb", "server log: a 5,000-digit number"]  # fmt: skip


def _chatgpt_child_an_object() -> tuple[str, str]:
    conversation = json.loads(json.dumps(CONVERSATION))
    del conversation["current_node"]  # the leaf is then found by following the children
    conversation["mapping"]["b"]["children"] = [{"id": "c"}]
    return "conversations.json", json.dumps([conversation])


def _jsonl_usage(value: str) -> Callable[[], tuple[str, str]]:
    def make() -> tuple[str, str]:
        line = json.loads(JSONL_LINE)
        line["response"]["usage"] = {"prompt_tokens": "@", "completion_tokens": "@"}
        return "log.jsonl", json.dumps(line).replace('"@"', value) + "\n"

    return make


def _lm_studio_steps_a_number() -> tuple[str, str]:
    doc = json.loads(json.dumps(LM_STUDIO))
    answer = {"type": "multiStep", "role": "assistant", "steps": 1e308}
    doc["messages"].append({"versions": [answer], "currentlySelected": 0})
    return "x.conversation.json", json.dumps(doc)


_HOSTILE_VALUES: dict[str, Callable[[], tuple[str, str]]] = {
    "chatgpt: a child id that is an object": _chatgpt_child_an_object,
    "json lines: a count of 2**63": _jsonl_usage(str(2**63)),
    "json lines: a count of 1e308": _jsonl_usage("1e308"),
    "lm studio: steps that are a number": _lm_studio_steps_a_number,
}


class TestHostileJson:
    """Every hostile JSON class: a whole file refused is one sentence, exit 2, nothing saved
    changes; one bad item in a format that allows it is skipped and counted, the rest kept."""

    @pytest.fixture
    def seeded(self, tmp_path):
        home = tmp_path / "home"
        _seed_workloads(home, "earlier")
        return home, hostile_files(tmp_path)

    @pytest.mark.parametrize("name", REFUSED)
    def test_a_hostile_import_is_one_sentence_and_nothing_changes(self, seeded, name):
        home, files = seeded
        before = snapshot(home)
        done = _in_process(["workload", "import", str(files[name]), "--name", "new"], home)
        assert done.returncode == 2, done.stderr
        one_line(done)
        assert snapshot(home) == before

    @pytest.mark.parametrize("name", SKIPPED)
    def test_one_hostile_item_is_skipped_and_counted(self, seeded, name):
        home, files = seeded
        done = _in_process(["workload", "import", str(files[name]), "--name", "new", "--json"],
                           home)  # fmt: skip
        assert done.returncode == 0 and not done.stderr.strip(), done.stderr
        stats = json.loads(done.stdout)["stats"]
        assert stats["malformed_skipped"] == 1 and stats["requests"] >= 1
        assert _saved_names(home) == {"earlier", "new"}

    @pytest.mark.parametrize("how", list(_HOSTILE_VALUES))
    def test_a_hostile_value_in_one_item_is_no_bug(self, tmp_path, how):
        """Values of the wrong kind where an export holds ids, counts and steps (found by
        mutating the fixtures: 3 of 1,200 imports ended as 'unexpected error'). The item is
        read without the value, or skipped; never a bug report."""
        name, text = _HOSTILE_VALUES[how]()
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        done = _in_process(["workload", "import", str(path), "--name", "new", "--json"],
                           tmp_path / "home")  # fmt: skip
        assert done.returncode == 0, done.stderr
        stats = json.loads(done.stdout)["stats"]
        assert stats["requests"] >= 1
        assert all(0 <= stats[k] <= 1e9 for k in stats if k.endswith("_median"))

    @pytest.mark.parametrize("name", ["run file nesting bomb", "run file huge number"])
    def test_a_hostile_run_file_is_one_sentence(self, seeded, name):
        home, files = seeded
        before = snapshot(home)
        done = _in_process([*PROJECT, "--result", str(files[name])], home)
        assert done.returncode == 2
        assert files[name].name in one_line(done)
        assert snapshot(home) == before

    @pytest.mark.parametrize(
        ("part", "key", "value"),
        [("model", "n_layers", 2**62), ("model", "active_params", 0),
         ("hardware", "peak_flops_per_s", -1), ("config", "cache_type_k", "zz"),
         ("model", "weights_bytes", 1e300)],
    )  # fmt: skip
    def test_a_run_file_with_a_value_no_run_has_is_one_sentence(
        self, tmp_path, tiny_run, part, key, value
    ):
        """A hand-edited run whose types are right and whose values are not (found by
        mutating a real run: 3 of 1,800 projections ended as 'unexpected error')."""
        from advisor.core.runs.history import History

        doc = tiny_run.to_json()
        doc[part][key] = value
        run = tmp_path / "edited.json"
        run.write_text(json.dumps(doc), encoding="utf-8")
        done = _in_process([*PROJECT, "--result", str(run)], tmp_path / "home")
        assert done.returncode == 2
        assert key in one_line(done) and "edited.json" in one_line(done)
        history = History(tmp_path / "runs")
        history.save(tiny_run)
        (history.folder / "edited.json").write_text(json.dumps(doc), encoding="utf-8")
        report = history.load()  # the edited run is set aside by itself, the other loads
        assert [r.id for r in report.runs] == [tiny_run.id] and len(report.set_aside) == 1

    def test_a_hostile_store_is_set_aside_in_one_sentence(self, seeded):
        home, _ = seeded
        (home / "data" / "workloads.json").write_text("[" * 100_000, encoding="utf-8")
        done = _in_process([*PROJECT, "--workload", "chat"], home)  # a preset: no store read
        assert done.returncode == 0 and not done.stderr.strip()
        done = _in_process(["workload", "list"], home)
        assert done.returncode == 0 and "nested more than" in one_line(done)

    def test_hostile_history_files_are_set_aside_one_by_one(self, tmp_path, tiny_run):
        from advisor.core.runs.history import History

        history = History(tmp_path / "runs")
        history.save(tiny_run)
        (history.folder / "bomb.json").write_text("[" * 100_000, encoding="utf-8")
        (history.folder / "digits.json").write_text('{"id": ' + "7" * 5000 + "}")
        (history.folder / "latin1.json").write_bytes(b'{"id": "caf\xe9"}')  # not UTF-8
        report = history.load()
        assert [r.id for r in report.runs] == [tiny_run.id]
        assert len(report.set_aside) == 3 and "nested more than" in " ".join(report.set_aside)


class TestTheCrashPathCannotCrash:
    def test_a_log_that_cannot_be_read_is_said_as_such(self, tmp_path, monkeypatch):
        """A llama-server log owned by a service account: 'cannot be read (permission
        denied)', exit 2 (injected: this CI runs as root)."""
        import builtins

        log = tmp_path / "llama-server.log"
        log.write_text("slot launch_slot_: id  0 | task 1 | processing task\n")
        real_open = builtins.open

        def guarded(file, *args, **kwargs):
            if str(file) == str(log):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", guarded)
        done = _in_process(["workload", "import", str(log)], tmp_path / "home")
        monkeypatch.undo()
        assert done.returncode == 2
        assert "cannot be read (permission denied)" in one_line(done)

    def test_an_os_error_that_reaches_the_top_is_the_users_situation(self, tmp_path, monkeypatch):
        from advisor.cli.commands import devices

        def denied(args):
            raise PermissionError(13, "Permission denied", "/somewhere/catalogue.json")

        monkeypatch.setattr(devices, "run", denied)
        done = _in_process(["devices"], tmp_path / "home")
        assert done.returncode == 1
        line = one_line(done)
        assert "/somewhere/catalogue.json cannot be used (permission denied)" in line

    @pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
    def test_output_sent_to_a_full_disk_is_one_sentence(self, tmp_path):
        env = {**os.environ, "ADVISOR_HOME": str(tmp_path / "home")}
        with open("/dev/full", "w") as full:
            argv = [sys.executable, "-m", "advisor", "shapes"]
            done = subprocess.run(argv, env=env, stdout=full, stderr=subprocess.PIPE, text=True)
        assert done.returncode == 1
        assert "The output could not be written (the disk is full)" in one_line(done)

    def test_a_log_file_that_fails_while_written_prints_nothing(self, tmp_path, monkeypatch):
        import io
        import logging

        from advisor.core.infra import logs
        from advisor.core.infra.paths import app_paths

        monkeypatch.setattr(logs, "_configured", False)
        root = logging.getLogger()
        before = list(root.handlers)
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        try:
            logs.setup_logging(app_paths(tmp_path / "home"), component="cli")
            handler = root.handlers[-1]
            handler.stream.close()  # as a full disk or a vanished folder would make it fail
            logging.getLogger("advisor").error("after the log broke")
        finally:
            for h in root.handlers[len(before) :]:
                root.removeHandler(h)
            logs._configured = False
        assert err.getvalue() == ""  # no '--- Logging error ---' traceback on the terminal


class TestTheAppAlwaysStarts:
    @pytest.mark.parametrize(
        "content",
        ['{"reps": ' + "[" * 100_000, '{"reps": ' + "9" * 5000 + "}", "folder", "pipe"],
        ids=["nesting bomb", "5,000 digits", "a folder", "a named pipe"],
    )
    def test_damaged_settings_start_the_window_and_a_dialog_says_what_was_reset(
        self, make_window, qtbot, content
    ):
        from advisor.core.infra.paths import app_paths
        from advisor.gui.qt import QtWidgets

        settings = app_paths().ensure().settings_file
        settings.parent.mkdir(parents=True, exist_ok=True)
        if content == "folder":
            settings.mkdir()
        elif content == "pipe":
            if not hasattr(os, "mkfifo"):
                pytest.skip("named pipes are POSIX")
            os.mkfifo(settings)  # opening it would wait for a writer: the app would never start
        else:
            settings.write_text(content, encoding="utf-8")
        window, services = make_window()
        assert window.isVisible()
        box = window.findChild(QtWidgets.QMessageBox, "SettingsResetDialog")
        qtbot.waitUntil(lambda: box.isVisible(), timeout=5000)
        (kept,) = settings.parent.glob("settings.corrupt-*")
        assert "reset to" in box.text() and kept.name in box.text(), box.text()
        assert "(reps)" in box.text() or "every setting" in box.text()  # says what was reset
        assert services.settings.current.reps == 5  # the defaults
        services.settings.update(reps=3)
        services.settings.flush()
        assert json.loads(settings.read_text(encoding="utf-8"))["reps"] == 3  # healed

    def test_one_hostile_setting_resets_alone_and_the_next_start_is_quiet(self, make_window, qtbot):
        from advisor.core.infra.paths import app_paths
        from advisor.core.infra.settings import SettingsStore
        from advisor.gui.qt import QtWidgets

        settings = app_paths().ensure().settings_file
        settings.parent.mkdir(parents=True, exist_ok=True)
        bomb = "[" * 100_000 + "]" * 100_000
        settings.write_text('{"theme": "dark", "reps": 3, "prices_usd": ' + bomb + "}")
        window, services = make_window()
        box = window.findChild(QtWidgets.QMessageBox, "SettingsResetDialog")
        qtbot.waitUntil(lambda: box.isVisible(), timeout=5000)
        assert "(prices_usd)" in box.text() and str(settings.parent) in box.text(), box.text()
        assert (services.settings.current.reps, services.settings.current.theme) == (3, "dark")
        (kept,) = settings.parent.glob("settings.corrupt-*")
        assert bomb in kept.read_text(encoding="utf-8")  # the old file is kept whole
        again = SettingsStore.open(settings)  # the file was healed: the next start says nothing
        assert again.notice == "" and again.current.reps == 3

    def test_settings_that_cannot_be_read_now_are_never_replaced(self, tmp_path, monkeypatch):
        """A settings file the user cannot read (injected: this CI runs as root): the app
        starts with the defaults and says so; a change is not written over the file."""
        from advisor.core.infra.settings import SettingsStore

        path = tmp_path / "config" / "settings.json"
        path.parent.mkdir(parents=True)
        path.write_text('{"reps": 3, "prices_usd": {"nvidia-geforce-rtx-4090": 1599}}')
        before = path.read_bytes()
        real_read = Path.read_bytes

        def denied(p: Path) -> bytes:
            if p == path:
                raise PermissionError(13, "Permission denied", str(p))
            return real_read(p)

        monkeypatch.setattr(Path, "read_bytes", denied)
        told: list[str] = []
        store = SettingsStore.open(path)
        store.on_write_error = told.append
        assert "cannot be read now (permission denied)" in store.notice
        store.update(reps=4)
        monkeypatch.undo()
        assert path.read_bytes() == before  # the user's prices are still there
        (sentence,) = told
        assert "left as it is" in sentence and str(path) in sentence
        assert store.current.reps == 4  # the change applies until the app closes

    def test_a_data_folder_that_cannot_be_made_still_opens_the_window(self, make_window, qtbot):
        """A file where the data folder should be (or a read-only disk) stopped the app with a
        traceback no one saw: the window now opens and the banner says what cannot be used."""
        from advisor.core.infra.paths import app_paths

        data = app_paths().data
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text("not a folder", encoding="utf-8")
        window, _ = make_window()
        assert window.isVisible()
        qtbot.waitUntil(window.banner.isVisible, timeout=5000)
        text = window.banner.message.text()
        assert str(data) in text and "a file stands where a folder should be" in text, text
        assert data.read_text(encoding="utf-8") == "not a folder"  # left as it was

    def test_settings_that_cannot_be_saved_are_said_once(self, make_window, qtbot, monkeypatch):
        window, services = make_window()
        _fail_writes(monkeypatch, 28)
        services.settings.update(reps=3)
        services.settings.update(reps=4)
        services.settings.flush()
        qtbot.waitUntil(window.banner.isVisible, timeout=5000)
        text = window.banner.message.text()
        assert "Your settings could not be saved" in text and "the disk is full" in text
        assert services.settings.current.reps == 4  # they still apply until the app closes


class TestSmallerItems:
    def test_sizing_for_one_person_at_once(self, tmp_path):
        done = _in_process(["workload", "size", "chat", "--device", "RTX 4090", *SHAPE,
                            "--peak", "1", "--json"], tmp_path / "home")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["load"]["peak_users"] == 1

    def test_a_file_named_like_a_preset_imports_without_a_name(self, tmp_path):
        chat = tmp_path / "chat.json"
        chat.write_text(JSONL_LINE + "\n", encoding="utf-8")
        done = _in_process(["workload", "import", str(chat), "--json"], tmp_path / "home")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["name"] == "chat-imported"
        done = _in_process([*PROJECT, "--workload", "chat-imported"], tmp_path / "home")
        assert done.returncode == 0, done.stderr

    def test_a_run_file_with_a_byte_order_mark_is_read(self, tmp_path, tiny_run):
        run = tmp_path / "run.json"
        run.write_bytes(b"\xef\xbb\xbf" + json.dumps(tiny_run.to_json()).encode())
        done = _in_process(["project", *SHAPE, "--result", str(run), "--to", "RTX 4090"],
                           tmp_path / "home")  # fmt: skip
        assert done.returncode == 0, done.stderr

    @pytest.mark.parametrize(
        "argv",
        [("project", *SHAPE, "--to", "RTX\n4090\x1b[2J"),
         ("workload", "size", "chat", "--device", "RTX\r\x1b[31m4090"),
         ("workload", "import", "{log}", "--name", "team\n\x1b[31mred")],
        ids=["device with a newline and an escape", "device with a carriage return",
             "workload name with control characters"],
    )  # fmt: skip
    def test_control_characters_in_a_name_are_never_echoed_raw(self, tmp_path, argv):
        log = tmp_path / "t.jsonl"
        log.write_text(JSONL_LINE + "\n", encoding="utf-8")
        done = _in_process([a.format(log=log) for a in argv], tmp_path / "home")
        assert done.returncode == 2
        one_line(done)
        assert "\x1b" not in done.stderr and "\r" not in done.stderr

    def test_a_stray_file_named_config_does_not_block_bench(
        self, tmp_path, monkeypatch, recorded_detect, tiny_run
    ):
        from advisor.bench import controller
        from advisor.cli.commands import bench

        class RecordedJob:
            def __init__(self, config, **kwargs):
                pass

            def events(self):
                yield tiny_run

        monkeypatch.setattr(controller, "BenchJob", RecordedJob)
        from advisor.core.catalogue.catalogue import load_catalogue

        catalogue = load_catalogue()

        def detect(paths, **kwargs):
            return recorded_detect(paths, catalogue=catalogue)

        monkeypatch.setattr(bench, "detect_machine", detect)
        home = tmp_path / "home"
        home.mkdir()
        (home / "config").write_text("not the config folder", encoding="utf-8")
        done = _in_process(["bench", "--synthetic", "qwen2.5-0.5b:q4_0", "--quiet"], home)
        assert done.returncode == 0, done.stderr
        assert (home / "config").read_text(encoding="utf-8") == "not the config folder"
        assert len(list((home / "data" / "runs").glob("*.json"))) == 1

    @pytest.mark.llama
    def test_a_stray_file_named_config_does_not_block_a_real_bench(self, tmp_path):
        home = tmp_path / "home"
        home.mkdir()
        (home / "config").write_text("stray", encoding="utf-8")
        (code, err), = wait_all([advisor_process(
            home, "bench", "--synthetic", "qwen2.5-0.5b:q4_0", "--layers", "2", "--pp", "16",
            "--tg", "8", "--reps", "1", "--quiet")])  # fmt: skip
        assert code == 0, err
        assert len(list((home / "data" / "runs").glob("*.json"))) == 1

    def test_the_lm_studio_size_cap_is_checked_before_reading(self, tmp_path, monkeypatch):
        from advisor.core.traffic import streaming

        monkeypatch.setattr(streaming, "MAX_DOCUMENT_BYTES", 1 << 20)
        big = tmp_path / "big.conversation.json"
        doc = json.dumps({**LM_STUDIO, "pad": "x" * (3 << 20)})
        big.write_text(doc, encoding="utf-8")
        read = []
        real_fill = streaming.JsonStream._fill

        def counting(self, want=None):
            read.append(want or streaming.CHUNK_BYTES)
            return real_fill(self, want)

        monkeypatch.setattr(streaming.JsonStream, "_fill", counting)
        done = _in_process(["workload", "import", str(big), "--name", "x"], tmp_path / "home")
        assert done.returncode == 2 and "larger than 1 MB" in one_line(done)
        assert sum(read) == 0  # refused by its size, before a byte of it was held

    def test_a_json_lines_file_that_shrinks_while_read_says_so(self, tmp_path, monkeypatch):
        log = tmp_path / "rotating.jsonl"
        log.write_text((JSONL_LINE + "\n") * 20_000, encoding="utf-8")
        full = log.stat().st_size
        from advisor.core.traffic import streaming

        cut = []

        def rotate_once(self, done_bytes):  # the writing program truncates the file mid-read
            if not cut and done_bytes > 0:
                cut.append(done_bytes)
                os.truncate(log, full // 2)

        monkeypatch.setattr(streaming.ReadContext, "advance", rotate_once)
        done = _in_process(["workload", "import", str(log), "--name", "r", "--json"],
                           tmp_path / "home")  # fmt: skip
        assert done.returncode == 0, done.stderr
        notes = " ".join(json.loads(done.stdout)["stats"]["notes"])
        assert "shrank" in notes and f"{full:,}" in notes

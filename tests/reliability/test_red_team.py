"""The red-team table: hostile values and files given to every command; then a class per
item of issue 40 about the saved-workloads store (imports at the same moment, a damaged store,
a full or unwritable folder). Issue 40's other items (hostile JSON, the crash path, the app's
start, the smaller items) are in test_red_team_v3.py.

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conftest import _in_process
from tests.reliability.hostile import (
    BENCH_WRITES,
    advisor_process,
    all_json_files_valid,
    deny_reading,
    fail_writes,
    one_line,
    saved_names,
    seed_workloads,
    snapshot,
    wait_all,
)

NUMBERS = ("0", "-1", "nan", "inf", "-inf", "1e30", "abc", "", "0x10", "1,5")
SHAPE = ("--shape", "llama-3.2-1b", "--quant", "q4_0")
PROJECT = ("project", *SHAPE, "--to", "RTX 4090")


@contextmanager
def tiny_filesystem(tmp_path: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of `size` ('192k') mounted under tmp_path, unmounted after; the test is
    skipped where this machine cannot mount one."""
    mount = tmp_path / "tiny-fs"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                          capture_output=True)  # fmt: skip
    if made.returncode != 0:
        pytest.skip("cannot mount a small filesystem here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


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


# --- issue 40: the saved-workloads store (imports at once, damage, a full or unwritable disk) -


class TestConcurrentImportsLoseNothing:
    """Imports started at the same moment (a script, `xargs -P`, the app beside the command
    line) each keep their workload, beside a benchmark writing its own files."""

    def _rounds(self, tmp_path, rounds: int, imports: int, bench) -> list[int]:
        home = tmp_path / "home"
        log = seed_workloads(home, "before")
        found = []
        for r in range(rounds):
            names = [f"r{r}-w{i}" for i in range(imports)]
            procs = [bench(home, r)] + [
                advisor_process(home, "workload", "import", str(log), "--name", n) for n in names
            ]
            results = wait_all(procs)
            for code, err in results:
                assert code == 0 and "Traceback" not in err, err[-2000:]
            saved = saved_names(home)
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
        seed_workloads(home, "good", "bad")
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
            assert ("good" in saved_names(home)) == (command != "delete")
        again = _in_process(list(self.COMMANDS["list"]), home)
        assert again.returncode == 0 and not again.stderr.strip()  # healed once, for good
        assert "set aside as damaged are kept in" in again.stdout

    def test_a_name_that_went_aside_with_the_file_says_where(self, tmp_path):
        home = tmp_path / "home"
        seed_workloads(home, "kept", "bad")
        _damage(home, "truncated")
        _in_process(["workload", "list"], home)  # this one set it aside and said so
        done = _in_process([*self.COMMANDS["project"][:-1], "kept"], home)
        assert done.returncode == 2
        line = one_line(done)
        assert "Unknown workload 'kept'" in line and str(home / "data") in line

    def test_the_app_says_what_was_set_aside_and_keeps_the_rest(self, make_window, qtbot):
        from advisor.core.infra.paths import app_paths

        home = app_paths().data.parent  # the app's own folder in this test
        seed_workloads(home, "good", "bad")
        _damage(home, "wrong type")
        window, services = make_window()
        qtbot.waitUntil(lambda: "good" in services.state.saved_workloads, timeout=5000)
        assert list(services.state.saved_workloads) == ["good"]
        qtbot.waitUntil(window.banner.isVisible, timeout=5000)
        text = window.banner.message.text()
        (aside,) = (home / "data").glob("workloads.corrupt-*")
        assert "'bad'" in text and aside.name in text and str(home / "data") in text, text

    @pytest.mark.parametrize("command", ["import", "delete", "list"])
    def test_a_store_that_cannot_be_read_now_is_never_replaced(
        self, tmp_path, monkeypatch, command
    ):
        """A workloads file the user cannot read (no permission; injected, as this CI runs as
        root): a change is refused in one sentence, the file left as it is."""
        home = tmp_path / "home"
        log = seed_workloads(home, "earlier")
        store = home / "data" / "workloads.json"
        before = snapshot(home)
        deny_reading(monkeypatch, store)
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
        assert snapshot(home) == before and saved_names(home) == {"earlier"}


class TestFullOrUnwritableFolderDuringImport:
    @pytest.mark.parametrize(("err", "why"), [(28, "the disk is full"),
                                              (13, "permission denied")])  # fmt: skip
    def test_one_sentence_naming_the_folder_and_earlier_workloads_intact(
        self, tmp_path, monkeypatch, err, why
    ):
        home = tmp_path / "home"
        log = seed_workloads(home, "earlier")
        before = snapshot(home)
        fail_writes(monkeypatch, err)
        done = _in_process(["workload", "import", str(log), "--name", "new"], home)
        monkeypatch.undo()
        assert done.returncode == 1
        line = one_line(done)
        assert why in line and str(home / "data") in line and "'new'" in line, line
        assert snapshot(home) == before
        assert saved_names(home) == {"earlier"}

    def test_a_really_full_disk_as_a_real_process(self, tmp_path):
        """The app's whole folder on a 192 KiB filesystem, filled: the import (and its log)
        meet a real ENOSPC from the kernel."""
        import errno

        with tiny_filesystem(tmp_path, "192k") as mount:
            home = mount / "home"
            log = seed_workloads(tmp_path / "seed-home", "x")
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
            assert snapshot(home) == before and saved_names(home) == {"earlier"}

    @pytest.mark.slow
    def test_a_benchmark_on_a_full_disk_says_so_as_the_users_situation(self, tmp_path):
        """The synthetic model cannot be written: its sentence, not 'failed unexpectedly
        (SynthError: ...)' (a real process on a 512 KiB filesystem)."""
        with tiny_filesystem(tmp_path, "512k") as mount:
            (code, err), = wait_all([advisor_process(
                mount / "home", "bench", "--synthetic", "qwen2.5-0.5b:q4_0", "--layers", "2",
                "--pp", "16", "--tg", "8", "--reps", "1", "--quiet")])  # fmt: skip
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

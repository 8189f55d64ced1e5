"""The rest of the red-team table: hostile files and folders around the app, each one sentence
(exit 2 for a mistake), never a traceback, and nothing lost.

Rows of the reliability issue's table, in its order: long names, absurd model geometry, a
damaged detection cache, app folders that are files, settings damaged twice, a SIGTERM while a
model is written. (Numeric options are in test_red_team.py, hostile run files in
test_red_team_v3.py.)
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import _in_process, write_sparse

HEADERS = Path(__file__).resolve().parents[1] / "fixtures" / "gguf"
SHAPE = ("--shape", "llama-3.2-1b", "--quant", "q4_0")


def _one_line(done) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in lines[0].lower(), lines[0]
    assert lines[0].startswith("advisor: ")
    return lines[0]


def _patch_u32(data: bytes, key: str, value: int) -> bytes:
    """Set the u32 metadata value of `key` in a GGUF header."""
    raw = struct.pack("<Q", len(key)) + key.encode()
    at = data.index(raw) + len(raw)
    assert struct.unpack_from("<I", data, at)[0] == 4, "expected a u32 value"
    out = bytearray(data)
    struct.pack_into("<I", out, at + 4, value)
    return bytes(out)


def test_a_very_long_file_name_or_path_is_one_sentence(tmp_path):
    long_name = tmp_path / ("m" * 300 + ".gguf")
    done = _in_process(["inspect", str(long_name)], tmp_path / "home")
    assert done.returncode == 2
    _one_line(done)
    deep = "/".join(["d" * 200] * 25) + "/model.gguf"  # 5,000 characters
    done = _in_process(["inspect", str(tmp_path / deep)], tmp_path / "home")
    assert done.returncode == 2
    _one_line(done)


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("llama.block_count", 2**24, "block_count"),
        ("llama.block_count", 0, "block_count"),
        ("llama.attention.head_count", 0, "head_count"),
        ("llama.attention.head_count", 2**20, "head_count"),
        ("llama.embedding_length", 0, "embedding_length"),
    ],
)
def test_geometry_no_real_model_has_is_refused_naming_the_field(
    make_synth, tmp_path, key, value, field
):
    source = make_synth("llama-3.2-1b", "q4_0", 2)
    with source.open("rb") as f:
        head = f.read(4 << 20)  # the metadata comes first; the tensor data is not read here
    bad = write_sparse(tmp_path / "odd.gguf", _patch_u32(head, key, value), source.stat().st_size)
    started = time.perf_counter()
    done = _in_process(["project", "--model", str(bad), "--to", "RTX 4090"], tmp_path / "home")
    assert time.perf_counter() - started < 10  # refused before anything sized from it
    assert done.returncode == 2, done.stderr
    assert field in _one_line(done).lower()


def test_a_damaged_detection_cache_is_discarded_not_fatal(tmp_path):
    home = tmp_path / "home"
    from advisor.core.infra.paths import app_paths

    cache = app_paths(home).ensure().hardware_cache
    for content in ("[]", '{"cpu": 5, "gpus": "many"}', "\x00garbage"):
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(content, encoding="utf-8")
        done = _in_process(["project", *SHAPE, "--to", "RTX 4090", "--json"], home)
        assert done.returncode == 0, done.stderr
        assert "RTX 4090" in done.stdout and json.loads(done.stdout)


def test_a_folder_in_place_of_the_detection_cache_is_set_aside_by_detect(tmp_path):
    home = tmp_path / "home"
    from advisor.core.infra.paths import app_paths

    cache = app_paths(home).ensure().hardware_cache
    cache.mkdir()
    (cache / "inside.txt").write_text("kept", encoding="utf-8")
    done = _in_process(["detect", "--no-probe", "--json"], home)
    assert done.returncode == 0, done.stderr
    assert cache.is_file() and json.loads(cache.read_text(encoding="utf-8"))  # written anew
    (aside,) = cache.parent.glob("hardware.corrupt-*")
    assert (aside / "inside.txt").read_text(encoding="utf-8") == "kept"
    done = _in_process(["fits", "--workload", "chat", "--json"], home)
    assert done.returncode == 0, done.stderr  # the machine is known from the cache


@pytest.mark.parametrize("folder", ["data", "config", "cache"])
def test_an_app_folder_that_is_a_file_is_one_sentence(tmp_path, folder):
    home = tmp_path / "home"
    home.mkdir()
    (home / folder).write_text("not a folder", encoding="utf-8")
    done = _in_process(["workload", "import", str(tmp_path / "missing.jsonl")], home)
    assert done.returncode in (1, 2)
    line = _one_line(done)
    assert folder in line or "folder" in line or "There is no file" in line, line
    assert (home / folder).read_text(encoding="utf-8") == "not a folder"  # left as it was


def test_the_app_folder_itself_being_a_file_is_one_sentence(tmp_path):
    home = tmp_path / "home-is-a-file"
    home.write_text("x", encoding="utf-8")
    log = tmp_path / "x.jsonl"
    log.write_text('{"request": {"messages": [{"role": "user", "content": "hi"}]}}\n')
    done = _in_process(["workload", "import", str(log), "--name", "a"], home)
    assert done.returncode in (1, 2)
    _one_line(done)


def test_a_settings_file_damaged_twice_keeps_both_copies_and_says_so(tmp_path):
    from advisor.core.infra.settings import SettingsStore

    path = tmp_path / "config" / "settings.json"
    path.parent.mkdir(parents=True)
    notices = []
    for damage in ('{"reps": 3, "the', '{"reps": "5"}'):
        path.write_text(damage, encoding="utf-8")
        store = SettingsStore.open(path)
        assert store.current.reps > 0  # defaults for what was damaged
        assert store.notice, "the user is told"
        notices.append(store.notice)
    kept = sorted(p.name for p in path.parent.glob("settings.corrupt*"))
    assert len(kept) == 2, kept  # the second damage did not overwrite the first copy
    contents = {p.read_text(encoding="utf-8") for p in path.parent.glob("settings.corrupt*")}
    assert contents == {'{"reps": 3, "the', '{"reps": "5"}'}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_while_writing_a_model_leaves_nothing_behind(tmp_path):
    # 1.3 GB: long enough to be stopped mid-write (several seconds), small enough that a CI disk
    # holds it (an 8B Q8_0 needs 8.5 GB free, and synth rightly refuses to start without it)
    out = tmp_path / "big.gguf"
    env = {**os.environ, "ADVISOR_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor", "synth", str(out), "--shape", "llama-3.2-1b",
         "--quant", "q8_0"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(tmp_path.glob(".big.gguf.*")):
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"synth ended before writing (exit {proc.returncode}): {err.strip()}")
        time.sleep(0.02)
    assert list(tmp_path.glob(".big.gguf.*")), "the writer never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert not out.exists()
    assert not list(tmp_path.glob(".big.gguf.*")), "a partial file was left behind"
    assert "Traceback" not in err


def test_two_first_time_writers_of_the_same_model_both_succeed(tmp_path):
    """Two benchmarks of the same synthetic model started at once both write it: each to its own
    temporary name, renamed into place; the result is one whole, readable file."""
    import threading

    from advisor.bench.synth import write_synthetic_gguf
    from advisor.core.model.gguf_facts import facts_from_gguf

    out = tmp_path / "cache" / "qwen2.5-0.5b-q4_0-L2.gguf"
    out.parent.mkdir(parents=True)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            write_synthetic_gguf(out, "qwen2.5-0.5b", "q4_0", n_layers=2)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert facts_from_gguf(out).n_layers == 2
    assert list(out.parent.iterdir()) == [out]  # no partial file left


def test_runs_folder_that_is_a_file_gives_the_real_reason(tiny_run, tmp_path):
    from advisor.core.runs.history import History, HistoryError

    runs = tmp_path / "runs"
    runs.write_text("not a folder", encoding="utf-8")
    with pytest.raises(HistoryError) as err:
        History(runs).save(tiny_run)
    message = str(err.value)
    assert "a file stands where a folder should be" in message
    assert "Free some space" not in message  # not the full-disk advice
    assert runs.read_text(encoding="utf-8") == "not a folder"


def test_an_unusable_log_folder_leaves_one_sentence_on_stderr(tmp_path, monkeypatch):
    """The last-resort handler never raises: with the log folder a file, an unexpected error is
    still one sentence, and logging falls back to stderr."""
    import advisor.core.infra.logs as logs
    from advisor.cli import _report_bug
    from advisor.core.infra.paths import app_paths

    home = tmp_path / "home"
    home.mkdir()
    (home / "logs").write_text("a file where the log folder goes", encoding="utf-8")
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    monkeypatch.setattr(logs, "_configured", False)
    import contextlib
    import io
    import logging

    root = logging.getLogger()
    before = list(root.handlers)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            code = _report_bug(RuntimeError("boom"), ["detect"])
    finally:
        for h in root.handlers[len(before) :]:
            root.removeHandler(h)
        logs._configured = False
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err.getvalue()
    assert "boom" in lines[0] and "Traceback" not in err.getvalue()
    assert str(app_paths(home).logs) in lines[0]

"""Faults during a run: killed, crashed, hung child; a full disk while saving; the app closed
mid-run; a corrupt history. Each ends with a clear message, no orphaned process, and the
history as it was."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from advisor.bench.controller import BenchJob
from advisor.core.infra import atomic
from advisor.core.runs.config import BenchConfig
from advisor.core.runs.events import Failure, Progress
from advisor.core.runs.history import History, HistoryError
from advisor.core.runs.results import RunResult
from tests.conftest import live_children


def _children() -> list[psutil.Process]:
    return live_children()


def _history_is_valid(history: History, expected: int) -> None:
    report = history.load()
    assert not report.set_aside
    assert len(report.runs) == expected
    for path in history.folder.glob("*.json"):
        json.loads(path.read_text())  # every file whole


@pytest.mark.llama
@pytest.mark.slow
def test_killing_the_child_at_random_points_of_20_runs(tiny_model, tiny_run, tmp_path):
    history = History(tmp_path / "runs")
    history.save(tiny_run)
    rng = random.Random(7)
    outcomes = {"killed": 0, "finished": 0}
    for i in range(20):
        config = BenchConfig(model_path=str(tiny_model), n_prompt=(64,), n_gen=(48,), reps=2)
        job = BenchJob(config)
        job.start()
        kill_after = rng.uniform(0.0, 1.5)
        started = time.monotonic()
        final = None
        for event in job.events():
            if isinstance(event, Progress):
                if time.monotonic() - started > kill_after and job.proc.poll() is None:
                    os.kill(job.proc.pid, signal.SIGKILL)
            else:
                final = event
        if final is not None and not isinstance(final, Failure):
            history.save(final)
            outcomes["finished"] += 1
        else:
            assert isinstance(final, Failure) and final.message, final
            assert "\n" not in final.message
            outcomes["killed"] += 1
        assert not _children(), f"run {i}: a process was left behind"
    print(
        f"\n[faults] 20 runs: {outcomes['killed']} killed mid-run, "
        f"{outcomes['finished']} finished first"
    )
    assert outcomes["killed"] >= 10
    _history_is_valid(history, 1 + outcomes["finished"])


@pytest.mark.llama
def test_a_crash_inside_llama_cpp_is_one_clear_error(tiny_model):
    config = BenchConfig(model_path=str(tiny_model), n_prompt=(64,), n_gen=(5000,), reps=2)
    job = BenchJob(config)
    job.start()
    final = None
    for event in job.events():
        if isinstance(event, Progress) and event.phase.startswith("tg") and job.proc.poll() is None:
            os.kill(job.proc.pid, signal.SIGSEGV)  # what a bad kernel or driver does
        elif not isinstance(event, Progress):
            final = event
    assert isinstance(final, Failure)
    assert "crashed" in final.message and "SIGSEGV" in final.message
    assert not _children()


def test_full_disk_while_saving_leaves_the_history_intact(tiny_run, tmp_path, monkeypatch):
    history = History(tmp_path / "runs")
    history.save(tiny_run)
    before = {p.name: p.read_bytes() for p in history.folder.iterdir()}

    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[: len(data) // 3])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))
    second = RunResult.from_json({**tiny_run.to_json(), "id": "second-run"})
    with pytest.raises(HistoryError, match="disk is full"):
        history.save(second)
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in history.folder.iterdir()}
    assert after == before  # nothing half-written, no temporary file left
    _history_is_valid(history, 1)


def test_a_really_full_disk(tiny_run, tmp_path):
    """The same on a real 64 KiB filesystem, where the kernel says ENOSPC."""
    mount = tmp_path / "tiny-fs"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if result.returncode != 0:
        pytest.skip("cannot mount a small filesystem here")
    try:
        history = History(mount)
        history.save(tiny_run)
        with open(mount / "filler", "wb", buffering=0) as fh:  # fill to the last block
            try:
                while True:
                    fh.write(b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        big = RunResult.from_json({**tiny_run.to_json(), "id": "big"})
        with pytest.raises(HistoryError, match="disk is full"):
            history.save(big)
        (mount / "filler").unlink()
        _history_is_valid(history, 1)
        assert not list(mount.glob(".*.tmp"))
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_corrupt_history_file_is_set_aside_and_reported(tiny_run, tmp_path):
    history = History(tmp_path / "runs")
    history.save(tiny_run)
    (history.folder / "broken.json").write_text('{"id": "broken", "created_at": ')
    report = history.load()
    assert [r.id for r in report.runs] == [tiny_run.id]
    assert len(report.set_aside) == 1 and "broken.json" in report.set_aside[0]
    assert list(history.folder.glob("broken.*.corrupt"))  # kept, not deleted


def test_a_run_that_cannot_be_read_now_is_left_alone(tiny_run, tmp_path, monkeypatch):
    # a file another program holds locked is not damaged: it must not be renamed away, only
    # reported (the lock is simulated: this CI runs as root, which reads anything)
    history = History(tmp_path / "runs")
    path = history.save(tiny_run)
    real_read = Path.read_bytes

    def locked(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "The process cannot access the file", str(self))
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_bytes", locked)
    report = history.load()
    assert report.runs == [] and report.set_aside == []
    assert len(report.unreadable) == 1 and path.name in report.unreadable[0]
    assert path.exists()


def test_gui_reports_a_corrupt_history(make_window, qtbot, tiny_run):
    window, services = make_window()
    services.history.save(tiny_run)
    (services.history.folder / "half.json").write_text("{")
    window.history.reload()
    qtbot.waitUntil(window.banner.isVisible, timeout=5000)
    assert "could not be read and were set aside" in window.banner.message.text()
    qtbot.waitUntil(lambda: window.history.model.rowCount() == 1, timeout=5000)


@pytest.mark.llama
@pytest.mark.slow
def test_closing_the_app_mid_run_leaves_no_process(make_window, qtbot, monkeypatch):
    from advisor.core.runs import config as services_module

    monkeypatch.setitem(
        services_module.PRESETS,
        "quick",
        {"n_prompt": (64,), "n_gen": (5000,), "depths": (0,), "batches": (1,)},
    )
    window, services = make_window()
    services.choose_shape("qwen2.5-0.5b", "q4_0")
    window.bench.run_button.click()
    qtbot.waitUntil(lambda: bool(_children()), timeout=30_000)
    qtbot.waitUntil(
        lambda: (
            window.bench._last_progress is not None
            and window.bench._last_progress.phase.startswith(("pp", "tg"))
        ),
        timeout=120_000,
    )
    started = time.monotonic()
    window.close()
    assert time.monotonic() - started < 5
    qtbot.waitUntil(lambda: not _children(), timeout=5000)


def test_history_files_are_whole_after_many_saves(tiny_run, tmp_path):
    history = History(tmp_path / "runs")
    for i in range(30):
        history.save(RunResult.from_json({**tiny_run.to_json(), "id": f"run-{i}"}))
    assert not [p for p in Path(history.folder).iterdir() if p.suffix != ".json"]
    _history_is_valid(history, 30)

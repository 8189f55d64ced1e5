"""The inter-process lock around a read-modify-write: no update lost between processes or
threads, a holder that never lets go is one sentence, a folder that cannot hold the lock too."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from advisor.core.infra import filelock
from advisor.core.infra.errors import StorageError
from advisor.core.infra.filelock import locked

# read a number, wait a moment (so an unlocked writer would interleave), write it plus one
INCREMENT = """
import sys, time
from pathlib import Path
from advisor.core.infra.filelock import locked
from advisor.core.infra.atomic import atomic_write_text
path = Path(sys.argv[1])
for _ in range(int(sys.argv[2])):
    with locked(path):
        n = int(path.read_text()) if path.exists() else 0
        time.sleep(0.002)
        atomic_write_text(path, str(n + 1))
"""


def test_processes_incrementing_one_file_lose_no_update(tmp_path):
    counter = tmp_path / "counter.txt"
    procs = [
        subprocess.Popen([sys.executable, "-c", INCREMENT, str(counter), "25"]) for _ in range(6)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 6
    assert counter.read_text() == "150"


def test_threads_incrementing_one_file_lose_no_update(tmp_path):
    counter = tmp_path / "counter.txt"
    counter.write_text("0")

    def work() -> None:
        for _ in range(50):
            with locked(counter):
                n = int(counter.read_text())
                counter.write_text(str(n + 1))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.read_text() == "200"


def test_a_holder_that_never_lets_go_is_one_sentence(tmp_path):
    target = tmp_path / "workloads.json"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom advisor.core.infra.filelock import locked\n"
         f"with locked({str(target)!r}):\n print('held', flush=True)\n time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StorageError) as info, locked(target, timeout_s=0.3):
            pass
        message = str(info.value)
        assert "workloads.json" in message and "another advisor process" in message
        assert "\n" not in message
    finally:
        holder.kill()
        holder.wait()
    with locked(target, timeout_s=5):  # released by the system when the holder died
        pass


def test_a_folder_that_cannot_hold_the_lock_is_one_sentence_naming_it(tmp_path, monkeypatch):
    # this CI runs as root, which writes anywhere: the refusal is injected
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).endswith(".lock"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(filelock.os, "open", refuse)
    with pytest.raises(StorageError) as info, locked(tmp_path / "workloads.json"):
        pass
    assert str(tmp_path) in str(info.value) and "permission denied" in str(info.value)
    assert "workloads.json cannot be changed and is left as it was" in str(info.value)


def test_the_lock_file_sits_beside_the_file_it_guards(tmp_path):
    with locked(tmp_path / "data" / "w.json"):
        assert (tmp_path / "data" / "w.json.lock").is_file()
    assert filelock.lock_path(Path("a/b.json")) == Path("a/b.json.lock")


def test_on_windows_a_replace_refused_while_a_reader_holds_the_file_is_retried(
    tmp_path, monkeypatch
):
    """Windows refuses to replace a file another process has open that instant; the write
    waits a moment and tries again (POSIX never needs to)."""
    from advisor.core.infra import atomic

    target = tmp_path / "workloads.json"
    target.write_text("old")
    real_replace = os.replace
    refusals = [PermissionError(13, "Access is denied")] * 3

    def busy(src, dst):
        if refusals:
            raise refusals.pop()
        real_replace(src, dst)

    monkeypatch.setattr(atomic.sys, "platform", "win32")
    monkeypatch.setattr(atomic.os, "replace", busy)
    monkeypatch.setattr(atomic.time, "sleep", lambda s: None)
    atomic.atomic_write_text(target, "new")
    assert target.read_text() == "new" and not refusals

"""Saved workloads: atomic writes, corrupt files set aside, names validated."""

from __future__ import annotations

import json
import os

import pytest

from advisor.core.traffic import WorkloadNameError, WorkloadStore, import_traffic
from advisor.core.traffic import store as store_module

from .helpers import one_sentence


@pytest.fixture
def stats(fixtures):
    return import_traffic(fixtures / "llama_server_timestamps.log")


def test_save_and_load_keep_stats_and_numbers(tmp_path, stats):
    store = WorkloadStore(tmp_path / "workloads.json")
    store.save("  Team server  ", stats, now_s=1.0)
    loaded = WorkloadStore(tmp_path / "workloads.json").load()
    assert list(loaded) == ["Team server"]
    saved = loaded["Team server"]
    assert saved.stats == stats
    assert saved.numbers == {
        "prompt_tokens": 116,
        "answer_tokens": 150,
        "history_tokens": 256,
        "concurrency": 2,
        "requests_per_day": 3703,
    }
    assert store.delete("Team server") and store.load() == {}


@pytest.mark.parametrize("name", ["", "   ", "x" * 61, "two\nlines", "tab\there"])
def test_bad_names_are_refused_in_one_sentence(tmp_path, stats, name):
    with pytest.raises(WorkloadNameError) as info:
        WorkloadStore(tmp_path / "w.json").save(name, stats)
    assert one_sentence(str(info.value))
    assert not (tmp_path / "w.json").exists()


def test_a_crash_while_writing_keeps_the_previous_content(tmp_path, stats, monkeypatch):
    path = tmp_path / "workloads.json"
    store = WorkloadStore(path)
    store.save("first", stats, now_s=1.0)
    before = path.read_bytes()

    real_fdopen = os.fdopen

    class HalfWriter:
        """Writes half of the data, then the process 'dies'."""

        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[: len(data) // 2])
            raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(
        store_module.os, "fdopen", lambda fd, mode: HalfWriter(real_fdopen(fd, mode))
    )
    with pytest.raises(KeyboardInterrupt):
        store.save("second", stats, now_s=2.0)
    monkeypatch.undo()

    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workloads.json"]  # no temp left
    assert list(WorkloadStore(path).load()) == ["first"]


def test_a_failing_fsync_keeps_the_previous_content(tmp_path, stats, monkeypatch):
    path = tmp_path / "workloads.json"
    WorkloadStore(path).save("first", stats, now_s=1.0)
    before = path.read_bytes()

    def fail(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module.os, "fsync", fail)
    with pytest.raises(OSError):
        WorkloadStore(path).save("second", stats)
    assert path.read_bytes() == before


def test_a_corrupt_file_is_set_aside_under_a_new_name_each_time(tmp_path, stats):
    path = tmp_path / "workloads.json"
    path.write_text('{"schema": 1, "workloads": {"half')
    store = WorkloadStore(path)
    assert store.load() == {}
    assert store.notice is not None and one_sentence(store.notice)
    path.write_text("not json at all")
    assert WorkloadStore(path).load() == {}
    aside = sorted(p for p in tmp_path.iterdir() if ".corrupt-" in p.name)
    assert len(aside) == 2  # the second never overwrote the first
    assert {p.read_text() for p in aside} == {
        '{"schema": 1, "workloads": {"half',
        "not json at all",
    }
    store.save("fresh", stats)
    assert json.loads(path.read_text())["workloads"]["fresh"]["numbers"]["concurrency"] == 2

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
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["workloads.json", "workloads.json.lock"]  # no temp left; the lock file stays
    assert list(WorkloadStore(path).load()) == ["first"]


def _saved_then_disk_full(tmp_path, stats, monkeypatch):
    """A store with one record saved, then a disk that is full from the next fsync on: the
    store's path and its bytes before."""
    path = tmp_path / "workloads.json"
    WorkloadStore(path).save("first", stats, now_s=1.0)

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module.os, "fsync", full)
    return path, path.read_bytes()


def test_a_failing_fsync_keeps_the_previous_content(tmp_path, stats, monkeypatch):
    path, before = _saved_then_disk_full(tmp_path, stats, monkeypatch)
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


def _two_saved(path, stats) -> dict:
    store = WorkloadStore(path)
    store.save("kept", stats, now_s=1.0)
    store.save("damaged", stats, now_s=2.0)
    return json.loads(path.read_text(encoding="utf-8"))


def _damage_record(doc: dict, how: str) -> str:
    record = doc["workloads"]["damaged"]
    if how == "wrong type":
        record["stats"]["requests"] = "many"
    elif how == "missing key":
        del record["numbers"]["prompt_tokens"]
    elif how == "NaN":
        record["stats"]["prompt_tokens_p90"] = float("nan")
    elif how == "out of range":
        record["stats"]["idle_share"] = 7.5
    elif how == "nested":
        record["stats"]["notes"] = [[[[[[[[[[[[["x"]]]]]]]]]]]]]
    elif how == "nesting bomb":  # the reader refuses the file as a whole, then record by record
        return json.dumps(doc).replace('"saved_at_s": 2.0', '"saved_at_s": ' + "[" * 100_000
                                       + "]" * 100_000)  # fmt: skip
    elif how == "huge number":
        return json.dumps(doc).replace('"saved_at_s": 2.0', '"saved_at_s": ' + "9" * 5000)
    return json.dumps(doc)


@pytest.mark.parametrize(
    "how",
    ["wrong type", "missing key", "NaN", "out of range", "nested", "nesting bomb", "huge number"],
)
def test_a_damaged_record_is_set_aside_by_itself_and_the_rest_load(tmp_path, stats, how):
    path = tmp_path / "workloads.json"
    doc = _two_saved(path, stats)
    path.write_text(_damage_record(doc, how), encoding="utf-8")
    store = WorkloadStore(path)
    assert list(store.load()) == ["kept"]
    assert store.notice and "'damaged'" in store.notice and one_sentence(store.notice)
    (aside,) = tmp_path.glob("workloads.corrupt-*.json")
    assert aside.name in store.notice
    if how == "NaN":  # said as the person wrote it, not as Python's None
        assert "should be a number, not null or NaN" in store.notice, store.notice
    if how in ("nesting bomb", "huge number"):  # kept as it was written: no reader decodes it
        assert '"damaged": {"name": "damaged"' in aside.read_text()
        assert ("levels deep" if how == "nesting bomb" else "20 digits") in store.notice
    else:
        assert "damaged" in json.loads(aside.read_text())["workloads"]  # kept, not lost
    again = WorkloadStore(path)
    assert list(again.load()) == ["kept"] and again.notice is None  # healed once, for good
    assert list(json.loads(path.read_text())["workloads"]) == ["kept"]


@pytest.mark.parametrize(
    "content",
    ["folder", "[" * 100_000, '{"schema": 1, "workloads": [1, 2]}', '{"schema": 1, "work',
     "\ufeff\x00\x00binary"],
    ids=["folder", "deep nesting", "wrong shape", "truncated", "binary"],
)  # fmt: skip
def test_a_file_damaged_as_a_whole_is_set_aside_and_says_where(tmp_path, stats, content):
    path = tmp_path / "workloads.json"
    if content == "folder":
        path.mkdir()
        (path / "inside.txt").write_text("kept")
    else:
        path.write_text(content, encoding="utf-8")
    store = WorkloadStore(path)
    assert store.load() == {}
    assert store.notice and one_sentence(store.notice), store.notice
    (aside,) = tmp_path.glob("workloads.corrupt-*")
    assert aside.name in store.notice and str(tmp_path) in store.notice
    if content == "folder":
        assert (aside / "inside.txt").read_text() == "kept"
    store.save("fresh", stats)
    assert list(WorkloadStore(path).load()) == ["fresh"]


def test_a_full_disk_while_saving_is_one_sentence_naming_the_folder(tmp_path, stats, monkeypatch):
    path, before = _saved_then_disk_full(tmp_path, stats, monkeypatch)
    with pytest.raises(OSError) as info:
        WorkloadStore(path).save("second", stats)
    monkeypatch.undo()
    message = str(info.value)
    assert "the disk is full" in message and str(tmp_path) in message and one_sentence(message)
    assert path.read_bytes() == before


def test_an_unwritable_folder_still_loads_the_good_records(tmp_path, stats, monkeypatch):
    from advisor.core.infra import filelock

    path = tmp_path / "workloads.json"
    doc = _two_saved(path, stats)
    path.write_text(_damage_record(doc, "wrong type"), encoding="utf-8")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filelock.os, "open", refuse)
    store = WorkloadStore(path)
    assert list(store.load()) == ["kept"]
    assert "could not be set aside (permission denied)" in store.notice
    assert "'damaged'" in store.notice and one_sentence(store.notice), store.notice


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_or_a_device_in_place_of_the_file_is_set_aside_without_reading_it(tmp_path):
    path = tmp_path / "workloads.json"
    os.mkfifo(path)  # opening it would wait for a writer forever
    store = WorkloadStore(path)
    assert store.load() == {}
    assert "not a regular file" in store.notice and not path.exists()
    os.symlink("/dev/zero", path)  # reading it would never end
    assert WorkloadStore(path).load() == {}
    assert not path.exists()

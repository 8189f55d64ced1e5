"""The red team of issue 40, beyond the saved-workloads store (test_red_team.py holds the
table, imports at the same moment, a damaged store and a full or unwritable folder): hostile
JSON in every file the app reads, the crash path, the app's start, and the smaller items.

Each case asserts what a person must see: one line on stderr that starts with "advisor:", no
traceback, no "unexpected error", the exit status, and what was saved left as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import pytest

from tests.conftest import _in_process
from tests.reliability.hostile import (
    CONVERSATION,
    JSONL_LINE,
    LM_STUDIO,
    advisor_process,
    deny_reading,
    fail_writes,
    hostile_files,
    one_line,
    saved_names,
    seed_workloads,
    snapshot,
    wait_all,
)

SHAPE = ("--shape", "llama-3.2-1b", "--quant", "q4_0")
PROJECT = ("project", *SHAPE, "--to", "RTX 4090")


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
        seed_workloads(home, "earlier")
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
        assert saved_names(home) == {"earlier", "new"}

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
        deny_reading(monkeypatch, path)
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
        fail_writes(monkeypatch, 28)
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

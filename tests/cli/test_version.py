"""`advisor --version` and the About box's facts: the versions, data and folders a bug report
needs, one line each, and the same as JSON with stable keys."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from advisor.core.catalogue.catalogue import load_catalogue
from advisor.core.catalogue.dating import catalogue_date
from advisor.core.hardware.report_cache import save_cached_report
from advisor.core.infra.paths import app_paths
from advisor.usecases.about import about_facts
from tests.conftest import advisor_cli

COMMIT = "0c1e570-dirty (ggml 0.25.3)"


@pytest.fixture
def detected(tmp_path, recorded_report):
    """A detection of this machine cached a moment ago, with the llama.cpp commit it found
    (so no test here starts llama.cpp)."""
    home = tmp_path / "advisor-home"
    paths = app_paths(home).ensure()
    backend = replace(recorded_report.backend, llama_cpp_commit=COMMIT)
    save_cached_report(
        paths.hardware_cache, replace(recorded_report, backend=backend, detected_at=time.time())
    )
    return home


def test_about_facts_say_what_a_bug_report_needs(detected):
    paths = app_paths(detected)
    facts = about_facts(paths, qt_version="6.12.0", pyside6_version="6.12.0")
    assert facts.llama_cpp_commit == COMMIT and facts.backends == ("CPU",)
    assert facts.qt == "6.12.0" and facts.llama_cpp_python == "0.3.36"
    assert facts.catalogue_devices == len(load_catalogue()) > 200
    assert facts.catalogue_date == catalogue_date().date
    assert facts.catalogue_date[:4].isdigit() and facts.catalogue_date_basis
    assert facts.calibration_rows > 100
    assert facts.log_file == str(paths.log_file) and facts.data_folder == str(paths.data)
    text = facts.as_text()
    for words in ("llama.cpp commit", COMMIT, "Qt", "6.12.0", "Log file", str(paths.log_file)):
        assert words in text
    assert len(text.splitlines()) == len(facts.lines())  # one line per fact


def test_without_a_detection_the_backends_are_said_to_be_unknown(tmp_path):
    facts = about_facts(app_paths(tmp_path), ask_llama=False)
    assert facts.backends == ()
    assert "not known (not asked: this machine has not been detected yet)" in facts.as_text()


def test_version_prints_one_line_per_fact(detected):
    out = advisor_cli("--version", home=detected)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("LLM Hardware Advisor") and "0.1" in lines[0]
    by_label = {line.split("  ")[0].strip(): line for line in lines}
    assert COMMIT in by_label["llama.cpp commit"]
    assert "CPU" in by_label["llama.cpp backends"]
    assert "devices" in by_label["Catalogue"] and catalogue_date().date in by_label["Catalogue"]
    assert {"Qt", "PySide6", "Python", "Calibration data", "Data folder", "Log file"} <= set(
        by_label
    )


def test_version_json_has_stable_keys(detected):
    out = advisor_cli("--version", "--json", home=detected)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["llama_cpp_commit"] == COMMIT and data["backends"] == ["CPU"]
    assert data["app_version"] and data["python"] and data["qt"] and data["pyside6"]
    assert data["catalogue_devices"] > 200 and data["calibration_rows"] > 100
    assert data["catalogue_date"] == catalogue_date().date
    assert data["log_file"].startswith(str(detected))  # the folders of this installation

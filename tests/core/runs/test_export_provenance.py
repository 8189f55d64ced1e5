"""A shared result says what produced it: app version, llama.cpp commit and catalogue date in
the Markdown, CSV and JSON exports; runs saved before these were recorded say so."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from advisor.core.runs.export import export_runs, provenance, to_csv_text, to_markdown
from advisor.core.runs.results import RunResult
from tests.conftest import DATA

COMMIT = "0c1e570-dirty (ggml 0.25.3)"


@pytest.fixture
def old_run() -> RunResult:
    return RunResult.from_json(json.loads((DATA / "run-qwen05b-q4_0-xeon.json").read_text()))


@pytest.fixture
def run(old_run) -> RunResult:
    llama = replace(old_run.llama, llama_cpp_commit=COMMIT)
    return replace(old_run, llama=llama, app_version="0.1.0", catalogue_date="2026-08-21")


def test_markdown_says_what_made_the_run(run):
    text = to_markdown(run)
    made = next(line for line in text.splitlines() if line.startswith("Made with"))
    assert "LLM Hardware Advisor 0.1.0" in made
    assert f"llama.cpp {COMMIT}" in made
    assert "llama-cpp-python 0.3.36" in made and "catalogue of 2026-08-21" in made


def test_csv_rows_carry_the_versions(run):
    rows = list(csv.DictReader(io.StringIO(to_csv_text([run]))))
    assert rows and all(r["llama_cpp_commit"] == COMMIT for r in rows)
    assert all(r["app_version"] == "0.1.0" and r["catalogue_date"] == "2026-08-21" for r in rows)


def test_json_export_keeps_them(run, tmp_path):
    data = json.loads(export_runs([run], tmp_path / "run.json").read_text())
    assert data["app_version"] == "0.1.0" and data["catalogue_date"] == "2026-08-21"
    assert data["llama"]["llama_cpp_commit"] == COMMIT


def test_an_old_run_says_the_versions_were_not_recorded(old_run):
    assert dict(provenance(old_run))["llama.cpp"] == "not recorded"
    assert "llama.cpp not recorded" in to_markdown(old_run)

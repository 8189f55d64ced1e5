"""Validation data is not training data: the results kept aside to check the speed model
(benchmarks/kept_aside/) never reach the shipped data or the fit."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from advisor.core.predict.fitting.shipped import load_speed_model
from advisor.core.predict.model.observations import data_files

ROOT = Path(__file__).resolve().parents[2]
KEPT = ROOT / "benchmarks" / "kept_aside"
# the kept-aside sources (issue 14): every issue thread of these repositories
KEPT_REPOS = ("github.com/geerlingguy/ai-benchmarks", "github.com/brand-o/normiebench")


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _thread(url: str) -> str | None:
    found = re.search(r"github\.com/[\w.-]+/[\w.-]+/issues/\d+", url)
    return found.group(0) if found else None


def test_the_kept_aside_rows_are_all_from_the_kept_aside_sources():
    files = sorted(KEPT.glob("*.csv"))
    assert files
    for path in files:
        for row in _rows(path):
            assert any(repo in row["source_url"] for repo in KEPT_REPOS), row["source_url"]


def test_no_shipped_row_comes_from_a_kept_aside_thread():
    kept = {t for p in KEPT.glob("*.csv") for r in _rows(p) if (t := _thread(r["source_url"]))}
    assert kept
    for path, reference in data_files():
        for row in _rows(path):
            cited = [m.group(0) for m in re.finditer(r"github\.com/[\w.-]+/[\w.-]+/issues/\d+",
                                                     row["source_url"])]  # fmt: skip
            if reference:
                continue  # the reference set's own few rows of those threads stay in it
            assert not any(repo in row["source_url"] for repo in KEPT_REPOS), row["source_url"]
            assert not set(cited) & kept, row["source_url"]


def test_the_fit_holds_no_kept_aside_row():
    kept = [r for p in KEPT.glob("*.csv") for r in _rows(p)]
    fitted = {
        (o.source_url, round(o.tg_tps or 0, 2), round(o.pp_tps or 0, 2))
        for o in load_speed_model().observations
    }
    for r in kept:
        key = (
            r["source_url"].split(" ")[0],
            round(float(r["tg_tps"] or 0), 2),
            round(float(r["pp_tps"] or 0), 2),
        )
        assert key not in fitted, key

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
    kept = [r for p in KEPT.rglob("*.csv") for r in _rows(p)]
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


# the sources issue 37 keeps aside to check the prediction (its "Data rules")
KEPT_37_REPOS = (
    "github.com/pendakwahteknologi/benchmark-rtx5090",
    "github.com/wesley-jakob-gilbert/intel-arc-gpu-benchmarks",
    "github.com/huppiflupp/strix-halo-llm-speeds",
)
KEPT_37_THREADS = ("issues/9765", "issues/10982", "pull/13326", "pull/15355", "pull/15427",
                   "pull/15631", "pull/16827", "pull/16834")  # fmt: skip
LLAMA_CPP = re.compile(
    r"github\.com/(?:ggml-org|ggerganov)/llama\.cpp/((?:issues|pull|discussions)/\d+)\b"
)
URL = re.compile(r"https?://[^\s\"',)|]+")


def _cites(url: str, sources: tuple[str, ...], threads: tuple[str, ...]) -> bool:
    """Whether `url` is one of `sources` (a repository, folder or site) or one of llama.cpp's
    `threads` ("pull/15355")."""
    url = url.lower()
    if any(source in url for source in sources):
        return True
    return any(m.group(1) in threads for m in LLAMA_CPP.finditer(url))


def _issue_37_source(url: str) -> bool:
    if "forums.developer.nvidia.com" in url.lower() and "mxfp4" in url.lower():
        return True
    return _cites(url, KEPT_37_REPOS, KEPT_37_THREADS)


def test_issue_37s_kept_aside_sources_are_recognised():
    assert _issue_37_source("https://github.com/ggml-org/llama.cpp/pull/15355#issuecomment-1")
    assert _issue_37_source("https://github.com/ggerganov/llama.cpp/issues/9765")
    assert _issue_37_source("https://github.com/Wesley-Jakob-Gilbert/Intel-Arc-GPU-Benchmarks")
    assert not _issue_37_source("https://github.com/ggml-org/llama.cpp/issues/10981")
    assert not _issue_37_source("https://github.com/ggml-org/llama.cpp/pull/153550")


def test_no_shipped_file_cites_a_source_issue_37_keeps_aside():
    shipped = [p for p, _ in data_files()]
    shipped += sorted((ROOT / "device_db" / "devices").rglob("*.json"))
    shipped += sorted((ROOT / "resources" / "data").glob("*.md"))
    for path in shipped:
        text = path.read_text(encoding="utf-8")
        for url in URL.findall(text):
            assert not _issue_37_source(url), f"{path.name} cites {url}"


def test_issue_37s_kept_aside_rows_are_all_from_its_sources():
    for path in sorted((KEPT / "issue-37").glob("*.csv")):
        for row in _rows(path):
            assert _issue_37_source(row["source_url"]), row["source_url"]


# the sources issue 14 closed to new rows (its data rule; issue 37 keeps them closed): a
# repository or folder, or a llama.cpp thread, that was mined or kept aside before
CLOSED_14 = (
    "/benches/",  # llama.cpp's own benches/ folder, in the repository or a fork
    "llm-tracker.info",
    "localscore.ai",
    "github.com/lhl/strix-halo-testing",
    "github.com/augmxnt/speed-benchmarking",
    "github.com/1337hero/rx7900xtx-llama-bench-vulcan",
    "github.com/kyuz0/amd-strix-halo-toolboxes",
    "github.com/geerlingguy/beowulf-ai-cluster",
    "frame.work/t/73280",  # the Framework community topic
    "github.com/intel/ipex-llm/issues/12991",
)
CLOSED_14_THREADS = ("pull/4766", "pull/13506", "pull/14001", "pull/16634", "pull/26284",
                     "discussions/16578")  # fmt: skip


def _issue_14_closed(url: str) -> bool:
    return _cites(url, CLOSED_14, CLOSED_14_THREADS)


def test_issue_14s_closed_sources_are_recognised():
    assert _issue_14_closed(
        "https://github.com/ggml-org/llama.cpp/blob/4c7e989/benches/dgx-spark.md"
    )
    assert _issue_14_closed(
        "https://github.com/someone/llama.cpp/blob/0b3d966/benches/dgx-spark/x.md"
    )
    assert _issue_14_closed(
        "https://github.com/ggml-org/llama.cpp/discussions/16578#discussioncomment-1"
    )
    assert _issue_14_closed("https://github.com/ggerganov/llama.cpp/pull/26284")
    assert not _issue_14_closed("https://github.com/ggml-org/llama.cpp/pull/262840")
    assert not _issue_14_closed(
        "https://github.com/kyuz0/mi50-gfx906-toolboxes/blob/2ee996a/README.md"
    )


def test_no_shipped_row_comes_from_a_source_issue_14_closed():
    for path, reference in data_files():
        if reference:
            continue  # the reference set is published as it is
        for row in _rows(path):
            for url in URL.findall(row["source_url"]):
                assert not _issue_14_closed(url), f"{path.name} cites {url}"

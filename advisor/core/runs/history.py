"""The history of benchmark runs: one JSON file per run, written atomically.

One file per run means saving a run never rewrites the others: a crash, a kill or a full
disk while saving can lose at most the run being saved, never the history; and with no
read-modify-write there is nothing for two processes to race on, so no lock is needed (two
benchmarks save two files). Runs are read with the one JSON reader (depth and number limits,
a byte-order mark from a hand edit accepted); a file that cannot be read is moved aside
(never silently deleted) and reported. The files are the export: readable JSON, one per run.
"""

from __future__ import annotations

import errno
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from advisor.core.infra.atomic import atomic_write_text
from advisor.core.infra.errors import StorageError, os_reason
from advisor.core.infra.owned import DAMAGED, MISSING, UNREADABLE, read_owned
from advisor.core.infra.safe_json import loads
from advisor.core.infra.serde import json_safe
from advisor.core.runs.results import RunResult

MAX_RUN_BYTES = 32 * 1024 * 1024  # a run is a few kB


class HistoryError(StorageError):
    """The history could not be written; the message is one sentence for the user."""


@dataclass
class LoadReport:
    runs: list[RunResult] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)  # damaged files, renamed *.corrupt
    unreadable: list[str] = field(default_factory=list)  # could not be read now; left alone


class History:
    """Saved runs in a folder (data/runs/<id>.json)."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)

    def _path(self, run_id: str) -> Path:
        safe = "".join(c for c in run_id if c.isalnum() or c in "-_")
        return self.folder / f"{safe}.json"

    def save(self, run: RunResult) -> Path:
        """Save (or replace) a run atomically."""
        path = self._path(run.id)
        text = json.dumps(json_safe(run.to_json()), indent=1, ensure_ascii=False)
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            full = exc.errno == errno.ENOSPC
            advice = (
                "free some space and export the result instead"
                if full
                else "export the result instead, and check the folder"
            )
            raise HistoryError(
                f"The run could not be saved in {self.folder} ({os_reason(exc)}); earlier runs "
                f"are untouched; {advice}."
            ) from exc
        return path

    def load(self) -> LoadReport:
        """All runs, newest first; unreadable files are set aside and named in the report."""
        report = LoadReport()
        if not self.folder.is_dir():
            return report
        for path in sorted(self.folder.glob("*.json")):
            owned = read_owned(path, max_bytes=MAX_RUN_BYTES)
            if owned.state == MISSING:
                continue  # deleted meanwhile
            if owned.state == UNREADABLE:  # locked or unreadable now (antivirus, backup)
                report.unreadable.append(f"{path.name} ({owned.reason})")
                continue
            if owned.state == DAMAGED:
                self._set_aside(path, owned.reason, report)
                continue
            try:
                report.runs.append(RunResult.from_json(owned.value))
            except (ValueError, KeyError, TypeError) as exc:  # damaged: set it aside
                self._set_aside(path, str(exc), report)
        report.runs.sort(key=lambda r: r.created_at, reverse=True)
        return report

    def _set_aside(self, path: Path, why: str, report: LoadReport) -> None:
        """Rename a damaged run file to <stem>.<time>-<random>.corrupt (no longer *.json, so
        never read as a run again; never deleted) and name it in the report."""
        why = why if len(why) <= 120 else why[:117] + "..."
        stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        aside = path.with_name(f"{path.stem}.{stamp}.corrupt")
        try:
            path.rename(aside)
        except FileNotFoundError:
            return  # another window or command set it aside a moment ago
        except OSError:
            report.set_aside.append(f"{path.name} ({why}), not moved")
            return
        report.set_aside.append(f"{path.name} ({why}) -> {aside.name}")

    def get(self, run_id: str) -> RunResult | None:
        path = self._path(run_id)
        try:
            return RunResult.from_json(loads(path.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def delete_many(self, run_ids: list[str]) -> int:
        """Delete several runs; how many files were removed."""
        return sum(self.delete(run_id) for run_id in run_ids)

    def delete(self, run_id: str) -> bool:
        try:
            self._path(run_id).unlink()
            return True
        except FileNotFoundError:
            return False

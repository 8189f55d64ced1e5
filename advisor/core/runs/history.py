"""The history of benchmark runs: one JSON file per run, written atomically.

One file per run means saving a run never rewrites the others: a crash, a kill or a full
disk while saving can lose at most the run being saved, never the history. A file that cannot
be read is moved aside (never silently deleted) and reported.
"""

from __future__ import annotations

import errno
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from advisor.core.infra.atomic import atomic_write_text
from advisor.core.infra.errors import StorageError, os_reason
from advisor.core.infra.serde import json_safe
from advisor.core.runs.results import RunResult


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
                "Free some space and export the result instead."
                if full
                else f"Export the result instead, and check the folder {self.folder}."
            )
            raise HistoryError(
                f"The run could not be saved ({os_reason(exc)}); earlier runs are untouched. "
                + advice
            ) from exc
        return path

    def load(self) -> LoadReport:
        """All runs, newest first; unreadable files are set aside and named in the report."""
        report = LoadReport()
        if not self.folder.is_dir():
            return report
        for path in sorted(self.folder.glob("*.json")):
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue  # deleted meanwhile
            except OSError as exc:  # locked or unreadable now (antivirus, backup): not damaged
                report.unreadable.append(f"{path.name} ({exc.strerror or exc})")
                continue
            try:
                report.runs.append(RunResult.from_json(json.loads(text)))
            except (ValueError, KeyError, TypeError) as exc:  # damaged: set it aside
                aside = path.with_name(f"{path.stem}.{time.strftime('%Y%m%d-%H%M%S')}.corrupt")
                try:
                    path.rename(aside)
                    report.set_aside.append(
                        f"{path.name} ({exc.__class__.__name__}) -> {aside.name}"
                    )
                except OSError:
                    report.set_aside.append(f"{path.name} ({exc.__class__.__name__}), not moved")
        report.runs.sort(key=lambda r: r.created_at, reverse=True)
        return report

    def get(self, run_id: str) -> RunResult | None:
        path = self._path(run_id)
        try:
            return RunResult.from_json(json.loads(path.read_text(encoding="utf-8")))
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

"""Saved named workloads (statistics and numbers, never text) in one JSON file.

The file follows the discipline of every file the app owns (`advisor.core.infra.owned`):

- every change (save, delete, healing) is a read-modify-write under the file's inter-process
  lock, so imports started at the same moment (a script, `xargs -P`, the app beside the
  command line) each add their workload and none is lost;
- writes are atomic: a crash leaves the previous content whole;
- every record is checked field by field when read (`saved.saved_from_json`). A damaged record
  is moved by itself to a file of its own (workloads.corrupt-<time>-<random>.json) and the
  others load; a file that is damaged as a whole (not JSON, nested absurdly deep, not the
  expected shape, a folder in its place) is moved aside the same way and the store starts
  empty. Either way `notice` holds one sentence saying what was set aside and where.

A locked JSON file, not `sqlite3`: the file is the user's readable export, a damaged record
goes aside by itself, and the lock plus an atomic replace is the transaction these few small
writes need (the README's Development section gives the figures).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.core.infra import notices
from advisor.core.infra.errors import StorageError, os_reason
from advisor.core.infra.filelock import locked
from advisor.core.infra.owned import (
    DAMAGED,
    MISSING,
    OK,
    aside_path,
    read_owned,
    set_aside,
    write_owned,
)
from advisor.core.infra.safe_json import object_members
from advisor.core.infra.serde import DataError, json_safe
from advisor.core.traffic.derive import TrafficStats, workload_numbers
from advisor.core.traffic.saved import (
    MAX_NAME_CHARS,
    SavedWorkload,
    saved_from_json,
    validate_name,
)

SCHEMA = 1
MAX_STORE_BYTES = 32 * 1024 * 1024  # a workload is about 2 kB: room for thousands

__all__ = ["MAX_NAME_CHARS", "SavedWorkload", "WorkloadStore", "validate_name"]


@dataclass
class _Read:
    """The file as read: its good records, the damaged ones (raw, with why), or a reason the
    whole file is damaged, or a reason it cannot be read now."""

    items: dict[str, SavedWorkload] = field(default_factory=dict)
    bad: dict[str, tuple[str, str]] = field(default_factory=dict)  # key: (as written, why)
    whole: str = ""  # why the whole file is damaged
    unreadable: str = ""  # why it cannot be read now (left alone)


class WorkloadStore:
    """Named workloads in one JSON file at `path`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._notice: str | None = None

    @property
    def notice(self) -> str | None:
        """One sentence when something was set aside (or could not be): kept here, and told
        to the front end through `notices` as it is set, whichever command found it."""
        return self._notice

    @notice.setter
    def notice(self, sentence: str | None) -> None:
        self._notice = sentence
        if sentence:
            notices.tell(sentence)

    # --- reading --------------------------------------------------------------------------

    def load(self) -> dict[str, SavedWorkload]:
        """All good saved workloads by name. Damage is healed (set aside, said in `notice`)."""
        read = self._read()
        if read.whole or read.bad:
            try:
                with locked(self.path):
                    read = self._read()  # again: another process may have healed it meanwhile
                    self._heal(read)
            except OSError as exc:  # the folder cannot be written: the good records still load
                self.notice = self._unhealed_notice(read, exc)
        elif read.unreadable:
            self.notice = (
                f"The saved workloads file {self.path} {read.unreadable}; it is left as it is."
            )
        return read.items

    def _read(self) -> _Read:
        owned = read_owned(self.path, max_bytes=MAX_STORE_BYTES)
        if owned.state == MISSING:
            return _Read()
        if owned.state == DAMAGED:
            return (_salvage(owned.text) if owned.text else None) or _Read(whole=owned.reason)
        if owned.state != OK:
            return _Read(unreadable=owned.reason)
        data = owned.value
        items = data.get("workloads") if isinstance(data, dict) else None
        if not isinstance(items, dict):
            return _Read(whole="is not in the expected form (no list of workloads)")
        return _records((k, v, "") for k, v in items.items())

    # --- healing --------------------------------------------------------------------------

    def _heal(self, read: _Read) -> None:
        """Set aside what `read` found damaged (the lock is held) and say so in `notice`."""
        if read.whole:
            aside = set_aside(self.path)
            kept = f"kept as {aside.name}" if aside else "left where it is (it cannot be moved)"
            self.notice = (
                f"The saved workloads file {read.whole}, so it was {kept} in {self.path.parent} "
                "and a new one was started."
            )
            return
        if not read.bad:
            return
        aside = aside_path(self.path)
        write_owned(aside, _aside_text(read.bad), what="A damaged workload",
                    kept="the others load")  # fmt: skip
        self._write(read.items)
        names = ", ".join(f"'{k}'" for k in list(read.bad)[:3])
        first_reason = next(iter(read.bad.values()))[1]
        what = "workload" if len(read.bad) == 1 else "workloads"
        self.notice = (
            f"The saved {what} {names} could not be read ({first_reason}), so "
            f"{'it was' if len(read.bad) == 1 else 'they were'} set aside in {aside.name} in "
            f"{self.path.parent}; the others load as before."
        )

    def _unhealed_notice(self, read: _Read, exc: OSError) -> str:
        cause = exc if exc.errno else exc.__cause__
        why = os_reason(cause) if isinstance(cause, OSError) else "it is in use"
        if read.whole:
            return (
                f"The saved workloads file {self.path} {read.whole}, and it could not be set "
                f"aside ({why}); no saved workloads load until it is moved."
            )
        names = ", ".join(f"'{k}'" for k in list(read.bad)[:3])
        return (
            f"The saved workload(s) {names} in {self.path} could not be read, and could not be "
            f"set aside ({why}); the others load."
        )

    # --- changing -------------------------------------------------------------------------

    def save(self, name: str, stats: TrafficStats, now_s: float | None = None) -> SavedWorkload:
        """Save (or replace) the workload `name` from `stats`, under the file's lock.
        StorageError (one sentence naming the folder) when it cannot be written; the saved
        workloads are then as they were."""
        clean = validate_name(name)
        item = SavedWorkload(
            clean, stats, workload_numbers(stats), time.time() if now_s is None else now_s
        )
        with locked(self.path):
            read = self._read()
            self._refuse_unreadable(read, f"The workload '{clean}' was not saved")
            self._heal(read)
            read.items[clean] = item
            self._write(read.items, what=f"The workload '{clean}'")
        return item

    def delete(self, name: str) -> bool:
        """Remove `name` under the file's lock; False if there was no such workload."""
        with locked(self.path):
            read = self._read()
            self._refuse_unreadable(read, f"The workload '{name.strip()}' was not deleted")
            self._heal(read)
            if read.items.pop(name.strip(), None) is None:
                return False
            self._write(read.items, what=f"The change (deleting '{name.strip()}')")
        return True

    def _refuse_unreadable(self, read: _Read, what: str) -> None:
        """A file that cannot be read now (no permission, another program holding it) is
        never replaced: writing would lose every workload it holds."""
        if read.unreadable:
            raise StorageError(
                f"{what}: the saved workloads file {self.path} {read.unreadable}, and saving "
                "would replace the workloads it holds; it is left as it is, so check its "
                "permissions, then try again."
            )

    def _write(self, items: dict[str, SavedWorkload], what: str = "The saved workloads") -> None:
        doc = {"schema": SCHEMA, "workloads": {k: v.to_json() for k, v in sorted(items.items())}}
        write_owned(self.path, _encode(doc), what=what,
                    kept="your saved workloads are as they were")  # fmt: skip


def _records(members: Iterable[tuple[str, Any, str]]) -> _Read:
    """Each record (key, value, why the reader refused it or '') checked by itself."""
    read = _Read()
    for key, raw, refused in members:
        if refused:  # kept as written: it could not be decoded
            read.bad[key] = (raw, f"it {refused}")
            continue
        try:
            saved = saved_from_json(raw, key)
        except DataError as exc:
            read.bad[key] = (_encode(raw).decode("utf-8"), str(exc))
            continue
        read.items[saved.name] = saved
    return read


def _salvage(text: str) -> _Read | None:
    """The records of a file the reader refused as a whole because one record is nested too
    deep or holds a huge number: that record is bad by itself, the others read. None when
    the refusal is elsewhere (the file is then damaged as a whole, and kept whole)."""
    top = object_members(text)
    found = [m for m in top or [] if m.key == "workloads"]
    if not found or not found[-1].refused:
        return None
    members = object_members(text, found[-1].start)
    if members is None:
        return None
    return _records((m.key, m.raw if m.refused else m.value, m.refused) for m in members)


def _aside_text(bad: dict[str, tuple[str, str]]) -> bytes:
    """A file of the damaged records, each as it was written (valid JSON as a whole when each
    record is)."""
    body = ",\n".join(f" {json.dumps(k, ensure_ascii=False)}: {raw}" for k, (raw, _) in bad.items())
    return f'{{\n "schema": {SCHEMA},\n "workloads": {{\n{body}\n }}\n}}\n'.encode()


def _encode(doc: Any) -> bytes:
    return json.dumps(json_safe(doc), indent=1, ensure_ascii=False, allow_nan=False).encode("utf-8")

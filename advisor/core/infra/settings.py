"""User preferences: a typed dataclass with defaults, a schema version and migration, stored
as JSON (atomically). Meanings are stored, never widget indices.

The file is the app's own and heals itself: a file that cannot be read (not JSON, nested
absurdly deep, a folder in its place), or a field of the wrong type or out of range ("reps":
"5"), never stops the app. The bad field falls back to its default, the file is kept aside
under a name of its own (every copy kept), and the store carries one sentence (`notice`) for
the front end to tell the user, once. A change is written under the file's lock, merged into
what is on disk, so two windows of the app keep each other's changes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from advisor.core.infra.errors import StorageError
from advisor.core.infra.filelock import locked
from advisor.core.infra.owned import (
    DAMAGED,
    MISSING,
    OK,
    UNREADABLE,
    read_owned,
    set_aside,
    write_owned,
)
from advisor.core.infra.safe_json import object_members
from advisor.core.infra.serde import DataError, from_json

SETTINGS_VERSION = 2
MAX_RECENT = 8
MAX_SETTINGS_BYTES = 1024 * 1024
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    schema_version: int = SETTINGS_VERSION
    recent_models: tuple[str, ...] = ()
    last_shape: str = "llama-3.2-1b"
    last_quant: str = "q4_0"
    bench_preset: str = "quick"  # "quick" | "thorough" | "custom"
    threads: int | None = None
    gpu_layers: int | None = None
    flash_attn: str = "auto"
    cache_type: str = "f16"
    reps: int = 5
    workload: str = "chat"
    chosen_device_id: str | None = None  # the user's pick when detection could not tell
    compare_targets: tuple[str, ...] = ("nvidia-geforce-rtx-4090", "apple-m4-max-40c")
    theme: str = "system"  # "system" | "light" | "dark"
    # the upgrade answer: the user's own prices per device id (per card), their electricity
    # price per kWh, a budget, and whether workstation and datacenter cards are candidates
    prices_usd: dict[str, float] = field(default_factory=dict)
    electricity_per_kwh: float = 0.30
    budget_usd: float | None = None
    show_pro_devices: bool = False

    def with_recent(self, path: str) -> Settings:
        recent = [path, *[p for p in self.recent_models if p != path]][:MAX_RECENT]
        return replace(self, recent_models=tuple(recent))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# what each field may hold beyond its type: a check returns True for a good value
_ALLOWED: dict[str, Callable[[Any], bool]] = {
    "bench_preset": lambda v: v in ("quick", "thorough", "custom"),
    "threads": lambda v: v is None or 1 <= v <= 512,
    "gpu_layers": lambda v: v is None or 0 <= v <= 10_000,
    "flash_attn": lambda v: v in ("auto", "on", "off"),
    "cache_type": lambda v: v in ("f16", "q8_0", "q4_0"),
    "reps": lambda v: 1 <= v <= 100,
    "theme": lambda v: v in ("system", "light", "dark"),
    "recent_models": lambda v: len(v) <= 64,
    "prices_usd": lambda v: (
        len(v) <= 2000
        and all(isinstance(k, str) and 0 < x <= 1e7 and math.isfinite(x) for k, x in v.items())
    ),
    "electricity_per_kwh": lambda v: math.isfinite(v) and 0 <= v <= 10,
    "budget_usd": lambda v: v is None or (math.isfinite(v) and 0 < v <= 1e7),
}


def _migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older settings file up to the current schema."""
    version = data.get("schema_version", 1)
    if isinstance(version, int) and version < 2:
        # version 1 stored the benchmark preset as the index of a combo box
        preset = data.pop("bench_preset_index", None)
        if isinstance(preset, int):
            data["bench_preset"] = {0: "quick", 1: "thorough"}.get(preset, "custom")
    data["schema_version"] = SETTINGS_VERSION
    return data


def _read_fields(data: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Each known field checked on its own: (settings, the names of fields that were bad)."""
    defaults = Settings()
    values: dict[str, Any] = {}
    bad: list[str] = []
    for f in fields(Settings):
        if f.name not in data:
            continue
        try:
            one = from_json(Settings, {f.name: data[f.name]}, "settings")
            value = getattr(one, f.name)
        except DataError:
            bad.append(f.name)
            continue
        if f.name in _ALLOWED and not _ALLOWED[f.name](value):
            bad.append(f.name)
            continue
        values[f.name] = value
    return replace(defaults, **values), bad


@dataclass(frozen=True)
class Loaded:
    """Settings as read, and what the user should be told about the file (or '')."""

    settings: Settings
    notice: str = ""


def load_settings(path: Path) -> Loaded:
    """Settings from disk: defaults when absent; a damaged file (not JSON, nested absurdly
    deep, a folder in its place), or a bad field, is set aside (never deleted, never
    overwritten) and said in one sentence. Never raises: the app always starts."""
    owned = read_owned(path, max_bytes=MAX_SETTINGS_BYTES)
    if owned.state == MISSING:
        return Loaded(Settings())
    if owned.state == UNREADABLE:
        log.warning("settings file %s %s; using defaults", path, owned.reason)
        return Loaded(
            Settings(),
            f"Your settings file {owned.reason}, so the defaults are used for now; it is left "
            "as it is.",
        )
    salvaged = _salvage(owned.text) if owned.state == DAMAGED and owned.text else None
    if salvaged is None and (owned.state == DAMAGED or not isinstance(owned.value, dict)):
        why = owned.reason or "is not in the expected form"
        log.warning("settings file %s %s; using defaults", path, why)
        aside = set_aside(path)
        return Loaded(
            Settings(),
            f"Your settings file {why}, so every setting was reset to its default"
            + (f"; the old file is kept as {aside.name} in {aside.parent}." if aside else "."),
        )
    # one setting too deep or with a huge number (salvaged), or of the wrong type: that one
    # resets, the others stay
    data, refused = salvaged if salvaged is not None else (owned.value, [])
    settings, bad = _read_fields(_migrate(data))
    bad = [*refused, *bad]
    if not bad:
        return Loaded(settings)
    log.warning("settings file %s: bad fields %s; their defaults are used", path, bad)
    aside = set_aside(path, copy=True)
    if aside is not None:  # the old file is kept: write the healed one, so the next start is
        # clean (if it cannot be written, the next start says it again)
        with contextlib.suppress(OSError), locked(path):
            save_settings(path, settings)
    return Loaded(settings, _notice(bad, aside))


def _salvage(text: str) -> tuple[dict[str, Any], list[str]] | None:
    """(the settings that read, the names of those the reader refused) from a file refused
    as a whole because one value nests too deep or holds a huge number; None when the file's
    own shape is broken."""
    members = object_members(text)
    if members is None:
        return None
    good = {m.key: m.value for m in members if not m.refused}
    return good, [m.key for m in members if m.refused]


def read_settings(path: Path) -> Settings:
    """The settings as saved, for a reader that must not change the file (the command line):
    defaults where the file is absent, unreadable or damaged; a bad field its default."""
    owned = read_owned(path, max_bytes=MAX_SETTINGS_BYTES)
    if owned.state in (MISSING, UNREADABLE):
        return Settings()
    salvaged = _salvage(owned.text) if owned.state == DAMAGED and owned.text else None
    if salvaged is None and (owned.state == DAMAGED or not isinstance(owned.value, dict)):
        return Settings()
    data = salvaged[0] if salvaged is not None else owned.value
    return _read_fields(_migrate(data))[0]


def _notice(bad: list[str], aside: Path | None) -> str:
    what = f"Some settings were not valid ({', '.join(bad)}), so they were reset to their defaults"
    return what + (f"; the old file is kept as {aside.name} in {aside.parent}." if aside else ".")


def save_settings(path: Path, settings: Settings) -> None:
    """Write the settings whole, atomically (StorageError naming the folder on failure)."""
    write_owned(path, _encode(settings), what="Your settings", kept="the earlier ones are kept")


def save_changes(path: Path, changes: dict[str, Any]) -> None:
    """Write `changes` into the settings on disk, under the file's lock: another window of the
    app that changed other settings meanwhile keeps its changes."""
    with locked(path):
        owned = read_owned(path, max_bytes=MAX_SETTINGS_BYTES)
        if owned.state == UNREADABLE:  # replacing it would lose every setting it holds
            raise StorageError(
                f"Your settings could not be saved: the file {path} {owned.reason}, and it is "
                "left as it is; check its permissions, and your changes apply until the app "
                "closes."
            )
        on_disk = Settings()
        if owned.state == OK and isinstance(owned.value, dict):
            on_disk, _ = _read_fields(_migrate(owned.value))
        elif owned.state != MISSING:  # damaged since it was read: kept, never overwritten
            set_aside(path)
        save_settings(path, replace(on_disk, **changes))


def _encode(settings: Settings) -> bytes:
    return json.dumps(settings.to_json(), indent=2).encode("utf-8")


@dataclass
class SettingsStore:
    """Holds the current settings and writes every change through to disk: at once, or (in
    the app) on a writer thread of its own, in order, so the window never waits on a disk."""

    path: Path
    current: Settings = field(default_factory=Settings)
    notice: str = ""  # one sentence about a damaged file, for the front end to show once
    background: bool = False
    # told once, with the sentence, when the settings cannot be saved (a full or read-only
    # folder); called on the writer thread
    on_write_error: Callable[[str], None] | None = field(default=None, repr=False)
    _told: bool = field(default=False, repr=False)
    _writer: ThreadPoolExecutor | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, path: Path, *, background: bool = False) -> SettingsStore:
        loaded = load_settings(path)
        return cls(path, loaded.settings, loaded.notice, background)

    def update(self, **changes: Any) -> Settings:
        self.current = replace(self.current, **changes)
        self._save(changes)
        return self.current

    def add_recent(self, model_path: str) -> Settings:
        self.current = self.current.with_recent(model_path)
        self._save({"recent_models": self.current.recent_models})
        return self.current

    def _save(self, changes: dict[str, Any]) -> None:
        if not self.background:
            self._write(changes)
            return
        with self._lock:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="settings-writer")
            self._writer.submit(self._write, changes)

    def _write(self, changes: dict[str, Any]) -> None:
        try:
            save_changes(self.path, changes)
        except OSError as exc:  # StorageError: one sentence naming the folder
            log.warning("could not save settings: %s", exc)
            if not self._told and self.on_write_error is not None:
                self._told = True  # said once; the settings still apply until the app closes
                self.on_write_error(str(exc))

    def flush(self) -> None:
        """Wait for pending writes (the app calls this when it closes)."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)

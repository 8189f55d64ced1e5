"""User preferences: a typed dataclass with defaults, a schema version and migration, stored
as JSON (atomically). Meanings are stored, never widget indices.

The file is the app's own and heals itself: a file that cannot be read, or a field of the
wrong type or out of range ("reps": "5"), never stops the app. The bad field falls back to its
default, the file is kept aside under a name of its own (every copy kept), and the store
carries one sentence (`notice`) for the front end to tell the user, once.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from advisor.core.infra.atomic import atomic_write_text
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
    """Settings from disk: defaults when absent; a damaged file, or a bad field, is set aside
    (never deleted, never overwritten) and said in one sentence."""
    try:
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            raise ValueError("the file is far too large for settings")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Loaded(Settings())
    except (OSError, ValueError) as exc:
        log.warning("settings file %s unreadable (%s); using defaults", path, exc)
        aside = set_aside(path)
        return Loaded(
            Settings(),
            "Your settings could not be read, so the defaults are used"
            + (f"; the old file is kept as {aside.name}." if aside else "."),
        )
    if not isinstance(data, dict):
        aside = set_aside(path)
        return Loaded(Settings(), _notice([], aside, whole=True))
    settings, bad = _read_fields(_migrate(data))
    if not bad:
        return Loaded(settings)
    log.warning("settings file %s: bad fields %s; their defaults are used", path, bad)
    return Loaded(settings, _notice(bad, set_aside(path, copy=True)))


def _notice(bad: list[str], aside: Path | None, whole: bool = False) -> str:
    what = (
        "Your settings file was not in the expected form, so the defaults are used"
        if whole
        else f"Some settings were not valid ({', '.join(bad)}), so their defaults are used"
    )
    return what + (f"; the old file is kept as {aside.name}." if aside else ".")


def read_settings(path: Path) -> Settings:
    """The settings as saved, for a reader that must not change the file (the command line):
    defaults where the file is absent, unreadable, or a field is bad."""
    try:
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            return Settings()
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Settings()
    return _read_fields(_migrate(data))[0] if isinstance(data, dict) else Settings()


def set_aside(path: Path, *, copy: bool = False) -> Path | None:
    """Keep a damaged file under a name of its own (settings.corrupt-<time>-<random>.json);
    earlier copies are never overwritten. None when it cannot be kept."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.stem}.corrupt-{stamp}-{uuid.uuid4().hex[:6]}{path.suffix}")
    try:
        if copy:
            aside.write_bytes(path.read_bytes())
        else:
            os.replace(path, aside)
    except OSError:
        return None
    return aside


def save_settings(path: Path, settings: Settings) -> None:
    atomic_write_text(path, json.dumps(settings.to_json(), indent=2))


@dataclass
class SettingsStore:
    """Holds the current settings and writes every change through to disk: at once, or (in
    the app) on a writer thread of its own, in order, so the window never waits on a disk."""

    path: Path
    current: Settings = field(default_factory=Settings)
    notice: str = ""  # one sentence about a damaged file, for the front end to show once
    background: bool = False
    _writer: ThreadPoolExecutor | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, path: Path, *, background: bool = False) -> SettingsStore:
        loaded = load_settings(path)
        return cls(path, loaded.settings, loaded.notice, background)

    def update(self, **changes: Any) -> Settings:
        self.current = replace(self.current, **changes)
        self._save(self.current)
        return self.current

    def add_recent(self, model_path: str) -> Settings:
        self.current = self.current.with_recent(model_path)
        self._save(self.current)
        return self.current

    def _save(self, settings: Settings) -> None:
        if not self.background:
            self._write(settings)
            return
        with self._lock:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="settings-writer")
            self._writer.submit(self._write, settings)

    def _write(self, settings: Settings) -> None:
        try:
            save_settings(self.path, settings)
        except OSError as exc:
            log.warning("could not save settings: %s", exc)

    def flush(self) -> None:
        """Wait for pending writes (the app calls this when it closes)."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)

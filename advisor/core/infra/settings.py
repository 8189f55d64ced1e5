"""User preferences: a typed dataclass with defaults, a schema version and migration, stored
as JSON (atomically). Meanings are stored, never widget indices."""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from advisor.core.infra.atomic import atomic_write_text

SETTINGS_VERSION = 2
MAX_RECENT = 8
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
    reps: int = 3
    workload: str = "chat"
    chosen_device_id: str | None = None  # the user's pick when detection could not tell
    compare_targets: tuple[str, ...] = ("nvidia-geforce-rtx-4090", "apple-m4-max-40c")
    theme: str = "system"  # "system" | "light" | "dark"

    def with_recent(self, path: str) -> Settings:
        recent = [path, *[p for p in self.recent_models if p != path]][:MAX_RECENT]
        return replace(self, recent_models=tuple(recent))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older settings file up to the current schema."""
    version = int(data.get("schema_version", 1))
    if version < 2:
        # version 1 stored the benchmark preset as the index of a combo box
        preset = data.pop("bench_preset_index", None)
        if preset is not None:
            data["bench_preset"] = {0: "quick", 1: "thorough"}.get(int(preset), "custom")
    data["schema_version"] = SETTINGS_VERSION
    return data


def load_settings(path: Path) -> Settings:
    """Settings from disk; defaults when absent; a damaged file is set aside, not fatal."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (OSError, ValueError) as exc:
        log.warning("settings file %s unreadable (%s); using defaults", path, exc)
        with contextlib.suppress(OSError):
            path.rename(path.with_suffix(".corrupt.json"))
        return Settings()
    if not isinstance(data, dict):
        return Settings()
    data = _migrate(data)
    known = {f.name: f for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            continue
        if key in ("recent_models", "compare_targets") and isinstance(value, list):
            value = tuple(str(v) for v in value)
        values[key] = value
    try:
        return Settings(**values)
    except TypeError:
        return Settings()


def save_settings(path: Path, settings: Settings) -> None:
    atomic_write_text(path, json.dumps(settings.to_json(), indent=2))


@dataclass
class SettingsStore:
    """Holds the current settings and writes every change through to disk."""

    path: Path
    current: Settings = field(default_factory=Settings)

    @classmethod
    def open(cls, path: Path) -> SettingsStore:
        return cls(path, load_settings(path))

    def update(self, **changes: Any) -> Settings:
        self.current = replace(self.current, **changes)
        try:
            save_settings(self.path, self.current)
        except OSError as exc:
            log.warning("could not save settings: %s", exc)
        return self.current

    def add_recent(self, model_path: str) -> Settings:
        self.current = self.current.with_recent(model_path)
        try:
            save_settings(self.path, self.current)
        except OSError as exc:
            log.warning("could not save settings: %s", exc)
        return self.current

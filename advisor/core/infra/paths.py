"""Where the app keeps its files: one place, built on platformdirs.

`ADVISOR_HOME` overrides everything (tests and portable installs): data, cache, logs and
config then live in sub-folders of it. Nothing is ever written beside the executable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import platformdirs

APP_DIR_NAME = "llm-hardware-advisor"
APP_AUTHOR = "LLMHardwareAdvisor"


@dataclass(frozen=True)
class AppPaths:
    """The app's folders. Create data and cache with `ensure()` before writing."""

    data: Path
    cache: Path
    logs: Path
    config: Path

    @property
    def history_file(self) -> Path:
        return self.data / "history.json"

    @property
    def settings_file(self) -> Path:
        return self.config / "settings.json"

    @property
    def synthetic_models(self) -> Path:
        return self.cache / "synthetic"

    @property
    def log_file(self) -> Path:
        return self.logs / "advisor.log"

    @property
    def hardware_cache(self) -> Path:
        return self.cache / "hardware.json"

    def ensure(self) -> AppPaths:
        """Create the folders commands write into (data, cache); one that cannot be (a file
        stands there, no permission, a read-only disk) raises StorageError with the folder
        and the reason. The log and config folders are made by their writers when first
        written (the log falls back to stderr, settings say so in one sentence), so a stray
        file named `config` or `logs` never stops a command that does not use it."""
        from advisor.core.infra.errors import StorageError, os_reason

        for p in (self.data, self.cache, self.synthetic_models):
            try:
                p.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(
                    f"The app's folder {p} cannot be used ({os_reason(exc)}); move what stands "
                    "there, or set ADVISOR_HOME to another folder."
                ) from exc
        return self


def app_paths(home: str | os.PathLike[str] | None = None) -> AppPaths:
    """The app's folders: under `home` or $ADVISOR_HOME if given, else the OS conventions."""
    root = home or os.environ.get("ADVISOR_HOME")
    if root:
        base = Path(root).expanduser()
        return AppPaths(base / "data", base / "cache", base / "logs", base / "config")
    return AppPaths(
        data=Path(platformdirs.user_data_dir(APP_DIR_NAME, APP_AUTHOR)),
        cache=Path(platformdirs.user_cache_dir(APP_DIR_NAME, APP_AUTHOR)),
        logs=Path(platformdirs.user_log_dir(APP_DIR_NAME, APP_AUTHOR)),
        config=Path(platformdirs.user_config_dir(APP_DIR_NAME, APP_AUTHOR)),
    )


_BUNDLED_FOLDERS = {"device_db": "device_db", "resources": "resources"}


def bundled(package: str) -> Path:
    """The folder of a data package installed inside the app (`device_db`: the catalogue,
    `resources`: icons and bundled data). Installed (pip, or the frozen app), it is the
    package advisor.<package>; run from a source checkout, the folder of that name beside
    the `advisor` package (where setuptools maps it from)."""
    if package not in _BUNDLED_FOLDERS:
        raise ValueError(f"no bundled package {package!r}")
    try:
        return Path(str(resources.files(f"advisor.{package}")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[3] / _BUNDLED_FOLDERS[package]

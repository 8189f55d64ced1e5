"""Which llama.cpp backends and devices this installation has, asked of llama.cpp itself in a
child process (loading llama.cpp in the app's own process could crash it)."""

from __future__ import annotations

from advisor.bench.controller import run_child_json
from advisor.core.hardware.model import BackendInfo
from advisor.core.infra.serde import DataError, from_json


def query_backend(timeout_s: float = 30.0) -> BackendInfo:
    """Ask llama.cpp (in a child process) which backends and devices it has."""
    info = run_child_json("backend", timeout_s)
    if not info.get("available"):
        return BackendInfo(available=False, error=str(info.get("error") or "unknown error"))
    try:
        return from_json(BackendInfo, info, "llama.cpp's backend report")
    except DataError as exc:
        return BackendInfo(available=False, error=str(exc))

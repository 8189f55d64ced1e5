"""Shared fixtures: an isolated app home, and small synthetic GGUF files made once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt must never need a screen in tests; pyqtgraph must bind PySide6.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own app folders: no test touches the real user's history."""
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "advisor-home"))


@pytest.fixture(scope="session")
def synth_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("synthetic")


@pytest.fixture(scope="session")
def make_synth(synth_dir):
    """make_synth(shape_id, quant, layers) -> path of a synthetic GGUF, written once per session."""
    from advisor.bench.synth import synthetic_file_name, write_synthetic_gguf

    def make(shape_id: str, quant: str = "q4_0", layers: int | None = 2) -> Path:
        path = synth_dir / synthetic_file_name(shape_id, quant, layers)
        if not path.exists():
            write_synthetic_gguf(path, shape_id, quant, n_layers=layers)
        return path

    return make


@pytest.fixture(scope="session")
def tiny_model(make_synth) -> Path:
    """The smallest real-shaped model: qwen2.5-0.5b, 2 layers, Q4_0 (about 90 MB)."""
    return make_synth("qwen2.5-0.5b", "q4_0", 2)

"""Freeze the app with packaging/build.sh and run the frozen binary's smoke test, without the
source tree or the virtual environment anywhere on its path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PyInstaller")
pytestmark = [pytest.mark.slow, pytest.mark.llama]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def frozen(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("frozen")
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "DIST_DIR": str(out / "dist"),
        "WORK_DIR": str(out / "work"),
    }
    result = subprocess.run(
        ["bash", str(REPO / "packaging" / "build.sh")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    app = out / "dist" / "advisor"
    assert (app / "advisor").exists() and (app / "advisor-cli").exists()
    return app


def _clean_env(tmp_path: Path) -> dict[str, str]:
    """No PYTHONPATH, no virtual environment, no source tree: what a user's machine has."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "QT_QPA_PLATFORM": "offscreen",
        "ADVISOR_HOME": str(tmp_path / "home"),
    }


def test_frozen_smoke_test(frozen, tmp_path, capsys):
    result = subprocess.run(
        [str(frozen / "advisor-cli"), "--smoke-test"],
        cwd=tmp_path,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    with capsys.disabled():
        print("\n" + result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "frozen: True" in result.stdout
    assert "pp32:" in result.stdout and "tg8:" in result.stdout
    assert "smoke test passed" in result.stdout


def test_frozen_cli_reads_models_and_catalogue(frozen, tmp_path, tiny_model):
    env = _clean_env(tmp_path)
    out = subprocess.run(
        [str(frozen / "advisor-cli"), "inspect", str(tiny_model)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "qwen2" in out.stdout
    out = subprocess.run(
        [str(frozen / "advisor-cli"), "devices", "--search", "RTX 4090"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and "GeForce RTX 4090" in out.stdout
    bad = tmp_path / "not-a-model.gguf"
    bad.write_text("hello")
    out = subprocess.run(
        [str(frozen / "advisor-cli"), "inspect", str(bad)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "not a GGUF model" in out.stderr
    assert "Traceback" not in out.stderr


def test_bundle_carries_no_source_paths(frozen):
    # the app must not depend on this checkout: no file in the bundle points back into it
    assert not any(REPO in p.resolve().parents for p in frozen.rglob("*") if p.is_symlink())

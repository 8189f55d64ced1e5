"""Style is part of the build: ruff (lint and format, line length 100) over the whole tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _ruff() -> str:
    exe = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(exe).exists():
        if os.environ.get("CI"):  # the test extras install ruff: CI must not skip the check
            pytest.fail("ruff is not installed; pip install -e '.[test]'")
        pytest.skip("ruff is not installed")
    return exe


def test_ruff_lint_is_clean():
    out = subprocess.run([_ruff(), "check", "."], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_is_clean():
    out = subprocess.run(
        [_ruff(), "format", "--check", "."], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr

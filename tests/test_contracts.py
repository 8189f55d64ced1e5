"""The layers hold: import-linter contracts (pyproject.toml [tool.importlinter]) and mypy on
advisor/core run as tests, and a violation planted in a copy of the tree fails them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(exe).exists():
        if os.environ.get("CI"):  # the test extras install it: CI must not skip the check
            pytest.fail(f"{name} is not installed; pip install -e '.[test]'")
        pytest.skip(f"{name} is not installed")
    return exe


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [_tool("lint-imports"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_layer_contracts_hold():
    out = _lint_imports(REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


@pytest.mark.parametrize(
    ("where", "line", "broken"),
    [
        ("advisor/core/model/_planted.py", "import PySide6\n", "The core is pure"),
        ("advisor/core/model/_planted.py", "import advisor.core.predict.projecting.projection\n",
         "Inside the core"),
        ("advisor/bench/_planted.py", "import advisor.gui.app\n", "Layers"),
        ("advisor/gui/_planted.py", "import advisor.bench.runner\n", "public entry points"),
    ],
)  # fmt: skip
def test_a_planted_violation_breaks_a_contract(tmp_path, where, line, broken):
    copy = tmp_path / "tree"
    copy.mkdir()
    shutil.copytree(
        REPO / "advisor", copy / "advisor", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    (copy / where).write_text(line)
    out = _lint_imports(copy)
    assert out.returncode != 0, out.stdout
    broken_section = out.stdout.split("Broken contracts", 1)[-1]
    assert broken in broken_section, out.stdout


@pytest.mark.slow
def test_mypy_is_clean_on_the_core():
    out = subprocess.run([_tool("mypy")], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success: no issues found" in out.stdout

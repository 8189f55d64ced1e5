"""advisor.core must stay pure: no Qt, no pyqtgraph, no llama_cpp, no GUI (CONVENTIONS.md #1)."""

import ast
import pathlib
import subprocess
import sys

CORE = pathlib.Path(__file__).resolve().parents[2] / "advisor" / "core"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "llama_cpp", "advisor.gui", "advisor.bench")


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_core_source_imports_nothing_forbidden():
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{path.relative_to(CORE.parent.parent)} imports {name}")
    assert not offenders, offenders


def test_importing_every_core_module_loads_no_forbidden_module():
    modules = sorted(
        "advisor." + ".".join(p.relative_to(CORE.parent).with_suffix("").parts)
        for p in CORE.rglob("*.py")
        if p.name != "__init__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}\n"
        "       or m.startswith(('advisor.gui', 'advisor.bench'))]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr

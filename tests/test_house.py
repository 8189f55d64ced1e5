"""The house stays tidy: no module over 500 lines, no function over 80 lines unless a comment
just above it says why it is long."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "advisor"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def test_no_module_over_500_lines():
    big = {
        str(p.relative_to(ROOT)): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not big, big


def test_no_function_over_80_lines_without_a_reason():
    long = {}
    for p in ROOT.rglob("*.py"):
        lines = p.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = node.end_lineno - node.lineno + 1
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            above = lines[max(0, first - 4) : first - 1]
            if length > MAX_FUNCTION_LINES and not any("long on purpose" in a for a in above):
                long[f"{p.relative_to(ROOT)}:{node.name}"] = length
    assert not long, long

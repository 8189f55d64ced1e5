#!/usr/bin/env python3
"""Mutation testing of the modules that decide what the user is told.

For each module, every small change a slip of the keyboard makes (a comparison flipped, `+`
for `-`, `*` for `/`, a constant off by one, `and` for `or`, a `not` dropped, a `max` for a
`min`) is applied to a copy of the source, one at a time, and that module's tests are run
against it. A mutant the tests catch is "killed"; one they pass is a "survivor": a change in
behaviour no test notices. The score is killed / (killed + survived); a mutant that makes the
tests time out counts as killed.

    python benchmarks/mutation.py                     # every module, a seeded sample each
    python benchmarks/mutation.py --module stats --all
    python benchmarks/mutation.py --sample 30 --seed 1 --out benchmarks/results/mutation.txt

Mutants are written to the module's file in place and the original is restored after each
(also on Ctrl-C); run it on a clean checkout, not while editing. It is slow (one test run per
mutant), so it is a benchmark, not part of CI.
"""

from __future__ import annotations

import argparse
import ast
import copy
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# module -> the tests that speak for it (fast lane only: no llama.cpp, no GUI)
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "gguf_file": ("advisor/core/model/gguf_file.py",
                  ("tests/core/test_hand_computed.py", "tests/core/test_real_headers.py",
                   "tests/core/test_vocab_files.py", "tests/core/test_model_facts.py",
                   "tests/reliability/test_fuzz_gguf.py", "tests/reliability/test_bad_inputs.py")),
    "gguf_facts": ("advisor/core/model/gguf_facts.py",
                   ("tests/core/test_real_headers.py", "tests/core/test_vocab_files.py",
                    "tests/core/test_model_facts.py", "tests/reliability/test_fuzz_gguf.py",
                    "tests/reliability/test_red_team_files.py")),
    "model_facts": ("advisor/core/model/facts.py",
                    ("tests/core/test_real_headers.py", "tests/core/test_hand_computed.py",
                     "tests/core/test_model_facts.py", "tests/core/test_shapes.py",
                     "tests/core/test_ceilings.py")),
    "stats": ("advisor/core/runs/stats.py",
              ("tests/core/test_hand_computed.py", "tests/core/runs",
               "tests/bench/test_longest_and_energy.py")),
    "explain": ("advisor/core/predict/explain.py",
                ("tests/core/test_hand_computed.py", "tests/core/test_ceilings.py",
                 "tests/core/runs/test_results.py")),
    "memory_fit": ("advisor/core/predict/memory_fit.py",
                   ("tests/core/test_hand_computed.py", "tests/core/test_projection.py")),
    "projection": ("advisor/core/predict/projection.py", ("tests/core/test_projection.py",)),
    "workloads": ("advisor/core/predict/workloads.py",
                  ("tests/core/test_projection.py", "tests/cli/test_project_inputs.py",
                   "tests/workloads")),
    "export": ("advisor/core/runs/export.py",
               ("tests/core/runs", "tests/bench/test_longest_and_energy.py")),
}  # fmt: skip

CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
            ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}  # fmt: skip
BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
            ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult}  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    line: int
    what: str
    index: int  # the n-th mutation site of the module


def _sites(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    """(node, description) for every place a mutation applies, in source order."""
    out: list[tuple[ast.AST, str]] = []
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and n.body and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in CMP_SWAP:
            out.append((node, f"{type(node.ops[0]).__name__} -> "
                              f"{CMP_SWAP[type(node.ops[0])].__name__}"))  # fmt: skip
        elif isinstance(node, ast.BinOp) and type(node.op) in BIN_SWAP:
            out.append((node, f"{type(node.op).__name__} -> {BIN_SWAP[type(node.op)].__name__}"))
        elif isinstance(node, ast.BoolOp):
            out.append((node, "and <-> or"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((node, "drop not"))
        elif (
            isinstance(node, ast.Constant)
            and type(node.value) in (int, float)
            and not isinstance(node.value, bool)
            and id(node) not in docstrings
        ):
            out.append((node, f"{node.value!r} -> {_bumped(node.value)!r}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("min", "max")
        ):
            out.append((node, f"{node.func.id} -> {'max' if node.func.id == 'min' else 'min'}"))
    return out


def _bumped(v: float) -> float:
    if isinstance(v, int):
        return v + 1
    return v * 1.1 if v else 0.1


def _mutate(node: ast.AST) -> None:
    if isinstance(node, ast.Compare):
        node.ops[0] = CMP_SWAP[type(node.ops[0])]()
    elif isinstance(node, ast.BinOp):
        node.op = BIN_SWAP[type(node.op)]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        node.op = ast.UAdd()  # `+x` for `not x`: truthiness kept, the negation dropped
    elif isinstance(node, ast.Constant):
        node.value = _bumped(node.value)
    elif isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        node.func.id = "max" if node.func.id == "min" else "min"


def mutants(source: str) -> tuple[ast.Module, list[Mutant]]:
    tree = ast.parse(source)
    sites = _sites(tree)
    return tree, [Mutant(getattr(n, "lineno", 0), what, i) for i, (n, what) in enumerate(sites)]


def mutated_source(tree: ast.Module, index: int) -> str | None:
    t = copy.deepcopy(tree)
    node, _ = _sites(t)[index]
    _mutate(node)
    if isinstance(node, ast.UnaryOp):  # `+x` would raise on non-numbers: use `bool(x)`
        return _replace_not(t, node)
    try:
        return ast.unparse(ast.fix_missing_locations(t))
    except (ValueError, TypeError):
        return None


def _replace_not(tree: ast.Module, node: ast.UnaryOp) -> str:
    class T(ast.NodeTransformer):
        def visit_UnaryOp(self, n: ast.UnaryOp) -> ast.AST:
            if n is node:
                return ast.Call(ast.Name("bool", ast.Load()), [n.operand], [])
            return self.generic_visit(n)

    return ast.unparse(ast.fix_missing_locations(T().visit(tree)))


def run_tests(tests: tuple[str, ...], timeout_s: float) -> str:
    existing = [t for t in tests if (REPO / t).exists()]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           "-m", "not llama and not slow", *existing]  # fmt: skip
    try:
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode == 0:
        return "survived"
    if done.returncode == 5:  # no tests collected
        return "no tests"
    return "killed"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--module", action="append", choices=sorted(MODULES))
    ap.add_argument("--sample", type=int, default=25, help="mutants per module (seeded)")
    ap.add_argument("--all", action="store_true", help="every mutant, not a sample")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    say(f"mutation testing, seed {args.seed}, {'all' if args.all else args.sample} mutants "
        f"per module, {time.strftime('%Y-%m-%d %H:%M')}")  # fmt: skip
    totals = []
    for key in args.module or list(MODULES):
        rel, tests = MODULES[key]
        path = REPO / rel
        original = path.read_text(encoding="utf-8")
        baseline = run_tests(tests, args.timeout)
        if baseline != "survived":
            say(f"{key}: the tests do not pass unmutated ({baseline}); skipped")
            continue
        tree, found = mutants(original)
        chosen = found if args.all else random.Random(args.seed).sample(
            found, min(args.sample, len(found)))  # fmt: skip
        killed, survivors = 0, []
        previous = signal.getsignal(signal.SIGINT)
        try:
            for m in sorted(chosen, key=lambda m: m.index):
                src = mutated_source(tree, m.index)
                if src is None:
                    continue
                path.write_text(src, encoding="utf-8")
                verdict = run_tests(tests, args.timeout)
                if verdict in ("killed", "timeout"):
                    killed += 1
                else:
                    survivors.append(m)
        finally:
            path.write_text(original, encoding="utf-8")
            signal.signal(signal.SIGINT, previous)
        n = killed + len(survivors)
        score = killed / n if n else 0.0
        totals.append((key, score, n))
        say(f"{key:12s} {score:6.1%}  killed {killed} of {n} (of {len(found)} sites)  "
            f"{rel}")  # fmt: skip
        for m in survivors:
            say(f"    survived: line {m.line}: {m.what}")
    say("")
    for key, score, n in totals:
        say(f"  {key:12s} {score:6.1%} ({n} mutants){'' if score >= 0.8 else '  < 80%'}")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

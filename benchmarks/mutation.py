#!/usr/bin/env python3
"""Mutation testing of the modules that decide what the user is told.

For each module, every small change a slip of the keyboard makes (a comparison flipped, `+`
for `-`, `*` for `/`, a constant off by one, `and` for `or`, a `not` dropped, a `max` for a
`min`) is applied to a copy of the source, one at a time, and the tests that reach the
mutated line are run against it. Which tests reach which line comes from one run of the fast
lane under coverage with a context per test (`coverage` is in the test extras); a line no
test reaches is a survivor without a run, and a line that runs only at import (module
constants) is tried against the module's own test files listed below. A mutant the tests
catch is "killed"; one they pass is a "survivor": a change in behaviour no test notices. The
score is killed / (killed + survived); a mutant that makes the tests time out counts as
killed.

    python benchmarks/mutation.py                     # every module, a seeded sample each
    python benchmarks/mutation.py --module stats --all
    python benchmarks/mutation.py --sample 30 --seed 1 --out benchmarks/results/mutation.txt
    python benchmarks/mutation.py --static           # only the module's own test files

Mutants are written to the module's file in place and the original is restored after each
(also on Ctrl-C); run it on a clean checkout, not while editing. It is slow (one test run per
mutant), so it is a benchmark, not part of CI.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# module -> its own test files: used for lines that run at import, and with --static
_C = "tests/core/"
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "gguf_file": ("advisor/core/model/gguf_file.py",
                  (_C + "test_gguf_bytes_by_hand.py", _C + "test_hand_computed.py",
                   _C + "test_real_headers.py", _C + "test_vocab_files.py",
                   _C + "test_model_facts.py", "tests/reliability/test_fuzz_gguf.py",
                   "tests/reliability/test_bad_inputs.py")),
    "gguf_facts": ("advisor/core/model/gguf_facts.py",
                   (_C + "test_gguf_facts_edges.py", _C + "test_real_headers.py",
                    _C + "test_vocab_files.py", _C + "test_model_facts.py",
                    "tests/reliability/test_fuzz_gguf.py",
                    "tests/reliability/test_red_team_files.py")),
    "model_facts": ("advisor/core/model/facts.py",
                    (_C + "test_model_facts_by_hand.py", _C + "test_gguf_facts_edges.py",
                     _C + "test_real_headers.py",
                     _C + "test_hand_computed.py", _C + "test_model_facts.py",
                     _C + "test_shapes.py", _C + "test_ceilings.py")),
    "stats": ("advisor/core/runs/stats.py",
              (_C + "test_hand_computed.py", _C + "runs",
               "tests/bench/test_longest_and_energy.py")),
    "explain": ("advisor/core/predict/advising/explain.py",
                (_C + "test_explain_by_hand.py", _C + "test_hand_computed.py",
                 _C + "test_ceilings.py", _C + "runs/test_results.py")),
    "memory_fit": ("advisor/core/predict/physics/memory.py",
                   (_C + "test_memory_fit_by_hand.py", _C + "test_hand_computed.py",
                    _C + "test_projection.py")),
    "projection": ("advisor/core/predict/projecting/projection.py",
                   (_C + "test_projection.py", _C + "test_projection_by_hand.py")),
    "workloads": ("advisor/core/predict/conditions/workloads.py",
                  (_C + "test_projection.py", "tests/cli/test_project_inputs.py",
                   "tests/workloads")),
    "export": ("advisor/core/runs/export.py",
               (_C + "runs", "tests/bench/test_longest_and_energy.py")),
}  # fmt: skip

# Survivors judged equivalent after reading them: no figure or sentence a user sees changes.
# (module, the mutated line's text, the mutation) -> why. They are printed, and the score
# is shown both with them and without them.
_CF2 = "return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)"
_FAST = "if length <= MAX_STRING_BYTES and pos + 8 + length <= size:"
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("stats", _CF2, "96 -> 97"): "the second Cornish-Fisher term moves t(31) by 3e-5; intervals "
    "are shown to 3 figures",
    ("stats", _CF2, "3 -> 4"): "moves t(31) by 2e-6 (the 3z of the second term)",
    ("stats", _CF2, "Mult -> Div"): "one of the second term's products: moves t(31) by under 1e-4",
    (
        "projection",
        "if s.fit.share_on_device < 1.0 and not s.device.unified_memory:",
        "1.0 -> 1.1",
    ): "the share on the device is at most 1, and at 1 the PCIe term it guards is 0",
    (
        "projection",
        "if inverse_ratio > 0 and cost > 0:  # else the deep run shows nothing beyond the model",
        "Gt -> GtE",
    ): "differs only where a float is exactly 0: cost 0 gives the same "
    "ratio either way; an inverse ratio of exactly 0 needs the deep/shallow speed ratio to equal "
    "the KV ratio to the last bit",
    (
        "projection",
        'limited = "compute" if compute_t > memory_t else "bandwidth"',
        "Gt -> GtE",
    ): "differs only when compute and memory time are equal to the last bit",
    (
        "projection",
        "measured_depths.append(reference.deep_tg_depth + reference.n_gen // 2)",
        "FloorDiv -> Div",
    ): "a half-token shift cannot move an integer depth across the 2,048-token window",
    (
        "projection",
        "measured_depths = [reference.tg_depth + reference.n_gen // 2] if reference.tg_tps else []",
        "FloorDiv -> Div",
    ): "as above",
    ("projection", "if det <= 0:", "LtE -> Lt"): "differs only when the determinant is exactly "
    "0.0 (predicted seconds exactly proportional to KV bytes at both depths)",
    (
        "projection",
        "if s.fit.share_on_device < 1.0 and not s.device.unified_memory:",
        "Lt -> LtE",
    ): "at a share of exactly 1 the PCIe term it guards is 0",
    (
        "projection",
        'limited = s.fit.spill_label if s.fit.share_on_device < 1 else "bandwidth"',
        "Lt -> LtE",
    ): "a model that fits has spill label 'bandwidth', the same word",
    (
        "projection",
        "return BASES.index(basis) if basis in BASES else -1",
        "1 -> 2",
    ): "any negative rank puts an unknown label below every known one",
    **{
        ("gguf_file", line, what): "the vocabulary's quick path: a stricter test only sends more "
        "items through the checked path, which skips a good item the same way"
        for line, what in (
            ("if pos + 8 <= size:", "LtE -> Lt"),
            ("if pos + 8 <= size:", "8 -> 9"),
            (_FAST, "LtE -> Lt"),
            (_FAST, "8 -> 9"),
        )
    },
    ("gguf_file", "self.pos = 0", "0 -> 1"): "the preamble sets the position to 4 (after the "
    "magic, which is read from the buffer directly) before the first read",
}

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


FAST_LANE = ("-m", "not llama and not slow")
# tests that time the app (a filter under 50 ms): they say nothing about a mutant's behaviour,
# and under coverage or beside another run they fail on their own, so they are never chosen
TIMING_ONLY = ("tests/reliability/test_load.py",)


def coverage_map(rels: list[str], workdir: Path) -> dict[str, dict[int, set[str]]]:
    """rel path -> line -> the test ids (file::function) that execute it: one fast-lane run
    under coverage, a dynamic context per test function."""
    from coverage import CoverageData

    rc = workdir / "coveragerc"
    data_file = workdir / "coverage.data"
    include = ",".join(str(REPO / r) for r in rels)
    rc.write_text(f"[run]\ndynamic_context = test_function\ndata_file = {data_file}\n"
                  f"include = {include}\n", encoding="utf-8")  # fmt: skip
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest", "-q",
           "-p", "no:cacheprovider", "-p", "no:xdist", *FAST_LANE, "tests",
           *(f"--ignore={t}" for t in TIMING_ONLY)]  # fmt: skip
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    # a test that fails under tracing (a time limit) is left out of every choice below
    failed = {ln.split()[1].split("[")[0] for ln in done.stdout.splitlines()
              if ln.startswith("FAILED ")}  # fmt: skip
    if done.returncode not in (0, 1) or len(failed) > 5:
        raise SystemExit("the fast lane fails unmutated:\n" + done.stdout[-2000:])
    for test in sorted(failed):
        print(f"left out (failed under coverage): {test}", flush=True)
    data = CoverageData(basename=str(data_file))
    data.read()
    out: dict[str, dict[int, set[str]]] = {}
    for measured in data.measured_files():
        rel = Path(measured).resolve().relative_to(REPO).as_posix()
        lines: dict[int, set[str]] = {}
        for line, contexts in data.contexts_by_lineno(measured).items():
            lines[line] = {t for c in contexts if (t := _test_id(c)) and t not in failed}
        out[rel] = lines
    return out


def _test_id(context: str) -> str | None:
    """'tests.core.test_x.TestY.test_z' -> 'tests/core/test_x.py::TestY::test_z'."""
    parts = context.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if (REPO / ("/".join(parts[:cut]) + ".py")).is_file():
            return "/".join(parts[:cut]) + ".py::" + "::".join(parts[cut:])
    return None


def lines_of(node_line: int, tree: ast.Module) -> range:
    """The lines of the statement holding `node_line` (coverage counts a statement's first)."""
    best: ast.stmt | None = None
    for n in ast.walk(tree):
        inside = isinstance(n, ast.stmt) and n.lineno <= node_line <= (n.end_lineno or n.lineno)
        if inside and (best is None or n.lineno >= best.lineno):
            best = n
    if best is None:
        return range(0)
    end = best.end_lineno or best.lineno
    body = getattr(best, "body", None)
    if isinstance(best, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return range(best.lineno, end + 1)  # a default value: every test that calls it
    if isinstance(body, list) and body:  # `if`/`for`: its header lines, not its body
        end = max(best.lineno, body[0].lineno - 1)
    return range(best.lineno, end + 1)


def run_tests(tests: tuple[str, ...], timeout_s: float) -> str:
    existing = [t for t in tests if (REPO / t.split("::")[0]).exists()]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
           "-p", "no:xdist", *FAST_LANE, *existing]  # fmt: skip
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
    ap.add_argument(
        "--reach",
        type=Path,
        help="save (or reuse, when it exists) the which-test-reaches-which-line map",
    )
    ap.add_argument(
        "--static",
        action="store_true",
        help="run each module's own test files, not the tests that reach the line",
    )
    args = ap.parse_args()
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip() or "unknown"  # fmt: skip
    say(f"mutation testing at commit {commit}, seed {args.seed}, "
        f"{'all' if args.all else args.sample} mutants per module, "
        f"{time.strftime('%Y-%m-%d %H:%M')}")  # fmt: skip
    totals = []
    keys = args.module or list(MODULES)
    reach: dict[str, dict[int, set[str]]] = {}
    if not args.static and args.reach and args.reach.exists():
        saved = json.loads(args.reach.read_text(encoding="utf-8"))
        reach = {r: {int(n): set(t) for n, t in lines.items()} for r, lines in saved.items()}
        say(f"which tests reach which line: from {args.reach}")
    elif not args.static:
        import tempfile

        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            reach = coverage_map([MODULES[k][0] for k in MODULES], Path(tmp))
        say(f"which tests reach which line: one fast-lane run under coverage, "
            f"{time.perf_counter() - started:.0f} s")  # fmt: skip
        if args.reach:
            plain = {r: {n: sorted(t) for n, t in lines.items()} for r, lines in reach.items()}
            args.reach.write_text(json.dumps(plain), encoding="utf-8")
    for key in keys:
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
                chosen_tests = tests
                if not args.static:
                    by_line = reach.get(rel, {})
                    hit = set().union(*(by_line.get(n, set()) for n in lines_of(m.line, tree)))
                    ran = any(n in by_line for n in lines_of(m.line, tree))
                    if not ran:
                        survivors.append((m, "no test runs this line"))
                        continue
                    chosen_tests = tuple(sorted(hit)) or tests  # at import only: own files
                path.write_text(src, encoding="utf-8")
                verdict = run_tests(chosen_tests, args.timeout)
                if verdict in ("killed", "timeout"):
                    killed += 1
                else:
                    survivors.append((m, f"{len(chosen_tests)} test(s) ran"))
        finally:
            path.write_text(original, encoding="utf-8")
            signal.signal(signal.SIGINT, previous)
        source_lines = original.splitlines()

        def text_of(m: Mutant, source_lines: list[str] = source_lines) -> str:
            return source_lines[m.line - 1].strip() if 0 < m.line <= len(source_lines) else ""

        equivalent = [(m, EQUIVALENT[key, text_of(m), m.what]) for m, _ in survivors
                      if (key, text_of(m), m.what) in EQUIVALENT]  # fmt: skip
        n = killed + len(survivors)
        score = killed / n if n else 0.0
        judged = killed / (n - len(equivalent)) if n > len(equivalent) else 0.0
        totals.append((key, score, judged, n, len(equivalent)))
        say(f"{key:12s} {score:6.1%}  killed {killed} of {n} (of {len(found)} sites)  "
            f"{rel}")  # fmt: skip
        for m, why in survivors:
            if (key, text_of(m), m.what) not in EQUIVALENT:
                say(f"    survived: line {m.line}: {m.what}  ({why})  | {text_of(m)[:70]}")
        for m, why in equivalent:
            say(f"    equivalent: line {m.line}: {m.what}: {why}")
    say("")
    for key, score, judged, n, n_eq in totals:
        say(f"  {key:12s} {score:6.1%} of {n} mutants; {judged:6.1%} without the {n_eq} judged "
            f"equivalent{'' if judged >= 0.8 else '  < 80%'}")  # fmt: skip
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

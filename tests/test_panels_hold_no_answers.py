"""The panels only lay answers out: no sentence template and no numeric threshold about the
model in advisor/gui/panels/ (the answers come from advisor.usecases, which the command line
and the report card render too). A short allow-list names the exceptions and says why."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PANELS = Path(__file__).resolve().parents[1] / "advisor" / "gui" / "panels"
WORDS = 3  # literal words (2+ letters, markup removed) that make an f-string a sentence
SMALL_COUNT = 3  # whole numbers up to this are counts of things on screen, not thresholds

# (file, the start of the template's literal text): why a panel may word it
ALLOWED_SENTENCES = {
    ("history.py", "Delete"): "a confirmation before deleting files, not an answer",
    ("history.py", "The charts could not be saved"): "a file error, reported as it happens",
    ("history.py", "Saved "): "a status-bar note that files were written",
    ("charts.py", " could not be written in "): "a file error, reported as it happens",
    ("upgrade.py", "Report card saved: "): "a status-bar note that files were written",
}
# (file, the comparison as written): why a panel may compare with a number
ALLOWED_THRESHOLDS = {
    ("compare.py", "len(p.device) < 24"): "shortens a chart label to fit its tick, not a model",
    ("charts.py", "t.arithmetic_intensity > 300"): "puts a roofline label left of its point",
}


def _templates(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr):
            continue
        literal = "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
        prose = re.sub(r"<[^>]*>|&\w+;", " ", literal)  # tags and entities are layout
        if len(re.findall(r"[A-Za-z]{2,}", prose)) >= WORDS:
            found.append((node.lineno, literal))
    return found


def _small_count(value: float) -> bool:
    """0 to 3 as a whole number: how many runs are selected, which columns; a threshold about
    a model is a share (0.8, 0.9) or a size (4096)."""
    return isinstance(value, int) and abs(value) <= SMALL_COUNT


def _thresholds(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        numbers = [
            n.value
            for side in (node.left, *node.comparators)
            for n in ast.walk(side)
            if isinstance(n, ast.Constant) and isinstance(n.value, int | float)
            and not isinstance(n.value, bool) and not _small_count(n.value)
        ]  # fmt: skip
        if numbers:
            found.append((node.lineno, ast.unparse(node)))
    return found


def _offences() -> tuple[list[str], list[str]]:
    sentences, thresholds = [], []
    for path in sorted(PANELS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, literal in _templates(tree):
            if not any(f == path.name and literal.startswith(s) for f, s in ALLOWED_SENTENCES):
                sentences.append(f"{path.name}:{line}: {literal[:70]!r}")
        for line, code in _thresholds(tree):
            if (path.name, code) not in ALLOWED_THRESHOLDS:
                thresholds.append(f"{path.name}:{line}: {code}")
    return sentences, thresholds


def test_no_panel_words_an_answer_or_holds_a_threshold():
    sentences, thresholds = _offences()
    assert not sentences, "word these in advisor/usecases/:\n" + "\n".join(sentences)
    assert not thresholds, "decide these in advisor/usecases/:\n" + "\n".join(thresholds)


def test_the_scan_finds_what_it_looks_for():
    """The check can fail: a panel wording the run's explanation or holding its threshold."""
    planted = ast.parse(
        "def explain(tg, deep, bandwidth_only):\n"
        "    if deep < 0.8 * bandwidth_only:\n"
        "        return f'Reading the larger KV cache alone would explain {bandwidth_only:.0%}'\n"
        "    return f'<b>{tg}</b>'\n"  # markup alone is layout, not a sentence
    )
    assert [line for line, _ in _templates(planted)] == [3]
    assert _thresholds(planted) == [(2, "deep < 0.8 * bandwidth_only")]


def test_every_allowance_is_still_needed():
    """An allow-list entry whose code is gone would hide the next offence under its name."""
    used_sentences, used_thresholds = set(), set()
    for path in sorted(PANELS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, literal in _templates(tree):
            used_sentences |= {
                (f, s) for f, s in ALLOWED_SENTENCES if f == path.name and literal.startswith(s)
            }
        used_thresholds |= {(path.name, code) for _, code in _thresholds(tree)}
    assert set(ALLOWED_SENTENCES) == used_sentences
    assert set(ALLOWED_THRESHOLDS) <= used_thresholds

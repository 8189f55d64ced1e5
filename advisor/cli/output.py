"""What a command returns, and the one place that prints it as text or as JSON.

A command returns an `Output`: its data (plain JSON types, SI units, stable keys) and a function
that renders it as readable text. `main` prints one or the other, once; no command looks at
--json itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.core.infra.errors import AdvisorError
from advisor.core.infra.serde import json_safe, to_json


@dataclass(frozen=True)
class Output:
    """A command's result: data for --json, and its text form."""

    data: Any
    text: Callable[[], str]
    # an error to report after the output is printed (the run worked, saving it did not)
    error: AdvisorError | None = None


def render(output: Output, as_json: bool) -> None:
    """Print a command's output: JSON (NaN and infinity as null) or its text, in which a
    control character from the data (a device name with a terminal escape) is shown escaped."""
    if as_json:
        print(json.dumps(json_safe(to_json(output.data)), indent=2, ensure_ascii=False))
    else:
        text = output.text()
        if text:
            print(printable(text, keep_lines=True))


def printable(text: str, *, keep_lines: bool = False) -> str:
    """`text` with every control character (a newline, unless `keep_lines`; a terminal
    escape; a carriage return) written as its escape (\\n, \\x1b): what comes from a file or
    an argument can neither break the one-line rule nor drive the terminal."""
    if text.isprintable():
        return text
    keep = "\n\t" if keep_lines else ""
    return "".join(
        c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[int] = ()
) -> str:
    """A plain-text table; columns listed in `right` are right-aligned (numbers)."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])


def format_pairs(rows: Sequence[tuple[str, Any]]) -> str:
    """Label / value lines, labels aligned."""
    width = max((len(k) for k, _ in rows), default=0)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


def progress_line(text: str) -> None:
    """Overwrite one status line on a terminal (stderr), never in pipes."""
    if sys.stderr.isatty():
        print(f"\r{text[:110]:110}", end="", file=sys.stderr, flush=True)


def clear_progress() -> None:
    if sys.stderr.isatty():
        print("\r" + " " * 110 + "\r", end="", file=sys.stderr, flush=True)

"""The one JSON reader for every file a person hands the app, and every file it keeps.

Imports, run files, settings, the saved workloads, the history and the caches are all read
here, so one set of limits holds everywhere and every failure is one sentence:

- nesting deeper than `MAX_DEPTH` is refused *before* the decoder recurses (the standard
  decoder would raise RecursionError, or on some builds exhaust the C stack);
- a whole number of more than `MAX_INT_DIGITS` digits is refused (no count, size or time in
  any file the app reads needs one; converting 5,000 digits is slow and then overflows);
- NaN, Infinity and numbers too large for a float (1e400) read as null: they are not JSON,
  and a non-finite number downstream turns every sum it touches into nonsense;
- a UTF-8 byte-order mark (Windows editors write one) is accepted.

`JsonRefused` (an InputError) carries the sentence; syntax errors stay `json.JSONDecodeError`
(also a ValueError), so a caller that skips bad records catches ValueError for both.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from advisor.core.infra.errors import InputError

MAX_DEPTH = 64  # real exports nest about 10 levels deep; 64 leaves room for any real file
MAX_INT_DIGITS = 20  # 2**64 has 20 digits

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb'[^\[\]{}"]+')
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.DOTALL)
_OPEN = (ord("["), ord("{"))


class JsonRefused(InputError):
    """JSON the reader will not decode (too deep, a huge number); `reason` is the bare
    reason ("is nested more than 64 levels deep") for a caller to put in its own sentence."""

    def __init__(self, reason: str, what: str = "The file") -> None:
        super().__init__(f"{what} {reason}, which no genuine file does; it was not read.")
        self.reason = reason


class _HugeNumber(Exception):
    pass


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _HugeNumber
    return int(text)


def _float(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _constant(_text: str) -> None:
    return None  # NaN, Infinity, -Infinity


def _decoder() -> json.JSONDecoder:
    # one per call: the decoder calls back into Python, so threads must not share its scanner
    return json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)


def _too_deep(max_depth: int) -> str:
    return f"is nested more than {max_depth} levels deep"


_HUGE = f"holds a number of more than {MAX_INT_DIGITS} digits"


def first_value_depth(text: str, pos: int = 0, end: int | None = None) -> tuple[int, bool]:
    """(how deep the JSON value at `pos` nests, whether it ends before `end`).

    Strings are taken out first (a bracket inside one is text), then only brackets are
    counted, with numpy: linear in the text, no recursion. A string still open at the end of
    `text` ends the count there."""
    bare = _STRING.sub("", text[pos:end]).encode("utf-8", "ignore")
    brackets = _NOT_BRACKET.sub(b"", bare)
    quote = brackets.find(b'"')
    if quote >= 0:
        brackets = brackets[:quote]
    if not brackets:
        return 0, quote < 0
    codes = np.frombuffer(brackets, np.uint8)
    depth = np.cumsum(np.where(np.isin(codes, _OPEN), 1, -1), dtype=np.int64)
    closed = np.flatnonzero(depth <= 0)
    if len(closed):  # the first value ends where the count first comes back to zero
        return int(depth[: closed[0] + 1].max()), True
    return int(depth.max()), False


def check_depth(text: str, pos: int = 0, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise JsonRefused if the value at `pos` nests deeper than `max_depth`. Looks at a
    window that grows until the value ends, so checking one small item of a large buffer
    costs about the item, not the buffer."""
    window = 4096
    while True:
        end = min(len(text), pos + window)
        if end == len(text) and text.count("[", pos) + text.count("{", pos) <= max_depth:
            return  # it cannot nest deeper than the brackets it holds
        depth, closed = first_value_depth(text, pos, end)
        if depth > max_depth:
            raise JsonRefused(_too_deep(max_depth))
        if closed or end == len(text):
            return
        window *= 4


def decode_at(text: str, pos: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """(value, end) of the JSON value at `pos`, like `json.JSONDecoder.raw_decode`, with the
    depth checked first. Raises JsonRefused, or json.JSONDecodeError for bad or cut-off JSON."""
    if text[pos : pos + 1] in ("[", "{"):  # only a container nests (a scalar's count would
        check_depth(text, pos, max_depth=max_depth)  # run on into the values after it)
    try:
        return _decoder().raw_decode(text, pos)
    except _HugeNumber:
        raise JsonRefused(_HUGE) from None
    except RecursionError:  # cannot happen after the check above; a sentence all the same
        raise JsonRefused(_too_deep(max_depth)) from None


def loads(data: str | bytes, *, what: str = "The file", max_depth: int = MAX_DEPTH) -> Any:
    """The one JSON value in `data` (text, or UTF-8 bytes with or without a byte-order mark).

    Raises JsonRefused with `what` in its sentence, json.JSONDecodeError for bad JSON, or
    UnicodeDecodeError for bytes that are not UTF-8 (all ValueErrors)."""
    text = data.decode("utf-8-sig") if isinstance(data, bytes) else data.lstrip("\ufeff")
    start = len(text) - len(text.lstrip())
    try:
        value, end = decode_at(text, start, max_depth=max_depth)
    except JsonRefused as exc:
        raise JsonRefused(exc.reason, what) from None
    if text[end:].strip():
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def value_end(text: str, pos: int) -> int | None:
    """Where the JSON value at `pos` ends in `text` (None: not within `text`), found without
    decoding it: used to step over a value the reader refused."""
    depth = 0
    for m in _TOKEN.finditer(text, pos):
        c = text[m.start()]
        if c in "[{":
            depth += 1
        elif c in "]}":
            if depth == 0:
                return m.start()  # a bare value ended where its container closes
            depth -= 1
            if depth == 0:
                return m.end()
        elif c == ",":
            if depth == 0:
                return m.start()
        elif depth == 0:
            return m.end()  # a string value
    return None


@dataclass(frozen=True)
class Member:
    """One member of a JSON object, its value decoded by itself. A value the reader refused
    (too deep, a huge number) has `value` None, `refused` saying why, and stays as written in
    `raw`; `start` is where its value begins in the text."""

    key: str
    value: Any
    raw: str
    start: int
    refused: str = ""


_SPACE = re.compile(r"[ \t\n\r]*")


def object_members(text: str, pos: int = 0) -> list[Member] | None:
    """The members of the JSON object at `pos`, each value decoded on its own, so one that
    is nested too deep or holds a huge number is refused by itself while the others read.
    None when there is no object at `pos` or its own syntax (keys, colons, commas) is broken.
    Used to keep the good records of a file the app owns when one record is hostile."""

    def skip(at: int) -> int:
        match = _SPACE.match(text, at)
        return match.end() if match else at

    pos = skip(pos)
    if text[pos : pos + 1] != "{":
        return None
    out: list[Member] = []
    pos = skip(pos + 1)
    if text[pos : pos + 1] == "}":
        return out
    while True:
        if text[pos : pos + 1] != '"':
            return None
        try:
            key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
        except ValueError:
            return None
        pos = skip(pos)
        if text[pos : pos + 1] != ":":
            return None
        start = skip(pos + 1)
        try:
            value, end = decode_at(text, start)
            refused = ""
        except JsonRefused as exc:
            value, refused, found = None, exc.reason, value_end(text, start)
            if found is None:
                return None
            end = found
        except ValueError:
            return None
        out.append(Member(key, value, text[start:end].strip(), start, refused))
        pos = skip(end)
        if text[pos : pos + 1] == "}":
            return out
        if text[pos : pos + 1] != ",":
            return None
        pos = skip(pos + 1)


def read_json_file(
    path: str | os.PathLike[str], *, what: str, max_bytes: int, advice: str = ""
) -> Any:
    """The JSON value in the regular file `path`, at most `max_bytes` long.

    Every failure is an InputError with `what` ("The run file x.json") in its sentence and
    `advice` ("give a run saved by ...") after it: no such file, not a regular file (a folder,
    a pipe), too large, unreadable, not UTF-8, not JSON, too deep, a huge number."""
    from advisor.core.infra.errors import os_reason

    def refuse(problem: str) -> InputError:
        return InputError(f"{what} {problem}" + (f"; {advice}" if advice else "") + ".")

    p = Path(path)
    try:
        info = p.stat()
        if not stat.S_ISREG(info.st_mode):
            raise refuse("is not a regular file (a folder, device or pipe)")
        if info.st_size > max_bytes:
            raise refuse(
                f"is {info.st_size / 1e6:,.1f} MB, more than such a file can be "
                f"({max_bytes / 1e6:,.0f} MB)"
            )
        raw = p.read_bytes()
    except OSError as exc:
        raise refuse(f"cannot be read ({os_reason(exc)})") from None
    try:
        return loads(raw, what=what)
    except JsonRefused as exc:
        raise refuse(f"{exc.reason}, which no genuine file does") from None
    except UnicodeDecodeError:
        raise refuse("is not UTF-8 text") from None
    except ValueError as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise refuse(f"is not valid JSON ({msg.lower()})") from None

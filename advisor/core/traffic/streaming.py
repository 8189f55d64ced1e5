"""Reading big files a piece at a time, with progress, cancel and one-sentence errors.

JSON Lines and logs are read line by line. A JSON array (a 500 MB conversations.json) is
read element by element with `json.JSONDecoder.raw_decode` over a buffer that holds about one
element, never with `json.load` on the whole file.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from advisor.core.infra.errors import os_reason
from advisor.core.infra.safe_json import JsonRefused, decode_at, value_end
from advisor.core.traffic.errors import Cancelled, TrafficImportError

CHUNK_BYTES = 1 << 20
MAX_ELEMENT_BYTES = 64 << 20  # one conversation of a JSON array
MAX_DOCUMENT_BYTES = 256 << 20  # a format read as one JSON document (LM Studio)
MAX_LINE_BYTES = 64 << 20
PROGRESS_INTERVAL_S = 0.1

Progress = Callable[[int, int], None]

TRUNCATED = (
    "The file ends in the middle of its JSON, so it looks truncated (an interrupted download "
    "or copy); export or copy it again."
)


def check_regular_file(path: str | os.PathLike[str]) -> int:
    """The size of `path` in bytes, or a TrafficImportError saying why it cannot be read."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise TrafficImportError(f"There is no file at {p}; choose an existing file.") from None
    except OSError as exc:
        raise TrafficImportError(
            f"{p} cannot be read ({os_reason(exc)}); check its permissions."
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise TrafficImportError(
            f"{p} is not a regular file (a folder, device or pipe); choose the exported file."
        )
    if st.st_size == 0:
        raise TrafficImportError(
            "The file is empty; export the traffic again, or choose another file."
        )
    return st.st_size


def open_for_reading(path: str | os.PathLike[str]) -> IO[bytes]:
    """The file opened for reading in binary, or a TrafficImportError saying why it cannot be
    (a llama-server log owned by a service account: permission denied)."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise TrafficImportError(
            f"{Path(path)} cannot be read ({os_reason(exc)}); check its permissions, or copy "
            "it somewhere you can read it."
        ) from None


class ReadContext:
    """Progress, cancel and the count of skipped records for one import."""

    def __init__(
        self,
        total_bytes: int,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_bytes = total_bytes
        self.malformed = 0
        self.notes: list[str] = []
        self._progress = progress
        self._cancel = cancel
        self._clock = clock
        self._last_report = -PROGRESS_INTERVAL_S

    def advance(self, done_bytes: int) -> None:
        """Between two records: raise Cancelled if asked; report progress at most 10 a second."""
        if self._cancel is not None and self._cancel.is_set():
            raise Cancelled("The import was cancelled.")
        if self._progress is not None:
            now = self._clock()
            if now - self._last_report >= PROGRESS_INTERVAL_S:
                self._last_report = now
                self._progress(min(done_bytes, self.total_bytes), self.total_bytes)

    def finish(self) -> None:
        """Report the whole file as read."""
        if self._progress is not None:
            self._progress(self.total_bytes, self.total_bytes)

    def skip(self) -> None:
        """Count one malformed line or item, which is skipped."""
        self.malformed += 1


def iter_lines(fh: IO[bytes], ctx: ReadContext) -> Iterator[str]:
    """The lines of a binary file as text, with progress; over-long lines are skipped."""
    done = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES)
        if not raw:
            return
        done += len(raw)
        if len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # drop the rest of the line
                raw = fh.readline(MAX_LINE_BYTES)
                done += len(raw)
            ctx.skip()
            continue
        ctx.advance(done)
        yield raw.decode("utf-8", "replace")


class JsonStream:
    """JSON values read from a binary file through a bounded text buffer."""

    def __init__(self, fh: IO[bytes], ctx: ReadContext) -> None:
        self._fh = fh
        self._ctx = ctx
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
        self._buf = ""
        self._pos = 0
        self._eof = False
        self.bytes_read = 0

    def _fill(self, want: int | None = None) -> bool:
        if self._eof:
            return False
        raw = self._fh.read(want or CHUNK_BYTES)
        self.bytes_read += len(raw)
        self._buf = self._buf[self._pos :] + self._decoder.decode(raw, final=not raw)
        self._pos = 0
        self._eof = not raw
        return bool(raw)

    def _peek(self) -> str:
        """The next non-whitespace character ('' at the end of the file)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in " \t\r\n":
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                return ""

    def first_char(self) -> str:
        """The first non-whitespace character of the file."""
        return self._peek()

    def _value(self, limit: int, too_large: str) -> Any:
        """The next value; JsonRefused (too deep, a huge number) when it is one to skip."""
        while True:
            try:
                value, end = decode_at(self._buf, self._pos)
            except JsonRefused:
                raise
            except ValueError as exc:  # cut off by the end of the buffer, or bad JSON
                if self._eof:
                    raise _decode_error(exc, self._buf) from None
                self._grow(limit, too_large)
                continue
            if end == len(self._buf) and not isinstance(value, dict | list) and not self._eof:
                self._fill()  # a number may go on in the next chunk
                continue
            self._pos = end
            return value

    def _grow(self, limit: int, too_large: str) -> None:
        """Read more of a value that does not fit the buffer yet; the buffer never holds more
        than `limit` characters of one value (the cap is checked before reading, not after)."""
        held = len(self._buf) - self._pos
        want = min(max(CHUNK_BYTES, held), limit - held)
        if want <= 0:
            raise TrafficImportError(too_large)
        self._fill(want)

    def _skip_value(self, limit: int, too_large: str) -> None:
        """Step over the value at the read position without decoding it."""
        while True:
            end = value_end(self._buf, self._pos)
            if end is not None:
                self._pos = end
                return
            if self._eof:
                raise TrafficImportError(TRUNCATED)
            self._grow(limit, too_large)

    def elements(self) -> Iterator[Any]:
        """The elements of the top-level array, one at a time; an element nested absurdly deep
        or holding a huge number is skipped and counted, like any malformed item."""
        if self._peek() != "[":
            raise TrafficImportError("The file is not a JSON list; choose the exported file.")
        self._pos += 1
        too_large = (
            f"One item of the list is larger than {MAX_ELEMENT_BYTES >> 20} MB, more than "
            "this reader holds at once; split the export into smaller files."
        )
        if self._peek() == "]":
            return
        while True:
            if self._peek() == "":
                raise TrafficImportError(TRUNCATED)
            try:
                yield self._value(MAX_ELEMENT_BYTES, too_large)
            except JsonRefused:
                self._skip_value(MAX_ELEMENT_BYTES, too_large)
                self._ctx.skip()
            self._ctx.advance(self.bytes_read)
            sep = self._peek()
            if sep == ",":
                self._pos += 1
            elif sep == "]":
                return
            elif sep == "":
                raise TrafficImportError(TRUNCATED)
            else:
                raise TrafficImportError(
                    "The file's JSON list is damaged between two items; export it again."
                )

    def document(self) -> Any:
        """The file's single JSON value, read whole (bounded by MAX_DOCUMENT_BYTES, checked
        against the file's size before any of it is read)."""
        too_large = (
            f"The file is larger than {MAX_DOCUMENT_BYTES >> 20} MB, more than this format's "
            "reader holds at once; import a smaller file."
        )
        if self._ctx.total_bytes > MAX_DOCUMENT_BYTES:
            raise TrafficImportError(too_large)
        self._peek()
        try:
            return self._value(MAX_DOCUMENT_BYTES, too_large)
        except JsonRefused as exc:
            raise TrafficImportError(
                f"The file {exc.reason}, which no real export does; it may be damaged, so "
                "export it again."
            ) from None


def _decode_error(exc: ValueError, text: str) -> TrafficImportError:
    if not isinstance(exc, json.JSONDecodeError):
        return TrafficImportError(
            "The file is not valid JSON; it may be damaged, so export it again."
        )
    if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()):
        return TrafficImportError(TRUNCATED)
    return TrafficImportError(
        f"The file is not valid JSON ({exc.msg.lower()}); it may be damaged, so export it again."
    )


def parse_time(value: object) -> float | None:
    """Seconds since the epoch from a number (s, ms, us or ns) or an ISO 8601 string."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        x = float(value)
    elif isinstance(value, str):
        s = value.strip()
        try:
            x = float(s)
        except ValueError:
            return _parse_iso(s)
    else:
        return None
    if x != x or x <= 0:  # NaN or not a time
        return None
    while x > 1e11:  # a date after 5138 in seconds is ms, us or ns
        x /= 1000.0
    return x


def _parse_iso(text: str) -> float | None:
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace(" UTC", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:  # no zone given: read it as UTC, the usual choice of servers
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


MAX_COUNT = 10**9  # no request has a billion tokens: a larger count is damage, not data


def as_int(value: object, limit: int = MAX_COUNT) -> int | None:
    """A whole number from 0 to `limit`, or None (absent, or not a real count: the text is
    counted instead). A count past `limit` (2**63 in a hand-edited log) would overflow the
    statistics' arrays."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value):
        value = int(value)
    if isinstance(value, int) and 0 <= value <= limit:
        return value
    return None

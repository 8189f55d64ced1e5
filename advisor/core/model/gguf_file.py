"""A validating reader for GGUF headers.

GGUF files come from strangers on the internet and are often truncated downloads, so this
reader checks every count, length and offset against the file before it trusts it, and never
allocates from an unchecked count. It reads only the header (metadata and tensor infos) through
a memory map; tensor data is never touched, so a 40 GB file takes as long as a 4 MB one.

Every failure is an `InvalidModelError` whose message is one plain sentence a user can act on.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gguf

from advisor.core.infra.errors import InputError, os_reason

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
GGML_MAX_DIMS = 4

# Structural limits: generous for every real model, small enough that a hostile header cannot
# make us allocate or loop without bound.
MAX_KEY_BYTES = 65_535
MAX_STRING_BYTES = 64 * 1024 * 1024
MAX_ARRAY_DEPTH = 2
MAX_KV_COUNT = 1_000_000
MAX_TENSOR_COUNT = 1_000_000
KEEP_NUMERIC_ARRAY_ITEMS = 65_536
KEEP_STRING_ARRAY_ITEMS = 64

# GGUF value types (gguf.GGUFValueType), with the struct format of the fixed-size ones.
_SCALAR_FORMATS: dict[int, str] = {
    0: "<B",  # UINT8
    1: "<b",  # INT8
    2: "<H",  # UINT16
    3: "<h",  # INT16
    4: "<I",  # UINT32
    5: "<i",  # INT32
    6: "<f",  # FLOAT32
    7: "<?",  # BOOL
    10: "<Q",  # UINT64
    11: "<q",  # INT64
    12: "<d",  # FLOAT64
}
_TYPE_STRING = 8
_TYPE_ARRAY = 9

SPLIT_NAME = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)


class InvalidModelError(InputError):
    """The file is not a model this app can use. The message is one sentence for the user."""


@dataclass(frozen=True)
class ArraySummary:
    """A metadata array too large to keep (e.g. a 150,000-token vocabulary): type and length."""

    item_type: int
    count: int

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the header describes it. `shape` is in GGUF order (ne0 first)."""

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int
    n_elements: int
    n_bytes: int

    @property
    def type_name(self) -> str:
        return ggml_type_name(self.ggml_type)


@dataclass(frozen=True)
class GgufHeader:
    """Everything the header of one GGUF file says."""

    path: str
    version: int
    file_bytes: int
    alignment: int
    data_offset: int
    metadata: dict[str, Any] = field(repr=False)
    tensors: tuple[TensorInfo, ...] = field(repr=False)
    has_data: bool = True  # False: a header-only cut (test fixtures), tensor data absent

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)


def ggml_type_name(ggml_type: int) -> str:
    """The ggml name of a tensor type ('Q4_K'), or 'type N' for one the gguf package lacks."""
    try:
        return gguf.GGMLQuantizationType(ggml_type).name
    except ValueError:
        return f"type {ggml_type}"


def ggml_type_size(ggml_type: int) -> tuple[int, int]:
    """(elements per block, bytes per block) of a ggml tensor type."""
    try:
        return gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(ggml_type)]
    except (ValueError, KeyError):
        raise InvalidModelError(
            f"The model uses tensor type {ggml_type}, which this version of the app does not "
            "know; update the app or choose a file made with a common quantisation."
        ) from None


def tensor_nbytes(shape: tuple[int, ...], ggml_type: int) -> int:
    """Bytes a tensor of this shape and type occupies (rows are whole blocks)."""
    block, type_size = ggml_type_size(ggml_type)
    n_elements = 1
    for dim in shape:
        n_elements *= dim
    return n_elements // block * type_size


def printable(text: str, limit: int = 60) -> str:
    """A key or name from a damaged file, safe to show in one line."""
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


class _Cursor:
    """Bounds-checked little-endian reads from a buffer."""

    def __init__(self, buf: memoryview, size: int, name: str):
        self.buf = buf
        self.size = size
        self.pos = 0
        self.name = name

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.size:
            raise InvalidModelError(
                f"{self.name} is truncated or damaged: its header ends inside {what}; "
                "the download is probably incomplete, download it again."
            )

    def scalar(self, fmt: str, what: str) -> Any:
        n = struct.calcsize(fmt)
        self.need(n, what)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return value

    def u32(self, what: str) -> int:
        return self.scalar("<I", what)

    def u64(self, what: str) -> int:
        return self.scalar("<Q", what)

    def string(self, what: str, limit: int = MAX_STRING_BYTES) -> str:
        length = self.u64(f"the length of {what}")
        if length > limit:
            raise InvalidModelError(
                f"{self.name} is damaged: {what} claims {length:,} bytes, more than any real "
                "model uses; the file is not a valid GGUF model."
            )
        self.need(length, what)
        raw = bytes(self.buf[self.pos : self.pos + length])
        self.pos += length
        return raw.decode("utf-8", errors="replace")

    def skip_string(self, what: str) -> None:
        length = self.u64(f"the length of {what}")
        if length > MAX_STRING_BYTES:
            raise InvalidModelError(
                f"{self.name} is damaged: {what} claims {length:,} bytes, more than any real "
                "model uses; the file is not a valid GGUF model."
            )
        self.need(length, what)
        self.pos += length

    def skip_strings(self, count: int, what: str) -> None:
        """skip_string `count` times, in one tight loop (a vocabulary holds 100,000+ strings);
        an item the quick test does not pass goes through skip_string, which says what is
        wrong with it (or skips it, the result being the same either way)."""
        buf, size, unpack = self.buf, self.size, _U64.unpack_from
        pos = self.pos
        for _ in range(count):
            if pos + 8 <= size:
                length = unpack(buf, pos)[0]
                if length <= MAX_STRING_BYTES and pos + 8 + length <= size:
                    pos += 8 + length
                    continue
            self.pos = pos
            self.skip_string(what)
            pos = self.pos
        self.pos = pos


_U64 = struct.Struct("<Q")


def _read_value(cur: _Cursor, value_type: int, key: str, depth: int = 0) -> Any:
    if value_type in _SCALAR_FORMATS:
        return cur.scalar(_SCALAR_FORMATS[value_type], f"the value of {key}")
    if value_type == _TYPE_STRING:
        return cur.string(f"the value of {key}")
    if value_type == _TYPE_ARRAY:
        if depth >= MAX_ARRAY_DEPTH:
            raise InvalidModelError(
                f"{cur.name} is damaged: metadata {key} nests arrays too deeply for a GGUF model."
            )
        item_type = cur.u32(f"the item type of {key}")
        count = cur.u64(f"the length of {key}")
        if item_type in _SCALAR_FORMATS:
            item_size = struct.calcsize(_SCALAR_FORMATS[item_type])
            total = count * item_size
            cur.need(total, f"the array {key}")
            if count <= KEEP_NUMERIC_ARRAY_ITEMS:
                values = list(
                    struct.unpack_from(f"<{count}{_SCALAR_FORMATS[item_type][1]}", cur.buf, cur.pos)
                )
                cur.pos += total
                return values
            cur.pos += total
            return ArraySummary(item_type, count)
        if item_type == _TYPE_STRING:
            # every string takes at least its 8-byte length field
            cur.need(count * 8, f"the array {key}")
            if count <= KEEP_STRING_ARRAY_ITEMS:
                return [cur.string(f"an item of {key}") for _ in range(count)]
            cur.skip_strings(count, f"an item of {key}")
            return ArraySummary(item_type, count)
        if item_type == _TYPE_ARRAY:
            cur.need(count * 12, f"the array {key}")
            items = [_read_value(cur, _TYPE_ARRAY, key, depth + 1) for _ in range(count)]
            return items if count <= KEEP_STRING_ARRAY_ITEMS else ArraySummary(item_type, count)
        raise InvalidModelError(
            f"{cur.name} is damaged: metadata {key} has an unknown array item type {item_type}."
        )
    raise InvalidModelError(
        f"{cur.name} is damaged: metadata {key} has an unknown value type {value_type}."
    )


def check_model_path(path: str | os.PathLike[str]) -> Path:
    """Check that a path names a readable, non-empty regular file; return it resolved."""
    p = Path(path).expanduser()
    shown = printable(p.name or str(p), 120)
    try:
        return _check_model_path(p, shown)
    except PermissionError:
        raise InvalidModelError(
            f"{shown} cannot be read (permission denied); check the file's permissions."
        ) from None
    except OSError as exc:  # a name too long, a loop of links, an unreadable folder
        raise InvalidModelError(
            f"{shown} cannot be opened ({os_reason(exc)}); check the path and try again."
        ) from None


def _check_model_path(p: Path, shown: str) -> Path:
    if not p.exists():
        raise InvalidModelError(f"There is no file at {p}; check the path and try again.")
    if p.is_dir():
        raise InvalidModelError(f"{shown} is a folder, not a model file; choose a .gguf file.")
    if not p.is_file():
        raise InvalidModelError(f"{shown} is not a regular file; choose a .gguf model file.")
    if not os.access(p, os.R_OK):
        raise InvalidModelError(
            f"{shown} cannot be read (permission denied); check the file's permissions."
        )
    if p.stat().st_size == 0:
        raise InvalidModelError(
            f"{shown} is empty (0 bytes); the download probably failed, download it again."
        )
    return p


def read_gguf_header(path: str | os.PathLike[str], *, require_data: bool = True) -> GgufHeader:
    """Read and validate the header of a GGUF file without loading any tensor data.
    `require_data=False` accepts a header whose tensor data was cut off (test fixtures)."""
    p = check_model_path(path)
    name = printable(p.name, 120)
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                view = memoryview(mm)
                try:
                    return _parse(view, size, str(p), name, require_data)
                finally:
                    view.release()
    except PermissionError:
        raise InvalidModelError(
            f"{name} cannot be read (permission denied); check the file's permissions."
        ) from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, InvalidModelError):
            raise
        raise InvalidModelError(
            f"{name} could not be read ({exc.__class__.__name__}: {exc})."
        ) from None


def _parse(
    buf: memoryview, size: int, path: str, name: str, require_data: bool = True
) -> GgufHeader:
    """Parse a whole header; `name` is the file's name as sentences show it (printable)."""
    cur = _Cursor(buf, size, name)
    version, n_tensors, n_kv = _read_preamble(cur, buf, size, name)
    metadata = _read_metadata(cur, n_kv, name)
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if (
        not isinstance(alignment, int)
        or alignment <= 0
        or alignment & (alignment - 1)
        or alignment > 1 << 20
    ):
        raise InvalidModelError(
            f"{name} is damaged: general.alignment is {alignment!r}, not a power of two."
        )
    infos = _read_tensor_infos(cur, buf, n_tensors, name)
    data_offset = (cur.pos + alignment - 1) // alignment * alignment
    tensors = [_tensor(info, alignment, name) for info in infos]
    # without tensors there is no data section to align to: the file may end with the header
    # (llama.cpp's vocabulary-only files do, a few bytes before the next boundary)
    needed = max([data_offset] + [data_offset + t.offset + t.n_bytes for t in tensors])
    if not tensors:
        needed = cur.pos
    if require_data and needed > size:
        raise InvalidModelError(
            f"{name} is truncated: its tensors need {needed:,} bytes but the file has only "
            f"{size:,}; the download is incomplete, download it again."
        )
    last_end = 0
    for t in sorted(tensors, key=lambda t: t.offset):
        if t.offset < last_end:
            raise InvalidModelError(
                f"{name} is damaged: tensor {printable(t.name)} overlaps the tensor stored "
                "before it."
            )
        last_end = t.offset + t.n_bytes
    return GgufHeader(
        path=path,
        version=version,
        file_bytes=size,
        alignment=alignment,
        data_offset=data_offset,
        metadata=metadata,
        tensors=tuple(tensors),
        has_data=needed <= size,
    )


def _read_preamble(cur: _Cursor, buf: memoryview, size: int, name: str) -> tuple[int, int, int]:
    """Magic, version and the two counts: (version, tensor count, metadata count)."""
    if size < 4 or bytes(buf[:4]) != GGUF_MAGIC:
        hint = ""
        if size >= 4 and bytes(buf[:4]) in (b"ggjt", b"ggml", b"ggmf", b"tjgg", b"lmgg"):
            hint = " It is an old GGML file; convert it with llama.cpp or download a GGUF."
        elif size >= 4 and bytes(buf[:2]) == b"PK":
            hint = " It looks like a zip archive; unpack it first."
        elif size >= 4 and bytes(buf[:1]) in (b"{", b"<", b"#"):
            hint = " It looks like a text or web page, perhaps a failed download."
        raise InvalidModelError(
            f"{name} is not a GGUF model (it lacks the GGUF signature); choose a .gguf file "
            f"made for llama.cpp.{hint}"
        )
    cur.pos = 4
    version = cur.u32("the version number")
    if version not in SUPPORTED_VERSIONS:
        if version & 0xFFFF == 0 and (version >> 24) in SUPPORTED_VERSIONS:
            raise InvalidModelError(
                f"{name} is a big-endian GGUF file, which llama.cpp on this computer cannot use; "
                "download the little-endian version."
            )
        raise InvalidModelError(
            f"{name} is GGUF version {version}, which is not supported (versions 2 and 3 are); "
            "download a current version of the model."
        )
    n_tensors = cur.u64("the tensor count")
    n_kv = cur.u64("the metadata count")
    # each metadata entry takes >= 8 (key length) + 1 + 4 (type) + 1 bytes; a tensor info >= 33
    if n_kv > MAX_KV_COUNT or n_kv * 14 > size:
        raise InvalidModelError(
            f"{name} is truncated or damaged: its header claims {n_kv:,} metadata entries, "
            "more than the file can hold; the download is probably incomplete, download it "
            "again."
        )
    if n_tensors > MAX_TENSOR_COUNT or n_tensors * 33 > size:
        raise InvalidModelError(
            f"{name} is truncated or damaged: its header claims {n_tensors:,} tensors, more "
            "than the file can hold; the download is probably incomplete, download it again."
        )
    return version, n_tensors, n_kv


def _read_metadata(cur: _Cursor, n_kv: int, name: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = cur.string("a metadata key", limit=MAX_KEY_BYTES)
        label = printable(key)
        value_type = cur.u32(f"the type of {label}")
        value = _read_value(cur, value_type, label)
        if key in metadata:
            raise InvalidModelError(f"{name} is damaged: metadata key {label} appears twice.")
        metadata[key] = value
    return metadata


_Info = tuple[str, tuple[int, ...], int, int]  # name, shape, ggml type, offset


def _read_tensor_infos(cur: _Cursor, buf: memoryview, n_tensors: int, name: str) -> list[_Info]:
    infos: list[_Info] = []
    seen: set[str] = set()
    for _ in range(n_tensors):
        raw_name = cur.string("a tensor name", limit=MAX_KEY_BYTES)
        tname = printable(raw_name)
        n_dims = cur.u32(f"the dimension count of tensor {tname}")
        if n_dims == 0 or n_dims > GGML_MAX_DIMS:
            raise InvalidModelError(
                f"{name} is damaged: tensor {tname} has {n_dims} dimensions (1 to 4 are valid)."
            )
        cur.need(8 * n_dims, f"the shape of tensor {tname}")
        shape = struct.unpack_from(f"<{n_dims}Q", buf, cur.pos)
        cur.pos += 8 * n_dims
        ggml_type = cur.u32(f"the type of tensor {tname}")
        offset = cur.u64(f"the offset of tensor {tname}")
        if raw_name in seen:
            raise InvalidModelError(f"{name} is damaged: tensor {tname} appears twice.")
        seen.add(raw_name)
        infos.append((raw_name, tuple(int(d) for d in shape), ggml_type, offset))
    return infos


def _tensor(info: _Info, alignment: int, name: str) -> TensorInfo:
    """One tensor's info, its shape, type and offset checked."""
    raw_name, shape, ggml_type, offset = info
    tname = printable(raw_name)
    n_elements = 1
    for dim in shape:
        if dim <= 0 or dim > 1 << 40:
            raise InvalidModelError(
                f"{name} is damaged: tensor {tname} has an impossible shape {list(shape)}."
            )
        n_elements *= dim
    if n_elements > 1 << 44:
        raise InvalidModelError(
            f"{name} is damaged: tensor {tname} claims {n_elements:,} elements."
        )
    block, type_size = ggml_type_size(ggml_type)
    if shape[0] % block:
        raise InvalidModelError(
            f"{name} is damaged: tensor {tname} has rows of {shape[0]} values, not a "
            f"multiple of its {ggml_type_name(ggml_type)} block of {block}."
        )
    if offset % alignment:
        raise InvalidModelError(
            f"{name} is damaged: tensor {tname} starts at an unaligned offset {offset}."
        )
    return TensorInfo(
        raw_name, shape, ggml_type, offset, n_elements, n_elements // block * type_size
    )

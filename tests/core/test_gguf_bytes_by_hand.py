"""GGUF headers written byte by byte from the format's specification (ggml's docs/gguf.md:
little-endian; magic, u32 version, u64 tensor count, u64 metadata count; each key a u64 length
and its bytes, a u32 value type, the value; value types UINT8=0 INT8=1 UINT16=2 INT16=3 UINT32=4
INT32=5 FLOAT32=6 BOOL=7 STRING=8 ARRAY=9 UINT64=10 INT64=11 FLOAT64=12; tensor infos; the
data section aligned to general.alignment, 32 by default). Nothing here uses the app's writer
or the gguf package, so the reader is checked against the format, not against itself."""

from __future__ import annotations

import struct

import pytest

from advisor.core.model.gguf_file import ArraySummary, InvalidModelError, read_gguf_header
from tests.conftest import write_sparse

F32, Q8_0 = 0, 8  # ggml types: F32 is 1 value in 4 bytes, Q8_0 32 values in 34 bytes


def _s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv(key: str | bytes, vtype: int, payload: bytes) -> bytes:
    return _s(key) + struct.pack("<I", vtype) + payload


def scalar(vtype: int, value) -> bytes:
    fmt = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}[vtype]  # fmt: skip
    return struct.pack(fmt, value)


def array(item_type: int, items: list[bytes]) -> bytes:
    return struct.pack("<IQ", item_type, len(items)) + b"".join(items)


def tensor(name: str, dims: tuple[int, ...], ggml_type: int, offset: int) -> bytes:
    return (_s(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
            + struct.pack("<IQ", ggml_type, offset))  # fmt: skip


def gguf(kvs: list[bytes], tensors: list[bytes] = (), data: int = 0, version: int = 3,
         align: int = 32) -> bytes:  # fmt: skip
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    out += b"".join(kvs) + b"".join(tensors)
    if tensors:
        out += b"\x00" * (-len(out) % align)
    return out + b"\x00" * data


def read(tmp_path, data: bytes, **kw):
    path = tmp_path / "m.gguf"
    path.write_bytes(data)
    return read_gguf_header(path, **kw)


SCALARS = [(0, 200), (1, -5), (2, 60_000), (3, -300), (4, 4_000_000_000), (5, -2_000_000_000),
           (6, 1.5), (7, True), (10, 2**40), (11, -(2**40)), (12, 0.1)]  # fmt: skip


def test_every_scalar_type_reads_back(tmp_path):
    kvs = [kv(f"k.{t}", t, scalar(t, v)) for t, v in SCALARS]
    kvs.append(kv("k.8", 8, _s("héllo")))
    meta = read(tmp_path, gguf(kvs)).metadata
    for t, v in SCALARS:
        assert meta[f"k.{t}"] == v and type(meta[f"k.{t}"]) is type(v), t
    assert meta["k.8"] == "héllo"


def test_numeric_arrays_kept_up_to_65536_items_then_counted(tmp_path):
    kept = [scalar(3, i % 1000 - 500) for i in range(65_536)]
    kvs = [kv("a.kept", 9, array(3, kept)), kv("a.big", 9, array(2, [scalar(2, 1)] * 65_537)),
           kv("a.f64", 9, array(12, [scalar(12, 0.5), scalar(12, -2.0)]))]  # fmt: skip
    meta = read(tmp_path, gguf(kvs)).metadata
    assert len(meta["a.kept"]) == 65_536 and meta["a.kept"][:2] == [-500, -499]
    assert meta["a.big"] == ArraySummary(2, 65_537)
    assert meta["a.f64"] == [0.5, -2.0]


def test_string_arrays_kept_up_to_64_items_then_counted(tmp_path):
    kvs = [kv("s.kept", 9, array(8, [_s(f"t{i}") for i in range(64)])),
           kv("s.big", 9, array(8, [_s(f"t{i}") for i in range(65)]))]  # fmt: skip
    meta = read(tmp_path, gguf(kvs)).metadata
    assert meta["s.kept"][63] == "t63" and len(meta["s.kept"]) == 64
    assert meta["s.big"] == ArraySummary(8, 65)


def test_arrays_of_arrays_nest_one_level(tmp_path):
    inner = [array(0, [scalar(0, 1), scalar(0, 2)]), array(0, [scalar(0, 3)])]
    meta = read(tmp_path, gguf([kv("n", 9, array(9, inner))])).metadata
    assert meta["n"] == [[1, 2], [3]]
    deeper = array(9, [array(9, [array(0, [scalar(0, 1)])])])
    with pytest.raises(InvalidModelError, match="nests arrays too deeply"):
        read(tmp_path, gguf([kv("n", 9, deeper)]))


def test_unknown_types_are_named(tmp_path):
    with pytest.raises(InvalidModelError, match="unknown value type 13"):
        read(tmp_path, gguf([kv("x", 13, b"\x00" * 8)]))
    with pytest.raises(InvalidModelError, match="unknown array item type 13"):
        read(tmp_path, gguf([kv("x", 9, struct.pack("<IQ", 13, 1) + b"\x00" * 8)]))


def test_key_length_limit_and_duplicates(tmp_path):
    assert read(tmp_path, gguf([kv("k" * 65_535, 0, scalar(0, 1))])).metadata
    with pytest.raises(InvalidModelError, match="claims 65,536 bytes"):
        read(tmp_path, gguf([kv("k" * 65_536, 0, scalar(0, 1))]))
    with pytest.raises(InvalidModelError, match=r"metadata key a\.b appears twice"):
        read(tmp_path, gguf([kv("a.b", 0, scalar(0, 1)), kv("a.b", 0, scalar(0, 2))]))


def _one_tensor(dims=(64, 2), ggml_type=Q8_0, offset=0, extra_kvs=(), data=None, **kw):
    n = 1
    for d in dims:
        n *= d
    size = n // 32 * 34 if ggml_type == Q8_0 else n * 4
    t = [tensor("w", dims, ggml_type, offset)]
    return gguf(list(extra_kvs), t, size + offset if data is None else data, **kw)


def test_a_tensor_by_hand_and_where_its_data_starts(tmp_path):
    h = read(tmp_path, _one_tensor())
    (t,) = h.tensors
    assert (t.name, t.shape, t.n_elements, t.n_bytes) == ("w", (64, 2), 128, 4 * 34)
    header_len = 4 + 4 + 8 + 8 + (8 + 1 + 4 + 16 + 4 + 8)  # 65: preamble, the tensor's info
    assert h.data_offset == (header_len + 31) // 32 * 32 == 96
    assert h.file_bytes == 96 + 136 and h.has_data
    # a 4-dimensional F32 tensor is fine; 0 or 5 dimensions are not
    assert read(tmp_path, _one_tensor((2, 3, 4, 5), F32)).tensors[0].n_bytes == 120 * 4
    for bad in ((), (1, 1, 1, 1, 1)):
        with pytest.raises(InvalidModelError, match=f"has {len(bad)} dimensions"):
            read(tmp_path, _one_tensor(bad, F32, data=64))


def test_general_alignment_moves_the_data_and_must_be_a_power_of_two(tmp_path):
    align64 = kv("general.alignment", 4, scalar(4, 64))
    h = read(tmp_path, _one_tensor(extra_kvs=[align64], align=64))
    assert h.alignment == 64 and h.data_offset % 64 == 0 and h.data_offset > 64
    big = kv("general.alignment", 4, scalar(4, 1 << 20))
    assert read(tmp_path, _one_tensor(extra_kvs=[big], align=1 << 20)).alignment == 1 << 20
    for bad in (48, 0, 1 << 21):
        with pytest.raises(InvalidModelError, match=f"general.alignment is {bad}, not a power"):
            read(tmp_path, _one_tensor(extra_kvs=[kv("general.alignment", 4, scalar(4, bad))]))
    text = kv("general.alignment", 8, _s("32"))
    with pytest.raises(InvalidModelError, match="not a power of two"):
        read(tmp_path, _one_tensor(extra_kvs=[text]))


def test_impossible_shapes_and_offsets(tmp_path):
    with pytest.raises(InvalidModelError, match=r"impossible shape \[64, 0\]"):
        read(tmp_path, _one_tensor((64, 0), data=64))
    with pytest.raises(InvalidModelError, match="impossible shape"):
        read(tmp_path, _one_tensor((64, (1 << 40) + 1), data=64))
    with pytest.raises(InvalidModelError, match="claims 18,691,697,672,192 elements"):
        read(tmp_path, _one_tensor((1 << 40, 17), F32, data=64))  # 17 x 2^40 > 2^44
    with pytest.raises(InvalidModelError, match="truncated"):  # 2^44 exactly: only too big
        read(tmp_path, _one_tensor((1 << 40, 16), F32, data=64))
    with pytest.raises(InvalidModelError, match="unaligned offset 16"):
        read(tmp_path, _one_tensor(offset=16))
    with pytest.raises(InvalidModelError, match="not a multiple of its Q8_0 block of 32"):
        read(tmp_path, _one_tensor((48, 2)))
    twice = gguf([], [tensor("w", (32,), Q8_0, 0), tensor("w", (32,), Q8_0, 64)], 128)
    with pytest.raises(InvalidModelError, match="tensor w appears twice"):
        read(tmp_path, twice)


def test_missing_data_is_truncation_unless_only_the_header_is_wanted(tmp_path):
    short = _one_tensor(data=135)  # one byte short of the 136 the tensor needs
    with pytest.raises(InvalidModelError, match="tensors need 232 bytes but the file has only 231"):
        read(tmp_path, short)
    h = read(tmp_path, short, require_data=False)
    assert not h.has_data and h.tensors[0].n_bytes == 136


def test_counts_the_file_cannot_hold(tmp_path):
    claims_kv = b"GGUF" + struct.pack("<IQQ", 3, 0, 100) + b"\x00" * 1000  # 100 x 14 > 1024
    with pytest.raises(InvalidModelError, match="claims 100 metadata entries"):
        read(tmp_path, claims_kv)
    fits_kv = b"GGUF" + struct.pack("<IQQ", 3, 0, 10) + b"\x00" * 200  # 140 <= 224: read on,
    with pytest.raises(InvalidModelError, match="metadata key  appears twice"):  # empty keys
        read(tmp_path, fits_kv)
    claims_t = b"GGUF" + struct.pack("<IQQ", 3, 40, 0) + b"\x00" * 1000  # 40 x 33 > 1024
    with pytest.raises(InvalidModelError, match="claims 40 tensors"):
        read(tmp_path, claims_t)


@pytest.mark.parametrize(
    ("head", "words"),
    [(b"ggjt", "old GGML file"), (b"PK\x03\x04", "zip archive"), (b"{\"a\"", "web page"),
     (b"<htm", "web page"), (b"#!/b", "web page"), (b"\x00\x01\x02\x03", "signature); choose")],
)  # fmt: skip
def test_what_the_first_bytes_say(tmp_path, head, words):
    with pytest.raises(InvalidModelError, match=words.replace(")", r"\)")):
        read(tmp_path, head + b"\x00" * 64)


def test_big_endian_and_other_versions(tmp_path):
    be = b"GGUF" + struct.pack(">IQQ", 3, 0, 0)
    with pytest.raises(InvalidModelError, match="big-endian GGUF file"):
        read(tmp_path, be)
    with pytest.raises(InvalidModelError, match="GGUF version 5, which is not supported"):
        read(tmp_path, gguf([], version=5))
    assert read(tmp_path, gguf([], version=2)).version == 2


def test_metadata_and_tensor_counts_at_their_limits(tmp_path):
    # 1,000,000 entries pass the count check (and fail on the empty keys that follow); one more
    # is refused at once. The file is sparse: 14 MB of zeros cost no disk.
    for count, words in ((1_000_000, "appears twice"), (1_000_001, "claims 1,000,001 metadata")):
        path = write_sparse(tmp_path / "many.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, count),
                            15 * 10**6)  # fmt: skip
        with pytest.raises(InvalidModelError, match=words):
            read_gguf_header(path)
    path = write_sparse(tmp_path / "tensors.gguf", b"GGUF" + struct.pack("<IQQ", 3, 1_000_001, 0),
                        34 * 10**6)  # fmt: skip
    with pytest.raises(InvalidModelError, match="claims 1,000,001 tensors"):
        read_gguf_header(path)


def test_long_names_are_cut_to_one_line():
    from advisor.core.model.gguf_file import printable

    assert printable("x" * 60) == "x" * 60
    assert printable("x" * 61) == "x" * 59 + "…"
    assert printable("a\nb\x00c", 10) == "a?b?c"
    assert len(printable("y" * 500, 120)) == 120


def test_a_long_file_name_is_cut_in_the_sentence(tmp_path):
    path = tmp_path / ("a" * 200 + ".gguf")
    path.write_bytes(b"nope" + b"\x00" * 60)
    with pytest.raises(InvalidModelError) as err:
        read_gguf_header(path)
    assert str(err.value).startswith("a" * 119 + "… is not a GGUF model")


@pytest.mark.parametrize(
    ("content", "hint"),
    [(b"ggjt", "old GGML file"), (b"PK\x03\x04", "zip archive"), (b"<htm", "web page"),
     (b"{}\n", None), (b"PK", None), (b"gg", None)],
)  # fmt: skip
def test_hints_need_the_first_four_bytes(tmp_path, content, hint):
    with pytest.raises(InvalidModelError) as err:
        read(tmp_path, content)
    text = str(err.value)
    assert "lacks the GGUF signature" in text
    if hint:
        assert hint in text
    else:
        assert "It " not in text.split("signature")[1]  # no guess from too few bytes


def test_a_version_that_only_looks_big_endian_in_its_top_byte(tmp_path):
    # 0x03000001 read little-endian: the top byte is 3 but the low bytes are not zero, so it is
    # not a big-endian version 3, just an unknown version
    with pytest.raises(InvalidModelError, match="GGUF version 50331649, which is not supported"):
        read(tmp_path, gguf([], version=0x03000001))


def test_a_dimension_of_one_is_fine_and_the_bad_row_is_named(tmp_path):
    assert read(tmp_path, _one_tensor((32, 1))).tensors[0].n_elements == 32
    with pytest.raises(InvalidModelError, match="has rows of 48 values, not a multiple"):
        read(tmp_path, _one_tensor((48, 2)))


def test_check_model_path_cuts_a_long_name(tmp_path):
    empty = tmp_path / ("b" * 200 + ".gguf")
    empty.write_bytes(b"")
    with pytest.raises(InvalidModelError) as err:
        read_gguf_header(empty)
    assert str(err.value).startswith("b" * 119 + "… is empty (0 bytes)")


@pytest.mark.parametrize(
    ("tensors", "entries", "need", "then", "claims"),
    [(0, 10, 140, "appears twice", "claims 10 metadata entries"),  # >= 14 bytes an entry
     (4, 0, 132, "has 0 dimensions", "claims 4 tensors")],  # >= 33 bytes a tensor info
)  # fmt: skip
def test_the_counts_against_the_file_size_at_the_edge(tmp_path, tensors, entries, need, then,
                                                      claims):  # fmt: skip
    head = b"GGUF" + struct.pack("<IQQ", 3, tensors, entries)
    with pytest.raises(InvalidModelError, match=then):  # exactly enough: read on
        read(tmp_path, head + b"\x00" * (need - len(head)))
    with pytest.raises(InvalidModelError, match=claims):  # a byte short: refused at once
        read(tmp_path, head + b"\x00" * (need - 1 - len(head)))


def test_data_starts_at_the_header_end_when_it_is_already_aligned(tmp_path):
    # preamble 24 + one 2-D tensor's info (8 + 32-byte name + 4 + 16 + 4 + 8) = 96, a multiple
    # of 32: the data starts right there, not 32 bytes later
    data = gguf([], [tensor("w" * 32, (32, 2), Q8_0, 0)], 68)
    h = read(tmp_path, data)
    assert h.data_offset == 96 and h.has_data and h.file_bytes == 96 + 68


def test_a_file_cut_inside_a_tensor_shape_is_named(tmp_path):
    whole = gguf([], [tensor("w", (32, 2), Q8_0, 0)], 68)
    cut = whole[: 24 + 8 + 1 + 4 + 12]  # inside the second dimension
    with pytest.raises(InvalidModelError, match="header ends inside the shape of tensor w"):
        read(tmp_path, cut)


def test_empty_strings_may_end_the_file_exactly(tmp_path):
    meta = read(tmp_path, gguf([kv("s", 9, array(8, [_s(b"")] * 3))])).metadata
    assert meta["s"] == ["", "", ""]
    many = read(tmp_path, gguf([kv("s", 9, array(8, [_s(b"")] * 100))])).metadata
    assert meta and many["s"] == ArraySummary(8, 100)


def test_the_signature_alone_is_a_cut_header_not_another_format(tmp_path):
    with pytest.raises(InvalidModelError, match="header ends inside the version number"):
        read(tmp_path, b"GGUF")


def _vocabulary(tokens: list[bytes], claimed: dict[int, int] | None = None) -> bytes:
    """A vocabulary-only file: one array of strings; `claimed` replaces chosen length fields."""
    items = [struct.pack("<Q", (claimed or {}).get(i, len(t))) + t for i, t in enumerate(tokens)]
    return gguf([kv("tokenizer.ggml.tokens", 9, array(8, items))])


def test_a_long_string_array_is_counted_and_a_cut_inside_it_is_named(tmp_path):
    tokens = [f"tok{i}".encode() for i in range(1000)]
    whole = _vocabulary(tokens)
    summary = read(tmp_path, whole).get("tokenizer.ggml.tokens")
    assert summary == ArraySummary(8, 1000)
    # cut inside item 700's text, then inside item 700's length field
    item_700 = len(whole) - sum(8 + len(t) for t in tokens[700:])
    for cut, inside in ((item_700 + 8 + 2, "an item"), (item_700 + 3, "the length of an item")):
        with pytest.raises(InvalidModelError, match=f"header ends inside {inside} of tokenizer"):
            read(tmp_path, whole[:cut])
    with pytest.raises(InvalidModelError, match="claims 1,099,511,627,776 bytes"):
        read(tmp_path, _vocabulary(tokens, claimed={999: 2**40}))

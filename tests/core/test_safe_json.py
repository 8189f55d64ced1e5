"""The one JSON reader: the limits every file the app reads is held to, and what it accepts."""

from __future__ import annotations

import json

import pytest

from advisor.core.infra.errors import InputError
from advisor.core.infra.safe_json import (
    MAX_DEPTH,
    JsonRefused,
    check_depth,
    decode_at,
    first_value_depth,
    loads,
    object_members,
    read_json_file,
    value_end,
)


def test_depth_is_counted_without_brackets_inside_strings():
    assert first_value_depth('[[1, "[[[["], {"a": []}]') == (3, True)
    assert first_value_depth('{"a": "cut off [[[') == (1, False)
    assert first_value_depth('[1] [[[[["', 0) == (1, True)  # the first value only


@pytest.mark.parametrize(
    "bomb",
    ["[" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000, "[" * (MAX_DEPTH + 1) + "]" * 70],
    ids=["open arrays", "closed objects", "just past the limit"],
)
def test_a_nesting_bomb_is_refused_before_the_decoder_recurses(bomb, monkeypatch):
    from advisor.core.infra import safe_json

    def no_decoder():
        raise AssertionError("the decoder was started on a nesting bomb")

    monkeypatch.setattr(safe_json, "_decoder", no_decoder)
    with pytest.raises(JsonRefused, match=f"nested more than {MAX_DEPTH} levels"):
        loads(bomb)


def test_as_deep_as_the_limit_is_read():
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert json.dumps(loads(text)) == text


def test_a_huge_integer_is_refused_and_a_long_float_is_not():
    with pytest.raises(JsonRefused, match="more than 20 digits"):
        loads('{"tokens": ' + "9" * 5000 + "}")
    assert loads('{"t": 18446744073709551615}') == {"t": 2**64 - 1}  # 20 digits: fine
    assert loads('{"t": 0.' + "3" * 5000 + "}")["t"] == pytest.approx(1 / 3)


def test_nan_infinity_and_overflowing_floats_read_as_null():
    assert loads('{"a": NaN, "b": -Infinity, "c": 1e400, "d": 2.5}') == {
        "a": None, "b": None, "c": None, "d": 2.5,
    }  # fmt: skip


def test_a_byte_order_mark_is_accepted():
    assert loads(b'\xef\xbb\xbf{"id": "x"}') == {"id": "x"}
    assert loads('\ufeff{"id": "x"}') == {"id": "x"}


def test_trailing_data_and_bad_json_are_value_errors():
    with pytest.raises(ValueError):
        loads('{"a": 1} {"b": 2}')
    with pytest.raises(ValueError):
        loads('{"a": ')


def test_one_item_of_a_large_buffer_is_checked_for_about_its_own_size():
    item = json.dumps({"a": [1, 2, {"b": "c"}]})
    buffer = ", ".join([item] * 50_000)  # about 1.3 MB after the first item
    check_depth(buffer, 0)  # would be slow if it profiled the whole buffer each time
    value, end = decode_at(buffer, 0)
    assert value == {"a": [1, 2, {"b": "c"}]} and buffer[end] == ","


def test_value_end_steps_over_a_refused_value():
    text = '[{"a": "}]", "b": [1, [2]]}, 3]'
    assert text[value_end(text, 1)] == ","
    assert value_end("123456, 7", 0) == 6
    assert value_end('"x, y" ,1', 0) == 6
    assert value_end('{"open": [1, 2', 0) is None


def test_a_file_is_one_sentence_for_each_way_it_fails(tmp_path):
    cases = {
        "missing": None,
        "folder": "dir",
        "bomb.json": "[" * 10_000,
        "huge.json": "[" + "1" * 300 + "]",
        "latin1.json": b'{"a": "\xe9"}',
        "bad.json": '{"a": ',
        "big.json": " " * 2000,
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content == "dir":
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content, encoding="utf-8")
        with pytest.raises(InputError) as info:
            read_json_file(path, what=f"The run file {name}", max_bytes=1000, advice="try again")
        message = str(info.value)
        assert message.startswith(f"The run file {name} ") and message.endswith("; try again.")
        assert "\n" not in message, message


def test_a_scalar_before_a_deep_value_is_not_counted_as_deep():
    text = '1, "b": ' + "[" * 100 + "]" * 100
    assert decode_at(text, 0) == (1, 1)  # the count of a number must not run on into "b"


def test_object_members_refuse_a_hostile_value_by_itself():
    bomb = "[" * 100_000 + "]" * 100_000
    text = '{"a": 1, "b": ' + bomb + ', "c": ' + "9" * 5000 + ' , "d": {"x": "[[[["}}'
    members = object_members(text)
    assert [(m.key, m.value, m.refused[:13]) for m in members] == [
        ("a", 1, ""),
        ("b", None, "is nested mor"),
        ("c", None, "holds a numbe"),
        ("d", {"x": "[[[["}, ""),
    ]
    assert members[1].raw == bomb and members[2].raw == "9" * 5000  # kept as written
    assert text[members[1].start :].startswith("[[[")


@pytest.mark.parametrize(
    "text", ["[1]", '{"a": ' + "[" * 100_000, '{"a" 1}', '{"a": 1,}', '{"a": 1', ""]
)
def test_object_members_are_none_when_the_object_itself_is_broken(text):
    assert object_members(text) is None

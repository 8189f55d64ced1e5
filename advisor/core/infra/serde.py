"""Dataclasses to JSON and back, checked field by field.

Whatever crosses a process or a file (a run in the history, the parent/child protocol, the
cached hardware report, settings) is a dataclass; this turns it into plain JSON types and
rebuilds it from them, guided by the type hints. Rebuilding checks every field: a string
where a number belongs, a list where an object belongs, a missing required field, each
raise `DataError` naming the field, so a damaged or hand-edited file is one sentence, never
a TypeError deep inside the app. Unknown keys are ignored (newer files load in older apps,
and derived keys written for readers are skipped); missing keys with defaults take them (old
files load in newer apps).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from functools import cache
from typing import Any, TypeVar, Union

from advisor.core.infra.errors import InputError

T = TypeVar("T")


class DataError(InputError):
    """Saved or received data does not have the shape the app expects."""


def to_json(obj: Any) -> Any:
    """Plain JSON types (dict, list, str, int, float, bool, None) for a dataclass tree."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    return obj


def json_safe(obj: Any) -> Any:
    """NaN and infinity are not JSON: None instead, recursively."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_json(cls: type[T], data: Any, where: str = "") -> T:
    """Rebuild a dataclass of type `cls` from JSON data, checking every field."""
    return typing.cast(T, _build(cls, data, where or cls.__name__))


def _type_name(tp: Any) -> str:
    names = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}
    if tp in names:
        return names[tp]
    if dataclasses.is_dataclass(tp):
        return "an object"
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        return "a list"
    if origin is dict:
        return "an object"
    return getattr(tp, "__name__", str(tp))


def shown_json(value: Any, limit: int = 40) -> str:
    """A value as the person wrote it in the file: null, true, "text", cut to `limit`.
    The JSON reader turns NaN and Infinity into null, so null may have been written so."""
    if value is None:
        return "null or NaN"
    if isinstance(value, bool):
        return "true" if value else "false"
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _fail(where: str, tp: Any, value: Any) -> DataError:
    return DataError(f"{where} should be {_type_name(tp)}, not {shown_json(value)}")


def _build(tp: Any, value: Any, where: str) -> Any:
    if tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return _build_union(tp, value, where)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _build_dataclass(tp, value, where)
    if origin is tuple or tp is tuple:
        return _build_tuple(tp, value, where)
    if origin is list or tp is list:
        if not isinstance(value, list):
            raise _fail(where, tp, value)
        (item,) = typing.get_args(tp) or (Any,)
        return [_build(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise _fail(where, tp, value)
        _, val_tp = typing.get_args(tp) or (str, Any)
        return {str(k): _build(val_tp, v, f"{where}.{k}") for k, v in value.items()}
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            allowed = ", ".join(repr(a) for a in typing.get_args(tp))
            raise DataError(f"{where} should be one of {allowed}, not {value!r}")
        return value
    return _build_scalar(tp, value, where)


def _build_union(tp: Any, value: Any, where: str) -> Any:
    args = typing.get_args(tp)
    if value is None:
        if type(None) in args:
            return None
        raise _fail(where, args[0], value)
    errors: list[DataError] = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _build(arg, value, where)
        except DataError as exc:
            errors.append(exc)
    raise errors[0]


def _build_tuple(tp: Any, value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise _fail(where, tp, value)
    args = typing.get_args(tp)
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        item = args[0] if args else Any
        return tuple(_build(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if len(args) != len(value):
        raise DataError(f"{where} should hold {len(args)} items, not {len(value)}")
    pairs = enumerate(zip(args, value, strict=True))
    return tuple(_build(a, v, f"{where}[{i}]") for i, (a, v) in pairs)


def _build_scalar(tp: Any, value: Any, where: str) -> Any:
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _fail(where, tp, value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(where, tp, value)
        if isinstance(value, float) and not value.is_integer():
            raise _fail(where, tp, value)
        return int(value)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(where, tp, value)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _fail(where, tp, value)
        return value
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    raise _fail(where, tp, value)


def _build_dataclass(cls: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(where, cls, value)
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name not in value:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise DataError(f"{where} lacks its '{f.name}' field")
            continue
        kwargs[f.name] = _build(hints[f.name], value[f.name], f"{where}.{f.name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # a __post_init__ check refused a value
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{where} is not valid ({exc})") from None

"""Plain Python data through JSON and back, exactly: what the campaign frontier stores a
request's meta (and the rest of its form) in.

orjson, which writes the frontier, is exact for most of what a request carries, but not
for all of it, and it says nothing when it is not: `inf` and `nan` become `null`, a
tuple becomes a list, an Enum its value, a datetime its ISO text. It refuses a str
with a lone surrogate and an int beyond 64 bits (the standard encoder writes those, as
`Infinity` or raw surrogates, which orjson cannot read back nor SQLite store as UTF-8).

So a value is written as plain JSON only when `is_plain_json` says that orjson's text of
it reads back equal; anything else goes through `tagged`, a JSON form in which every
object is a one-member tag, and `untagged` reads it back:

=========================  ==============================================================
``{"d": [[key, value]]}``  a dict (any plain keys: a number key stays a number)
``{"t": [...]}``           a tuple
``{"f": "inf"}``           a float JSON has no number for: "inf", "-inf" or "nan"
``{"s": "..."}``           a str holding lone surrogates: its UTF-8 bytes (surrogates
                           passed) as Latin-1 text
``{"i": "123..."}``        an int beyond 64 bits (orjson reads those back as floats)
``{"b": "..."}``           bytes as Latin-1 text
=========================  ==============================================================

Plain data is None, bool, int, float, str, bytes, and lists, tuples and dicts of them,
of these exact types (a subclass, such as an IntEnum or a defaultdict, would come back as
its base type): anything else raises TypeError naming where it is.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MAX_DEPTH", "is_plain_json", "tagged", "untagged"]

#: Containers nested deeper than this are refused (orjson stops at 255 levels, and a
#: tagged dict takes three: its tag object, its list of pairs and each pair).
MAX_DEPTH = 80

#: The ints orjson writes (and reads back as ints).
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1

_PLAIN_TYPES = "None, bool, int, float, str, bytes and lists, tuples and dicts of them"


def is_plain_json(value: Any, depth: int = 0) -> bool:
    """Whether orjson's text of `value` (if orjson writes one: it refuses lone surrogates
    and ints beyond 64 bits) reads back equal: None, bool, int, finite float, str, and
    lists and str-keyed dicts of them, of these exact types, at most `MAX_DEPTH` deep."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if depth >= MAX_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not is_plain_json(item, depth + 1):
                return False
        return True
    if kind is list:
        return all(is_plain_json(item, depth + 1) for item in value)
    return False


def tagged(value: Any, where: str = "value", depth: int = 0) -> Any:
    """`value` in the tagged JSON form (what orjson writes exactly); TypeError naming
    `where` in it (e.g. ``meta['k'][0]``) for anything that is not plain data."""
    kind = type(value)
    if kind is bool or value is None:
        return value
    if kind is int:
        return value if _INT_MIN <= value <= _INT_MAX else {"i": str(value)}
    if kind is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if kind is str:
        if value.isascii():
            return value
        try:
            value.encode()
        except UnicodeEncodeError:  # lone surrogates
            return {"s": value.encode("utf-8", "surrogatepass").decode("latin-1")}
        return value
    if kind is bytes:
        return {"b": value.decode("latin-1")}
    if kind in (list, tuple, dict) and depth >= MAX_DEPTH:
        raise TypeError(f"{where} is nested deeper than {MAX_DEPTH} levels")
    if kind is list:
        return [tagged(item, f"{where}[{number}]", depth + 1) for number, item in enumerate(value)]
    if kind is tuple:
        return {
            "t": [
                tagged(item, f"{where}[{number}]", depth + 1) for number, item in enumerate(value)
            ]
        }
    if kind is dict:
        pairs = []
        for key, item in value.items():
            inner = f"{where}[{key!r}]"
            pairs.append([tagged(key, f"{inner}'s key", depth + 1), tagged(item, inner, depth + 1)])
        return {"d": pairs}
    raise TypeError(
        f"{where} is {kind.__module__}.{kind.__qualname__}, not plain data ({_PLAIN_TYPES})"
    )


def untagged(value: Any) -> Any:
    """The value `tagged` wrote as `value` (as orjson read it back)."""
    kind = type(value)
    if kind is list:
        return [untagged(item) for item in value]
    if kind is not dict:
        return value
    ((tag, inner),) = value.items()
    if tag == "d":
        return {untagged(key): untagged(item) for key, item in inner}
    if tag == "t":
        return tuple(untagged(item) for item in inner)
    if tag == "f":
        return float(inner)
    if tag == "s":
        return inner.encode("latin-1").decode("utf-8", "surrogatepass")
    if tag == "i":
        return int(inner)
    if tag == "b":
        return inner.encode("latin-1")
    raise ValueError(f"unknown tag {tag!r} in a tagged JSON value")

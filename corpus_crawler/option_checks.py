"""The checks that the extractors' frozen option classes share.

`JustextParams`, `ContainerOptions`, `CombinedOptions`, `DeclutterOptions` and
`KimatuOptions` are built from YAML files and `--param` / `--extractor-option`
overrides. Each refuses a key that names no option (naming the closest one), a
value of the wrong type and a value out of its range, with an error that names
the option and what it takes. The checks live here once, so that a class cannot
forget one: switches are found by their declared type, not from a list kept by
hand (a hand-kept list once missed four of `ContainerOptions`' switches, and
`clean_region: "yes"` read as true).

Pure functions; each raises `ConfigError` (defined here, below the modules that
use it, and exported by `corpus_crawler.config`) or returns the value as the
class stores it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A setting is wrong; the message says which one and how to fix it.
    (`corpus_crawler.config.ConfigError`, where callers import it from.)"""


#: The class steps a shift may move a block: BAD to GOOD is three.
MAX_STEPS = 3


def suggestion(value: object, choices: Sequence[str]) -> str:
    """ " (did you mean 'x'?)" with the choice closest to `value`, or "" when none is close."""
    close = difflib.get_close_matches(str(value), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_keys(keys: Iterable[object], known: Sequence[str], source: str) -> None:
    """Every key names an option; else an error with the closest name, or the
    known ones when none is close."""
    for key in keys:
        if key not in known:
            hint = suggestion(key, known) or f"; known: {', '.join(known)}"
            raise ConfigError(f"unknown key {key!r} in {source}{hint}")


def built(make: Callable[..., T], values: Mapping[str, Any], source: str) -> T:
    """`make(**values)`, with a value's error prefixed by where the values came from."""
    try:
        return make(**values)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def check_switches(options: object) -> None:
    """Every field declared `bool` holds True or False: YAML reads `yes` as
    true, but `"yes"` in quotes is a string, which Python would take for true."""
    for spec in fields(options):  # type: ignore[arg-type]
        value = getattr(options, spec.name)
        if spec.type == "bool" and not isinstance(value, bool):
            raise ConfigError(f"{spec.name} must be true or false, got {value!r}")


def whole_number(name: str, value: object, at_least: int | None = None) -> int:
    """An int (not a bool), at least `at_least` when given."""
    low = at_least is not None and isinstance(value, int) and value < at_least
    if isinstance(value, bool) or not isinstance(value, int) or low:
        kind = "a whole number" if at_least is None else f"a whole number >= {at_least}"
        raise ConfigError(f"{name} must be {kind}, got {value!r}")
    return value


def number(name: str, value: object) -> float:
    """An int or float (not a bool), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    return float(value)


def share(name: str, value: object) -> float:
    """A number from 0 to 1, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{name} must be between 0 and 1, got {value}")
    return float(value)


def class_steps(name: str, value: object) -> int:
    """A whole number of class steps, -3 to 3."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not -MAX_STEPS <= value <= MAX_STEPS
    ):
        raise ConfigError(
            f"{name} must be a whole number of class steps between {-MAX_STEPS} and"
            f" {MAX_STEPS} (BAD to GOOD is {MAX_STEPS} steps), got {value!r}"
        )
    return value

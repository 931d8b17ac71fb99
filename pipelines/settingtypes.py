"""Type checks of Scrapy and CORPUS_* settings, before a crawl starts.

A profile's `settings:` section and `-s KEY=VALUE` are free-form: without a
check, `-s DOWNLOAD_DELAY=fast` fails deep inside a component with a
traceback that never names the key. Here every setting whose type is known
(the type of its default: Scrapy's own defaults and the `CORPUS_*` settings an
empty profile produces) is converted the way Scrapy's `getbool`/`getint`/
`getfloat`/`getlist`/`getdict` will convert it, and a value that would fail is
reported with its key, where it came from and what to write instead.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from corpus_crawler.config import ConfigError
from corpus_crawler.setting_keys import TYPE_WORDS, value_problem

__all__ = [
    "at_least",
    "check_command_line",
    "check_setting_types",
    "count_at_least",
    "exit_with",
    "expected_types",
]


@functools.cache
def expected_types() -> Mapping[str, type]:
    """Setting name -> bool, int, float, list, dict or str (settings with a None default and
    class paths are left out: any value may be right)."""
    from scrapy.settings import default_settings

    from corpus_crawler.profile import Profile
    from pipelines.bridge import profile_settings

    defaults: dict[str, Any] = {
        name: getattr(default_settings, name) for name in dir(default_settings) if name.isupper()
    }
    defaults.update(profile_settings(Profile()))
    types: dict[str, type] = {}
    kinds: tuple[type, ...] = (bool, int, float, dict, str)
    for name, value in defaults.items():
        for kind in kinds:
            if isinstance(value, kind):
                types[name] = kind
                break
        else:
            if isinstance(value, (list, tuple)):
                types[name] = list
    # mappings that Scrapy also takes as class paths or None, and float-valued ints
    for name in ("CORPUS_PROFILE_PATH", "CORPUS_PROFILE_DATA"):
        types.pop(name, None)
    for name, kind in list(types.items()):
        if kind is int and name in _FLOAT_ALSO:
            types[name] = float
    return types


#: Int defaults that Scrapy reads with getfloat.
_FLOAT_ALSO = frozenset(
    {"DOWNLOAD_DELAY", "CLOSESPIDER_TIMEOUT", "CLOSESPIDER_TIMEOUT_NO_ITEM", "DNS_TIMEOUT"}
)


def check_setting_types(values: Mapping[str, Any], where: str, *, keys: Iterable[str] = ()) -> None:
    """Raise ConfigError for the first value of `values` Scrapy could not read as its type.

    `where` prefixes the key in the message (`"profile.yaml: settings."`, `"-s "`);
    `keys` limits the check to those names (all of `values` when empty).
    """
    types = expected_types()
    names = list(keys) or list(values)
    for name in names:
        kind = types.get(name)
        if kind is None or name not in values:
            continue
        value = values[name]
        if value_problem(kind, value):
            raise ConfigError(f"{where}{name}: must be {TYPE_WORDS[kind]}, got {value!r}")


def check_command_line(settings: Any) -> None:
    """The settings given with `-s` (Scrapy's "cmdline" priority), as `check_setting_types`."""
    from scrapy.settings import SETTINGS_PRIORITIES

    cmdline = SETTINGS_PRIORITIES["cmdline"]
    keys = [name for name in settings if settings.getpriority(name) == cmdline]
    check_setting_types({name: settings[name] for name in keys}, "-s ")


def at_least(
    settings: Any, name: str, default: float, least: float, *, above: bool = False
) -> float:
    """The number `name` holds (a float; `int()` it for a count), refused with a
    ValueError naming the setting unless finite and >= `least` (> with `above`). For
    the settings no profile key stands for (`corpus_crawler.setting_keys.FIELD_SETTINGS` checks
    the others by their key's rules)."""
    value = settings.getfloat(name, default)
    if not math.isfinite(value) or value < least or (above and value == least):
        bound = f"> {least:g}" if above else f">= {least:g}"
        raise ValueError(f"{name} must be a number {bound}, got {value:g}")
    return value


def count_at_least(settings: Any, name: str, default: int, least: int) -> int:
    """The whole number `name` holds, refused like `at_least` and also when it is a
    fraction (`getint` would make 2.5 a silent 2)."""
    value = at_least(settings, name, default, least)
    if not value.is_integer():
        raise ValueError(f"{name} must be a whole number >= {least}, got {value:g}")
    return int(value)


def exit_with(error: Exception, program: str = "corpus-crawler", code: int = 2) -> NoReturn:
    """One line on stderr and exit status `code` (2: bad input; `pipelines.cli.ExitCode`),
    the way a command-line tool reports what stops it.

    Raised from inside Scrapy's crawl set-up, any other exception would be logged
    with a traceback that buries the message.
    """
    print(f"{program}: {error}", file=sys.stderr, flush=True)
    raise SystemExit(code)

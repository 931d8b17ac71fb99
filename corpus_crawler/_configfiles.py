"""Reading the YAML files under configs/ (a checkout's, or the copy in the wheel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .config import ConfigError
from .stoplists import config_dir

#: Values a configuration file may hold once its YAML aliases are expanded: a
#: profile has a few hundred, a seed list belongs in seeds.files. Ten nested aliases
#: of ten items each ("billion laughs") load as a small graph and expand to 10^10:
#: everything that walks it (checks, the summary, Scrapy's settings) never ends.
MAX_YAML_VALUES = 1_000_000

#: libyaml when PyYAML was built with it (its wheels are): the pure-Python loader took
#: 84 ms of CPU for configs/extractors/presets.yaml, mostly scanning its comments, on
#: every `corpus-crawler extract` (libyaml: 3 ms). Both give the same data for every
#: file under configs/ (tests/test_startup_loads.py).
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """`yaml.safe_load`, through libyaml when it is there."""
    return yaml.load(text, Loader=_SafeLoader)


def extractor_config_path(name: str) -> Path:
    """configs/extractors/<name>.yaml."""
    return config_dir() / "extractors" / f"{name}.yaml"


def expansion_problem(data: Any, limit: int = MAX_YAML_VALUES) -> str | None:
    """Why `data` (as YAML loaded it) is too large to use, or None: more than `limit`
    values once shared (aliased) parts are counted each time they are used."""
    count = 0
    stack = [data]
    while stack:
        value = stack.pop()
        count += 1
        if count > limit:
            return (
                f"it holds more than {limit:,} values once its YAML aliases (*name) are"
                " expanded: remove the aliases (or put long lists of URLs in a seed file)"
            )
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


def read_yaml(path: Path, what: str) -> Any:
    """A YAML file's data ({} when empty); unreadable or invalid files name the fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read {what} {path}: {exc.strerror or exc};"
            " pass an existing YAML file or omit the path for the defaults"
        ) from None
    try:
        data = safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    problem = expansion_problem(data)
    if problem is not None:
        raise ConfigError(f"{path}: {problem}")
    return {} if data is None else data

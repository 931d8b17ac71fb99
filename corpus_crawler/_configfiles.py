"""Reading the YAML files under configs/ (a checkout's, or the copy in the wheel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .config import ConfigError
from .stoplists import config_dir


def extractor_config_path(name: str) -> Path:
    """configs/extractors/<name>.yaml."""
    return config_dir() / "extractors" / f"{name}.yaml"


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
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    return {} if data is None else data

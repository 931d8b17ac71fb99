"""The extractors besides jusText behind `extract()`'s one interface.

Each takes the decoded, preprocessed tree and returns Paragraphs (plus cleaned
HTML where it makes some), so the pipeline, the writers and `evaluate` work
unchanged whichever is chosen with `ExtractConfig.extractor`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from lxml import etree

from .config import ConfigError, ExtractConfig
from .model import Paragraph


@functools.lru_cache(maxsize=1)
def _declutter_defaults() -> Any:
    from .declutter import load_declutter_options

    return load_declutter_options()


@functools.lru_cache(maxsize=1)
def _kimatu_defaults() -> Any:
    from .kimatu import load_kimatu_options

    return load_kimatu_options()


def extractor_options(name: str, overrides: Mapping[str, Any]) -> Any:
    """The options object of extractor `name`: its YAML defaults with `overrides`.

    Raises ConfigError naming the bad key, so ExtractConfig can check once.
    """
    if name == "declutter":
        defaults = _declutter_defaults()
    elif name == "kimatu":
        defaults = _kimatu_defaults()
    elif name == "combined":
        from .combined import shipped_combined_options

        defaults = shipped_combined_options()
    else:
        raise ConfigError(f"extractor {name!r} takes no options")
    return defaults.merged(overrides, f"{name} options") if overrides else defaults


def run_extractor(
    name: str, root: etree._Element, config: ExtractConfig
) -> tuple[tuple[Paragraph, ...], str | None]:
    """Paragraphs (and cleaned HTML, if any) of a non-jusText extractor."""
    if name == "declutter":
        from .declutter import declutter

        options = extractor_options("declutter", config.extractor_options)
        result = declutter(root, options)
        return tuple(result.paragraphs), result.html
    if name == "kimatu":
        from .kimatu import kimatu

        options = extractor_options("kimatu", config.extractor_options)
        kimatu_result = kimatu(root, options)
        return tuple(kimatu_result.paragraphs), None
    if name == "combined":
        from .combined import combined, shipped_combined_options

        combined_options = shipped_combined_options()
        if config.extractor_options:
            combined_options = combined_options.merged(config.extractor_options, "combined options")
        return combined(root, config, combined_options), None
    raise ConfigError(f"extractor {name!r} is not available here")

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


def _options(defaults: Any, overrides: Mapping[str, Any], source: str) -> Any:
    if not overrides:
        return defaults
    from dataclasses import fields, replace

    known = {f.name for f in fields(defaults)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown {source} option {unknown[0]!r}{hint}")
    return replace(defaults, **dict(overrides))


def run_extractor(
    name: str, root: etree._Element, config: ExtractConfig
) -> tuple[tuple[Paragraph, ...], str | None]:
    """Paragraphs (and cleaned HTML, if any) of a non-jusText extractor."""
    if name == "declutter":
        from .declutter import declutter

        options = _options(_declutter_defaults(), config.extractor_options, "declutter")
        result = declutter(root, options)
        return tuple(result.paragraphs), result.html
    if name == "kimatu":
        from .kimatu import kimatu

        options = _options(_kimatu_defaults(), config.extractor_options, "kimatu")
        kimatu_result = kimatu(root, options)
        return tuple(kimatu_result.paragraphs), None
    raise ConfigError(f"extractor {name!r} is not available here")

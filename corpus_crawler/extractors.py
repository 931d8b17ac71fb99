"""The extractors behind `extract()`'s one interface: an enum to a function.

Each takes the decoded, preprocessed tree and returns an `Extraction`
(paragraphs, cleaned HTML where it makes some, the page's language), so the
pipeline, the writers and `evaluate` work unchanged whichever is chosen with
`ExtractConfig.extractor`. The import graph is one way: extract.py imports
this module, this module imports combined.py, declutter and kimatu (lazily,
so that a jusText run never loads them), and none of those imports back.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from lxml import etree

from .classify import classify_segments
from .config import ConfigError, ExtractConfig, Preset
from .container import preset_passes
from .elementmarks import HIDDEN
from .language_setup import accepted, choose_language, stoplist_and_params
from .model import DropReason, Paragraph
from .presets import container_options
from .segment import Segment, TooManyBlocks, composed, lead_elements, segment, stated_elements
from .wrappers import page_furniture


class Extractor(enum.Enum):
    JUSTEXT = "justext"
    DECLUTTER = "declutter"
    KIMATU = "kimatu"
    COMBINED = "combined"

    def __str__(self) -> str:
        return self.value


class Extraction(NamedTuple):
    """What an extractor made of one page."""

    paragraphs: tuple[Paragraph, ...]
    language: str | None = None
    language_confidence: float | None = None
    html: str | None = None
    #: Set when the page yields nothing for a reason the extractor saw first.
    drop_reason: DropReason | None = None
    drop_detail: str = ""


ExtractorFunction = Callable[[etree._Element, ExtractConfig], Extraction]


# --------------------------------------------------------------------------- options


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

    Raises ConfigError naming the bad key, so a config can be checked once.
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


# --------------------------------------------------------------------------- extractors


def _justext(root: etree._Element, config: ExtractConfig) -> Extraction:
    reference = config.preset is Preset.REFERENCE
    options = container_options(config.preset)
    try:
        segments = segment(
            root,
            reference=reference,
            max_blocks=config.max_blocks,
            marked=options is not None and options.uses_marks,
            stated=options is not None and options.uses_stated,
            page_links_only=options is not None and options.page_links_only,
            drop_hidden_inline=options is not None and options.drop_hidden_inline,
        )
    except TooManyBlocks as exc:
        return Extraction((), drop_reason=DropReason.TOO_LARGE, drop_detail=str(exc))
    if not segments:
        return Extraction((), drop_reason=DropReason.EMPTY, drop_detail="no text")
    if options is not None and options.drop_hidden:
        segments = visible(segments)
        if not segments:
            return Extraction((), drop_reason=DropReason.EMPTY, drop_detail="no visible text")
    if config.preset.composes_unicode:
        segments = composed(segments)
    language, confidence = choose_language([s.text for s in segments], config)
    if not accepted(language, confidence, config):
        # checked before classifying: a rejected page costs no classification
        return Extraction((), language, confidence, drop_reason=DropReason.WRONG_LANGUAGE)
    stoplist, params = stoplist_and_params(language, config)
    paragraphs = classify_segments(segments, stoplist, params, reference=reference)
    if options is not None:
        stated = stated_elements(segments) if options.uses_stated else None
        marks = page_furniture(segments, paragraphs, options.unwrap_layouts)
        leads = lead_elements(segments) if options.standfirst_named else None
        paragraphs = preset_passes(paragraphs, params, options, marks, stated, leads)
    return Extraction(paragraphs, language, confidence)


def visible(segments: list[Segment]) -> list[Segment]:
    """The blocks a browser shows (no elementmarks.HIDDEN)."""
    return [s for s in segments if not s.marks & HIDDEN]


def _with_language(paragraphs: tuple[Paragraph, ...], config: ExtractConfig) -> Extraction:
    language, confidence = choose_language([p.text for p in paragraphs], config)
    return Extraction(paragraphs, language, confidence)


def _declutter(root: etree._Element, config: ExtractConfig) -> Extraction:
    from .declutter import declutter

    result = declutter(root, extractor_options("declutter", config.extractor_options))
    return _with_language(tuple(result.paragraphs), config)._replace(html=result.html)


def _kimatu(root: etree._Element, config: ExtractConfig) -> Extraction:
    from .kimatu import kimatu

    result = kimatu(root, extractor_options("kimatu", config.extractor_options))
    return _with_language(tuple(result.paragraphs), config)


def _combined(root: etree._Element, config: ExtractConfig) -> Extraction:
    from .combined import combined

    options = extractor_options("combined", config.extractor_options)
    paragraphs = combined(root, config, options)
    return _with_language(paragraphs, config)


EXTRACTORS: Mapping[Extractor, ExtractorFunction] = {
    Extractor.JUSTEXT: _justext,
    Extractor.DECLUTTER: _declutter,
    Extractor.KIMATU: _kimatu,
    Extractor.COMBINED: _combined,
}


def hides_noscript(config: ExtractConfig) -> bool:
    """Whether the extractor leaves <noscript> out, as a browser running scripts
    does (every extractor but the jusText presets without `drop_hidden`): its
    page is then parsed with `dom.parse_page(scripting=True)`."""
    if Extractor(config.extractor) is not Extractor.JUSTEXT:
        return True
    options = container_options(config.preset)
    return options is not None and options.drop_hidden


def run_extractor(name: str | Extractor, root: etree._Element, config: ExtractConfig) -> Extraction:
    """The registered extractor `name` on a preprocessed tree."""
    try:
        extractor = Extractor(name)
    except ValueError:
        raise ConfigError(f"extractor {name!r} is not available here") from None
    return EXTRACTORS[extractor](root, config)

"""Frozen, validated extractor settings.

Every error names the parameter and the fix, so a user tuning a language's
YAML file learns what to change without reading the code.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .option_checks import (
    ConfigError,
    built,
    check_keys,
    check_switches,
    share,
    suggestion,
    whole_number,
)


class UnknownLanguage(ConfigError):
    """`ExtractConfig.language` names no shipped language; extract() raises it on
    the first page instead of dropping every page."""


class Preset(enum.Enum):
    #: The algorithm exactly as seed 000 describes it (the default).
    SEED = "seed"
    #: Output identical to the PyPI jusText 3.0.2 package, quirks included.
    REFERENCE = "reference"
    #: No stoplist; stop-word thresholds act as 0 (jusText's `-s None`).
    LANGUAGE_INDEPENDENT = "language-independent"
    #: The seed with the main-container evidence promoting blocks inside it:
    #: all running text of a page, comments and lists included, page furniture
    #: (sidebars, footers, menus) outside it demoted (issue 13).
    CORPUS = "corpus"
    #: The seed with the main-container evidence promoting blocks inside it and
    #: demoting those outside: the main article only (issue 13).
    ARTICLE = "article"
    #: `article` with the reader comments below the article kept, judged as
    #: jusText judges them and lifted one class step: a news or blog post and
    #: its discussion (issue 13).
    ARTICLE_COMMENTS = "article-comments"

    def __str__(self) -> str:
        return self.value

    @property
    def composes_unicode(self) -> bool:
        """Whether block texts are put in Unicode NFC before classification: the
        corpus presets, not the two that must match the seed and jusText exactly."""
        return self in (Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS)

    @classmethod
    def parse(cls, value: str | Preset) -> Preset:
        if isinstance(value, Preset):
            return value
        try:
            return cls(value)
        except ValueError:
            names = [p.value for p in cls]
            raise ConfigError(
                f"unknown preset {value!r}: use one of {', '.join(names)}"
                + suggestion(value, names)
            ) from None


@dataclass(frozen=True, slots=True)
class JustextParams:
    """The seed's parameters with its default values (seed 000)."""

    length_low: int = 70
    length_high: int = 200
    stopwords_low: float = 0.30
    stopwords_high: float = 0.32
    max_link_density: float = 0.2
    max_heading_distance: int = 200
    no_headings: bool = False
    no_headlines: bool = False

    def __post_init__(self) -> None:
        for name in ("length_low", "length_high", "max_heading_distance"):
            whole_number(name, getattr(self, name), at_least=0)
        for name in ("stopwords_low", "stopwords_high", "max_link_density"):
            share(name, getattr(self, name))
        check_switches(self)
        if self.length_low > self.length_high:
            raise ConfigError(
                f"length_low ({self.length_low}) must not exceed length_high ({self.length_high}):"
                " raise length_high or lower length_low"
            )
        if self.stopwords_low > self.stopwords_high:
            raise ConfigError(
                f"stopwords_low ({self.stopwords_low}) must not exceed stopwords_high"
                f" ({self.stopwords_high}): raise stopwords_high or lower stopwords_low"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "parameters") -> JustextParams:
        """Build from a YAML mapping; an unknown key is an error naming the closest known one."""
        check_keys(data, [f.name for f in fields(cls)], source)
        return built(cls, data, source)

    def merged(self, overrides: Mapping[str, Any], source: str = "parameters") -> JustextParams:
        check_keys(overrides, [f.name for f in fields(self)], source)
        return built(functools.partial(replace, self), overrides, source)


EXTRACTORS = ("justext", "declutter", "kimatu", "combined")


@dataclass(frozen=True, slots=True)
class ExtractConfig:
    """Everything `extract()` needs besides the page itself.

    language: an ISO 639 code or jusText language name ("en", "English"),
    "auto" to choose per document, or None for no stoplist.
    params: jusText thresholds; None means the defaults merged with the chosen
    language's overrides from configs/languages/<code>.yaml.
    """

    extractor: str = "justext"
    preset: Preset = Preset.SEED
    language: str | None = "auto"
    params: JustextParams | None = None
    stoplist_path: str | None = None
    #: Languages a document may have; others get DropReason.WRONG_LANGUAGE.
    accept_languages: frozenset[str] | None = None
    #: Options of the declutter / kimatu / combined extractors (see configs/extractors/).
    extractor_options: Mapping[str, Any] = field(default_factory=dict)
    #: Pages larger than this many bytes are cut before parsing (the rest is counted, not parsed).
    max_bytes: int = 20 * 1024 * 1024
    #: Pages with more text blocks than this are dropped as too large (~1.3 KB each).
    max_blocks: int = 100_000

    def __post_init__(self) -> None:
        if self.extractor not in EXTRACTORS:
            raise ConfigError(
                f"unknown extractor {self.extractor!r}: use one of {', '.join(EXTRACTORS)}"
                + suggestion(self.extractor, list(EXTRACTORS))
            )
        if not isinstance(self.preset, Preset):
            object.__setattr__(self, "preset", Preset.parse(self.preset))
        if self.max_bytes <= 0:
            raise ConfigError(f"max_bytes must be positive, got {self.max_bytes}")
        if self.max_blocks <= 0:
            raise ConfigError(f"max_blocks must be positive, got {self.max_blocks}")
        if self.language is not None and (
            not isinstance(self.language, str) or not self.language.strip()
        ):
            raise ConfigError(
                f"language must be a language code or name, 'auto' or None, got {self.language!r}"
            )
        # Nothing here reads a file (building a config is free); `checked()` reads
        # the language index and option files, and extract() raises the same
        # ConfigError on its first page.

    def checked(self) -> ExtractConfig:
        """This config with its language resolved to a stoplist code ("English" ->
        "en") and its extractor options validated; raises ConfigError naming the fix.

        Reads configs/languages/index.yaml and the extractor's option files, once
        per process: call it where settings are read, so a misspelt language fails
        there rather than on the first page.
        """
        from .language_setup import resolved_language

        language = resolved_language(self.language)
        if self.extractor_options and self.extractor in ("declutter", "kimatu", "combined"):
            from .extractors import extractor_options

            extractor_options(self.extractor, self.extractor_options)
        from .presets import container_options

        container_options(self.preset)
        return self if language == self.language else replace(self, language=language)


DEFAULT_CONFIG = ExtractConfig()

"""The settings of html-declutter (seed 002), validated once.

The defaults here are the values written in configs/extractors/declutter.yaml;
a test keeps the two equal.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .._configfiles import extractor_config_path, read_yaml
from ..config import ConfigError
from ..elementmarks import RUBY_ANNOTATION_TAGS
from ..option_checks import built, check_keys, number

# Seed 002, "Prune": "<script> tags". The other tags carry no readable text or
# are page furniture; measured on the gold sets (see declutter.yaml).
_PRUNE_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "embed",
    "applet",
    "canvas",
    "svg",
    "select",
    "textarea",
    # ruby annotations: a reading set above the text, not part of it
    *sorted(RUBY_ANNOTATION_TAGS),
)

# Seed 002, "Prune": class names "containing poison words like comment, promo,
# or popup".
_POISON_WORDS = ("comment", "promo", "popup")

# Seed 002, "Shake": "tags like <div>, or <section>, or any tag which we expect
# to be used to enclose a logical section of a document".
_BLOCK_TAGS = (
    "div",
    "section",
    "article",
    "aside",
    "nav",
    "header",
    "footer",
    "main",
    "form",
    "table",
    "tr",
    "td",
    "th",
    "ul",
    "ol",
    "dl",
    "center",
    "fieldset",
    "figure",
    "details",
    "menu",
)

# Seed 002, "Shake: heuristic overrides": "author" and "byline" blocks.
_BLESSED_WORDS = ("author", "byline")

# Where one text block ends and the next begins, for the paragraphs of the
# result: HTML's block-level elements (the block tags above end one too).
_PARAGRAPH_TAGS = (
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "legend",
    "li",
    "main",
    "menu",
    "nav",
    "ol",
    "option",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
)

# Seed 002, "Purify": a limited-HTML list such as blog comment filters allow.
_APPROVED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("html", ("lang", "dir")),
    ("body", ()),
    ("a", ("href", "title")),
    ("abbr", ("title",)),
    ("b", ()),
    ("blockquote", ("cite",)),
    ("br", ()),
    ("caption", ()),
    ("cite", ()),
    ("code", ()),
    ("dd", ()),
    ("del", ()),
    ("dl", ()),
    ("dt", ()),
    ("em", ()),
    ("figcaption", ()),
    ("figure", ()),
    ("h1", ()),
    ("h2", ()),
    ("h3", ()),
    ("h4", ()),
    ("h5", ()),
    ("h6", ()),
    ("hr", ()),
    ("i", ()),
    ("img", ("src", "alt", "title", "width", "height")),
    ("ins", ()),
    ("kbd", ()),
    ("li", ()),
    ("ol", ("start", "type")),
    ("p", ()),
    ("pre", ()),
    ("q", ("cite",)),
    ("s", ()),
    ("samp", ()),
    ("small", ()),
    ("strong", ()),
    ("sub", ()),
    ("sup", ()),
    ("table", ()),
    ("tbody", ()),
    ("td", ("colspan", "rowspan")),
    ("tfoot", ()),
    ("th", ("colspan", "rowspan", "scope")),
    ("thead", ()),
    ("tr", ()),
    ("u", ()),
    ("ul", ()),
    ("var", ()),
)

_NEVER_MATCHES = re.compile(r"(?!)")


def _words_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """One compiled alternation: a word matches anywhere inside the value ("comments" too)."""
    escaped = [re.escape(w) for w in words]
    if not escaped:
        return _NEVER_MATCHES
    # Longest first so the alternation never stops at a shorter prefix.
    escaped.sort(key=len, reverse=True)
    return re.compile("|".join(escaped), re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DeclutterOptions:
    """Prune, shake and purify settings (seed 002) with the seed's values as defaults."""

    #: Prune: subtrees with these tags are removed whole.
    prune_tags: frozenset[str] = frozenset(_PRUNE_TAGS)
    #: Prune: a subtree goes when one of these occurs anywhere in a poison attribute
    #: (case-insensitive substring, so "comments" and "comment-list" match "comment").
    poison_words: tuple[str, ...] = _POISON_WORDS
    #: The attributes poison and blessed words are looked for in.
    match_attributes: tuple[str, ...] = ("class", "id")
    #: Shake: the decision points.
    block_tags: frozenset[str] = frozenset(_BLOCK_TAGS)
    #: Shake: score = word_weight*Words - link_word_weight*LinkWords - tag_weight*Tags.
    word_weight: float = 1.0
    link_word_weight: float = 2.0
    tag_weight: float = 1.0
    #: Shake: a block whose score is below this is deleted (the seed keeps "non-negative").
    min_score: float = 0.0
    #: Shake overrides: a node whose match attributes contain one of these is Blessed.
    blessed_words: tuple[str, ...] = _BLESSED_WORDS
    #: Purify: tag -> the attributes it keeps; every other tag is flattened.
    approved_tags: tuple[tuple[str, tuple[str, ...]], ...] = _APPROVED
    #: Tags that end a text block of the result besides `block_tags`.
    paragraph_tags: frozenset[str] = frozenset(_PARAGRAPH_TAGS)

    poison_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    blessed_pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("prune_tags", "block_tags", "paragraph_tags"):
            object.__setattr__(self, name, _tag_set(name, getattr(self, name)))
        for name in ("poison_words", "blessed_words", "match_attributes"):
            object.__setattr__(self, name, _word_tuple(name, getattr(self, name)))
        for name in ("word_weight", "link_word_weight", "tag_weight", "min_score"):
            object.__setattr__(self, name, number(name, getattr(self, name)))
        object.__setattr__(self, "approved_tags", _approved(self.approved_tags))
        object.__setattr__(self, "poison_pattern", _words_pattern(self.poison_words))
        object.__setattr__(self, "blessed_pattern", _words_pattern(self.blessed_words))

    @property
    def approved(self) -> dict[str, frozenset[str]]:
        """`approved_tags` as a lookup table."""
        return {tag: frozenset(attributes) for tag, attributes in self.approved_tags}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> DeclutterOptions:
        """Build from a YAML mapping; an unknown key names the closest known one."""
        return DEFAULT_DECLUTTER_OPTIONS.merged(data, source)

    def merged(self, overrides: Mapping[str, Any], source: str) -> DeclutterOptions:
        """These options with some keys replaced (an `extractor_options` mapping, say)."""
        if not isinstance(overrides, Mapping):
            raise ConfigError(
                f"{source}: expected a mapping of declutter options, got {type(overrides).__name__}"
            )
        check_keys(overrides, _option_names(), source)
        return built(functools.partial(replace, self), overrides, source)


def _option_names() -> list[str]:
    return [f.name for f in fields(DeclutterOptions) if f.init]


def _tag_set(name: str, value: object) -> frozenset[str]:
    return frozenset(w.lower() for w in _word_tuple(name, value))


def _word_tuple(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, (str, Mapping)) or not isinstance(value, Iterable):
        raise ConfigError(f"{name} must be a list of names, got {value!r}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"{name} must contain non-empty names only, got {item!r}")
    return tuple(item.strip() for item in items)


def _approved(value: object) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(tag, attributes) pairs, sorted; YAML's `{a: [href, title], br: null}` is accepted too."""
    if isinstance(value, Mapping):
        value = [(tag, attributes or ()) for tag, attributes in value.items()]
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigError(
            "approved_tags must map each tag to its attribute list,"
            f" e.g. `a: [href, title]`, got {value!r}"
        )
    table: dict[str, tuple[str, ...]] = {}
    for entry in value:
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str)):
            raise ConfigError(
                "approved_tags must map each tag to its attribute list,"
                f" e.g. `a: [href, title]`, got the entry {entry!r}"
            )
        tag, attributes = entry
        table[tag.strip().lower()] = _word_tuple(f"approved_tags[{tag!r}]", attributes)
    return tuple(sorted(table.items()))


DEFAULT_DECLUTTER_OPTIONS = DeclutterOptions()

CONFIG_NAME = "declutter.yaml"


def default_config_path() -> Path:
    """configs/extractors/declutter.yaml of this checkout, or the copy packaged with the wheel."""
    return extractor_config_path("declutter")


def load_declutter_options(path: Path | None = None) -> DeclutterOptions:
    """Read a declutter YAML file (the shipped defaults when `path` is None)."""
    path = default_config_path() if path is None else Path(path)
    data = read_yaml(path, "declutter options")
    return DeclutterOptions.from_mapping(data, str(path))

"""Values every extractor produces: paragraph classes, paragraphs and documents.

A `Paragraph` is built once, after classification, with every feature the
classifier used (jusText's own Paragraph recomputes its text on each access;
see ../shared/STYLE.md rule 2).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field


class ParagraphClass(enum.Enum):
    """jusText's four classes (seed 000, "Context-free classification")."""

    GOOD = "good"
    NEAR_GOOD = "neargood"
    SHORT = "short"
    BAD = "bad"

    def __str__(self) -> str:
        return self.value


class DropReason(enum.Enum):
    """Why a document yields no corpus text. The pipeline maps each to a typed DropItem."""

    NOT_HTML = "not-html"
    DECODE_ERROR = "decode-error"
    EMPTY = "empty"
    TOO_LARGE = "too-large"
    WRONG_LANGUAGE = "wrong-language"
    NO_GOOD_PARAGRAPH = "no-good-paragraph"
    TOO_SHORT = "too-short"
    TIMEOUT = "timeout"
    EXTRACTOR_ERROR = "extractor-error"
    #: The same normalised text as a document kept before (corpus_crawler.dedup).
    DUPLICATE = "duplicate"
    #: Mostly the same text as a document kept before, or nothing left once the
    #: paragraphs seen before are removed.
    NEAR_DUPLICATE = "near-duplicate"
    #: Not fetched: its host's or domain's text yield fell below the pruning line
    #: (corpus_crawler.yieldrate).
    LOW_YIELD = "low-yield"
    #: The server closed the connection before the end of the body it announced
    #: (archived with ``WARC-Truncated: disconnect``).
    DISCONNECTED = "disconnected"
    #: Not fetched: its host's robots.txt answered 5xx or 429, or not at all, until the
    #: page's deferred attempts were used up (RFC 9309 2.3.1.4; corpus_crawler.retries).
    ROBOTS_UNREACHABLE = "robots-unreachable"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One text block of a page with the features that classified it.

    `cf_class` is the context-free class, `final_class` the class after the
    heading passes and the context-sensitive revision. Extractors other than
    jusText fill `scores` with the numbers that decided the class and may leave
    the stop-word features at 0.
    """

    text: str
    cf_class: ParagraphClass
    final_class: ParagraphClass
    length: int = 0
    word_count: int = 0
    link_chars: int = 0
    link_density: float = 0.0
    stopword_count: int = 0
    stopword_density: float = 0.0
    dom_path: str = ""
    xpath: str = ""
    heading: bool = False
    headline: bool = False
    in_select: bool = False
    image: bool = False
    #: Kimatu-style element kind: "p" (paragraph), "h" (heading) or "l" (list item).
    kind: str = "p"
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def is_good(self) -> bool:
        return self.final_class is ParagraphClass.GOOD

    @property
    def is_boilerplate(self) -> bool:
        return self.final_class is not ParagraphClass.GOOD


def reclassified(
    p: Paragraph,
    cf_class: ParagraphClass,
    final_class: ParagraphClass,
    scores: Mapping[str, float] | None = None,
) -> Paragraph:
    """The same block with other classes (and, given, other scores), as a plain
    Paragraph: what `dataclasses.replace` gives, at a quarter of its cost (it looks
    the fields up on every call, a third of the container pass's time when it was
    used there)."""
    return Paragraph(
        p.text,
        cf_class,
        final_class,
        p.length,
        p.word_count,
        p.link_chars,
        p.link_density,
        p.stopword_count,
        p.stopword_density,
        p.dom_path,
        p.xpath,
        p.heading,
        p.headline,
        p.in_select,
        p.image,
        p.kind,
        p.scores if scores is None else scores,
    )


@dataclass(frozen=True, slots=True)
class Document:
    """The result of `extract()`: page metadata plus every paragraph, good or not."""

    paragraphs: tuple[Paragraph, ...]
    url: str | None = None
    title: str | None = None
    #: The publication date the page declares (``YYYY-MM-DD``; `pagedate`), if any.
    published: str | None = None
    language: str | None = None
    language_confidence: float | None = None
    declared_encoding: str | None = None
    encoding: str = "utf-8"
    raw_size: int = 0
    extractor: str = "justext"
    preset: str = "seed"
    drop_reason: DropReason | None = None
    drop_detail: str = ""
    #: Cleaned HTML, for extractors that produce it (declutter's purify phase).
    html: str | None = None

    @property
    def good_paragraphs(self) -> tuple[Paragraph, ...]:
        return tuple(p for p in self.paragraphs if p.final_class is ParagraphClass.GOOD)

    @property
    def text(self) -> str:
        """The clean text: good paragraphs, one per line."""
        return "\n".join(p.text for p in self.paragraphs if p.final_class is ParagraphClass.GOOD)

    @property
    def kept(self) -> bool:
        return self.drop_reason is None and any(
            p.final_class is ParagraphClass.GOOD for p in self.paragraphs
        )

"""The one entry point: page bytes in, classified paragraphs out.

decode -> parse -> preprocess -> segment -> (language) -> classify -> Document.
The same function serves live crawls, WARC reprocessing, the CLI and the
evaluation, so everything a page can do wrong ends here as a `drop_reason`,
never as an exception.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from . import dom
from .classify import classify_segments, clear_path_caches
from .config import DEFAULT_CONFIG, ExtractConfig, JustextParams, Preset, UnknownLanguage
from .decode import Decoded, clean_text, decode_html, decode_like_justext
from .extractors import hides_noscript, run_extractor
from .language_setup import accepted, choose_language, stoplist_and_params
from .model import Document, DropReason, Paragraph, ParagraphClass
from .pagedate import published_date
from .segment import HEADING_TAGS, clear_mark_caches

# choose_language, classify_segments and stoplist_and_params are re-exported: they
# lived here before classify.py and language_setup.py held them.
__all__ = [
    "choose_language",
    "classify_segments",
    "clear_template_caches",
    "extract",
    "stoplist_and_params",
]

log = logging.getLogger(__name__)


def clear_template_caches() -> None:
    """Forget what earlier pages taught about templates: the marks of attribute sets
    and the flags of DOM paths, kept across pages because a site repeats them. The
    next page then pays what a page of a new site pays (benchmarks/extract_speed.py's
    cold rows); the stoplists and configs, loaded once, stay."""
    clear_mark_caches()
    clear_path_caches()


_LONG_BLOCK = JustextParams().length_high


def extract(
    html: bytes | str,
    url: str | None = None,
    config: ExtractConfig = DEFAULT_CONFIG,
    *,
    http_charset: str | None = None,
    on_tree: Callable[[Any, str], None] | None = None,
    fetched: date | None = None,
) -> Document:
    """Decode, preprocess, segment and classify one page. Never raises on bad input.

    `on_tree(root, encoding)` is called with the parsed page before preprocessing
    strips it (the crawl's workers take its links from it: one parse a page, not two);
    it must not keep the tree, which the extractor then changes. `fetched`: the day the
    page was fetched (default today); a publication date it declares after that day is
    not believed (`pagedate`)."""
    _check_arguments(html, url, config)
    raw_size = len(html)
    try:
        return _extract(html, url, config, http_charset, raw_size, on_tree, fetched)
    except UnknownLanguage:
        # A misspelt setting is the caller's to fix, not a bad page: dropping
        # every page as an extractor error would hide it.
        raise
    except Exception as exc:  # a bad page is a counted drop, never a crash
        log.warning("extractor failed on %s: %r", url or "<page>", exc, exc_info=True)
        return Document(
            paragraphs=(),
            url=url,
            raw_size=raw_size,
            extractor=config.extractor,
            preset=config.preset.value,
            drop_reason=DropReason.EXTRACTOR_ERROR,
            drop_detail=f"{type(exc).__name__}: {exc}"[:500],
        )


def _check_arguments(html: object, url: object, config: object) -> None:
    """A caller's mistake is a TypeError naming the argument, not a page dropped as an
    extractor error (`extract(html, config)` passed the config as the URL)."""
    if not isinstance(html, (bytes, bytearray, str)):
        raise TypeError(f"extract(): html must be bytes or str, got {type(html).__name__}")
    if url is not None and not isinstance(url, str):
        hint = " (pass the config as config=...)" if isinstance(url, ExtractConfig) else ""
        raise TypeError(f"extract(): url must be a str or None, got {type(url).__name__}{hint}")
    if not isinstance(config, ExtractConfig):
        raise TypeError(f"extract(): config must be an ExtractConfig, got {type(config).__name__}")


def _decode(
    html: bytes | str, http_charset: str | None, config: ExtractConfig
) -> tuple[Decoded, bytes]:
    if isinstance(html, str):
        # Lone surrogates cannot reach libxml2.
        text = clean_text(html.encode("utf-8", "replace").decode("utf-8"))
        data = text.encode("utf-8")
        return Decoded(text, "utf-8", http_charset, "text", data), data
    data = html[: config.max_bytes]
    if config.preset is Preset.REFERENCE:
        return decode_like_justext(data, http_charset), data
    return decode_html(data, http_charset), data


def _extract(
    html: bytes | str,
    url: str | None,
    config: ExtractConfig,
    http_charset: str | None,
    raw_size: int,
    on_tree: Callable[[Any, str], None] | None = None,
    fetched: date | None = None,
) -> Document:
    decoded, data = _decode(html, http_charset, config)
    reference = config.preset is Preset.REFERENCE
    base = Document(
        paragraphs=(),
        url=url,
        declared_encoding=decoded.declared,
        encoding=decoded.encoding,
        raw_size=raw_size,
        extractor=config.extractor,
        preset=config.preset.value,
    )
    if reference:
        root = dom.parse_like_reference(decoded.text, data)
    else:
        root = dom.parse_page(decoded.text, scripting=hides_noscript(config), utf8=decoded.utf8)
    if root is None:
        return _replace(base, drop_reason=DropReason.EMPTY, drop_detail="no HTML document")
    if on_tree is not None:
        on_tree(root, decoded.encoding)
    title = dom.title_of(root)
    if title is not None and config.preset.composes_unicode and not title.isascii():
        title = unicodedata.normalize("NFC", title)  # as the blocks' texts (segment.composed)
    published = published_date(root, decoded.text, fetched, url)
    root = dom.preprocess_reference(root) if reference else dom.preprocess_seed(root)

    result = run_extractor(config.extractor, root, config)
    doc = _replace(
        base,
        title=title,
        published=published,
        language=result.language,
        language_confidence=result.language_confidence,
        html=result.html,
    )
    if result.drop_reason is not None and result.drop_reason is not DropReason.WRONG_LANGUAGE:
        return _replace(doc, drop_reason=result.drop_reason, drop_detail=result.drop_detail)
    if result.drop_reason is DropReason.WRONG_LANGUAGE or not accepted(
        result.language, result.language_confidence, config
    ):
        return _wrong_language(doc)
    return _finish(doc, result.paragraphs)


def _wrong_language(doc: Document) -> Document:
    return _replace(
        doc, drop_reason=DropReason.WRONG_LANGUAGE, drop_detail=f"language {doc.language!r}"
    )


def _finish(doc: Document, paragraphs: tuple[Paragraph, ...]) -> Document:
    doc = _replace(doc, paragraphs=paragraphs)
    good = [p for p in paragraphs if p.final_class is ParagraphClass.GOOD]
    if not good:
        return _replace(doc, drop_reason=DropReason.NO_GOOD_PARAGRAPH)
    if only_headings(good):
        return _replace(
            doc, drop_reason=DropReason.NO_GOOD_PARAGRAPH, drop_detail="only headings are good"
        )
    return doc


def only_headings(good: Sequence[Paragraph]) -> bool:
    """Whether a page's good blocks hold no running text: each is a heading
    shorter than a long block.

    The seed keeps every H1, so a page of headings alone would be kept; it has no
    running text for a corpus. A heading as long as a block that jusText judges
    on its own (`length_high`, 200 characters by default) is text, though: a tag
    left open (`<h6>` never closed) puts a whole page in one heading. So is a
    block with a block element between it and its heading's tag: the heading was
    left open around the page's paragraphs, each shorter than a long block (a
    Hong Kong news page in `<h1>` from its header to its footer).
    """
    return all(p.heading and len(p.text) < _LONG_BLOCK and _heading_of(p.dom_path) for p in good)


#: Block elements: an HTML heading holds none, so one below a heading's tag means the
#: heading was left open (libxml2 keeps an `<h1>` without its end around the page).
_BLOCK_TAGS = frozenset(
    ("p", "div", "table", "tr", "td", "ul", "ol", "li", "dl", "dd", "form", "section",
     "article", "aside", "blockquote", "pre", "center", "main", "header", "footer", "nav")
)  # fmt: skip


def _heading_of(dom_path: str) -> bool:
    """Whether a heading block is the heading itself: no block element between its
    heading's tag and the block (`p.heading` says a heading tag is above it)."""
    tags = dom_path.split(".")
    last = max((i for i, tag in enumerate(tags) if tag in HEADING_TAGS), default=-1)
    return not any(tag in _BLOCK_TAGS for tag in tags[last + 1 :])


def _replace(doc: Document, **changes: object) -> Document:
    return replace(doc, **changes)  # type: ignore[arg-type]

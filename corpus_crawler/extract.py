"""The one entry point: page bytes in, classified paragraphs out.

decode -> parse -> preprocess -> segment -> (language) -> classify -> Document.
The same function serves live crawls, WARC reprocessing, the CLI and the
evaluation, so everything a page can do wrong ends here as a `drop_reason`,
never as an exception.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING

from . import classify as _classify
from . import dom
from .config import DEFAULT_CONFIG, ExtractConfig, JustextParams, Preset
from .decode import Decoded, clean_text, decode_html, decode_like_justext
from .model import Document, DropReason, Paragraph, ParagraphClass
from .segment import HEADING_TAGS, Segment, TooManyBlocks, segment

_fast: ModuleType | None
try:  # the compiled classifier (corpus_crawler/_classify_fast.pyx), built by pip install
    from . import _classify_fast as _fast
except ImportError:  # pragma: no cover - no compiler where it was installed
    _fast = None

if TYPE_CHECKING:
    from .stoplists import LanguageConfig

log = logging.getLogger(__name__)

_HEADING_PATH = re.compile(r"\bh\d\b")
_LANGUAGE_INDEPENDENT = JustextParams(stopwords_low=0.0, stopwords_high=0.0)


def extract(
    html: bytes | str,
    url: str | None = None,
    config: ExtractConfig = DEFAULT_CONFIG,
    *,
    http_charset: str | None = None,
) -> Document:
    """Decode, preprocess, segment and classify one page. Never raises on bad input."""
    raw_size = len(html)
    try:
        return _extract(html, url, config, http_charset, raw_size)
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


def _decode(
    html: bytes | str, http_charset: str | None, config: ExtractConfig
) -> tuple[Decoded, bytes]:
    if isinstance(html, str):
        # Lone surrogates cannot reach libxml2.
        text = clean_text(html.encode("utf-8", "replace").decode("utf-8"))
        return Decoded(text, "utf-8", http_charset, "text"), text.encode("utf-8")
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
    root = dom.parse_like_reference(decoded.text, data) if reference else dom.parse(decoded.text)
    if root is None:
        return _replace(base, drop_reason=DropReason.EMPTY, drop_detail="no HTML document")
    title = dom.title_of(root)
    root = dom.preprocess_reference(root) if reference else dom.preprocess_seed(root)

    if config.extractor != "justext":
        from .extractors import run_extractor

        paragraphs, cleaned_html = run_extractor(config.extractor, root, config)
        language, confidence = choose_language([p.text for p in paragraphs], config)
        doc = _replace(
            base,
            title=title,
            language=language,
            language_confidence=confidence,
            html=cleaned_html,
        )
        if not _accepted(doc, config):
            return _wrong_language(doc)
        return _finish(doc, tuple(paragraphs))

    try:
        segments = segment(root, reference=reference, max_blocks=config.max_blocks)
    except TooManyBlocks as exc:
        return _replace(base, title=title, drop_reason=DropReason.TOO_LARGE, drop_detail=str(exc))
    if not segments:
        return _replace(base, title=title, drop_reason=DropReason.EMPTY, drop_detail="no text")
    language, confidence = choose_language([s.text for s in segments], config)
    doc = _replace(base, title=title, language=language, language_confidence=confidence)
    if not _accepted(doc, config):
        # checked before classifying: a rejected page costs no classification
        return _wrong_language(doc)
    stoplist, params = stoplist_and_params(language, config)
    paragraphs = classify_segments(segments, stoplist, params, reference=reference)
    return _finish(doc, paragraphs)


def _wrong_language(doc: Document) -> Document:
    return _replace(
        doc, drop_reason=DropReason.WRONG_LANGUAGE, drop_detail=f"language {doc.language!r}"
    )


def _finish(doc: Document, paragraphs: tuple[Paragraph, ...]) -> Document:
    doc = _replace(doc, paragraphs=paragraphs)
    good = [p for p in paragraphs if p.final_class is ParagraphClass.GOOD]
    if not good:
        return _replace(doc, drop_reason=DropReason.NO_GOOD_PARAGRAPH)
    if all(p.heading for p in good):
        # The seed keeps every H1; a page whose only good blocks are headings
        # has no running text for a corpus.
        return _replace(
            doc, drop_reason=DropReason.NO_GOOD_PARAGRAPH, drop_detail="only headings are good"
        )
    return doc


def _accepted(doc: Document, config: ExtractConfig) -> bool:
    if config.accept_languages is None:
        return True
    from .langid import LanguageGuess, is_accepted

    guess = LanguageGuess(doc.language, doc.language_confidence or 0.0, "recorded")
    return is_accepted(guess, config.accept_languages)


def _replace(doc: Document, **changes: object) -> Document:
    return replace(doc, **changes)  # type: ignore[arg-type]


def choose_language(texts: Sequence[str], config: ExtractConfig) -> tuple[str | None, float | None]:
    language = config.language
    if language is None:
        return None, None
    if language != "auto":
        # ExtractConfig resolved it to a stoplist code when it was built
        return language, 1.0
    from .langid import identify

    guess = identify(texts)
    return guess.code, guess.confidence


def stoplist_and_params(
    language: str | None, config: ExtractConfig
) -> tuple[frozenset[str], JustextParams]:
    if config.preset is Preset.LANGUAGE_INDEPENDENT:
        return frozenset(), _without_stopwords(config.params)
    if config.stoplist_path is not None:
        from .stoplists import load_stoplist_file

        return load_stoplist_file(config.stoplist_path), config.params or JustextParams()
    setup = _language_setup(language) if language is not None else None
    if setup is None:
        # No language (none asked for, none recognised, or one without a
        # stoplist such as Japanese): jusText's `-s None`.
        return frozenset(), _without_stopwords(config.params)
    stoplist, language_params = setup
    if config.params is not None:
        return stoplist, config.params
    # jusText 3.0.2 has one set of thresholds for every language.
    return stoplist, JustextParams() if config.preset is Preset.REFERENCE else language_params


def _language_setup(code: str) -> tuple[frozenset[str], JustextParams] | None:
    """A language's stoplist and tuned thresholds (None: no stoplist for it).

    The merged, validated thresholds are kept per LanguageConfig object, which
    stoplists caches (and replaces on clear_caches), so a page pays a lookup.
    """
    from .stoplists import has_language, load_language

    if not has_language(code):
        return None
    lang = load_language(code)
    params = _tuned_params(lang)
    return lang.stoplist, params


@functools.lru_cache(maxsize=256)
def _tuned_params(lang: LanguageConfig) -> JustextParams:
    return JustextParams().merged(lang.parameters, f"configs/languages/{lang.code}.yaml")


def _without_stopwords(params: JustextParams | None) -> JustextParams:
    """jusText's `-s None`: stop-word thresholds 0 whatever else was given."""
    if params is None:
        return _LANGUAGE_INDEPENDENT
    return replace(params, stopwords_low=0.0, stopwords_high=0.0)


def classify_segments(
    segments: Sequence[Segment],
    stoplist: frozenset[str],
    params: JustextParams,
    *,
    reference: bool = False,
    compiled: bool | None = None,
) -> tuple[Paragraph, ...]:
    """Features once per block, the four classification phases, frozen Paragraphs.

    `compiled` picks the implementation (default: the compiled one when it was
    built, corpus_crawler/_classify_fast.pyx); both give equal Paragraphs.
    """
    flags_of = _reference_path_flags if reference else _seed_path_flags
    if compiled is None:
        compiled = _fast is not None
    if compiled and _fast is not None:
        return _fast.paragraphs(list(segments), stoplist, params, reference, flags_of)
    texts = [s.text for s in segments]
    lengths = [len(t) for t in texts]
    words = [t.lower().split() for t in texts]
    word_counts = [len(w) for w in words]
    if stoplist:
        contains = stoplist.__contains__
        stop_counts = [sum(map(contains, w)) for w in words]
    else:
        stop_counts = [0] * len(texts)
    link_chars = [s.link_chars for s in segments]
    path_flags = [flags_of(s.dom_path) for s in segments]
    copyright_code = "&copy" if reference else _classify.COPYRIGHT_CODE
    copyright_char = _classify.COPYRIGHT_CHAR
    no_headings = params.no_headings
    features = [
        _classify.Features(
            length,
            links,
            links / length if length else 0.0,
            stops / count if count else 0.0,
            copyright_char in text or copyright_code in text,
            heading and not no_headings,
            headline,
            in_select,
            seg.images > 0 and not text,
        )
        for seg, text, length, links, stops, count, (heading, headline, in_select) in zip(
            segments, texts, lengths, link_chars, stop_counts, word_counts, path_flags, strict=False
        )
    ]
    cf_classes, final_classes = _classify.classify(features, params, reference=reference)
    return tuple(
        [
            Paragraph(
                seg.text,
                cf,
                final,
                f.length,
                count,
                f.link_chars,
                f.link_density,
                stops,
                f.stopword_density,
                seg.dom_path,
                seg.xpath,
                f.heading,
                f.headline,
                f.in_select,
                f.image,
                "h" if f.heading else "p",
            )
            for seg, f, count, stops, cf, final in zip(
                segments,
                features,
                word_counts,
                stop_counts,
                cf_classes,
                final_classes,
                strict=False,
            )
        ]
    )


def _reference_flags(path: str) -> tuple[bool, bool, bool]:
    """(heading, headline, in_select) of a dom path, as jusText 3.0.2 tests them:
    a regex and a substring test on the dotted path."""
    return (_HEADING_PATH.search(path) is not None, False, "select" in path)


def _seed_flags(path: str) -> tuple[bool, bool, bool]:
    """(heading, headline, in_select) of a dom path, tag by tag."""
    tags = path.split(".")
    return (not HEADING_TAGS.isdisjoint(tags), "h1" in tags, "select" in tags)


# Pages of a site share their template's paths, so answers are kept across
# pages; only for ordinary paths (a hostile page's can be thousands of tags deep).
_cached_reference_flags = functools.lru_cache(maxsize=8192)(_reference_flags)
_cached_seed_flags = functools.lru_cache(maxsize=8192)(_seed_flags)
_CACHED_PATH_LENGTH = 400


def _reference_path_flags(path: str) -> tuple[bool, bool, bool]:
    if len(path) > _CACHED_PATH_LENGTH:
        return _reference_flags(path)
    return _cached_reference_flags(path)


def _seed_path_flags(path: str) -> tuple[bool, bool, bool]:
    if len(path) > _CACHED_PATH_LENGTH:
        return _seed_flags(path)
    return _cached_seed_flags(path)

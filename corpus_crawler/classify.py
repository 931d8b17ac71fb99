"""jusText classification (seed 000, "Classification" and "Headings").

Four pure phases over per-block features:
context-free -> headings pre-pass -> context-sensitive -> headings post-pass.
Each takes values and returns a new list of classes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from types import ModuleType
from typing import NamedTuple

from .config import JustextParams
from .model import Paragraph, ParagraphClass
from .segment import HEADING_TAGS, Segment

_fast: ModuleType | None
try:  # the compiled classifier (corpus_crawler/_classify_fast.pyx), built by pip install
    from . import _classify_fast as _fast
except ImportError:  # pragma: no cover - no compiler where it was installed
    _fast = None

GOOD = ParagraphClass.GOOD
NEAR_GOOD = ParagraphClass.NEAR_GOOD
SHORT = ParagraphClass.SHORT
BAD = ParagraphClass.BAD

COPYRIGHT_CHAR = "\u00a9"
COPYRIGHT_CODE = "&copy;"


class Features(NamedTuple):
    """What the context-free rules look at, computed once per block."""

    length: int
    link_chars: int
    link_density: float
    stopword_density: float
    copyright: bool
    heading: bool
    headline: bool
    in_select: bool
    image: bool


def classify_context_free(
    features: Sequence[Features], params: JustextParams, *, headline_rule: bool = True
) -> list[ParagraphClass]:
    """Seed's doClassifyContextFree. `headline_rule=False` drops the image and H1
    rules, which jusText 3.0.2 does not have (its `reference` preset)."""
    length_low = params.length_low
    length_high = params.length_high
    stopwords_low = params.stopwords_low
    stopwords_high = params.stopwords_high
    max_link_density = params.max_link_density
    headlines_good = headline_rule and not params.no_headlines
    classes: list[ParagraphClass] = []
    append = classes.append
    for f in features:
        if f.image or f.link_density > max_link_density or f.copyright:
            append(BAD)
        elif headlines_good and f.headline:
            append(GOOD)
        elif f.in_select:
            append(BAD)
        elif f.length < length_low:
            append(BAD if f.link_chars > 0 else SHORT)
        elif f.stopword_density >= stopwords_high:
            append(GOOD if f.length > length_high else NEAR_GOOD)
        elif f.stopword_density >= stopwords_low:
            append(NEAR_GOOD)
        else:
            append(BAD)
    return classes


def _followed_by_good(
    i: int, classes: Sequence[ParagraphClass], lengths: Sequence[int], max_distance: int
) -> bool:
    """Is a GOOD block after block i with at most max_distance characters in between?"""
    distance = 0
    j = i + 1
    n = len(classes)
    while j < n and distance <= max_distance:
        if classes[j] is GOOD:
            return True
        distance += lengths[j]
        j += 1
    return False


def headings_pre_pass(
    classes: Sequence[ParagraphClass],
    headings: Sequence[bool],
    lengths: Sequence[int],
    params: JustextParams,
) -> list[ParagraphClass]:
    """SHORT headings shortly before a GOOD block become NEAR_GOOD (seed, "Headings")."""
    result = list(classes)
    if params.no_headings:
        return result
    for i, cls in enumerate(classes):
        if (
            cls is SHORT
            and headings[i]
            and _followed_by_good(i, classes, lengths, params.max_heading_distance)
        ):
            result[i] = NEAR_GOOD
    return result


def classify_context_sensitive(classes: Sequence[ParagraphClass]) -> list[ParagraphClass]:
    """Resolve SHORT and NEAR_GOOD runs between GOOD/BAD blocks; the edges count as BAD.

    GOOD...GOOD: all GOOD. BAD...BAD: all BAD. GOOD...BAD (either order): the
    NEAR_GOOD block closest to the BAD side delimits; blocks between it and BAD
    become BAD, all others GOOD; a run without NEAR_GOOD becomes BAD.
    """
    result = list(classes)
    n = len(result)
    i = 0
    while i < n:
        if result[i] is GOOD or result[i] is BAD:
            i += 1
            continue
        start = i
        while i < n and result[i] is not GOOD and result[i] is not BAD:
            i += 1
        end = i  # run is [start, end)
        before = result[start - 1] if start > 0 else BAD
        after = result[end] if end < n else BAD
        if before is after:
            for k in range(start, end):
                result[k] = before
            continue
        near_good = [k for k in range(start, end) if result[k] is NEAR_GOOD]
        if not near_good:
            for k in range(start, end):
                result[k] = BAD
            continue
        if before is BAD:
            delimiter = near_good[0]
            for k in range(start, end):
                result[k] = BAD if k < delimiter else GOOD
        else:
            delimiter = near_good[-1]
            for k in range(start, end):
                result[k] = BAD if k > delimiter else GOOD
    return result


def headings_post_pass(
    classes: Sequence[ParagraphClass],
    cf_classes: Sequence[ParagraphClass],
    headings: Sequence[bool],
    lengths: Sequence[int],
    params: JustextParams,
) -> list[ParagraphClass]:
    """Non-BAD (context-free) headings shortly before a GOOD block become GOOD.

    Not iterative: a heading made GOOD here does not help an earlier heading.
    """
    result = list(classes)
    if params.no_headings:
        return result
    for i, cls in enumerate(classes):
        if (
            cls is BAD
            and headings[i]
            and cf_classes[i] is not BAD
            and _followed_by_good(i, classes, lengths, params.max_heading_distance)
        ):
            result[i] = GOOD
    return result


def classify(
    features: Sequence[Features], params: JustextParams, *, reference: bool = False
) -> tuple[list[ParagraphClass], list[ParagraphClass]]:
    """All four phases; returns (context-free classes, final classes)."""
    cf_classes = classify_context_free(features, params, headline_rule=not reference)
    headings = [f.heading for f in features]
    lengths = [f.length for f in features]
    return cf_classes, revise(cf_classes, headings, lengths, params, reference=reference)


def revise(
    cf_classes: Sequence[ParagraphClass],
    headings: Sequence[bool],
    lengths: Sequence[int],
    params: JustextParams,
    *,
    reference: bool = False,
) -> list[ParagraphClass]:
    """The final classes from context-free ones: jusText's three later phases
    (heading pre-pass, context-sensitive pass, heading post-pass)."""
    if reference:
        # jusText 3.0.2 copies each block's class only as its loop reaches it,
        # so the pre-pass never sees a GOOD block ahead: it has no effect.
        revised = list(cf_classes)
    else:
        revised = headings_pre_pass(cf_classes, headings, lengths, params)
    final = classify_context_sensitive(revised)
    return headings_post_pass(final, cf_classes, headings, lengths, params)


# --------------------------------------------------------------------------- features


_HEADING_PATH = re.compile(r"\bh\d\b")


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
    copyright_code = "&copy" if reference else COPYRIGHT_CODE
    no_headings = params.no_headings
    features = [
        Features(
            length,
            links,
            links / length if length else 0.0,
            stops / count if count else 0.0,
            COPYRIGHT_CHAR in text or copyright_code in text,
            heading and not no_headings,
            headline,
            in_select,
            seg.images > 0 and not text,
        )
        for seg, text, length, links, stops, count, (heading, headline, in_select) in zip(
            segments, texts, lengths, link_chars, stop_counts, word_counts, path_flags, strict=False
        )
    ]
    cf_classes, final_classes = classify(features, params, reference=reference)
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


def clear_path_caches() -> None:
    """Forget the flags of every DOM path met so far: for benchmarks and tests."""
    _cached_reference_flags.cache_clear()
    _cached_seed_flags.cache_clear()


def _reference_path_flags(path: str) -> tuple[bool, bool, bool]:
    if len(path) > _CACHED_PATH_LENGTH:
        return _reference_flags(path)
    return _cached_reference_flags(path)


def _seed_path_flags(path: str) -> tuple[bool, bool, bool]:
    if len(path) > _CACHED_PATH_LENGTH:
        return _seed_flags(path)
    return _cached_seed_flags(path)


def context_free_class(
    p: Paragraph, params: JustextParams, *, copyright: bool = True
) -> ParagraphClass:
    """A block's context-free class again, from its features, under `params`
    (`copyright=False`: without the copyright rule)."""
    text = p.text
    features = Features(
        p.length,
        p.link_chars,
        p.link_density,
        p.stopword_density,
        copyright and (COPYRIGHT_CHAR in text or COPYRIGHT_CODE in text),
        p.heading,
        p.headline,
        p.in_select,
        p.image,
    )
    return classify_context_free([features], params)[0]

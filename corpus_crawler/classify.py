"""jusText classification (seed 000, "Classification" and "Headings").

Four pure phases over per-block features:
context-free -> headings pre-pass -> context-sensitive -> headings post-pass.
Each takes values and returns a new list of classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .config import JustextParams
from .model import ParagraphClass

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
    if reference:
        # jusText 3.0.2 copies each block's class only as its loop reaches it,
        # so the pre-pass never sees a GOOD block ahead: it has no effect.
        revised = list(cf_classes)
    else:
        revised = headings_pre_pass(cf_classes, headings, lengths, params)
    final = classify_context_sensitive(revised)
    final = headings_post_pass(final, cf_classes, headings, lengths, params)
    return cf_classes, final

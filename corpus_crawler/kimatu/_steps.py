"""The greedy, bootstrapping steps of seed 003, 3.4, one pure function each.

Each step takes the page's blocks and what earlier steps decided and returns
its own decisions; `run_steps` applies them in the seed's order: sure
candidates, function blocks, quotes, dispersed blocks, pruning, near blocks.
"""

from __future__ import annotations

import enum
import math
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ._blocks import Block, Ratios, SpanIndex
from ._lcs import lcs_length_masks, match_masks
from ._options import KimatuOptions
from ._segment import TextElement
from ._text import words


class Admission(enum.IntEnum):
    """How a block became a candidate (stored as a number in Paragraph.scores["admitted"])."""

    NONE = 0
    #: Relevance above `sure_candidate_relevance`.
    SURE = 1
    #: Same aspect as a near sure block, with a minimum relevance relative to it.
    DISPERSED = 2
    #: Near a candidate block with a minimum relevance (headers, short texts).
    NEAR = 3


class Rejection(enum.IntEnum):
    """Why a block was taken out (stored as a number in Paragraph.scores["rejected"])."""

    NONE = 0
    #: Its aspect's short elements share most of their words ("posted by X").
    FUNCTION = 1
    #: Its aspect's blocks mostly repeat an earlier sure block (forum quotes).
    QUOTE = 2
    #: Far from every other candidate, compared with the geometric mean distance.
    PRUNED = 3


@dataclass(frozen=True, slots=True)
class Decisions:
    """What the steps decided for every block (indexed by block id)."""

    admitted: tuple[Admission, ...]
    rejected: tuple[Rejection, ...]
    #: Extra numbers per block that decided it (shared-word share, LCS ratio, distances).
    evidence: tuple[Mapping[str, float], ...]

    def is_output(self, block_id: int) -> bool:
        return (
            self.admitted[block_id] is not Admission.NONE
            and self.rejected[block_id] is Rejection.NONE
        )


def sure_candidates(
    ratios: Sequence[Ratios], blocks: Sequence[Block], options: KimatuOptions
) -> set[int]:
    return {
        b.id
        for b, r in zip(blocks, ratios, strict=True)
        if b.selectable and r.relevance > options.sure_candidate_relevance
    }


def function_aspects(elements: Sequence[TextElement], options: KimatuOptions) -> dict[str, float]:
    """Aspects whose short elements share a high percentage of words, with that share."""
    by_aspect: dict[str, list[TextElement]] = defaultdict(list)
    for element in elements:
        by_aspect[element.aspect].append(element)
    found: dict[str, float] = {}
    for aspect, members in by_aspect.items():
        count = len(members)
        if count < max(2, options.function_min_elements):
            continue
        if sum(e.length for e in members) > options.function_max_average_length * count:
            continue
        word_lists = [words(e.text) for e in members]
        spread = Counter(w for found_words in word_lists for w in set(found_words))
        # A word is common when at least half of the elements (and two) contain it.
        common = max(2, math.ceil(count / 2))
        total = sum(len(ws) for ws in word_lists)
        if not total:
            continue
        shared = sum(1 for ws in word_lists for w in ws if spread[w] >= common) / total
        if shared >= options.function_shared_words:
            found[aspect] = shared
    return found


def _block_words(block: Block, elements: Sequence[TextElement], limit: int) -> list[str]:
    found: list[str] = []
    for index in block.members:
        if len(found) >= limit:
            break
        found.extend(words(elements[index].text, limit - len(found)))
    return found


def _words_before(
    block: Block,
    before: int,
    elements: Sequence[TextElement],
    cache: dict[int, list[str]],
    limit: int,
) -> list[str]:
    """The last `limit` words of `block`'s elements that come before element `before`.

    Blocks interleave (a thread's posts form one block around the quotes inside
    it), so "the reference appears before the quote" is decided element by element.
    """
    chunks: list[list[str]] = []
    total = 0
    for position in range(bisect_left(block.members, before) - 1, -1, -1):
        index = block.members[position]
        if index not in cache:
            cache[index] = words(elements[index].text, limit)
        chunks.append(cache[index])
        total += len(cache[index])
        if total >= limit:
            break
    found = [w for chunk in reversed(chunks) for w in chunk]
    return found[-limit:]


def quote_aspects(
    blocks: Sequence[Block],
    elements: Sequence[TextElement],
    references: Iterable[int],
    excluded: set[int],
    options: KimatuOptions,
) -> tuple[set[str], dict[int, float]]:
    """Aspects taken as quotes of earlier sure blocks, and each compared block's best LCS ratio.

    A block is compared with the text of every sure block of another aspect that
    comes before it; its LCS ratio is the share of its words that form a common
    subsequence with that text. Work is bounded: quotes are cut to
    `quote_max_words` words, references to the ten times as many words just
    before the quote, pairs whose shared vocabulary cannot reach the threshold
    are not aligned, and all comparisons together stop at `quote_budget` steps.
    """
    refs = sorted((blocks[i] for i in references), key=lambda b: b.start, reverse=True)
    if not refs:
        return set(), {}
    cache: dict[int, list[str]] = {}
    budget = options.quote_budget
    best_ratio: dict[int, float] = {}
    tested: Counter[str] = Counter()
    quoted: Counter[str] = Counter()
    threshold = options.quote_lcs_ratio
    reference_limit = 10 * options.quote_max_words
    for block in blocks:
        if budget <= 0:
            break
        if block.id in excluded or block.words < options.quote_min_words:
            continue
        earlier = [r for r in refs if r.start < block.start and r.aspect != block.aspect]
        budget -= len(refs)
        if not earlier:
            continue
        quote = _block_words(block, elements, options.quote_max_words)
        if len(quote) < options.quote_min_words:
            continue
        masks = match_masks(quote)
        best = 0.0
        for ref in earlier:
            if budget <= 0 or best >= threshold:
                break
            reference = _words_before(ref, block.start, elements, cache, reference_limit)
            vocabulary = set(reference)
            budget -= len(quote) + len(reference)
            # The LCS cannot exceed the quote words the reference contains at all.
            bound = sum(1 for w in quote if w in vocabulary) / len(quote)
            if bound < threshold or bound <= best:
                continue
            budget -= len(reference)
            best = max(best, lcs_length_masks(masks, len(quote), reference) / len(quote))
        best_ratio[block.id] = best
        tested[block.aspect] += 1
        if best >= threshold:
            quoted[block.aspect] += 1
    aspects = {a for a, n in tested.items() if quoted[a] / n > options.quote_class_share}
    return aspects, best_ratio


def dispersed_blocks(
    blocks: Sequence[Block],
    references: Sequence[Block],
    open_ids: set[int],
    relevance: Sequence[float],
    options: KimatuOptions,
) -> dict[int, tuple[float, bool]]:
    """Open blocks near a reference block of their aspect: id -> (relative relevance, admitted).

    The seed: "accept those that are near and have a minimum ratio with respect
    to the reference blocks of the same class (>0.1)". The ratio is the block's
    relevance over the best relevance of its aspect's reference blocks.
    """
    by_aspect: dict[str, list[Block]] = defaultdict(list)
    for block in references:
        by_aspect[block.aspect].append(block)
    indexes = {aspect: SpanIndex(members) for aspect, members in by_aspect.items()}
    best = {aspect: max(relevance[b.id] for b in members) for aspect, members in by_aspect.items()}
    found: dict[int, tuple[float, bool]] = {}
    for block in blocks:
        index = indexes.get(block.aspect)
        if index is None or block.id not in open_ids:
            continue
        distance = index.nearest(block)
        if distance is None or distance > options.dispersed_max_distance:
            continue
        relative = relevance[block.id] / best[block.aspect]
        found[block.id] = (relative, relative > options.dispersed_min_ratio)
    return found


def far_candidates(
    candidates: Sequence[Block], relevance: Sequence[float], options: KimatuOptions
) -> tuple[set[int], dict[int, int], float]:
    """Candidates to delete, each candidate's distance to its nearest one, and their mean.

    The mean is the geometric mean of (distance + 1), "free of influence from
    extreme cases"; a candidate is far when its distance + 1 exceeds
    `prune_far_factor` times it, and deleted unless its relevance is high.
    """
    if len(candidates) < 2:
        return set(), {}, 1.0
    index = SpanIndex(candidates)
    nearest = {b.id: index.nearest(b) or 0 for b in candidates}
    geometric = math.exp(sum(math.log1p(d) for d in nearest.values()) / len(nearest))
    far = {
        block_id
        for block_id, distance in nearest.items()
        if distance + 1 > options.prune_far_factor * geometric
        and relevance[block_id] <= options.prune_keep_relevance
    }
    return far, nearest, geometric


def near_blocks(
    blocks: Sequence[Block],
    candidates: Sequence[Block],
    open_ids: set[int],
    relevance: Sequence[float],
    options: KimatuOptions,
) -> dict[int, int]:
    """Open blocks near a candidate with the minimum relevance: id -> distance.

    One pass against the candidates as they stand: blocks admitted here are
    not references for further near blocks.
    """
    if not candidates:
        return {}
    index = SpanIndex(candidates)
    found: dict[int, int] = {}
    for block in blocks:
        if block.id not in open_ids or relevance[block.id] < options.near_min_relevance:
            continue
        distance = index.nearest(block)
        if distance is not None and distance <= options.near_max_distance:
            found[block.id] = distance
    return found


def run_steps(
    elements: Sequence[TextElement],
    blocks: Sequence[Block],
    ratios: Sequence[Ratios],
    options: KimatuOptions,
) -> Decisions:
    """The seed's greedy steps in order; each sees what the earlier ones decided."""
    count = len(blocks)
    admitted = [Admission.NONE] * count
    rejected = [Rejection.NONE] * count
    evidence: list[dict[str, float]] = [{} for _ in range(count)]
    relevance = [r.relevance for r in ratios]

    def candidates() -> list[Block]:
        return [
            b
            for b in blocks
            if admitted[b.id] is not Admission.NONE and rejected[b.id] is Rejection.NONE
        ]

    def open_ids() -> set[int]:
        """Blocks still free to be admitted: never admitted, never rejected."""
        return {
            b.id
            for b in blocks
            if b.selectable
            and admitted[b.id] is Admission.NONE
            and rejected[b.id] is Rejection.NONE
        }

    # 1. Filter by ratio.
    for block_id in sure_candidates(ratios, blocks, options):
        admitted[block_id] = Admission.SURE

    # 2. Delete function blocks.
    functions = function_aspects(elements, options)
    for block in blocks:
        if block.aspect in functions:
            rejected[block.id] = Rejection.FUNCTION
            evidence[block.id]["function_shared"] = functions[block.aspect]

    # 3. Delete quotes.
    references = [b.id for b in candidates()]
    excluded = {b.id for b in blocks if rejected[b.id] is not Rejection.NONE}
    quotes, lcs = quote_aspects(blocks, elements, references, excluded, options)
    for block_id, ratio in lcs.items():
        evidence[block_id]["quote_lcs"] = ratio
    for block in blocks:
        if block.aspect in quotes and rejected[block.id] is Rejection.NONE:
            rejected[block.id] = Rejection.QUOTE

    # 4. Detect dispersed blocks with the same aspect as the sure blocks.
    dispersed = dispersed_blocks(blocks, candidates(), open_ids(), relevance, options)
    for block_id, (relative, accepted) in dispersed.items():
        evidence[block_id]["dispersed_relative"] = relative
        if accepted:
            admitted[block_id] = Admission.DISPERSED

    # 5. Delete dispersed candidates.
    far, nearest, geometric = far_candidates(candidates(), relevance, options)
    for block_id, distance in nearest.items():
        evidence[block_id]["nearest_candidate"] = distance
        evidence[block_id]["geometric_mean_distance"] = geometric - 1
    for block_id in far:
        rejected[block_id] = Rejection.PRUNED

    # 6. Detect relevant blocks near candidate blocks.
    for block_id, distance in near_blocks(
        blocks, candidates(), open_ids(), relevance, options
    ).items():
        evidence[block_id]["nearest_candidate"] = distance
        admitted[block_id] = Admission.NEAR

    return Decisions(tuple(admitted), tuple(rejected), tuple(evidence))

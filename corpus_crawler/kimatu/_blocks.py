"""Blocks of same-aspect text elements and their four ratios (seed 003, 3.2 and 3.3).

A block is a run of text elements of one aspect where at most `block_gap`
other elements separate two consecutive members; two far-apart runs of one
aspect are two blocks of the same class. Distances between blocks count the
text elements between their spans (0 when the spans overlap or touch).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ._options import KimatuOptions
from ._segment import TextElement


@dataclass(frozen=True, slots=True)
class Ratios:
    """The seed's four ratios and the content relevance that combines them."""

    length: float
    average_length: float
    punctuation: float
    link_density: float
    relevance: float


@dataclass(frozen=True, slots=True)
class Block:
    id: int
    aspect: str
    #: Indices of its text elements, ascending.
    members: tuple[int, ...]
    length: int
    words: int
    boundaries: int
    links: int
    selectable: bool

    @property
    def start(self) -> int:
        return self.members[0]

    @property
    def end(self) -> int:
        return self.members[-1]

    @property
    def average_length(self) -> float:
        return self.length / len(self.members)


def detect_blocks(elements: Sequence[TextElement], options: KimatuOptions) -> tuple[Block, ...]:
    """Group elements of one aspect that lie near each other, in order of first element."""
    groups: list[list[int]] = []
    open_group: dict[str, int] = {}
    for element in elements:
        group = open_group.get(element.aspect)
        if group is not None and element.number - groups[group][-1] - 1 <= options.block_gap:
            groups[group].append(element.number)
        else:
            open_group[element.aspect] = len(groups)
            groups.append([element.number])
    blocks = []
    for number, members in enumerate(groups):
        chosen = [elements[i] for i in members]
        blocks.append(
            Block(
                id=number,
                aspect=chosen[0].aspect,
                members=tuple(members),
                length=sum(e.length for e in chosen),
                words=sum(e.word_count for e in chosen),
                boundaries=sum(e.boundary_count for e in chosen),
                links=sum(e.link_count for e in chosen),
                selectable=not any(e.in_select for e in chosen),
            )
        )
    return tuple(blocks)


def block_ratios(blocks: Sequence[Block], options: KimatuOptions) -> tuple[Ratios, ...]:
    """Each block's ratios; the two size ratios are relative to the page's biggest block."""
    if not blocks:
        return ()
    longest = max(b.length for b in blocks) or 1
    # Seed: "a previously fixed value as a possible maximum for the highest average
    # element size", so one giant element does not shrink every other block's ratio.
    highest_average = min(max(b.average_length for b in blocks), options.average_length_cap) or 1
    result = []
    for block in blocks:
        length = block.length / longest
        average = min(1.0, block.average_length / highest_average)
        per_word = block.boundaries / block.words if block.words else 0.0
        punctuation = min(1.0, per_word / options.punctuation_per_word)
        per_element = block.links / len(block.members)
        link_density = min(1.0, per_element / options.links_per_element)
        if options.links_per_word and block.words:
            # ten links in a 150-word paragraph is running text, not a link list
            link_density = min(link_density, block.links / block.words / options.links_per_word)
        relevance = (
            options.length_weight * length
            + options.average_length_weight * average
            - (1.0 - punctuation)
            - link_density
        )
        result.append(Ratios(length, average, punctuation, link_density, relevance))
    return tuple(result)


def block_distance(a: Block, b: Block) -> int:
    """Text elements strictly between the spans of two blocks (0 if they overlap)."""
    return max(0, max(a.start, b.start) - min(a.end, b.end) - 1)


class SpanIndex:
    """Nearest-block queries over a fixed set of blocks in O(log n) each."""

    def __init__(self, blocks: Sequence[Block]) -> None:
        ordered = sorted(blocks, key=lambda b: b.start)
        self._starts = [b.start for b in ordered]
        self._ids = [b.id for b in ordered]
        # For each prefix of `ordered`: the two furthest-reaching ends with their ids,
        # so a query can skip its own block.
        self._best: list[tuple[int, int]] = []
        self._second: list[tuple[int, int]] = []
        best = second = (-1, -1)
        for block in ordered:
            candidate = (block.end, block.id)
            if candidate > best:
                best, second = candidate, best
            elif candidate > second:
                second = candidate
            self._best.append(best)
            self._second.append(second)

    def __len__(self) -> int:
        return len(self._starts)

    def nearest(self, block: Block) -> int | None:
        """Distance from `block` to the nearest other indexed block; None if there is none."""
        distances = []
        after = bisect_right(self._starts, block.end)
        for position in range(after, len(self._ids)):
            if self._ids[position] != block.id:
                distances.append(self._starts[position] - block.end - 1)
                break
        if after:
            end, owner = self._best[after - 1]
            if owner == block.id:
                end, owner = self._second[after - 1]
            if owner >= 0:
                distances.append(max(0, block.start - end - 1))
        return min(distances) if distances else None

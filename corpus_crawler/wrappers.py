"""Layout wrappers named like asides (issue 13).

Themes name the column pair that holds a post and its sidebar after the sidebar:
`div.lay-sidebar`, `div.layout-container.has-sidebar`, `section.gallery--wrapper__with-sidebar`,
`div.container.penci_sidebar`, `div.above-footer`. Read as an aside, such a wrapper
takes the post out of the container scoring, and the furniture retry (which keeps
asides out) never brings it back: the page keeps a cookie notice or nothing.

What tells a wrapper from a sidebar is what it holds. A sidebar's text lives in its
widgets; a wrapper holds the real aside inside it *and* most of the page's running text
outside that aside. Here an element stating ASIDE by its names (not an `<aside>` or
`<footer>` element, and not a comment section) is a layout wrapper when another element
stating ASIDE lies inside it and the blocks for which it is the only furniture above
hold at least `WRAPPER_SHARE` of the page's good characters (jusText's context-free
class, headings aside) outside comment sections. Those blocks lose the furniture
marks it gave them. (The readers' comments are not counted: thechronicleherald.ca
holds its article and a thread of 7 comments, with nearly three times its text, in
`div#center.sidebar-left`, and kept nothing.) On a page
with no good block at all (a tutorial of short paragraphs between code listings, none
as long as jusText's `length_high`), its near-good blocks are its running text and
are weighed instead: statisticsglobe.com's `section.for_sidebar` kept two of the
tutorial's sentences, now all of it.

On the 2,594 pages of Dragnet, scrapinghub's set and trafilatura's evaluation pages,
17 elements pass the test, 13 of them column wrappers; the footers among them are
`<footer>` or `<aside>` elements, which the tag test leaves out. Without the test for
an aside inside, 15 more pass, and those are real sidebars beside a short post.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .elementmarks import ASIDE, ASIDE_ELEMENT, COMMENTS, SIDEBAR, UNLIKELY
from .model import Paragraph, ParagraphClass
from .segment import Segment, furniture

#: The share of the page's good characters a wrapper holds outside the asides in it
#: (more than any other element can then hold): not tuned.
WRAPPER_SHARE = 0.5
_FURNITURE = UNLIKELY | ASIDE | COMMENTS
_CLEARED = UNLIKELY | ASIDE | ASIDE_ELEMENT


def unwrapped(
    paragraphs: Sequence[Paragraph],
    marks: Sequence[int],
    chains: Sequence[tuple[tuple[str, int], ...]],
) -> list[int]:
    """`marks` (segment.furniture: per block) without the layout wrappers';
    `chains` are the blocks' Segment.stated, outermost first."""
    return _cleared(marks, layout_wrappers(paragraphs, marks, chains))


def _cleared(marks: Sequence[int], wrappers: Mapping[str, list[int]]) -> list[int]:
    """`marks` without the furniture marks the `wrappers` gave the blocks they alone
    furnish."""
    result = list(marks)
    for blocks in wrappers.values():
        for i in blocks:
            result[i] &= ~_CLEARED
    return result


def layout_wrappers(
    paragraphs: Sequence[Paragraph],
    marks: Sequence[int],
    chains: Sequence[tuple[tuple[str, int], ...]],
) -> dict[str, list[int]]:
    """The layout wrappers among the asides (xpath -> the blocks that have no other
    furniture above them, which lose its marks); the arguments as `unwrapped`'s."""
    nested: set[str] = set()  # candidates with another aside inside
    alone: dict[str, list[int]] = {}  # candidate -> the blocks it alone furnishes
    # the blocks under one element share its chain (one tuple): read each chain once
    read: dict[int, tuple[str | None, bool]] = {}
    for index, block_marks in enumerate(marks):
        if not block_marks & _FURNITURE:
            continue  # in no furniture: neither in a candidate nor in an aside inside one
        chain = chains[index]
        found = read.get(id(chain))
        if found is None:
            found = read[id(chain)] = _outer_candidate(chain)
        outer, is_alone = found
        if outer is None:
            continue
        if is_alone:
            alone.setdefault(outer, []).append(index)
        else:
            nested.add(outer)
    wrappers = [outer for outer in nested if outer in alone]
    if not wrappers:
        return {}  # most pages: no aside holds another one and text of its own
    # the readers' comments are not the page's running text: a wrapper of the
    # post and its comment thread holds most of the page's text outside them
    weighed = [p for p, m in zip(paragraphs, marks, strict=True) if not m & COMMENTS]
    weigh = _good
    total = sum(weigh(p) for p in weighed)
    if not total:
        # a page of short paragraphs (none reaches jusText's length_high): its
        # running text is the near-good prose
        weigh = _prose
        total = sum(weigh(p) for p in weighed)
    return {
        outer: alone[outer]
        for outer in wrappers
        if sum(weigh(paragraphs[i]) for i in alone[outer]) >= WRAPPER_SHARE * total > 0
    }


def _outer_candidate(chain: tuple[tuple[str, int], ...]) -> tuple[str | None, bool]:
    """The outermost furniture element above a block when it is a wrapper candidate
    (else None), and whether it is the only furniture above (else an aside lies
    between; a block under other furniture below it is neither)."""
    above = [(xpath, bits) for xpath, bits in chain if bits & _FURNITURE]
    # a candidate: an aside by its names, not an <aside>/<footer> element nor comments
    if not above or not above[0][1] & ASIDE or above[0][1] & (COMMENTS | ASIDE_ELEMENT):
        return None, False
    if len(above) == 1:
        return above[0][0], True
    if any(bits & ASIDE for _, bits in above[1:]):
        return above[0][0], False
    return None, False


def _good(paragraph: Paragraph) -> int:
    """A block's good characters: jusText's context-free GOOD, headings aside."""
    good = paragraph.cf_class is ParagraphClass.GOOD and not paragraph.heading
    return paragraph.length if good else 0


def _prose(paragraph: Paragraph) -> int:
    """A block's prose characters: context-free GOOD or NEAR_GOOD, headings aside."""
    prose = paragraph.cf_class in _PROSE and not paragraph.heading
    return paragraph.length if prose else 0


_PROSE = (ParagraphClass.GOOD, ParagraphClass.NEAR_GOOD)


def page_furniture(
    segments: Sequence[Segment], paragraphs: Sequence[Paragraph], unwrap: bool
) -> list[int]:
    """Per block, the furniture marks the presets' container pass takes
    (segment.furniture), without the layout wrappers' when `unwrap`
    (ContainerOptions.unwrap_layouts). `paragraphs` are the segments classified,
    one for one."""
    marks = furniture(segments)
    wrappers: dict[str, list[int]] = {}
    if unwrap:
        if len(paragraphs) != len(segments):
            raise ValueError(f"{len(paragraphs)} paragraphs for {len(segments)} blocks")
        wrappers = layout_wrappers(paragraphs, marks, [s.stated for s in segments])
        marks = _cleared(marks, wrappers)
    return sidebar_widgets(segments, marks, wrappers)


def sidebar_widgets(
    segments: Sequence[Segment], marks: list[int], wrappers: Mapping[str, object]
) -> list[int]:
    """`marks` with no COMMENTS mark on the blocks of a comment section inside a
    sidebar: a "recent comments" or "most commented" widget quotes other pages'
    threads (`div#sidebar > ul#latest_comments`), and this page's thread is not
    in its sidebar. The block's own marks say a sidebar is above it that no
    `<article>` ends (elementmarks.SIDEBAR); a sidebar that is a layout wrapper
    (`wrappers`: `div#center.sidebar-left` around the post and its thread) is
    none, and so is a sidebar inside the comment section (a thread's own column).
    The blocks stay furniture (UNLIKELY, ASIDE)."""
    for i, block_marks in enumerate(marks):
        if not block_marks & COMMENTS or not segments[i].marks & SIDEBAR:
            continue
        for xpath, bits in segments[i].stated:  # outermost first
            if bits & COMMENTS:
                break
            if bits & SIDEBAR and xpath not in wrappers:
                marks[i] = block_marks & ~COMMENTS
                break
    return marks

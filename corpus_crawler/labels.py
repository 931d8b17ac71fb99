"""Labels left dangling: a few words ending in a colon whose block is not kept, and
section headings over nothing kept (ContainerOptions.drop_dangling_labels); and the
title of a comment section (ContainerOptions.drop_comment_titles).

A label introduces what follows it: "Mehr zum Thema:", "Teilen Sie dies mit:",
"Related:", "责任编辑：". When the list, the share buttons or the name after it is
dropped (links, furniture), the label is kept alone by its good neighbour before it
or the container's lift, and reaches the corpus as a line that introduces nothing.
A sentence that ends in a colon and introduces a video or a table the page embeds
("To see the game in action, check out the video:") is no label: it has more words.

A section heading of as few words is the same kind of label ("Related Stories",
"Ähnliche Beiträge", "Das könnte Sie auch interessieren") when the block after it is
dropped and nothing is kept before the next heading: the section it names is all
dropped. The page's first `<h1>` is never one (the title heads the whole page);
a later `<h1>` is a section heading like the others (templates that head their
sidebar boxes with it: "Am meisten gelesen", "Letzte Kommentare", "Mehr zum
Thema"). Nor is a heading whose section keeps text after a dropped first block
(Wikipedia's "Main article: ..." line under a section title), nor one followed by a
kept subheading.
"""

from __future__ import annotations

from collections.abc import Sequence

from .classify import BAD, GOOD
from .elementmarks import COMMENTS
from .model import Paragraph, reclassified

__all__ = ["LABEL_WORDS", "comment_title_pass", "comment_titles", "dangling_labels", "label_pass"]

#: A label has at most this many words (separated by white space) ...
LABEL_WORDS = 6
#: ... and ends with a colon (the full-width one in Chinese and Japanese).
_COLONS = (":", "\uff1a")


def _short(p: Paragraph, length_low: int) -> bool:
    text = p.text.strip()
    return len(text) < length_low and len(text.split()) <= LABEL_WORDS


def dangling_labels(paragraphs: Sequence[Paragraph], length_low: int) -> list[bool]:
    """Per block: whether it is kept, short (at most `LABEL_WORDS` words and under
    `length_low` characters, jusText's line for a short block, which caps a label
    written without spaces), the next block that has text is not kept (or there is
    none), and it is either a label (it ends in a colon) or a section heading (a
    heading other than the page's first `<h1>`) with no kept block before the next
    heading."""
    out = [False] * len(paragraphs)
    title = next((i for i, p in enumerate(paragraphs) if p.headline and p.text.strip()), -1)
    following_kept = False  # whether the next block with text is kept
    section_kept = False  # whether a block after it, up to the next heading, is kept
    for i in range(len(paragraphs) - 1, -1, -1):
        p = paragraphs[i]
        if not p.text.strip():
            continue
        kept = p.final_class is GOOD
        if kept and not following_kept and _short(p, length_low):
            section = p.heading and i != title and not section_kept
            out[i] = section or p.text.rstrip().endswith(_COLONS)
        following_kept = kept
        section_kept = False if p.heading else section_kept or kept
    return out


def label_pass(paragraphs: Sequence[Paragraph], length_low: int) -> tuple[Paragraph, ...]:
    """`paragraphs` with the dangling labels (`dangling_labels`) made BAD, their
    context-free class kept. Run last: it reads the final classes of the blocks after
    each label."""
    return _made_bad(paragraphs, dangling_labels(paragraphs, length_low))


def comment_titles(
    paragraphs: Sequence[Paragraph], marks: Sequence[int], length_high: int
) -> list[bool]:
    """Per block: whether it is the kept title of a comment section ("11 Antworten zu
    ...", "Comments (87)", "Vos réactions"): the first block with text of a run of
    blocks inside a comment section (`marks`, per block, carry elementmarks.COMMENTS),
    when it is a kept heading shorter than `length_high` (jusText's line for a
    paragraph: a heading that long is text). The title names the thread; it is no
    comment, and the golds that keep comments leave it out. Only the first block: a
    thread written inside an unclosed heading element makes every comment a heading."""
    out = [False] * len(paragraphs)
    first = True  # no block with text seen yet in this run of comment blocks
    for i, (p, mark) in enumerate(zip(paragraphs, marks, strict=True)):
        if not mark & COMMENTS:
            first = True
            continue
        if not p.text or p.text.isspace():
            continue
        out[i] = first and p.heading and p.final_class is GOOD and len(p.text) < length_high
        first = False
    return out


def comment_title_pass(
    paragraphs: Sequence[Paragraph], marks: Sequence[int], length_high: int
) -> tuple[Paragraph, ...]:
    """`paragraphs` with the comment sections' titles (`comment_titles`) made BAD, their
    context-free class kept. Run after the passes that revise final classes but before
    `label_pass`, which reads them."""
    if not any(mark & COMMENTS for mark in marks):  # most pages: no comment section
        return tuple(paragraphs)
    return _made_bad(paragraphs, comment_titles(paragraphs, marks, length_high))


def _made_bad(paragraphs: Sequence[Paragraph], flags: Sequence[bool]) -> tuple[Paragraph, ...]:
    """`paragraphs` with the flagged blocks' final class BAD, their context-free class
    kept (the same tuple's blocks when none is flagged)."""
    if not any(flags):
        return tuple(paragraphs)
    return tuple(
        reclassified(p, p.cf_class, BAD) if flag else p
        for p, flag in zip(paragraphs, flags, strict=True)
    )

"""Seed 002, "Shake": post-order scores at block tags, and the Blessed/Keep override.

For every node the walk knows Link (the node or an ancestor is an <a>),
Words and LinkWords (words of its subtree outside and inside links), Tags
(opening tags in its subtree, its own included) and Keep (a descendant was
explicitly kept). At a block tag the score is

    Score = Words - 2*LinkWords - Tags      (weights from DeclutterOptions)

A non-negative score keeps the node and sets Keep, which travels up. A
negative score deletes the subtree unless Keep or Blessed protects it; its
counts still travel up "as if the node had not been removed", so each
decision is independent. Pruned subtrees are gone before shake and add
nothing to their ancestors.

Nothing is deleted here: the walk returns its decisions and `purify` drops
the subtrees afterwards, so the paragraphs can show what went and why.
"""

from __future__ import annotations

from typing import NamedTuple

from lxml import etree

from ._options import DeclutterOptions
from ._prune import match_text
from ._text import count_words


class Decision(NamedTuple):
    """The numbers one decision point saw, and what became of it."""

    words: int
    link_words: int
    tags: int
    score: float
    #: The Keep flag: kept on its score, a kept descendant, or Blessed.
    keep: bool
    #: The node or an ancestor matched a blessed word.
    blessed: bool
    #: Removed by prune (its numbers are then reported, not used).
    pruned: bool
    #: Removed by prune or by a negative score.
    removed: bool

    def as_scores(self) -> dict[str, float]:
        return {
            "words": float(self.words),
            "link_words": float(self.link_words),
            "tags": float(self.tags),
            "score": self.score,
            "keep": 1.0 if self.keep else 0.0,
            "blessed": 1.0 if self.blessed else 0.0,
            "pruned": 1.0 if self.pruned else 0.0,
        }


class _Counts:
    """Running totals of one open element."""

    __slots__ = ("blessed", "in_link", "keep", "link_words", "pruned", "tags", "words")

    def __init__(self, in_link: bool, blessed: bool, pruned: bool) -> None:
        self.words = 0
        self.link_words = 0
        self.tags = 1
        self.keep = False
        self.in_link = in_link
        self.blessed = blessed
        self.pruned = pruned

    def add_text(self, text: str, in_link: bool) -> None:
        if in_link:
            self.link_words += count_words(text)
        else:
            self.words += count_words(text)


def score_of(words: int, link_words: int, tags: int, options: DeclutterOptions) -> float:
    return (
        options.word_weight * words
        - options.link_word_weight * link_words
        - options.tag_weight * tags
    )


def is_blessed(el: etree._Element, options: DeclutterOptions) -> bool:
    """The override's decision function, applied at every node."""
    if not options.blessed_words:
        return False
    text = match_text(el, options.match_attributes)
    return bool(text) and options.blessed_pattern.search(text) is not None


def shake(
    root: etree._Element, pruned: set[etree._Element], options: DeclutterOptions
) -> dict[etree._Element, Decision]:
    """Decisions for the root, every block tag and every pruned root.

    A decision with `removed` set deletes its subtree (pruned roots included).
    """
    decisions: dict[etree._Element, Decision] = {}
    block_tags = options.block_tags
    min_score = options.min_score
    stack: list[_Counts] = []
    for event, el in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            parent = stack[-1] if stack else None
            if parent is None:
                in_link = el.tag == "a"
                counts = _Counts(in_link, is_blessed(el, options), False)
            else:
                in_link = parent.in_link or el.tag == "a"
                if parent.pruned or el in pruned:
                    counts = _Counts(in_link, False, True)
                else:
                    blessed = parent.blessed or is_blessed(el, options)
                    counts = _Counts(in_link, blessed, False)
            text = el.text
            if text:
                counts.add_text(text, in_link)
            stack.append(counts)
            continue

        counts = stack.pop()
        parent = stack[-1] if stack else None
        if counts.pruned:
            if parent is not None and not parent.pruned:  # the root of a pruned subtree
                score = score_of(counts.words, counts.link_words, counts.tags, options)
                decisions[el] = Decision(
                    counts.words, counts.link_words, counts.tags, score, False, False, True, True
                )
                tail = el.tail
                if tail:
                    parent.add_text(tail, parent.in_link)
                continue  # gone before shake: adds nothing to its ancestors
        else:
            if counts.blessed and (parent is None or not parent.blessed):
                counts.keep = True  # the blessed node itself: protects its ancestors
            if parent is None or el.tag in block_tags:
                score = score_of(counts.words, counts.link_words, counts.tags, options)
                removed = False
                if score >= min_score:
                    counts.keep = True
                elif not counts.keep and not counts.blessed and parent is not None:
                    removed = True
                decisions[el] = Decision(
                    counts.words,
                    counts.link_words,
                    counts.tags,
                    score,
                    counts.keep,
                    counts.blessed,
                    False,
                    removed,
                )
        if parent is not None:
            # Removed or not, the counts go up "as if the node had not been removed".
            parent.words += counts.words
            parent.link_words += counts.link_words
            parent.tags += counts.tags
            if counts.keep:
                parent.keep = True
            tail = el.tail
            if tail:
                parent.add_text(tail, parent.in_link)
    return decisions

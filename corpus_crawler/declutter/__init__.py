"""html-declutter (seed 002): prune, shake and purify an lxml tree.

`declutter(root)` takes a parsed, preprocessed `lxml.etree` tree (it changes
it in place) and returns the purified HTML together with every text block of
the page: the kept ones GOOD, the removed ones BAD, each with the numbers of
the decision that settled it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from ..model import Paragraph
from ._options import (
    DEFAULT_DECLUTTER_OPTIONS,
    DeclutterOptions,
    default_config_path,
    load_declutter_options,
)
from ._prune import prune
from ._purify import drop_subtrees, purify, serialize
from ._segment import segment
from ._shake import Decision, shake

__all__ = [
    "DEFAULT_DECLUTTER_OPTIONS",
    "Decision",
    "DeclutterOptions",
    "DeclutterResult",
    "declutter",
    "default_config_path",
    "load_declutter_options",
    "prune",
    "purify",
    "shake",
]


@dataclass(frozen=True, slots=True)
class DeclutterResult:
    #: Every text block in document order: kept ones GOOD, removed ones BAD.
    paragraphs: tuple[Paragraph, ...]
    #: The purified page, for offline reading.
    html: str


def declutter(
    root: etree._Element, options: DeclutterOptions = DEFAULT_DECLUTTER_OPTIONS
) -> DeclutterResult:
    """Run the three phases on `root` (modified in place)."""
    # Comments and processing instructions are not text, and lxml's walkers
    # skip them (losing their tails); the preprocessing usually removed them.
    etree.strip_tags(root, etree.Comment, etree.ProcessingInstruction)
    pruned = prune(root, options)
    decisions = shake(root, pruned, options)
    paragraphs, removed = segment(root, decisions, options)
    drop_subtrees(root, removed)
    purify(root, options)
    return DeclutterResult(paragraphs=paragraphs, html=serialize(root))

"""Seed 002, "Prune": a pre-order walk that cuts whole subtrees.

Each node is judged on its own tag and attributes, never on its position or
content. The tree is not changed here: the cut subtrees are returned, so the
later phases can still report their text as removed.
"""

from __future__ import annotations

from lxml import etree

from ._options import DeclutterOptions

# The page itself is not a part of it: WordPress and others put "comments-open"
# in <body class>, which would otherwise prune the whole document.
_NEVER_PRUNED = frozenset({"html", "body"})


def match_text(el: etree._Element, attributes: tuple[str, ...]) -> str:
    """The values of the attributes poison and blessed words are looked for in."""
    text = ""
    get = el.get
    for name in attributes:
        value = get(name)
        if value:
            text = f"{text} {value}" if text else value
    return text


def is_poisoned(el: etree._Element, options: DeclutterOptions) -> bool:
    """The prune decision function: a cut tag, or a poison word in class/id."""
    if el.tag in options.prune_tags:
        return True
    text = match_text(el, options.match_attributes)
    return bool(text) and options.poison_pattern.search(text) is not None


def prune(root: etree._Element, options: DeclutterOptions) -> set[etree._Element]:
    """The roots of the subtrees prune removes (never the root, <html> or <body>)."""
    pruned: set[etree._Element] = set()
    walker = etree.iterwalk(root, events=("start",))
    for _, el in walker:
        if el is not root and el.tag not in _NEVER_PRUNED and is_poisoned(el, options):
            pruned.add(el)
            # Pre-order: a cut subtree's descendants are never examined.
            walker.skip_subtree()
    return pruned

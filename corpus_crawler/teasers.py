"""Teasers: the summaries of other stories that portals set beside an article
(a linked headline and its summary, in a list item, a repeated template or a
description list). The `article` presets' main region does not climb over them
(ContainerOptions.region_stops_at_teasers, repeated_teasers, described_teasers)."""

from __future__ import annotations

from collections.abc import Sequence

from .model import Paragraph
from .xpaths import last_tag


def teaser_blocks(
    paragraphs: Sequence[Paragraph],
    max_link_density: float,
    repeated: bool = False,
    described: bool = False,
) -> tuple[list[bool], frozenset[str]]:
    """Per block, whether it is a teaser, and the linked items.

    A linked list item is the innermost `<li>` of a block over `max_link_density`
    (a linked headline); a teaser is a block within that density whose innermost
    `<li>` is a linked one: the summary under a headline in a portal's list of
    other articles. (A how-to's steps are list items without linked headlines.)
    With `repeated`, the items of a repeated template are linked items too
    (`repeated_items`: portals that write their lists as `<div>`s), and every block
    within that density in one is a teaser. With `described`, a `<dd>` within that
    density right after a `<dt>` over it is a teaser, and its `<dl>` a linked item
    (`described_terms`)."""
    items = [_innermost_item(p.xpath) for p in paragraphs]
    linked = frozenset(
        item
        for p, item in zip(paragraphs, items, strict=True)
        if item is not None and p.link_density > max_link_density
    )
    teaser = [
        item is not None and item in linked and p.link_density <= max_link_density
        for p, item in zip(paragraphs, items, strict=True)
    ]
    if repeated:
        templated = repeated_items(paragraphs, max_link_density)
        if templated:
            prefixes = tuple(item + "/" for item in templated)
            teaser = [
                t or (p.link_density <= max_link_density and p.xpath.startswith(prefixes))
                for p, t in zip(paragraphs, teaser, strict=True)
            ]
            linked |= templated
    if described:
        terms, lists = described_terms(paragraphs, max_link_density)
        if lists:
            teaser = [t or d for t, d in zip(teaser, terms, strict=True)]
            linked |= lists
    return teaser, linked


def described_terms(
    paragraphs: Sequence[Paragraph], max_link_density: float
) -> tuple[list[bool], frozenset[str]]:
    """Per block, whether it is the description of a linked term, and the
    description lists that hold one: a `<dd>` block within `max_link_density`
    right after a `<dt>` block over it in the same `<dl>` (vz.ru and cbc.ca list
    their other stories so: the linked headline as the term, its summary as the
    description)."""
    flags = [False] * len(paragraphs)
    lists: set[str] = set()
    for i in range(1, len(paragraphs)):
        p, term = paragraphs[i], paragraphs[i - 1]
        cut = p.xpath.rfind("/dd[")
        if cut < 0 or p.link_density > max_link_density:
            continue
        term_cut = term.xpath.rfind("/dt[")
        if term_cut != cut or term.xpath[:cut] != p.xpath[:cut]:
            continue
        if term.link_density > max_link_density:
            flags[i] = True
            lists.add(p.xpath[:cut])
    return flags, frozenset(lists)


#: How many sibling items make a repeated template (a list, not a pair).
REPEATED_ITEMS = 3
#: How far above its linked heading an item of a repeated template may be.
_ITEM_LEVELS = 3


def repeated_items(paragraphs: Sequence[Paragraph], max_link_density: float) -> frozenset[str]:
    """The items of the page's repeated templates: for a linked heading (a heading
    block over `max_link_density`), its ancestor one to `_ITEM_LEVELS` elements up
    is an item when at least `REPEATED_ITEMS` siblings of that ancestor's tag hold a
    linked heading at the same path below them (ria.ru's `div.list_item > div >
    div > h3 > a`). Each heading takes the nearest level at which its group is that
    large. A breadcrumb or an article's linked title is not repeated."""
    left = [p.xpath for p in paragraphs if p.heading and p.link_density > max_link_density]
    found: set[str] = set()
    for up in range(1, _ITEM_LEVELS + 1):
        groups: dict[tuple[str, str, str], dict[str, str]] = {}
        for xpath in left:
            steps = xpath.split("/")
            if len(steps) <= up + 2:  # the item would be <body> or above
                continue
            cut = len(steps) - up
            item = "/".join(steps[:cut])
            key = ("/".join(steps[: cut - 1]), last_tag(steps[cut - 1]), "/".join(steps[cut:]))
            groups.setdefault(key, {})[item] = xpath
        taken: set[str] = set()
        for members in groups.values():
            if len(members) >= REPEATED_ITEMS:
                found.update(members)
                taken.update(members.values())
        left = [x for x in left if x not in taken]
    return frozenset(found)


def _innermost_item(xpath: str) -> str | None:
    at = xpath.rfind("/li[")
    return None if at < 0 else xpath[: xpath.index("]", at) + 1]


def mostly_teasers(
    paragraphs: Sequence[Paragraph],
    teasers: Sequence[bool],
    max_link_density: float,
    parent: str,
    region: str,
) -> bool:
    """Whether the prose `parent` adds to `region` (its blocks within
    `max_link_density` that are not in `region`) is more than half teasers, by
    characters."""
    teaser_chars = other_chars = 0
    below_parent, below_region = parent + "/", region + "/"
    for p, is_teaser in zip(paragraphs, teasers, strict=True):
        x = p.xpath
        if p.link_density > max_link_density or not (x == parent or x.startswith(below_parent)):
            continue
        if x == region or x.startswith(below_region):
            continue
        if is_teaser:
            teaser_chars += p.length
        else:
            other_chars += p.length
    return 2 * teaser_chars > teaser_chars + other_chars

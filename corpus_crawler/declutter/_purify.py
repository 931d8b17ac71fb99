"""Seed 002, "Purify": approved tags keep approved attributes; the rest is flattened.

All text that survived prune and shake is kept. Removal and flattening go
through lxml's C-level `strip_elements` / `strip_tags` on a marker tag, so
tails are preserved and no Python string grows once per removed node.
"""

from __future__ import annotations

import contextlib

from lxml import etree

from ._options import DeclutterOptions

_MARK = "corpus-crawler-declutter"


def _marker(root: etree._Element, base: str) -> str:
    """A tag name the page itself does not use."""
    name = base
    suffix = 0
    while next(root.iter(name), None) is not None:
        suffix += 1
        name = f"{base}-{suffix}"
    return name


def drop_subtrees(root: etree._Element, removed: list[etree._Element]) -> None:
    """Delete the given subtrees, keeping the text that follows each of them."""
    if not removed:
        return
    mark = _marker(root, _MARK + "-drop")
    for el in removed:
        if el is root:
            root.clear()
            return
        el.tag = mark
    etree.strip_elements(root, mark, with_tail=False)


def purify(root: etree._Element, options: DeclutterOptions) -> None:
    """Flatten unapproved tags and strip unapproved attributes, in place."""
    approved = options.approved
    breaks = options.block_tags | options.paragraph_tags
    mark = _marker(root, _MARK + "-flat")
    etree.strip_tags(root, etree.Comment, etree.ProcessingInstruction)
    flattened = 0
    for el in root.iter(etree.Element):
        tag = el.tag
        allowed = approved.get(tag)
        if allowed is None:
            allowed = frozenset()
            if el is not root:
                if tag in breaks:
                    _separate(el)
                el.tag = mark
                flattened += 1
        attrib = el.attrib
        unwanted = [name for name in attrib if name not in allowed]
        if unwanted:
            _drop_attributes(attrib, unwanted, allowed)
    if flattened:
        etree.strip_tags(root, mark)


def _separate(el: etree._Element) -> None:
    """A flattened block still keeps its text apart from its neighbours' text."""
    try:
        el.text = "\n" + (el.text or "")
        el.tail = "\n" + (el.tail or "")
    except ValueError:
        pass  # text lxml will not store back (control characters): leave it as it is


def _drop_attributes(attrib: etree._Attrib, unwanted: list[str], allowed: frozenset[str]) -> None:
    try:
        for name in unwanted:
            del attrib[name]
    except ValueError:
        # A name lxml refuses to look up (binary garbage): rebuild from the allowed ones.
        kept = [(name, value) for name in allowed if (value := attrib.get(name)) is not None]
        attrib.clear()
        for name, value in kept:
            with contextlib.suppress(ValueError):  # a value lxml will not store back
                attrib[name] = value


def serialize(root: etree._Element) -> str:
    """The purified page as an HTML document that declares its encoding."""
    if root.tag == "html" and root.find("head") is None:
        head = etree.Element("head")
        etree.SubElement(head, "meta", charset="utf-8")
        root.insert(0, head)
    return "<!DOCTYPE html>\n" + etree.tostring(root, method="html", encoding="unicode")

"""What an element's attributes say about the text inside it (issue 13).

Three marks, read from the attributes during the one segmentation walk (the
compiled walk calls `element_marks` only for elements that carry one of
`MARKED_ATTRIBUTES`, and caches the answer per attribute set):

- HIDDEN: a browser does not show it (`hidden`, `aria-hidden="true"`, an inline
  style with `display: none` or `visibility: hidden`), as readability.js's
  `_isProbablyVisible` decides, or it is a NOSCRIPT element, which a browser
  running scripts never shows (readability removes them). Text nobody sees is
  not the page's text.
- UNLIKELY: its class or id names page furniture (comments, footers, menus,
  sidebars, share and related-post boxes...) and nothing that names content,
  or its ARIA role is navigation, a menu, a dialog or complementary content.
  These are readability.js's `unlikelyCandidates` / `okMaybeItsACandidate`
  patterns and its role list, not tuned here: readability removes such
  elements before it looks for the article, and the presets leave their
  blocks out of the main-container scoring (configs/extractors/presets.yaml).

- ASIDE: furniture that is never the article: a comment section, a sidebar or
  a footer. Its class or id begins or ends with one of the words comment,
  comments, commentlist, disqus, replies, sidebar or footer (the name split
  at every character that is not a letter or digit: "comments-area",
  "js_replies", "primary-sidebar", "site-footer"); a word inside a longer name
  names a layout, not the element ("panel-two-col-sidebar-right-mix"), a word
  that contains one is another word ("commented"), and a URL used as an id is
  no name. The `corpus` and `article` presets keep asides out of the container
  even when they choose again with the furniture
  (ContainerOptions.retry_keeps_asides_out).

A block carries the marks of its element and of every ancestor.

One more attribute is read by the walk when a preset asks (`page_links_only`):
whether an <a> links to a page at all (`links_elsewhere`).
"""

from __future__ import annotations

import functools
import re

HIDDEN = 1
UNLIKELY = 2
ASIDE = 4

#: Attributes the walk reads; an element with none of them (and not NOSCRIPT) has no marks.
MARKED_ATTRIBUTES = ("class", "id", "role", "hidden", "aria-hidden", "style")

# readability.js REGEXPS.unlikelyCandidates and okMaybeItsACandidate: plain
# substrings, matched case-blind. Substring tests on the lowered names are ~10x
# faster than the equivalent case-blind regex alternation (which tried every
# word at every position), and the walk asks for every element with a class.
_UNLIKELY_WORDS = (
    "-ad-", "ai2html", "banner", "breadcrumbs", "combx", "comment", "community",
    "cover-wrap", "disqus", "extra", "footer", "gdpr", "header", "legends", "menu",
    "related", "remark", "replies", "rss", "shoutbox", "sidebar", "skyscraper", "social",
    "sponsor", "supplemental", "ad-break", "agegate", "pagination", "pager", "popup",
    "yom-remote",
)  # fmt: skip
_MAYBE_CONTENT_WORDS = ("and", "article", "body", "column", "content", "main", "shadow")
# readability.js UNLIKELY_ROLES
_UNLIKELY_ROLES = frozenset(
    ("menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog")
)
_ASIDE_WORDS = frozenset(
    ("comment", "comments", "commentlist", "disqus", "replies", "footer", "sidebar")
)
_NAME_PARTS = re.compile(r"[^a-z0-9]+")
# The page itself and links are never furniture (readability skips body and a).
_NEVER_UNLIKELY = frozenset(("html", "body", "a"))


@functools.lru_cache(maxsize=8192)
def _furniture_names(names: str) -> bool:
    """Do class and id name page furniture and nothing that may be content?"""
    lowered = names.lower()
    return any(word in lowered for word in _UNLIKELY_WORDS) and not any(
        word in lowered for word in _MAYBE_CONTENT_WORDS
    )


@functools.lru_cache(maxsize=8192)
def _aside_names(names: str) -> bool:
    """Do these furniture names begin or end with a word of an aside (ASIDE)?"""
    for token in names.lower().split():
        if "://" in token:
            continue
        parts = [part for part in _NAME_PARTS.split(token) if part]
        if parts and (parts[0] in _ASIDE_WORDS or parts[-1] in _ASIDE_WORDS):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _hiding_style(style: str) -> bool:
    compact = "".join(style.split()).lower()
    return "display:none" in compact or "visibility:hidden" in compact


def element_marks(
    tag: str,
    class_name: str | None,
    element_id: str | None,
    role: str | None,
    hidden: str | None,
    aria_hidden: str | None,
    style: str | None,
) -> int:
    """HIDDEN | UNLIKELY bits of one element from its tag and attribute values
    (None: the attribute is absent)."""
    marks = 0
    if (
        tag == "noscript"
        or hidden is not None
        or (aria_hidden is not None and aria_hidden.strip().lower() == "true")
        or (style is not None and _hiding_style(style))
    ):
        marks |= HIDDEN
    if tag not in _NEVER_UNLIKELY:
        names = f"{class_name or ''} {element_id or ''}" if class_name or element_id else ""
        if names and _furniture_names(names):
            marks |= UNLIKELY
            if _aside_names(names):
                marks |= ASIDE
        elif role is not None and role.strip().lower() in _UNLIKELY_ROLES:
            marks |= UNLIKELY
    return marks


def links_elsewhere(href: str | None) -> bool:
    """Does an <a> with this href link to a page? Not without an href (a named
    anchor), with an empty one or "#" (a script's click target), or with a
    `javascript:` action: their text is what the reader reads, not the label of
    a way out (readability.js replaces such links by their text)."""
    if href is None:
        return False
    href = href.strip()
    if not href or href == "#":
        return False
    return href[:11].lower() != "javascript:"

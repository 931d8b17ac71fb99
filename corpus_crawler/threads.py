"""Reader threads that an article's region does not climb into (issue 13).

`container.main_region` climbs from the main container until it holds half the
page's points, for articles spread over sibling wrappers. Beside a short article,
a long thread of reader comments holds most of the points, and the climb takes
the whole thread in when nothing names it as comments (wp.pl calls its section
"opinie", in no comment-word list: `elementmarks`). A thread has a shape in any
language: posts, each a wrapper of its own, with a body and a short header
(author, date, reply link) at paths repeated from post to post, none of them the
container's own kind of block. An article split over wrappers repeats the
container's paths; sibling paragraphs of one wrapper are one post, not a thread.
The header states when the post was written, in digits in any language (`DATED`);
an accordion of sections or a how-to's steps have the same shape under titles
that state no time, and the region climbs over them as before (trafilatura's
evaluation pages: dvgw.de's sections, a shop's product tabs, a speedway report's
heat results).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model import Paragraph
from .xpaths import parent_of

__all__ = ["DATED", "adds_a_thread", "section_front_item"]

#: Wrappers a post's paths repeat under before they are a thread (as
#: teasers.REPEATED_ITEMS: a list, not a pair).
THREAD_POSTS = 3
#: A post's block under this many characters is its header (author, date, reply).
HEADER_CHARS = 60
#: A time or a date in digits, as a post's header states when it was written in any
#: language: a clock time (12:31, 9:49pm, the French 11h13), a date of three numbers
#: (2012-01-24, 12.01.12, 24/1/2012) or a year (2019). What an accordion's or a
#: how-to's section titles ("Stufe 1", "1 : 5", "5.00/ 1") lack.
DATED = re.compile(
    r"(?<!\d)(?:\d{1,2}[:h]\d{2}(?!\d)"
    r"|\d{1,4}[./-]\d{1,2}[./-]\d{2,4}(?!\d)"
    r"|(?:19|20)\d{2}(?!\d))"
)
#: Steps at the end of the container's path in which an `<li>` or `<article>`
#: makes the container one item of a section front (readability's nytimes-5: the
#: page is its teasers, and the region climbs over them as before).
_ITEM_STEPS = 4


def section_front_item(container: str) -> bool:
    """Whether the container is one item of a list of items (an `<li>` or
    `<article>` among the last `_ITEM_STEPS` steps of its path)."""
    return any(step.startswith(("li[", "article[")) for step in container.split("/")[-_ITEM_STEPS:])


def adds_a_thread(
    paragraphs: Sequence[Paragraph],
    max_link_density: float,
    min_article_chars: int,
    containers: Sequence[str],
    region: str,
    parent: str,
) -> bool:
    """Whether climbing from `region` to `parent` adds mostly a reader thread.

    `containers`: the main container first, then the siblings that joined it. The
    added blocks are those below `parent` and not below `region`; a post's path is
    a path (`Paragraph.dom_path`) that the containers hold no block at and that the
    added blocks repeat under at least `THREAD_POSTS` distinct wrappers. It is a
    thread when the posts have a header (a post's path whose blocks are all under
    `HEADER_CHARS` and state a time or date, `DATED`, in more than half of its
    wrappers and in at least `THREAD_POSTS`) and a body (one with a longer block),
    and hold more than half of the added prose (blocks within `max_link_density`, by
    characters). Never for a main container that is one item of a section front, nor
    for containers holding less than `min_article_chars` of prose: a thread beside no
    article of its own is the page (a forum's, whose container was a side box)."""
    if not containers or section_front_item(containers[0]):
        return False
    exact, prefixes = frozenset(containers), tuple(c + "/" for c in containers)
    below_parent, below_region = parent + "/", region + "/"
    own: set[str] = set()
    article_chars = 0
    for p in paragraphs:
        if p.xpath in exact or p.xpath.startswith(prefixes):
            own.add(p.dom_path)
            if p.link_density <= max_link_density:
                article_chars += p.length
    if article_chars < min_article_chars:
        return False
    added = [
        p
        for p in paragraphs
        if p.length
        and (p.xpath == parent or p.xpath.startswith(below_parent))
        and not (p.xpath == region or p.xpath.startswith(below_region))
    ]
    wrappers: dict[str, set[str]] = {}
    dated: dict[str, set[str]] = {}
    longest: dict[str, int] = {}
    for p in added:
        if p.dom_path not in own:
            wrapper = parent_of(p.xpath)
            wrappers.setdefault(p.dom_path, set()).add(wrapper)
            if DATED.search(p.text):
                dated.setdefault(p.dom_path, set()).add(wrapper)
            longest[p.dom_path] = max(longest.get(p.dom_path, 0), p.length)
    repeated = {path for path, held in wrappers.items() if len(held) >= THREAD_POSTS}
    headers = any(
        longest[path] < HEADER_CHARS
        and len(dated.get(path, ())) >= THREAD_POSTS
        and 2 * len(dated[path]) > len(wrappers[path])
        for path in repeated
    )
    bodies = any(longest[path] >= HEADER_CHARS for path in repeated)
    if not (headers and bodies):
        return False
    prose = [p for p in added if p.link_density <= max_link_density]
    posts = sum(p.length for p in prose if p.dom_path in repeated)
    return 2 * posts > sum(p.length for p in prose)

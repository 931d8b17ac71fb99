"""The article's standfirst: the prose between the page's title and its body,
which news templates set beside the <h1>, outside the main container
(ContainerOptions.standfirst_levels, standfirst_named)."""

from __future__ import annotations

from collections.abc import Sequence

from .classify import (
    GOOD,
    NEAR_GOOD,
    context_free_class,
)
from .config import JustextParams
from .elementmarks import ASIDE
from .model import Paragraph, reclassified
from .xpaths import shared_steps

#: An <h1> mostly link text names the site (a link to its home page), not the article.
_TITLE_LINKS = 0.5
#: Blocks inside a figure are its caption and credits, not the article's opening.
_FIGURE_STEPS = ("/figure[", "/figcaption[")


def standfirst_pass(
    paragraphs: Sequence[Paragraph],
    params: JustextParams,
    levels: int,
    unlikely: Sequence[int] | None = None,
    leads: Sequence[tuple[str, ...]] | None = None,
) -> tuple[Paragraph, ...]:
    """The article's standfirst (lead, summary, "chapo", perex): the prose
    between the page's title and the body. News and magazine templates set it
    beside the <h1>, in the article's header, and the main container holds the
    body only, so it was left out with the header's byline and share buttons.

    Between the page's first <h1> and the first block kept after it (not a
    heading), a block is kept when jusText's context-free rules find it
    NEAR_GOOD or GOOD (sentences with stop words, few links: a byline, a date
    or a share bar is not), it is not in a sidebar, footer or comment section
    (elementmarks.ASIDE in `unlikely`; a header readability calls unlikely,
    "m-intro-header", is where standfirsts are), and it sits near the title:
    its common ancestor with the <h1> is at most `levels` elements above the
    <h1>. The title is the first <h1> that is not mostly a link: a blog's <h1>
    is its name, linked to its home page, above a tagline. And the author's
    blurb in the column beside a post lies between the title and the post in
    the page's order, but their common ancestor is the page's layout.

    A block inside a <figure> is its caption, not a standfirst. jusText's walk
    does not know <figure> as a block, though: a caption written straight into
    <figcaption> is part of the block of the element around the figure, and
    is let in when that block passes.

    With `leads` (per block, the elements above it named as a lead:
    segment.lead_elements), a block farther from the title is let in too when
    such an element that does not hold the title is above it, as long as the
    page names one element so (an article has one standfirst; a name repeated
    over several elements names teasers of other stories). And a block the
    body's first kept block begins with is not let in: some templates print the
    standfirst again as the body's first paragraph.
    """
    title = next(
        (i for i, p in enumerate(paragraphs) if p.headline and p.link_density <= _TITLE_LINKS), None
    )
    if title is None:
        return tuple(paragraphs)
    body = next(
        (
            i
            for i in range(title + 1, len(paragraphs))
            if paragraphs[i].final_class is GOOD and not paragraphs[i].heading
        ),
        None,
    )
    if body is None or body == title + 1:
        return tuple(paragraphs)
    title_path = paragraphs[title].xpath
    title_steps = title_path.split("/")
    out = list(paragraphs)
    named: dict[int, str] = {}  # block -> the lead element that alone lets it in
    # a page that repeats its standfirst as the body's first paragraph says it once
    opening = " ".join(paragraphs[body].text.split())
    for i in range(title + 1, body):
        p = out[i]
        if p.heading or not p.text or (unlikely is not None and unlikely[i] & ASIDE):
            continue
        if opening.startswith(" ".join(p.text.split())):
            continue
        if any(step in p.xpath for step in _FIGURE_STEPS):
            continue
        if context_free_class(p, params) not in (GOOD, NEAR_GOOD):
            continue
        # how many elements above the title its common ancestor with the block is
        steps = p.xpath.split("/")
        if len(title_steps) - shared_steps(title_steps, steps) <= levels:
            out[i] = reclassified(p, GOOD, GOOD)
        elif leads is not None:
            lead = _named_lead(leads[i], title_path)
            if lead is not None:
                named[i] = lead
    # an article has one standfirst: a name over several elements names teasers
    if named and len(set(named.values())) == 1:
        for i in named:
            out[i] = reclassified(out[i], GOOD, GOOD)
    return tuple(out)


def _named_lead(leads: Sequence[str], title: str) -> str | None:
    """The innermost of these lead elements (xpaths, outermost first) that does not
    hold the title (None: none)."""
    for x in reversed(leads):
        if title != x and not title.startswith(x + "/"):
            return x
    return None

"""The main container: the element readability would pick as the article, and how
it moves jusText's classes in the `corpus`, `article` and `article-comments`
presets (`container_pass`, and `preset_passes`, which runs it with the standfirst
and program-code passes)."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any, NamedTuple

from .classify import (
    BAD,
    COPYRIGHT_CHAR,
    COPYRIGHT_CODE,
    GOOD,
    NEAR_GOOD,
    SHORT,
    context_free_class,
    revise,
)
from .config import ConfigError, JustextParams
from .elementmarks import ASIDE, BODY, CLASS_WEIGHT, COMMENTS, NEGATIVE, UNLIKELY, WEIGHED_TAGS
from .figures import figure_pass
from .labels import comment_title_pass, label_pass
from .model import Paragraph, ParagraphClass, reclassified
from .option_checks import (
    built,
    check_keys,
    check_switches,
    class_steps,
    number,
    share,
    whole_number,
)
from .program_code import code_pass
from .standfirst import standfirst_pass
from .teasers import mostly_teasers, teaser_blocks
from .threads import adds_a_thread
from .xpaths import last_tag, parent_of, shared_steps, within_any

_fast: ModuleType | None
try:  # the compiled twin of container_pass (corpus_crawler/_classify_fast.pyx)
    from . import _classify_fast as _fast
except ImportError:  # pragma: no cover - no compiler where it was installed
    _fast = None


# The `corpus` and `article` presets add one piece of evidence to jusText's
# context-free classes: whether a block lies in the page's main container, the
# element that readability (Arc90's algorithm, as readability.js and
# readability-lxml still run it) would pick. It is found from the blocks the
# one segmentation walk already made (their xpaths, lengths and link
# characters), so it costs no second walk over the tree.

#: Commas: readability scores a block a point each. readability.js's list (its
#: REGEXPS.commas): Latin, Arabic, small, vertical, reversed, raised, turned and
#: full-width. Not the ideographic comma (U+3001), which separates the items of an
#: enumeration ("A、B、C"), and a site's keyword list, more than clauses.
_COMMAS = (",", "\u060c", "\ufe50", "\ufe10", "\ufe11", "\u2e41", "\u2e34", "\u2e32", "\uff0c")


@dataclass(frozen=True, slots=True)
class ContainerOptions:
    """How the main container is found and how it moves jusText's classes.

    The scoring constants are readability's own (readability.js
    `_grabArticle`), not tuned here; the two shifts are what the presets tune
    (configs/extractors/presets.yaml holds the measurements).
    """

    #: Blocks shorter than this score nothing (readability: 25 characters).
    min_block_length: int = 25
    #: One point per this many characters, at most `max_length_points`.
    length_per_point: int = 100
    max_length_points: int = 3
    #: Share of a block's score its grandparent gets (the parent gets it all).
    grandparent_share: float = 0.5
    #: Siblings of the best container join it at this share of its score...
    sibling_share: float = 0.2
    #: ...and at least this score.
    sibling_min_score: float = 10.0
    #: Blocks inside with more link characters than this are not promoted
    #: (readability's conditional cleaning drops such weighty blocks).
    max_link_density: float = 0.5
    #: The region: the container's nearest ancestor (or itself) holding at least
    #: this share of the points of all blocks of the page (0: the container itself).
    #: It catches articles whose paragraphs are spread over sibling wrappers.
    region_share: float = 0.5
    #: The region does not climb to an ancestor whose added prose is mostly teasers
    #: (`teaser_blocks`: the text of list items that also hold a linked headline, a
    #: portal's lists of other articles), unless the container itself lies in such
    #: an item (a section front, a page that is its teasers).
    region_stops_at_teasers: bool = False
    #: Teasers outside lists too: the prose of items of a repeated template, at
    #: least `REPEATED_ITEMS` sibling elements of one tag that each hold a linked
    #: heading at the same place below them (`repeated_items`).
    repeated_teasers: bool = False
    #: Teasers in description lists too: a `<dd>` right after a linked `<dt>`
    #: describes that term, as a summary does its headline (`described_teasers`).
    described_teasers: bool = False
    #: The region does not climb to an ancestor whose added prose is mostly a reader
    #: thread that nothing names as comments: posts' bodies and headers (which state
    #: a time or date) at paths repeated under >= 3 wrappers, none of them the
    #: container's (`threads.adds_a_thread`), unless the container is one item of a
    #: section front or holds less than `min_container_chars` of prose (then the
    #: thread is the page).
    region_stops_at_threads: bool = False
    #: Class steps (on BAD < SHORT < NEAR_GOOD < GOOD) for blocks inside the
    #: container, inside the region but not the container, and outside both.
    inside_shift: int = 0
    region_shift: int = 0
    outside_shift: int = 0
    #: Class steps for a block outside the container and region that lies in a
    #: reader's comment section (elementmarks.COMMENTS), instead of
    #: `outside_shift` (None: as any block outside). The `article-comments`
    #: preset keeps an article's comment thread: 0 judges it as jusText does.
    comment_shift: int | None = None
    #: Class steps added to `outside_shift` for a block outside the container and
    #: region that lies in page furniture (elementmarks.UNLIKELY: sidebars,
    #: footers, menus, share and related boxes) and not in a comment section
    #: (see `outside_steps`).
    furniture_shift: int = 0
    #: Blocks a browser does not show (elementmarks.HIDDEN) are left out of the page.
    drop_hidden: bool = False
    #: Blocks inside page furniture (elementmarks.UNLIKELY: comment, footer,
    #: sidebar... class names, navigation roles) score no container, as
    #: readability removes such elements before it scores.
    skip_unlikely: bool = False
    #: With fewer characters than this in the container chosen without the
    #: furniture, it is chosen again with it (readability's `charThreshold`:
    #: it retries without removing "unlikely" elements when the article is short,
    #: as on sites that name their whole page `header-...`).
    min_container_chars: int = 500
    #: In that retry, asides (elementmarks.ASIDE: comment sections, sidebars,
    #: footers) still score no container, and are not in the container chosen:
    #: the retry is for sites that name their page wrapper like furniture
    #: ("header-..."), and a short post (a photo and its caption, a two-line
    #: note) is the article even when its comments or its sidebar hold more text.
    retry_keeps_asides_out: bool = False
    #: The retry's container is taken only when it holds at least as much as the
    #: first (readability.js keeps each attempt and, when none reaches its
    #: charThreshold, returns the longest): a post of 400 characters is not given
    #: up for a 300-character site blurb.
    retry_takes_longest: bool = False
    #: The text the retry weighs (`min_container_chars`, and the two attempts'
    #: lengths) is the container's blocks within `max_link_density`: readability
    #: weighs its article after its conditional cleaning has dropped the link lists,
    #: and a column of headline links is not an article that makes the retry needless.
    retry_weighs_prose: bool = False
    #: Blocks in a <select> (a form's options: jusText makes them bad by a hard
    #: rule) score no container points: a list of fifty states or countries,
    #: commas and all, outscored short articles.
    select_scores_nothing: bool = False
    #: Blocks that are a description list's terms or descriptions (`<dt>`, `<dd>`)
    #: score no container points: readability scores paragraphs, table cells and
    #: preformatted text, and a news feed written as a `<dl>` of linked headlines
    #: and their summaries (vz.ru, ta nea) outscored the article beside it.
    description_lists_score_nothing: bool = False
    #: A candidate starts from readability's score for its tag (`_initializeNode`:
    #: div +5, td/pre/blockquote +3, lists and forms -3, headings and th -5).
    tag_scores: bool = False
    #: readability-lxml's `merge_article_segments`: an article split over
    #: several wrappers of one template (Medium's sections) joins them. Blocks in
    #: a wrapper of the container's tag path (same tags, other indices) that
    #: scores the sibling threshold, with link density <= `segment_link_density`,
    #: inside the container's nearest <article>/<main> when it has one, are in.
    join_segments: bool = False
    segment_link_density: float = 0.2
    #: Inside an <article>, a segment joins at this share of the best score
    #: (readability-lxml's 0.05 for the segments of an article; the default is
    #: the sibling share's 0.2).
    article_segment_share: float = 0.2
    #: readability's sibling paragraphs: a <p> (or a <div> of text, which
    #: readability turns into a <p>) beside the container joins it when it is
    #: longer than 80 characters with link density < 0.25, or shorter with no
    #: links and a sentence end.
    join_sibling_paragraphs: bool = False
    #: ...and the <p> children of this many of the container's ancestors (1: its
    #: parent's, readability's rule).
    paragraph_levels: int = 1
    #: The nearest <article> element around the container is its region when
    #: the region lies inside it: HTML5's <article> is the author's statement of
    #: where the article is (a slideshow caption or a closing section beside
    #: the body's wrapper belong to it).
    article_region: bool = False
    #: A <p> in the container moves with it whatever its link density:
    #: readability's conditional cleaning drops lists, tables and divs, never
    #: a paragraph of its article ("Read more: ..." lines inside the text).
    linked_paragraphs_inside: bool = False
    #: A block in the container of at least jusText's `length_high` characters
    #: whose stop-word density reaches `stopwords_high` moves with it whatever
    #: its link density: a sentence wrapped in a link ("Please click here for
    #: rates to particular countries under the Green Saver plan ...") reads as
    #: prose, and jusText's link test is for menus and link lists.
    linked_prose_inside: bool = False
    #: An item of a list in the container moves with it whatever its own link
    #: density when its list as a whole stays within `max_link_density`
    #: (`whole_list_items`): readability's conditional cleaning weighs a list,
    #: never its items one by one, so a list of references or of news summaries,
    #: each item with a link or two, stays whole in its article.
    lists_weighed_whole: bool = False
    #: readability's conditional cleaning of the container: a table, list, div,
    #: aside, header, footer or section inside it with fewer than 10 commas and a
    #: link density above `clean_link_density` (readability: 0.2 for elements
    #: without a positive class name) counts as outside the container; lists,
    #: and elements whose text is over 90% lists, are exempt (readability.js).
    clean_conditionally: bool = False
    #: List items score for their list only with at most this link density
    #: (1: all do). readability scores <p>, <pre> and <td>, not <li>, except
    #: in its semantic <article> candidate, where an item counts with a link
    #: density <= 0.25: a long list of references, each with its commas and
    #: links, otherwise outscores the article it follows.
    item_link_density: float = 1.0
    #: Blocks inside the container are judged with `max_link_density` as
    #: jusText's link-density limit (its 0.2 elsewhere) before they are moved:
    #: readability keeps every paragraph of its article whatever its links,
    #: and an encyclopedia's paragraphs link a third of their words.
    container_link_density: bool = False
    #: The same for blocks in the region but not the container (the `corpus`
    #: preset): an article's region holds its teasers and linked summaries, and
    #: an encyclopedia's paragraphs that sit beside the chosen wrapper.
    region_link_density: bool = False
    #: Blocks inside the container longer than jusText's `length_high` are not
    #: bad for a copyright sign (a photo credit in the article's text).
    credits_inside: bool = False
    #: Blocks in the container that say only "Advertisement" or "Loading..."
    #: (readability.js's ad and loading words) are bad, not promoted.
    drop_ad_labels: bool = False
    #: readability-lxml's semantic <main>: see `semantic_main`.
    semantic_main: bool = False
    #: readability-lxml's schema.org article body: see `article_body`.
    article_body: bool = False
    #: Elements named like asides that hold another aside and most of the page's
    #: good text are layout wrappers, not furniture (corpus_crawler.wrappers).
    unwrap_layouts: bool = False
    #: readability's conditional cleaning by class weight: an element inside
    #: the container whose class and id weigh under zero (elementmarks.NEGATIVE:
    #: "promo_holder", "byline-meta") is outside it unless its paragraphs score
    #: it back up (see `negative_elements`).
    clean_negative_names: bool = False
    #: Blocks in page furniture (with `skip_unlikely`, when the container was
    #: chosen without it) are outside the container and region even when they
    #: lie in it: readability removes them before choosing, so a gallery or
    #: "more stories" list nested in the article wrapper is not in its article.
    furniture_outside: bool = False
    #: Blocks in page furniture that the container holds (a share box, a reply form,
    #: a related-posts list inside the article's wrapper) are not lifted by it when it
    #: was chosen without the furniture (`skip_unlikely`): they keep jusText's class.
    #: When readability's retry chose it with the furniture (a page wrapped in one
    #: `<form>`), its blocks are lifted as before. `corpus`; `article` puts such
    #: blocks outside the container instead (`furniture_outside`).
    furniture_unlifted: bool = False
    clean_link_density: float = 0.2
    #: Class steps for a block in the container or region whose template holds
    #: up as running text as a whole (0: off; see `template_groups`).
    template_shift: int = 0
    #: Blocks sharing a dom path that make a template (listings, comments, posts).
    template_min_blocks: int = 3
    #: Blocks of at most this many characters that repeat their template's words
    #: (Kimatu's function blocks: "Posted by X at 5:31 PM", "permalink | comments
    #: (0)") are not moved up by the container, region or template (0: off; see
    #: `function_blocks`).
    function_max_length: int = 0
    #: When no block of the page is kept, the container's blocks are (headings
    #: included): readability always returns its top candidate, and an article
    #: extractor that returns nothing for a page with text loses the page. The
    #: container's blocks before readability's conditional cleaning, as its last
    #: attempt takes them, but for the page furniture.
    fallback_to_container: bool = False
    #: Blocks of preformatted text (<pre>) with a stop-word density under
    #: jusText's `stopwords_low` (in a language without stop words, written in
    #: ASCII on a page in another script) are program code, shell sessions or
    #: data, not running text: they are BAD, and neither the container nor their
    #: good neighbours keep them (`program_code_blocks`, `code_pass`). A corpus
    #: of a language wants no JavaScript; an RFC or a mailing-list message set in
    #: <pre> is prose and stays. Off in `seed` and `reference` (exact to jusText) and in `article`,
    #: whose gold keeps an article's listings.
    drop_program_code: bool = False
    #: A block inside a <figure> or <figcaption> (a caption, a photo credit) is kept
    #: by its own class only, never by the good paragraphs around it (`figure_pass`).
    figures_context_free: bool = False
    #: A kept label (a few words ending in a colon: "Mehr zum Thema:") whose next
    #: block is not kept is dropped too: it introduces nothing (`label_pass`).
    drop_dangling_labels: bool = False
    #: The kept title of a comment section ("11 Antworten zu ...", "Comments (87)"),
    #: a heading first in the section, is dropped: it names the thread and is no
    #: comment (`labels.comment_title_pass`).
    drop_comment_titles: bool = False
    #: The article's standfirst: prose between the page's <h1> and the first
    #: kept block of the body, no more than this many levels above the <h1>
    #: (0: off; see `standfirst_pass`).
    standfirst_levels: int = 0
    #: With `standfirst_levels`: a block farther from the <h1> is let in too when
    #: an element above it that does not hold the <h1> names itself the lead
    #: ("article-lead", "dek", itemprop="description": elementmarks.LEAD).
    standfirst_named: bool = False
    #: readability's conditional cleaning (`clean_conditionally`) in the main region
    #: around the container as well: a list of linked headlines beside a short
    #: article is not lifted with the region.
    clean_region: bool = False
    #: Walk options (segment.segment), read by the extractor before the blocks
    #: exist; off, the walk is jusText's. An <a> is link text only when it links
    #: to a page (not `javascript:`, empty or "#"): readability.js turns such
    #: links into their text, and a page whose text sits in a script's click
    #: target otherwise reads as one link list.
    page_links_only: bool = False
    #: Inline elements a browser hides (elementmarks.HIDDEN: a MathML fallback
    #: in a display:none span, NOSCRIPT markup) are left out of their block's
    #: text, as `drop_hidden` leaves out hidden blocks.
    drop_hidden_inline: bool = False

    @property
    def uses_marks(self) -> bool:
        """Whether the blocks need their elementmarks (segment(..., marked=True))."""
        return (
            self.drop_hidden
            or self.skip_unlikely
            or self.drop_hidden_inline
            or self.uses_stated
            or (self.standfirst_named and self.standfirst_levels > 0)
        )

    @property
    def uses_stated(self) -> bool:
        """Whether the pass reads the marks elements state about themselves
        (segment.stated_elements: elementmarks.NEGATIVE, BODY)."""
        return self.article_body or self.clean_negative_names

    def __post_init__(self) -> None:
        for name in (
            "min_block_length",
            "length_per_point",
            "max_length_points",
            "min_container_chars",
            "template_min_blocks",
            "paragraph_levels",
        ):
            whole_number(name, getattr(self, name), at_least=1)
        for name in ("function_max_length", "standfirst_levels"):
            whole_number(name, getattr(self, name), at_least=0)
        for name in (
            "inside_shift",
            "region_shift",
            "outside_shift",
            "template_shift",
            "furniture_shift",
        ):
            class_steps(name, getattr(self, name))
        if self.comment_shift is not None:
            class_steps("comment_shift", self.comment_shift)
        for name in (
            "grandparent_share",
            "sibling_share",
            "max_link_density",
            "region_share",
            "segment_link_density",
            "article_segment_share",
            "clean_link_density",
            "item_link_density",
        ):
            share(name, getattr(self, name))
        if number("sibling_min_score", self.sibling_min_score) < 0:
            raise ConfigError(f"sibling_min_score must be >= 0, got {self.sibling_min_score!r}")
        check_switches(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> ContainerOptions:
        check_keys(data, [f.name for f in fields(cls)], source)
        return built(cls, data, source)


# readability.js `_initializeNode`: where a candidate's score starts, by its tag.
_TAG_SCORES = {
    "div": 5,
    "pre": 3,
    "td": 3,
    "blockquote": 3,
    "address": -3,
    "ol": -3,
    "ul": -3,
    "dl": -3,
    "dd": -3,
    "dt": -3,
    "li": -3,
    "form": -3,
    "h1": -5,
    "h2": -5,
    "h3": -5,
    "h4": -5,
    "h5": -5,
    "h6": -5,
    "th": -5,
}


def _outermost_list(xpath: str) -> int:
    """Where the step of the outermost <ul>/<ol> on an xpath starts (-1: none)."""
    ul = xpath.find("/ul[")
    ol = xpath.find("/ol[")
    if ul < 0 or ol < 0:
        return max(ul, ol)
    return min(ul, ol)


#: The first characters of a description list's term and description steps.
_DESCRIPTION_STEPS = ("dt[", "dd[")


class _Subtrees:
    """Per element above the blocks: characters, link characters and readability
    points of the blocks below it, summed bottom-up once (each element visited
    once, not once per block below it)."""

    __slots__ = ("chars", "commas", "links", "listed", "points", "scores")

    def __init__(
        self,
        paragraphs: Sequence[Paragraph],
        options: ContainerOptions,
        unlikely: Sequence[int] | None = None,
    ) -> None:
        chars: dict[str, int] = {}
        links: dict[str, int] = {}
        commas: dict[str, int] = {}
        listed: dict[str, int] = {}
        count_commas = options.clean_conditionally
        item_link_density = options.item_link_density
        points: dict[str, float] = {}
        scores: dict[str, float] = {}
        share = options.grandparent_share
        min_length = options.min_block_length
        per_point = options.length_per_point
        max_length_points = options.max_length_points
        max_link_density = options.max_link_density
        no_select_points = options.select_scores_nothing
        no_description_points = options.description_lists_score_nothing
        skipped = unlikely if unlikely is not None else (False,) * len(paragraphs)
        for p, skip in zip(paragraphs, skipped, strict=True):
            if skip:
                # as if removed from the page, as readability removes furniture
                continue
            xpath = p.xpath
            length = p.length
            text = p.text
            block_commas = sum(map(text.count, _COMMAS))
            chars[xpath] = chars.get(xpath, 0) + length
            links[xpath] = links.get(xpath, 0) + p.link_chars
            if count_commas:
                commas[xpath] = commas.get(xpath, 0) + block_commas
                # characters in lists, counted for the element above the outermost
                # list here and for its ancestors when the totals go up below
                cut = _outermost_list(xpath)
                if cut > 0:
                    path = xpath[:cut]
                    listed[path] = listed.get(path, 0) + length
            if length < min_length or p.heading or (no_select_points and p.in_select):
                continue
            step = xpath[xpath.rfind("/") + 1 :][:3]
            if p.link_density > item_link_density and step == "li[":
                continue
            if no_description_points and step in _DESCRIPTION_STEPS:
                continue
            block_points = 1 + min(length // per_point, max_length_points) + block_commas
            if p.link_density <= max_link_density:
                # the region counts text, not link lists (a footer of them
                # would pull it up to <body>)
                points[xpath] = points.get(xpath, 0.0) + block_points
            cut = xpath.rfind("/")
            if cut > 0:
                parent = xpath[:cut]
                scores[parent] = scores.get(parent, 0.0) + block_points
                cut = parent.rfind("/")
                if cut > 0:
                    grandparent = parent[:cut]
                    scores[grandparent] = scores.get(grandparent, 0.0) + block_points * share
        if options.tag_scores:
            for path in scores:
                scores[path] += _TAG_SCORES.get(last_tag(path), 0)
        # deepest first, so each element's totals are complete before they go up
        seen = set(chars)
        depth_buckets: dict[int, list[str]] = {}
        for path in seen:
            depth_buckets.setdefault(path.count("/"), []).append(path)
        for depth in range(max(depth_buckets, default=0), 1, -1):
            bucket = depth_buckets.get(depth, ())
            above = depth_buckets.setdefault(depth - 1, [])
            for path in bucket:
                parent = path[: path.rfind("/")]
                chars[parent] = chars.get(parent, 0) + chars[path]
                links[parent] = links.get(parent, 0) + links[path]
                if path in commas:
                    commas[parent] = commas.get(parent, 0) + commas[path]
                if path in listed:
                    listed[parent] = listed.get(parent, 0) + listed[path]
                if path in points:
                    points[parent] = points.get(parent, 0.0) + points[path]
                if parent not in seen:
                    seen.add(parent)
                    above.append(parent)
        self.chars = chars
        self.commas = commas
        self.listed = listed
        self.links = links
        self.points = points
        self.scores = scores


def main_containers(
    paragraphs: Sequence[Paragraph],
    options: ContainerOptions,
    subtrees: _Subtrees | None = None,
    stated: Mapping[str, int] | None = None,
) -> list[str]:
    """xpaths of the main container and the siblings that join it ([] when nothing scores).

    readability's rule: a block of at least `min_block_length` characters scores
    1 + its commas + one point per `length_per_point` characters (at most
    `max_length_points`); its parent gets the score, its grandparent
    `grandparent_share` of it; a container's score shrinks by its link
    density; the best one wins, and siblings scoring at least
    `sibling_share` of it (and `sibling_min_score`) join it.
    """
    if subtrees is None:
        subtrees = _Subtrees(paragraphs, options)
    if not subtrees.scores:
        return []
    chars = subtrees.chars
    links = subtrees.links
    final = {
        path: score * (1.0 - links[path] / chars[path]) if chars[path] else score
        for path, score in subtrees.scores.items()
    }
    best = max(final, key=final.__getitem__)
    if options.article_body and stated:
        best = article_body(best, final, subtrees, stated)
    if options.semantic_main:
        best = semantic_main(best, subtrees)
    threshold = max(options.sibling_min_score, final.get(best, 0.0) * options.sibling_share)
    parent = parent_of(best)
    chosen = [best]
    chosen += [
        path
        for path, score in final.items()
        if path != best and score >= threshold and parent_of(path) == parent
    ]
    if options.join_segments:
        chosen += article_segments(best, final, threshold, subtrees, options)
    if options.join_sibling_paragraphs:
        chosen += sibling_paragraphs(paragraphs, parent, frozenset(chosen))
    return chosen


#: Parts of an <article> that are not its text: its header (title, byline,
#: standfirst), footer and asides (readability.js removes footers and asides).
_ARTICLE_TRIM = ("/header[", "/footer[", "/aside[")


def _in_trim(xpath: str, start: int) -> bool:
    """Is there a header, footer or aside on the xpath after position `start`?"""
    return any(xpath.find(step, start) >= 0 for step in _ARTICLE_TRIM)


def _article_above(xpath: str) -> str | None:
    """The nearest <article> element above an xpath (None: none)."""
    path = parent_of(xpath)
    while path:
        if last_tag(path) == "article":
            return path
        path = parent_of(path)
    return None


def ancestor_paragraphs(
    paragraphs: Sequence[Paragraph], containers: Sequence[str], levels: int
) -> list[str]:
    """readability's sibling paragraphs one level further up each time, for
    `levels` - 1 levels above the container's parent: the <p> children of its
    grandparent (and above) that pass the sibling-paragraph test. News pages
    put the lead paragraphs in a wrapper of their own, beside the wrapper of
    the story's body rather than beside its text."""
    found: list[str] = []
    above = parent_of(parent_of(containers[0]))
    chosen = frozenset(containers)
    for _ in range(levels - 1):
        if not above:
            break
        found += sibling_paragraphs(paragraphs, above, chosen)
        above = parent_of(above)
    return found


def semantic_main(best: str, subtrees: _Subtrees) -> str:
    """The page's <main> instead of the best candidate, as readability-lxml takes
    it (`get_semantic_main_candidate`): when the candidate is not in an
    <article>, and the <main> above it holds at least 500 characters and twice
    the candidate's, with a link density of at most 0.15. HTML5's <main> is
    the author's own statement of where the content is; readability trusts it
    when the scores picked only a part of it.
    """
    path = best
    while path:
        if last_tag(path) == "article":
            return best
        path = parent_of(path)
    main = parent_of(best)
    while main and last_tag(main) != "main":
        main = parent_of(main)
    if not main:
        return best
    chars = subtrees.chars
    length = chars.get(main, 0)
    if length < max(500, 2 * chars.get(best, 0)):
        return best
    if subtrees.links.get(main, 0) > 0.15 * length:
        return best
    return main


#: readability-lxml's most link characters for an article body it trusts.
_BODY_LINK_DENSITY = 0.1


def article_body(
    best: str, final: Mapping[str, float], subtrees: _Subtrees, stated: Mapping[str, int]
) -> str:
    """The best-scoring candidate that says it is the article's body
    (`itemprop="articleBody"`, elementmarks.BODY) with at most 10% of its
    characters in links, instead of the best candidate, as readability-lxml's
    `select_best_candidate` takes it; `best` when there is none. The page's
    author states where the article is: a slideshow or gallery of long captions
    inside the body can outscore the story's own paragraphs, and a site's
    related-stories box can outscore a short story.
    """
    chars = subtrees.chars
    links = subtrees.links
    bodies = [
        path
        for path, marks in stated.items()
        if marks & BODY
        and path in final
        and links.get(path, 0) <= _BODY_LINK_DENSITY * chars.get(path, 0)
    ]
    return max(bodies, key=final.__getitem__) if bodies else best


#: Where readability-lxml looks for the rest of a split article.
_SEMANTIC_FRAMES = frozenset({"article", "main"})


def _frame(xpath: str) -> str | None:
    """The nearest <article> or <main> above an element (None: neither)."""
    path = parent_of(xpath)
    while path:
        if last_tag(path) in _SEMANTIC_FRAMES:
            return path
        path = parent_of(path)
    return None


def _same_template(best: str, other: str) -> bool:
    """Do two wrappers share their markup below the point where their paths part?

    Below their common ancestor each path steps into a different child; the
    tags under that child are the wrapper's own template (section/div/div for
    each of Medium's sections), however deep in layout divs the other one sits
    (when it sits deeper, the template must hold more than <div>s).
    """
    best_steps = best.split("/")
    other_steps = other.split("/")
    own = [last_tag(step) for step in best_steps[shared_steps(best_steps, other_steps) + 1 :]]
    deeper = len(other_steps) - len(best_steps)
    if not own or deeper < 0 or (deeper and all(tag == "div" for tag in own)):
        # a template of bare divs says nothing when the depths differ: every
        # layout is made of them
        return False
    return [last_tag(step) for step in other_steps[len(other_steps) - len(own) :]] == own


def article_segments(
    best: str,
    final: Mapping[str, float],
    threshold: float,
    subtrees: _Subtrees,
    options: ContainerOptions,
) -> list[str]:
    """Wrappers holding more of an article split over one template's sections.

    readability-lxml (`merge_article_segments`) joins candidates of the best
    one's tag and classes, within its <article>/<main>, that score its sibling
    threshold and have link density <= 0.2. The blocks carry no class names,
    so the template is told by the tags instead: the same tags below the
    point where the two paths part (`_same_template`).
    """
    frame = _frame(best)
    inside_frame = frame + "/" if frame is not None else ""
    if frame is not None and last_tag(frame) == "article":
        # readability-lxml's "neutral article segment": within an <article> a
        # part of it scores far less than the best part and still belongs
        threshold = max(options.sibling_min_score, final[best] * options.article_segment_share)
    chars = subtrees.chars
    links = subtrees.links
    found = []
    for path, score in final.items():
        if score < threshold or path == best or parent_of(path) == parent_of(best):
            continue
        if not path.startswith(inside_frame) or not _same_template(best, path):
            continue
        if chars[path] and links[path] / chars[path] > options.segment_link_density:
            continue
        found.append(path)
    return found


#: readability turns a <div> without block children into a <p> before it looks
#: at siblings; a block anchored at a <div> is such text.
_PARAGRAPH_TAGS = frozenset({"p", "div"})
_SENTENCE_END = re.compile(r"\.( |$)")


def sibling_paragraphs(
    paragraphs: Sequence[Paragraph], parent: str, chosen: frozenset[str]
) -> list[str]:
    """xpaths of the <p> blocks (and text <div>s) beside the container that
    readability appends to it: longer than 80 characters with link density
    < 0.25, or shorter with no links and a sentence end (`get_article`)."""
    if not parent:
        return []
    inside_parent = parent + "/"
    found = []
    for p in paragraphs:
        xpath = p.xpath
        if not xpath.startswith(inside_parent) or xpath.find("/", len(inside_parent)) >= 0:
            continue  # not a child of the container's parent
        if xpath in chosen or last_tag(xpath) not in _PARAGRAPH_TAGS:
            continue
        if p.length > 80:
            keep = p.link_density < 0.25
        else:
            keep = p.link_chars == 0 and _SENTENCE_END.search(p.text) is not None
        if keep:
            found.append(xpath)
    return found


#: The elements readability cleans conditionally (readability-lxml's `sanitize`),
#: the same the walk weighs by name.
_CLEANED_TAGS = WEIGHED_TAGS
_LIST_TAGS = frozenset({"ul", "ol"})
#: readability.js exempts lists, and elements whose text is over 90% lists, from
#: the link-density test (a blog's bulleted notes link on every line)
_LIST_SHARE = 0.9


def cleaned_elements(containers: Sequence[str], subtrees: _Subtrees, limit: float) -> list[str]:
    """Elements inside the container that readability's conditional cleaning
    drops for too many links (link density above `limit`) for their class
    weight (unknown here, so readability's limit for a weight under 25).

    Elements with 10 commas or more are kept, as readability keeps them (prose),
    and so are lists and elements whose text is over 90% lists (readability.js).
    Measured and left out (configs/extractors/presets.yaml): its rule of more
    list items than paragraphs, and its headings with link density > 0.33.
    """
    prefixes = tuple(c + "/" for c in containers)
    chars = subtrees.chars
    links = subtrees.links
    commas = subtrees.commas
    listed = subtrees.listed
    cleaned = []
    for path, length in chars.items():
        if not length or not path.startswith(prefixes) or last_tag(path) not in _CLEANED_TAGS:
            continue
        if commas.get(path, 0) >= 10:
            continue
        if last_tag(path) in _LIST_TAGS or listed.get(path, 0) > _LIST_SHARE * length:
            continue
        if links[path] / length > limit:
            cleaned.append(path)
    return cleaned


#: The score that keeps an element whose class and id name furniture
#: (elementmarks.NEGATIVE) in the container: readability-lxml counts the class
#: weight twice against it, in its score and again when it cleans.
NEGATIVE_KEEP_SCORE = 2 * CLASS_WEIGHT


def negative_elements(
    containers: Sequence[str], subtrees: _Subtrees, stated: Mapping[str, int]
) -> list[str]:
    """Elements inside the container (tables, lists, divs, sections, asides,
    headers and footers) whose class and id weigh under zero
    (elementmarks.NEGATIVE), unless their paragraphs score them back up:
    readability-lxml's `sanitize` drops an element whose weight and score add
    up to less than zero (a wrapper of no paragraphs of its own scores
    nothing). A promo box of slides or a post's meta line inside the
    article's wrapper is not the article. A <div> with no block below it is
    a paragraph, as readability makes it, and is not cleaned."""
    prefixes = tuple(c + "/" for c in containers)
    scores = subtrees.scores
    chars = subtrees.chars
    found = [
        path
        for path, marks in stated.items()
        if marks & NEGATIVE
        and path.startswith(prefixes)
        and chars.get(path)
        and scores.get(path, 0.0) < NEGATIVE_KEEP_SCORE
    ]
    if not found:
        return found
    # readability turns a <div> of phrasing content alone (text, links, images:
    # no block below it) into a <p> before it cleans: a paragraph, not a wrapper
    wrappers = {parent_of(path) for path in chars}
    return [path for path in found if last_tag(path) != "div" or path in wrappers]


def dropped_elements(
    containers: Sequence[str],
    subtrees: _Subtrees,
    options: ContainerOptions,
    stated: Mapping[str, int] | None,
) -> list[str]:
    """What readability's cleaning takes out of the container, as the options
    ask: `cleaned_elements` (link density) and `negative_elements` (class weight)."""
    dropped = (
        cleaned_elements(containers, subtrees, options.clean_link_density)
        if options.clean_conditionally
        else []
    )
    if options.clean_negative_names and stated:
        dropped += negative_elements(containers, subtrees, stated)
    return dropped


def _prose_holders(paragraphs: Sequence[Paragraph], params: JustextParams) -> set[str]:
    """The elements above a block of prose: context-free GOOD or NEAR_GOOD, not a
    heading, within jusText's link density."""
    held: set[str] = set()
    for p in paragraphs:
        if (
            p.cf_class in (GOOD, NEAR_GOOD)
            and not p.heading
            and p.link_density <= params.max_link_density
        ):
            path = p.xpath
            while path and path not in held:
                held.add(path)
                path = parent_of(path)
    return held


def main_region(
    paragraphs: Sequence[Paragraph],
    containers: Sequence[str],
    options: ContainerOptions,
    subtrees: _Subtrees | None = None,
) -> str | None:
    """The nearest ancestor of the main container (or the container itself) whose
    blocks hold `region_share` of the page's points (None: no container).

    readability picks one wrapper; a page that spreads its article over sibling
    wrappers (one <div> per few paragraphs) leaves most of it outside. Blocks
    count here only with at most `max_link_density` link characters, so a
    footer of link lists does not pull the region up to <body>.
    """
    if not containers:
        return None
    if subtrees is None:
        subtrees = _Subtrees(paragraphs, options)
    points = subtrees.points
    top = containers[0]
    while parent_of(top):
        top = parent_of(top)
    needed = options.region_share * points.get(top, 0.0)
    held = sum(points.get(c, 0.0) for c in containers)
    region = containers[0]
    teasers = None
    if options.region_stops_at_teasers:
        teaser, linked_items = teaser_blocks(
            paragraphs,
            options.max_link_density,
            options.repeated_teasers,
            options.described_teasers,
        )
        if not within_any(containers[0], linked_items):
            teasers = teaser
    while held < needed and parent_of(region):
        if teasers is not None and mostly_teasers(
            paragraphs, teasers, options.max_link_density, parent_of(region), region
        ):
            break
        if options.region_stops_at_threads and adds_a_thread(
            paragraphs,
            options.max_link_density,
            options.min_container_chars,
            containers,
            region,
            parent_of(region),
        ):
            break
        region = parent_of(region)
        held = points.get(region, 0.0)
    return region


def inside_containers(paragraphs: Sequence[Paragraph], containers: Sequence[str]) -> list[bool]:
    if not containers:
        return [False] * len(paragraphs)
    prefixes = tuple(c + "/" for c in containers)
    exact = frozenset(containers)
    return [p.xpath in exact or p.xpath.startswith(prefixes) for p in paragraphs]


#: Labels of ad slots and loading indicators, the words readability.js lists
#: (its `adWords` and `loadingWords`): a block that says only this is no text.
_AD_OR_LOADING = re.compile(
    r"(?:ad|advertising|advertisement|pub|publicité|werbung|werb|广告|реклама|anuncio"
    r"|(?:loading|正在加载|загрузка|chargement|cargando)(?:…|\.\.\.)?)\Z",
    re.IGNORECASE,
)

_SCALE = (BAD, SHORT, NEAR_GOOD, GOOD)
_RANK = {cls: rank for rank, cls in enumerate(_SCALE)}


def _shifted(cls: ParagraphClass, steps: int) -> ParagraphClass:
    return _SCALE[max(0, min(3, _RANK[cls] + steps))]


def whole_list_items(paragraphs: Sequence[Paragraph], limit: float) -> list[bool]:
    """Per block, whether it is an item of a list (an `<li>` block right under an
    `<ol>` or `<ul>`) whose items together have at most `limit` link density
    (`lists_weighed_whole`): the items' link characters over their characters."""
    lists: list[str | None] = []
    totals: dict[str, list[int]] = {}
    for p in paragraphs:
        xpath = p.xpath
        # a cheap test first: most blocks are no list item
        if "/li" not in xpath or last_tag(xpath) != "li":
            lists.append(None)
            continue
        list_path = parent_of(xpath)
        if last_tag(list_path) not in _LIST_TAGS:
            lists.append(None)
            continue
        chars = totals.get(list_path)
        if chars is None:
            chars = totals[list_path] = [0, 0]
        chars[0] += p.length
        chars[1] += p.link_chars
        lists.append(list_path)
    if not totals:
        return [False] * len(lists)
    within = {
        path: length > 0 and links <= limit * length for path, (length, links) in totals.items()
    }
    return [path is not None and within[path] for path in lists]


def _linked_prose(p: Paragraph, params: JustextParams) -> bool:
    """Does a block read as prose whatever its links (`linked_prose_inside`)?"""
    return p.length >= params.length_high and p.stopword_density >= params.stopwords_high


def outside_steps(unlikely: Sequence[int] | None, options: ContainerOptions) -> list[int] | None:
    """Per block, the class steps it moves when it lies outside the container and
    region, from its furniture marks (segment.furniture): `comment_shift` in a
    comment section (elementmarks.COMMENTS) when set; `outside_shift` plus
    `furniture_shift` in other page furniture (UNLIKELY); `outside_shift`
    elsewhere. None when every block moves `outside_shift` (no marks, or neither
    option set). Both container passes read it."""
    if unlikely is None or (options.comment_shift is None and not options.furniture_shift):
        return None
    plain = options.outside_shift
    furnished = plain + options.furniture_shift
    commented = furnished if options.comment_shift is None else options.comment_shift
    return [commented if u & COMMENTS else furnished if u & UNLIKELY else plain for u in unlikely]


def _ruled_bad(p: Paragraph) -> bool:
    # The seed's hard rules (copyright, <select>, images) are not evidence a
    # container can outweigh.
    text = p.text
    return p.in_select or p.image or COPYRIGHT_CHAR in text or "&copy" in text


def template_groups(
    paragraphs: Sequence[Paragraph], params: JustextParams, min_blocks: int
) -> list[bool]:
    """Per block: whether the blocks sharing its dom path (its template), taken
    together, pass jusText's text tests.

    A page repeats one template for each job ad, comment or forum post, and
    jusText judges each one alone on a few dozen words, where the stop-word
    density swings around its thresholds (a terse ad reads as a menu). Pooled
    over at least `min_blocks` blocks of one template (Kimatu's blocks of one
    aspect, seed 003), the words are enough to tell running text from link
    lists: the pooled stop-word density must reach `stopwords_low` and the
    pooled link density stay within `max_link_density`.
    """
    totals: dict[str, list[int]] = {}
    for p in paragraphs:
        total = totals.get(p.dom_path)
        if total is None:
            total = totals[p.dom_path] = [0, 0, 0, 0, 0]
        total[0] += 1
        total[1] += p.length
        total[2] += p.link_chars
        total[3] += p.stopword_count
        total[4] += p.word_count
    passing = {
        path
        for path, (blocks, chars, links, stops, words) in totals.items()
        if blocks >= min_blocks
        and words
        and stops >= params.stopwords_low * words
        and links <= params.max_link_density * chars
    }
    return [p.dom_path in passing for p in paragraphs]


#: Kimatu's share of a function block's words that recur across its template
#: (seed 003's function_shared_words, configs/extractors/kimatu.yaml): not tuned.
FUNCTION_SHARED_WORDS = 0.7
#: A byline's words are letters: its numbers (dates, times, counts) are what
#: changes from post to post, so they are left out of the measure.
_LETTER_WORD = re.compile(r"[^\W\d_]+")


def function_blocks(
    paragraphs: Sequence[Paragraph],
    params: JustextParams,
    max_length: int,
    min_blocks: int,
    *,
    compiled: bool | None = None,
) -> list[bool]:
    """Per block: whether it is a function block of its template, the byline or
    footer a blog or forum repeats on every post ("Posted by X at 5:31 PM",
    "Monday December 25, 2006 | permalink | comments (0)").

    Kimatu (seed 003, its function step) takes out a template's short elements
    when most of their words recur across it. Here a block of at most
    `max_length` characters (not a heading) in a template of at least
    `min_blocks` blocks is one when at least FUNCTION_SHARED_WORDS of its words
    (letters only: numbers are the date or count that changes from post to
    post) each occur in a quarter of the template's blocks (and at least 3): one
    byline per post, beside the post's title or text. Only the template's blocks
    up to jusText's `length_high` are read for the words: the labels recur among
    short blocks, and the long ones are running text (and the cost).

    `compiled` picks the implementation as in `classify_segments` (default: the
    compiled twin in _classify_fast.pyx, which counts 64-bit hashes of the
    words instead of the words: ~0.2 ms a page less, half the container pass).
    """
    if compiled is None:
        compiled = _fast is not None
    if compiled and _fast is not None:
        return _fast.function_blocks(
            paragraphs, params.length_high, max_length, min_blocks, FUNCTION_SHARED_WORDS
        )
    templates: dict[str, list[int]] = {}
    for index, p in enumerate(paragraphs):
        templates.setdefault(p.dom_path, []).append(index)
    found = [False] * len(paragraphs)
    for members in templates.values():
        count = len(members)
        if count < min_blocks:
            continue
        recurring = max(3, -(-count // 4))
        short = [
            i for i in members if paragraphs[i].length <= max_length and not paragraphs[i].heading
        ]
        if len(short) < recurring:
            continue
        words = {
            i: _LETTER_WORD.findall(paragraphs[i].text.lower())
            for i in members
            if paragraphs[i].length <= params.length_high
        }
        spread: dict[str, int] = {}
        for found_words in words.values():
            for word in set(found_words):
                spread[word] = spread.get(word, 0) + 1
        for i in short:
            own = words.get(i)
            if own:
                shared = sum(1 for word in own if spread[word] >= recurring)
                found[i] = shared >= FUNCTION_SHARED_WORDS * len(own)
    return found


def relaxed_classes(
    paragraphs: Sequence[Paragraph], params: JustextParams, options: ContainerOptions
) -> list[ParagraphClass | None] | None:
    """Per block, the context-free class it gets with `options.max_link_density`
    as jusText's link limit, where that differs from its own BAD (None
    elsewhere); None when neither `container_link_density` nor
    `region_link_density` is on. Where it applies is the container pass's
    choice; the classes are the same wherever the block lies, so the compiled
    pass takes them from here (few blocks sit between the two limits)."""
    if not (options.container_link_density or options.region_link_density):
        return None
    relaxed = dataclasses.replace(params, max_link_density=options.max_link_density)
    low, high = params.max_link_density, options.max_link_density
    return [
        context_free_class(p, relaxed)
        if p.cf_class is BAD and low < p.link_density <= high
        else None
        for p in paragraphs
    ]


def credit_classes(
    paragraphs: Sequence[Paragraph], params: JustextParams, options: ContainerOptions
) -> list[ParagraphClass | None]:
    """Per block, the class `credits_inside` gives it when it lies in the
    container and is BAD there (None where the rule cannot apply: a block up to
    jusText's `length_high`, in a <select>, or without a copyright sign): its
    context-free class without the copyright rule, under the container's link
    limit when that applies. The compiled pass takes them from here (few blocks
    carry a copyright sign)."""
    relaxed = (
        dataclasses.replace(params, max_link_density=options.max_link_density)
        if options.container_link_density or options.region_link_density
        else params
    )
    return [
        context_free_class(p, relaxed, copyright=False)
        if p.length > params.length_high
        and not p.in_select
        and (COPYRIGHT_CHAR in p.text or COPYRIGHT_CODE in p.text)
        else None
        for p in paragraphs
    ]


class _Choice(NamedTuple):
    """The main container as chosen, with what the rest of the pass needs of it."""

    subtrees: _Subtrees
    containers: list[str]
    inside: list[bool]
    #: the furniture flags still left out (None: the retry counted the furniture)
    skipped: Sequence[int] | None
    #: the asides the retry left out (None: none were, or there was no retry)
    kept_out: list[bool] | None


def _chosen_container(
    paragraphs: Sequence[Paragraph],
    options: ContainerOptions,
    skipped: Sequence[int] | None,
    stated: Mapping[str, int] | None = None,
) -> _Choice:
    """The container chosen without the furniture (`skipped`), or chosen again with
    it when it holds fewer than `min_container_chars` (readability's retry, for sites
    that name their page wrapper like furniture). With `retry_keeps_asides_out` the
    asides (comments, sidebar, footer: never the article) stay out of the retry; with
    `retry_takes_longest` the retry's container is taken only when it holds at least
    as much as the first (readability.js returns the longest attempt); with
    `retry_weighs_prose` both weigh only the blocks within `max_link_density`."""
    subtrees = _Subtrees(paragraphs, options, skipped)
    containers = main_containers(paragraphs, options, subtrees, stated)
    inside = inside_containers(paragraphs, containers)
    first = _Choice(subtrees, containers, inside, skipped, None)
    if skipped is None:
        return first
    weighed = [
        not options.retry_weighs_prose or p.link_density <= options.max_link_density
        for p in paragraphs
    ]
    held = sum(
        p.length
        for p, i, s, w in zip(paragraphs, inside, skipped, weighed, strict=True)
        if i and not s and w
    )
    if held >= options.min_container_chars:
        return first
    asides = [bool(u & ASIDE) for u in skipped]
    kept_out = asides if options.retry_keeps_asides_out and any(asides) else None
    retried = _Subtrees(paragraphs, options, kept_out)
    retried_containers = main_containers(paragraphs, options, retried, stated)
    retried_inside = inside_containers(paragraphs, retried_containers)
    out = kept_out or [False] * len(paragraphs)
    retried_held = sum(
        p.length
        for p, i, o, w in zip(paragraphs, retried_inside, out, weighed, strict=True)
        if i and not o and w
    )
    if options.retry_takes_longest and containers and retried_held < held:
        return first
    return _Choice(retried, retried_containers, retried_inside, None, kept_out)


def container_pass(
    paragraphs: Sequence[Paragraph],
    params: JustextParams,
    options: ContainerOptions,
    unlikely: Sequence[int] | None = None,
    *,
    compiled: bool | None = None,
    stated: Mapping[str, int] | None = None,
) -> tuple[Paragraph, ...]:
    """Paragraphs with their context-free classes moved by the main-container
    evidence and the three later phases run again on the result.

    `unlikely`: per paragraph, its furniture marks (segment.furniture: true when
    it lies in page furniture, with elementmarks.ASIDE for a comment section,
    sidebar or footer); with `options.skip_unlikely` such blocks score no
    container (they are still classified, and moved like any block).
    `stated`: xpath -> the marks the page's elements state about themselves
    (segment.stated_elements: elementmarks.NEGATIVE, BODY), read by
    `article_body` and `clean_negative_names`.

    `compiled` picks the implementation as in `classify_segments` (default: the
    compiled twin in _classify_fast.pyx when it was built and knows every option
    that is switched on); both give equal Paragraphs. This function is the
    readable reference the compiled one mirrors.
    """
    shifts = (
        options.inside_shift,
        options.region_shift,
        options.outside_shift,
        options.template_shift,
        options.comment_shift or 0,
        options.furniture_shift,
    )
    if not paragraphs or not any(shifts):
        return tuple(paragraphs)
    skipped = unlikely if options.skip_unlikely and unlikely is not None and any(unlikely) else None
    if compiled is None:
        compiled = compiled_container_pass(options)
    if compiled and _fast is not None:
        if not compiled_container_pass(options):
            raise ValueError(
                "the compiled container pass does not know every option switched on here"
                " (see _classify_fast.CONTAINER_FIELDS): pass compiled=None or False"
            )
        templated = (
            template_groups(paragraphs, params, options.template_min_blocks)
            if options.template_shift
            else None
        )
        return _fast.container_pass(
            tuple(paragraphs),
            params,
            options,
            skipped,
            _TAG_SCORES,
            templated,
            relaxed_classes(paragraphs, params, options),
            function_blocks(
                paragraphs, params, options.function_max_length, options.template_min_blocks
            )
            if options.function_max_length
            else None,
            _AD_OR_LOADING if options.drop_ad_labels else None,
            credit_classes(paragraphs, params, options) if options.credits_inside else None,
            stated if options.uses_stated else None,
            options.fallback_to_container and unlikely is not None and any(unlikely),
            outside_steps(unlikely, options),
            teaser_blocks(
                paragraphs,
                options.max_link_density,
                options.repeated_teasers,
                options.described_teasers,
            )
            if options.region_stops_at_teasers
            else None,
            functools.partial(
                adds_a_thread, paragraphs, options.max_link_density, options.min_container_chars
            )
            if options.region_stops_at_threads
            else None,
        )
    furniture = skipped
    choice = _chosen_container(paragraphs, options, skipped, stated)
    subtrees, containers, inside = choice.subtrees, choice.containers, choice.inside
    chosen = inside
    skipped, kept_out = choice.skipped, choice.kept_out
    if not containers:
        if options.fallback_to_container and not any(p.final_class is GOOD for p in paragraphs):
            return _kept_without_container(paragraphs, unlikely, options)
        return tuple(paragraphs)
    region = main_region(paragraphs, containers, options, subtrees)
    in_region = inside_containers(paragraphs, [region] if region else [])
    if options.article_region and region:
        frame = _article_above(containers[0])
        if frame is not None and region.startswith(frame + "/"):
            # the author's <article> around the container is the article's region
            framed = inside_containers(paragraphs, [frame])
            in_region = [
                r or (f and not p.heading and not _in_trim(p.xpath, len(frame)))
                for p, r, f in zip(paragraphs, in_region, framed, strict=True)
            ]
    if options.paragraph_levels > 1 and options.join_sibling_paragraphs:
        # joined once the container is settled: the region and the furniture
        # retry weigh the container readability chose, not these
        extra = frozenset(ancestor_paragraphs(paragraphs, containers, options.paragraph_levels))
        inside = [i or p.xpath in extra for p, i in zip(paragraphs, inside, strict=True)]
    if options.furniture_outside and skipped is not None:
        # readability removed these before it chose: they are not in its article
        inside = [i and not s for i, s in zip(inside, skipped, strict=True)]
        in_region = [r and not s for r, s in zip(in_region, skipped, strict=True)]
    if kept_out is not None:
        # nor part of it when the container chosen again holds them
        inside = [i and not c for i, c in zip(inside, kept_out, strict=True)]
        in_region = [r and not c for r, c in zip(in_region, kept_out, strict=True)]
    dropped = dropped_elements(containers, subtrees, options, stated)
    if options.clean_region and options.clean_conditionally and region and region != containers[0]:
        above = containers[0] + "/"
        prose = _prose_holders(paragraphs, params)
        around = [
            path
            for path in cleaned_elements([region], subtrees, options.clean_link_density)
            if not above.startswith(path + "/") and path not in prose
        ]
        if around and containers[0] in prose:
            gone = inside_containers(paragraphs, around)
            in_region = [r and not g for r, g in zip(in_region, gone, strict=True)]
    if dropped:
        cleaned = inside_containers(paragraphs, dropped)
        if any(cleaned):
            # what readability drops from its article is outside it here
            inside = [i and not c for i, c in zip(inside, cleaned, strict=True)]
            in_region = [r and not c for r, c in zip(in_region, cleaned, strict=True)]
    relaxed_params = (
        dataclasses.replace(params, max_link_density=options.max_link_density)
        if options.container_link_density or options.region_link_density
        else None
    )
    if options.template_shift:
        templated = template_groups(paragraphs, params, options.template_min_blocks)
    else:
        templated = [False] * len(paragraphs)
    if options.function_max_length:
        functional = function_blocks(
            paragraphs, params, options.function_max_length, options.template_min_blocks
        )
    else:
        functional = [False] * len(paragraphs)
    outside = outside_steps(unlikely, options) or [options.outside_shift] * len(paragraphs)
    if options.lists_weighed_whole:
        listed = whole_list_items(paragraphs, options.max_link_density)
    else:
        listed = [False] * len(paragraphs)
    if options.furniture_unlifted and skipped is not None:
        # the container was chosen without the furniture it holds
        unlifted = [bool(s) for s in skipped]
    else:
        unlifted = [False] * len(paragraphs)
    cf_classes = []
    changed = False
    for (
        p,
        is_inside,
        is_in_region,
        is_templated,
        is_function,
        outside_step,
        is_listed,
        is_unlifted,
    ) in zip(
        paragraphs, inside, in_region, templated, functional, outside, listed, unlifted, strict=True
    ):
        if is_inside and is_unlifted:
            steps = 0
        elif is_inside:
            steps = (
                options.inside_shift
                if p.link_density <= options.max_link_density
                or is_listed
                or (options.linked_paragraphs_inside and last_tag(p.xpath) == "p")
                or (options.linked_prose_inside and _linked_prose(p, params))
                else 0
            )
        elif is_in_region:
            steps = options.region_shift
        else:
            steps = outside_step
        if (
            is_templated
            and (is_inside or is_in_region)
            and not p.heading
            and p.cf_class is not GOOD
            and p.link_density <= params.max_link_density
        ):
            steps += options.template_shift
        if steps > 0 and (is_function or _ruled_bad(p)):
            steps = 0
        cls = p.cf_class
        if options.drop_ad_labels and is_inside and _AD_OR_LOADING.match(p.text.strip()):
            # readability.js removes an element whose whole text is such a label
            cf_classes.append(BAD)
            changed = changed or p.cf_class is not BAD
            continue
        if (
            relaxed_params is not None
            and (
                (is_inside and options.container_link_density)
                or (is_in_region and not is_inside and options.region_link_density)
            )
            and cls is BAD
            and params.max_link_density < p.link_density <= options.max_link_density
        ):
            cls = context_free_class(p, relaxed_params)
        if (
            options.credits_inside
            and is_inside
            and cls is BAD
            and p.length > params.length_high
            and not p.in_select
            and (COPYRIGHT_CHAR in p.text or COPYRIGHT_CODE in p.text)
        ):
            # jusText's copyright rule is for footers ("(c) 2015 X. All rights
            # reserved"); a long block of the article with a photo credit is prose
            cls = context_free_class(p, relaxed_params or params, copyright=False)
            steps = options.inside_shift
        if steps:
            cls = _SCALE[max(0, min(3, _RANK[cls] + steps))]
        changed = changed or cls is not p.cf_class
        cf_classes.append(cls)
    if changed:
        headings = [p.heading for p in paragraphs]
        lengths = [p.length for p in paragraphs]
        final = revise(cf_classes, headings, lengths, params)
    else:
        final = [p.final_class for p in paragraphs]
    if options.fallback_to_container and GOOD not in final:
        # readability's last attempt: with too short an article it chooses again
        # without its conditional cleaning, so the fallback takes the container's
        # blocks before the cleaning (a gallery's short captions among more images
        # than paragraphs), the page furniture still left out
        candidate = (
            chosen
            if furniture is None
            else [c and not f for c, f in zip(chosen, furniture, strict=True)]
        )
        kept = _fallback_kept(paragraphs, candidate, options)
        if any(kept):
            cf_classes = [GOOD if k else cls for k, cls in zip(kept, cf_classes, strict=True)]
            final = [GOOD if k else cls for k, cls in zip(kept, final, strict=True)]
            changed = True
    if not changed:
        return tuple(paragraphs)
    return tuple(
        p if p.cf_class is cf and p.final_class is fin else reclassified(p, cf, fin)
        for p, cf, fin in zip(paragraphs, cf_classes, final, strict=True)
    )


def _kept_without_container(
    paragraphs: Sequence[Paragraph], unlikely: Sequence[int] | None, options: ContainerOptions
) -> tuple[Paragraph, ...]:
    """The fallback when nothing scored (no block of readability's 25
    characters): readability then takes the whole body as its article. Here
    only when the body is all text, no block of it page furniture, a link list
    or a hard-ruled bad block: a short note of a few lines is its text; a page
    with menus and link lists around nothing is a navigation page, with none."""
    limit = options.max_link_density
    if unlikely is not None and any(unlikely):
        return tuple(paragraphs)
    if any(p.text and (p.link_density > limit or _ruled_bad(p)) for p in paragraphs):
        return tuple(paragraphs)
    kept = _fallback_kept(paragraphs, [True] * len(paragraphs), options)
    return tuple(
        reclassified(p, GOOD, GOOD) if keep else p for p, keep in zip(paragraphs, kept, strict=True)
    )


def _fallback_kept(
    paragraphs: Sequence[Paragraph], candidate: Sequence[bool], options: ContainerOptions
) -> list[bool]:
    """Which blocks the fallback keeps when the classes keep none: the
    candidate's blocks with text (headings included), except link lists (link
    density above `max_link_density`, what readability's cleaning drops) and
    blocks the seed's hard rules make bad (images, copyright lines, <select>
    options). A candidate holding only link lists keeps nothing: the page's
    right answer is no text."""
    limit = options.max_link_density
    return [
        is_candidate and bool(p.text) and p.link_density <= limit and not _ruled_bad(p)
        for p, is_candidate in zip(paragraphs, candidate, strict=True)
    ]


@functools.lru_cache(maxsize=64)
def compiled_container_pass(options: ContainerOptions) -> bool:
    """Whether `container_pass` runs compiled for these options: the compiled
    pass was built and every option it does not know (one added to
    ContainerOptions after it) is at its default, where it changes nothing."""
    if _fast is None:
        return False
    known = _fast.CONTAINER_FIELDS | WALK_FIELDS | BEFORE_FIELDS | AFTER_FIELDS
    return all(f.name in known or getattr(options, f.name) == f.default for f in fields(options))


#: ContainerOptions read by the segmentation walk, not by the container pass.
WALK_FIELDS = frozenset({"page_links_only", "drop_hidden_inline"})
#: ContainerOptions read before the container pass, for the furniture marks it takes
#: (corpus_crawler.wrappers).
BEFORE_FIELDS = frozenset({"unwrap_layouts"})
#: ContainerOptions read by passes run after the container pass (`code_pass`).
AFTER_FIELDS = frozenset(
    {
        "drop_program_code",
        "standfirst_levels",
        "standfirst_named",
        "figures_context_free",
        "drop_dangling_labels",
        "drop_comment_titles",
    }
)


def preset_passes(
    paragraphs: Sequence[Paragraph],
    params: JustextParams,
    options: ContainerOptions,
    unlikely: Sequence[int] | None = None,
    stated: Mapping[str, int] | None = None,
    leads: Sequence[tuple[str, ...]] | None = None,
) -> tuple[Paragraph, ...]:
    """What a preset with a main container (`corpus`, `article`, `article-comments`)
    runs on jusText's classes: `container_pass`, then `standfirst_pass`,
    `figure_pass`, `code_pass`, `comment_title_pass` and `label_pass` where the
    options say so. The extractors, the tuning table and the error tools call this one
    function."""
    passed = container_pass(paragraphs, params, options, unlikely, stated=stated)
    if options.standfirst_levels:
        passed = standfirst_pass(
            passed,
            params,
            options.standfirst_levels,
            unlikely,
            leads if options.standfirst_named else None,
        )
    if options.figures_context_free:
        passed = figure_pass(passed)
    if options.drop_program_code:
        passed = code_pass(passed, params)
    if options.drop_comment_titles and unlikely is not None:
        passed = comment_title_pass(passed, unlikely, params.length_high)
    # last: it reads the final classes, which code_pass revises
    return label_pass(passed, params.length_low) if options.drop_dangling_labels else passed

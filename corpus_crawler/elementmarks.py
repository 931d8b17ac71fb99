"""What an element's attributes say about the text inside it (issue 13).

Marks read from the attributes during the one segmentation walk (the compiled
walk calls `element_marks`, or `furniture_marks` for a preset that reads no
stated mark, only for elements that carry one of `MARKED_ATTRIBUTES`, and caches
the answer per attribute set):

- HIDDEN: a browser does not show it (`hidden`, `aria-hidden="true"`, an inline
  style with `display: none` or `visibility: hidden`), as readability.js's
  `_isProbablyVisible` decides, or it is a NOSCRIPT element, which a browser
  running scripts never shows (readability removes them), or an IFRAME, whose
  content is a fallback no current browser shows (libxml2 keeps it as text:
  an ad's `<a href=...><img ...>` markup). Text nobody sees is not the page's
  text. Nor is a ruby annotation (RT, RP, RTC): the reading a browser sets
  above the base text, which as text falls between the base characters and
  splits every annotated word (子こども for 子ども, Japanese news for learners).
  Nor is a TEXTAREA's content, the default value of a form field: 1tv.ru's
  "code to paste in your blog" box held the article's HTML as text.
- UNLIKELY: its class or id names page furniture (comments, footers, menus,
  sidebars, share and related-post boxes...) and nothing that names content,
  or its ARIA role is navigation, a menu, a dialog or complementary content,
  or it is a `<footer>` or a `<form>` whose names do not say content (HTML's page
  footer, role contentinfo, and comment, search, login and sign-up forms;
  readability.js cleans both out of its article). The footer is an aside as well
  (ASIDE, ASIDE_ELEMENT). `<nav>` and `<aside>` are not furniture by their tags
  alone: sites write posts in `<aside class="blogPost">`.
  These are readability.js's `unlikelyCandidates` / `okMaybeItsACandidate`
  patterns and its role list, not tuned here, and words they predate:
  "newsletter" (a sign-up box inside the article; trafilatura lists it too),
  the names of a box about the writer under the article ("author-box",
  "author-bio", "about-author", "author-info", "contributor-bio", and the
  same without the hyphen: the biography every article of the author
  repeats, docs/presets-steps.md), and the comment section's name in other
  languages than English, which readability's English list misses ("komment":
  German, Scandinavian, Finnish; "koment": Polish, Czech, Slovak, the South
  Slavic languages; "coment": Spanish, Portuguese, Romanian, Catalan, and the
  misspelling; "reacties": Dutch; "yorum": Turkish; French "commentaires" and
  Italian "commenti" hold "comment").
  readability removes such elements before it looks for the article, and the
  presets leave their blocks out of the main-container scoring
  (configs/extractors/presets.yaml). A URL used as an id names nothing (gold
  sets wrap pages in `<text id=URL>`: ".../Newsletters/oct97.htm").

- ASIDE: furniture that is never the article: a comment section, a sidebar or
  a footer. Its class or id begins or ends with one of the words comment,
  comments, commentlist, disqus, replies, sidebar or footer (the name split
  at every character that is not a letter or digit: "comments-area",
  "js_replies", "primary-sidebar", "site-footer"); a word inside a longer name
  names a layout, not the element ("panel-two-col-sidebar-right-mix"), a word
  that contains one is another word ("commented"), and a URL used as an id is
  no name. The `corpus` and `article` presets keep asides out of the container
  even when they choose again with the furniture
  (ContainerOptions.retry_keeps_asides_out). An aside named by "sidebar" is a
  SIDEBAR too: a comment section inside one is a "recent comments" widget, not
  this page's thread (wrappers.sidebar_widgets).
- COMMENTS: an aside named by one of the comment words (comment, comments,
  commentlist, disqus, replies, and their translations: kommentare, komentarze,
  commentaires, commenti, comentarios, reacties, yorumlar... `_COMMENT_WORDS`):
  a reader's comment thread. Outside the
  container, `article` demotes its blocks with everything else, `article-comments`
  lifts them one class step, and `corpus` judges them as jusText does while it
  demotes other furniture (ContainerOptions.comment_shift and furniture_shift).
  A block in a reply form (a `<form>` that does not wrap the page) is furniture
  but no comment, however its fields are named (`segment.furniture`).

- ARTICLE: an article or the page's main content (an `<article>` or `<main>`
  element, or role="main") whose own class and id name no furniture. It ends the
  asides above it: its blocks do not carry their ASIDE mark. A sidebar does not
  hold the page's article, but a wrapper named for the layout it makes does
  ("penci_sidebar": the column that holds the post and the sidebar beside it),
  and the post in it is no aside. Two kinds of aside are not ended: a comment
  section (COMMENTS: HTML's own advice is an `<article>` per comment) and an
  `<aside>` or `<footer>` element named as an aside (ASIDE_ELEMENT: the tag
  says what the element is, where a class name may say what it holds; an
  `<article>` in it is a teaser of another page).

- NEGATIVE: a table, list, div, section, aside, header or footer
  (WEIGHED_TAGS) whose class and id weigh under zero by readability's class weight
  (readability.js `_getClassWeight`: -25 for a class or id matching its
  NEGATIVE pattern, +25 for one matching POSITIVE, each attribute weighed on
  its own): "promo_holder", "byline-meta", "share-buttons". readability's
  conditional cleaning drops such an element from inside its article unless
  its paragraphs score it back up; the `article` preset does
  (ContainerOptions.clean_negative_names).
- BODY: the element says it is the article's body (`itemprop="articleBody"`,
  schema.org microdata). readability-lxml takes such a candidate over the best
  score when few of its characters are links; the `article` preset does
  (ContainerOptions.article_body).

- LEAD: the element names itself the article's lead: a part of its class or id
  (split at non-letters and camelCase) is a standfirst's name (lead, dek, excerpt,
  intro, perex, chapo...), and no part names a picture (a "lead-asset" is the lead
  image); or its `itemprop` is description or abstract. The standfirst pass lets
  such a block in farther from the title (ContainerOptions.standfirst_named).

A block carries the marks of its element and of every ancestor. NEGATIVE and
BODY (`STATED`) name one element, not a subtree: the walk also lists, per block,
which of its ancestors carry them (segment.Segment.stated).

One more attribute is read by the walk when a preset asks (`page_links_only`):
whether an <a> links to a page at all (`links_elsewhere`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

HIDDEN = 1
UNLIKELY = 2
ASIDE = 4
NEGATIVE = 8
BODY = 16
#: An aside that is a comment section (a subset of ASIDE, so of UNLIKELY).
COMMENTS = 32
#: An article or main content not named as furniture: the asides above it end there.
ARTICLE = 64
#: An `<aside>` or `<footer>` element named as an aside: no ARTICLE ends it.
ASIDE_ELEMENT = 128
#: The element names itself the article's lead (a standfirst, summary, dek...) or
#: states it is the page's description (itemprop): read by the standfirst pass.
LEAD = 256
#: An aside named as a sidebar (a subset of ASIDE): a comment section inside one is a
#: widget of other pages' comments, not this page's thread (wrappers.page_furniture).
#: An ARTICLE ends it as it ends the aside.
SIDEBAR = 512
#: The marks an ARTICLE ends above it (elementmarks.inherited).
ENDED_BY_ARTICLE = ASIDE | SIDEBAR
#: The marks an element states about itself (NEGATIVE, BODY: read by `article`).
STATED = NEGATIVE | BODY
#: The marks listed per element above each block (Segment.stated): the stated ones and
#: the furniture (corpus_crawler.wrappers tells a layout wrapper from an aside by them).
RECORDED = STATED | UNLIKELY | ASIDE | COMMENTS | ASIDE_ELEMENT | LEAD | SIDEBAR
#: The asides an ARTICLE does not end.
UNENDED_ASIDES = COMMENTS | ASIDE_ELEMENT

#: Attributes the walk reads; an element with none of them (and none of MARKED_TAGS) has no marks.
MARKED_ATTRIBUTES = ("class", "id", "role", "hidden", "aria-hidden", "style", "itemprop")
#: Elements whose content a browser never shows: NOSCRIPT when it runs scripts, and an
#: IFRAME's fallback content (libxml2 keeps it as text; a browser shows the framed page);
#: and ruby annotations, shown above the text they annotate, not in it.
RUBY_ANNOTATION_TAGS = frozenset(("rt", "rp", "rtc"))
#: A form field's text: a TEXTAREA's content is the field's default value (a blog
#: embed code in HTML, a prefilled message), which readability.js cleans out.
FIELD_TAGS = frozenset(("textarea",))
HIDDEN_TAGS = frozenset(("noscript", "iframe")) | RUBY_ANNOTATION_TAGS | FIELD_TAGS
#: Elements that hold an article or a page's main content (ARTICLE).
CONTENT_TAGS = frozenset(("article", "main"))
#: Elements that are asides by their tag, when their names say so too (ASIDE_ELEMENT).
ASIDE_TAGS = frozenset(("aside", "footer"))
#: Elements that are page furniture by their tag, unless their names say content, and
#: the marks they carry: HTML's page `<footer>` (role contentinfo) is an aside too; a
#: `<form>` (a comment, search, login or sign-up form) is furniture, as readability.js
#: cleans forms out of its article. A form that wraps a whole page (ASP.NET's
#: `aspnetForm`) leaves too little for a container, and the retry counts it again.
_FURNITURE_TAGS = {"footer": UNLIKELY | ASIDE | ASIDE_ELEMENT, "form": UNLIKELY}
#: Elements marked by their tag alone, without a marked attribute.
MARKED_TAGS = HIDDEN_TAGS | CONTENT_TAGS | frozenset(_FURNITURE_TAGS)

# readability.js REGEXPS.unlikelyCandidates (and "newsletter", the author-box names, the
# cookie and consent banners' names) and
# okMaybeItsACandidate: plain substrings, matched case-blind. Substring tests on the
# lowered names are ~10x faster than the equivalent case-blind regex alternation
# (which tried every word at every position), and the walk asks for every element
# with a class.
_UNLIKELY_WORDS = (
    "-ad-", "ai2html", "banner", "breadcrumbs", "combx", "comment", "community",
    "cover-wrap", "disqus", "extra", "footer", "gdpr", "header", "legends", "menu",
    "related", "remark", "replies", "rss", "shoutbox", "sidebar", "skyscraper", "social",
    "sponsor", "supplemental", "ad-break", "agegate", "pagination", "pager", "popup",
    "yom-remote", "newsletter",
    "komment", "koment", "coment", "reacties", "yorum",
    "author-box", "authorbox", "author-bio", "authorbio", "about-author", "aboutauthor",
    "author-info", "authorinfo", "contributor-bio",
    "cookie-", "cookies-", "cookie_", "cookielaw", "cookieconsent", "consent-", "-consent",
    "consent_",
)  # fmt: skip
_MAYBE_CONTENT_WORDS = ("and", "article", "body", "column", "content", "main", "shadow")
# readability.js UNLIKELY_ROLES
_UNLIKELY_ROLES = frozenset(
    ("menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog")
)
# The comment words: readability's, and the words for a comment and for comments in
# German, Swedish/Danish/Norwegian, Finnish, Polish, Czech/Slovak/South Slavic,
# French, Italian, Spanish/Portuguese, Romanian, Dutch and Turkish (DAnIEL's Polish
# portals name theirs `komentarze`), and "coment(s)", the misspelling.
_COMMENT_WORDS = frozenset((
    "comment", "comments", "commentlist", "disqus", "replies",
    "kommentar", "kommentare", "kommentarer", "kommentit", "komentarz", "komentarze",
    "komentar", "komentare", "komentari", "commentaire", "commentaires", "commenti",
    "comentario", "comentarios", "comentarii", "coment", "coments", "reacties",
    "yorum", "yorumlar",
))  # fmt: skip
_ASIDE_WORDS = _COMMENT_WORDS | {"footer", "sidebar"}
# The aside words as substrings: `_aside_marks` splits the names into words only when
# one of these is in them (a quarter of the names that name furniture), and the split
# was two fifths of what marking a new template's element cost. Each holds an unlikely
# word ("komentarz": "koment"), so only names that name furniture can hold one.
_ASIDE_SUBSTRINGS = tuple(sorted(_ASIDE_WORDS))
_NAME_PARTS = re.compile(r"[^a-z0-9]+")
# readability.js REGEXPS.negative and REGEXPS.positive (the class weight): plain
# substrings matched case-blind, as readability matches them, but for its
# "hid", which must be a whole class name (^hid$, " hid " and the like)
_NEGATIVE_WORDS = (
    "-ad-", "hidden", "banner", "combx", "comment", "com-", "contact", "footer", "gdpr",
    "masthead", "media", "meta", "outbrain", "promo", "related", "scroll", "share",
    "shoutbox", "sidebar", "skyscraper", "sponsor", "shopping", "tags", "widget",
)  # fmt: skip
_POSITIVE_WORDS = (
    "article", "body", "content", "entry", "hentry", "h-entry", "main", "page",
    "pagination", "post", "text", "blog", "story",
)  # fmt: skip
# The words a template names its article's lead with (English, and the Italian,
# French, Czech/Slovak and Spanish names of the standfirst), matched as whole parts
# of a class or id split at non-letters and camelCase ("article-lead", "c-dek",
# "storySummary", "field-perex"), and the schema.org properties of one.
_LEAD_WORDS = frozenset((
    "lead", "lede", "standfirst", "dek", "deck", "excerpt", "intro",
    "subtitle", "subheadline", "subhead", "abstract", "description", "perex",
    "sommario", "chapo", "chapeau", "entradilla", "bajada",
))  # fmt: skip
_LEAD_SUBSTRINGS = tuple(sorted(_LEAD_WORDS))
_LEAD_PROPS = frozenset(("description", "abstract"))
# A lead named with a picture is the lead picture or its caption ("lead-asset",
# "media__description"): substrings, as readability matches its names.
_PICTURE_WORDS = (
    "asset", "caption", "credit", "figure", "gallery", "image", "img", "media", "photo",
    "picture", "video",
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: readability's weight of one class or id value that names content (+) or
#: furniture (-) (readability.js `_getClassWeight`).
CLASS_WEIGHT = 25
#: The elements readability cleans by their class weight (readability-lxml's
#: `sanitize`: tables, lists, divs, sections, asides, headers, footers); only
#: these are weighed (NEGATIVE).
WEIGHED_TAGS = frozenset({"table", "ul", "div", "aside", "header", "footer", "section"})
# The page itself and links are never furniture (readability skips body and a).
_NEVER_UNLIKELY = frozenset(("html", "body", "a"))


def _contains_any(text: str, words: tuple[str, ...]) -> bool:
    """Is one of `words` in `text`? (A plain loop: a generator in any() costs twice
    as much.)"""
    for word in words:  # noqa: SIM110
        if word in text:
            return True
    return False


# The word lists read in lowered class and id names, a bit each: in the names of an
# element (`_name_bits`) and in one class or id value for its weight (`_weight_bits`).
_UNLIKELY_BIT = 1
_MAYBE_CONTENT_BIT = 2
_LEAD_BIT = 4
_PICTURE_BIT = 8
_NEGATIVE_BIT = 16
_POSITIVE_BIT = 32
_ASIDE_BIT = 64
_NAME_LISTS = (
    (_UNLIKELY_WORDS, _UNLIKELY_BIT),
    (_MAYBE_CONTENT_WORDS, _MAYBE_CONTENT_BIT),
    (_LEAD_SUBSTRINGS, _LEAD_BIT),
    (_PICTURE_WORDS, _PICTURE_BIT),
    (_ASIDE_SUBSTRINGS, _ASIDE_BIT),
)
_WEIGHT_LISTS = ((_NEGATIVE_WORDS, _NEGATIVE_BIT), (_POSITIVE_WORDS, _POSITIVE_BIT))


def _python_name_bits(lowered: str) -> int:
    """The bits of the `_NAME_LISTS` that have a word in `lowered` (a substring),
    but `_PICTURE_BIT` only with `_LEAD_BIT`: the picture words are read only in a
    lead's names (`_lead_bits`), and a plain test of each list costs Python a
    call and up to 50 substring tests. The aside words are read only where an
    unlikely word is: each aside word holds one, so the bit is the same."""
    bits = 0
    if _contains_any(lowered, _UNLIKELY_WORDS):
        bits = _UNLIKELY_BIT
        if _contains_any(lowered, _ASIDE_SUBSTRINGS):
            bits |= _ASIDE_BIT
    if _contains_any(lowered, _MAYBE_CONTENT_WORDS):
        bits |= _MAYBE_CONTENT_BIT
    if _contains_any(lowered, _LEAD_SUBSTRINGS):
        bits |= _LEAD_BIT
        if _contains_any(lowered, _PICTURE_WORDS):
            bits |= _PICTURE_BIT
    return bits


def _python_weight_bits(lowered: str) -> int:
    """The bits of the `_WEIGHT_LISTS` that have a word in `lowered` (a substring)."""
    bits = _NEGATIVE_BIT if _contains_any(lowered, _NEGATIVE_WORDS) else 0
    if _contains_any(lowered, _POSITIVE_WORDS):
        bits |= _POSITIVE_BIT
    return bits


#: `_python_name_bits` and `_python_weight_bits`, compiled when built
#: (corpus_crawler/_names_fast.pyx): a walk meeting a new template asks them for
#: every element with a class or id, ~60 substring tests in Python, which made such
#: a page cost ~35% more than one of a known template. Two sets of lists, not one:
#: the weight is read per value, and the Python twins scan only the lists asked for.
_name_bits: Callable[[str], int]
_weight_bits: Callable[[str], int]
try:
    from ._names_fast import WordBits

    _name_bits = WordBits(_NAME_LISTS)
    _weight_bits = WordBits(_WEIGHT_LISTS)
except ImportError:  # not built: the same bits in Python
    _name_bits = _python_name_bits
    _weight_bits = _python_weight_bits


def _without_urls(lowered: str) -> str:
    """The names but those that are URLs (a URL used as a name names nothing)."""
    if "://" not in lowered:
        return lowered
    return " ".join(t for t in lowered.split() if "://" not in t)


def _furniture_bits(bits: int) -> bool:
    """Do names with these `_name_bits` (URLs left out) name page furniture and
    nothing that may be content?"""
    return bool(bits & _UNLIKELY_BIT) and not bits & _MAYBE_CONTENT_BIT


def _furniture_names(names: str) -> bool:
    """Do class and id name page furniture and nothing that may be content?"""
    return _furniture_bits(_name_bits(_without_urls(names.lower())))


def _name_parts(names: str) -> Iterator[list[str]]:
    """Per class or id value in `names` (lowered), its words: the parts between
    characters that are not letters or digits. A URL used as a name names nothing."""
    for token in names.lower().split():
        if "://" in token:
            continue
        parts = [part for part in _NAME_PARTS.split(token) if part]
        if parts:
            yield parts


def _aside_marks(names: str, bits: int) -> int:
    """ASIDE when these furniture names (whose lowered form has these `_name_bits`)
    begin or end with a word of an aside, with COMMENTS when one of those words names
    a comment section, else with SIDEBAR when one is "sidebar" (0: none of them)."""
    if not bits & _ASIDE_BIT:
        return 0
    marks = 0
    for parts in _name_parts(names):
        for word in (parts[0], parts[-1]):
            if word in _COMMENT_WORDS:
                return ASIDE | COMMENTS
            if word == "sidebar":
                marks = ASIDE | SIDEBAR
            elif word in _ASIDE_WORDS:
                marks |= ASIDE
    return marks


def _lead_bits(names: str, bits: int) -> bool:
    """Do class and id (`names`, whose lowered form has these `_name_bits`) name an
    article's lead (a standfirst, dek, excerpt...), and no picture?"""
    # A name part that is a lead word is in the lowered names as a substring: most
    # names hold none, and this test costs a tenth of splitting them into parts.
    if not bits & _LEAD_BIT or bits & _PICTURE_BIT:
        return False
    return any(not _LEAD_WORDS.isdisjoint(parts) for parts in _name_parts(_CAMEL.sub("-", names)))


def _lead_names(names: str) -> bool:
    """Do class and id name an article's lead (a standfirst, dek, excerpt...), and
    no picture?"""
    return _lead_bits(names, _name_bits(names.lower()))


def _name_weight(name: str | None) -> int:
    """readability's weight of one class or id value (0 when absent)."""
    if not name:
        return 0
    lowered = name.lower()
    bits = _weight_bits(lowered)
    weight = 0
    if bits & _NEGATIVE_BIT or "hid" in lowered.split(" "):
        weight -= CLASS_WEIGHT
    if bits & _POSITIVE_BIT:
        weight += CLASS_WEIGHT
    return weight


@functools.lru_cache(maxsize=4096)
def _hiding_style(style: str) -> bool:
    compact = "".join(style.split()).lower()
    return "display:none" in compact or "visibility:hidden" in compact


def clear_style_cache() -> None:
    """Forget the style attributes judged so far (segment.clear_mark_caches)."""
    _hiding_style.cache_clear()


def furniture_marks(
    tag: str,
    class_name: str | None,
    element_id: str | None,
    role: str | None,
    hidden: str | None,
    aria_hidden: str | None,
    style: str | None,
    itemprop: str | None = None,
) -> int:
    """The HIDDEN, UNLIKELY, ASIDE, COMMENTS, ASIDE_ELEMENT and ARTICLE bits of one
    element from its tag and attribute values (None: the attribute is absent):
    `element_marks` without the marks an element states about itself, for a walk
    whose preset reads none of them."""
    marks = 0
    if (
        tag in HIDDEN_TAGS
        or hidden is not None
        or (aria_hidden is not None and aria_hidden.strip().lower() == "true")
        or (style is not None and _hiding_style(style))
    ):
        marks |= HIDDEN
    if class_name or element_id:
        names = f"{class_name or ''} {element_id or ''}"
        lowered = names.lower()
        bits = _name_bits(lowered)
        named_furniture = _furniture_bits(
            bits if "://" not in lowered else _name_bits(_without_urls(lowered))
        )
    else:
        names = ""
        bits = 0
        named_furniture = False
    if tag not in _NEVER_UNLIKELY:
        if named_furniture:
            marks |= UNLIKELY | _aside_marks(names, bits)
            if marks & ASIDE and tag in ASIDE_TAGS:
                marks |= ASIDE_ELEMENT
        elif role is not None and role.strip().lower() in _UNLIKELY_ROLES:
            marks |= UNLIKELY
        elif (tag in CONTENT_TAGS or (role is not None and role.strip().lower() == "main")) and (
            not names or not _aside_marks(names, bits)
        ):
            marks |= ARTICLE
        elif tag in _FURNITURE_TAGS and not bits & _MAYBE_CONTENT_BIT:
            marks |= _FURNITURE_TAGS[tag]
    if (names and _lead_bits(names, bits)) or (
        itemprop is not None and not _LEAD_PROPS.isdisjoint(itemprop.split())
    ):
        marks |= LEAD
    return marks


def inherited(parent: int, own: int) -> int:
    """The marks of an element whose parent carries `parent` and which carries `own`
    itself: its ancestors' and its own, but for the aside an ARTICLE ends."""
    if own & ARTICLE and not parent & UNENDED_ASIDES:
        parent &= ~ENDED_BY_ARTICLE
    return parent | own


def element_marks(
    tag: str,
    class_name: str | None,
    element_id: str | None,
    role: str | None,
    hidden: str | None,
    aria_hidden: str | None,
    style: str | None,
    itemprop: str | None = None,
) -> int:
    """The marks of one element (the bits of `furniture_marks`, NEGATIVE and BODY)
    from its tag and attribute values (None: the attribute is absent)."""
    marks = furniture_marks(tag, class_name, element_id, role, hidden, aria_hidden, style, itemprop)
    if (
        tag in WEIGHED_TAGS
        and (class_name or element_id)
        and _name_weight(class_name) + _name_weight(element_id) < 0
    ):
        marks |= NEGATIVE
    if itemprop is not None and "articleBody" in itemprop.split():
        marks |= BODY
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

"""Segmentation: a preprocessed tree -> text blocks (seed 000, "Introduction").

Blocks split on the seed's block-level tags and on runs of two or more BR.
The compiled walker (_segment_fast.pyx) does it in one pass over libxml2's
nodes; the pure-Python one, used without a compiler and as its specification
in the tests, walks with lxml's C iterator `iterwalk` and computes paths only
for the blocks that have text, once per element (cached), instead of for
every tag as jusText's SAX handler does.

The `reference` variant keeps jusText 3.0.2's segmentation quirks so that its
output can be reproduced exactly: no image blocks, whitespace-only text nodes are skipped
(which glues `<b>a</b> <i>b</i>` into "ab"; the seed variant keeps the space), and
link characters are counted per text node before stripping.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import NamedTuple

from lxml import etree

from .elementmarks import (
    ASIDE,
    COMMENTS,
    HIDDEN,
    LEAD,
    MARKED_ATTRIBUTES,
    MARKED_TAGS,
    RECORDED,
    STATED,
    UNLIKELY,
    clear_style_cache,
    element_marks,
    furniture_marks,
    inherited,
    links_elsewhere,
)
from .invisible import INVISIBLE_CLASS, SOFT_HYPHEN, shows_nothing
from .xpaths import last_tag

_fast: ModuleType | None
try:  # the compiled walker (corpus_crawler/_segment_fast.pyx), built by pip install
    from . import _segment_fast as _fast
except ImportError:  # pragma: no cover - no compiler where it was installed
    _fast = None

#: Seed 000's block-level tags (plus BODY, so text outside it never merges in).
SEED_BLOCK_TAGS = frozenset(
    [
        "body",
        "blockquote",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "div",
        "dl",
        "dt",
        "fieldset",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "legend",
        "li",
        "optgroup",
        "option",
        "p",
        "pre",
        "table",
        "td",
        "textarea",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)
#: jusText 3.0.2's PARAGRAPH_TAGS (the same list; BODY included there too).
REFERENCE_BLOCK_TAGS = SEED_BLOCK_TAGS

HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))

#: More blocks than this and a page is dropped as too large: each block costs
#: ~1.3 KB and ~15 us, and 20 MB of `<p>x</p>` would be 2.5 million of them.
DEFAULT_MAX_BLOCKS = 100_000

# C0/C1 controls that character references (`&#4;`) bring back after decoding.
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# What a page's text needs for a second look: a control character or an invisible one.
_CONTROL_OR_INVISIBLE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{INVISIBLE_CLASS}]")

_NEWLINE_RUN = re.compile(r"\s*[\n\r]\s*")
_SPACE_RUN = re.compile(r"[^\S\n\r]+")


class Segment(NamedTuple):
    """A block before classification."""

    text: str
    link_chars: int
    dom_path: str
    xpath: str
    images: int
    #: `elementmarks` bits (HIDDEN, UNLIKELY...) of the block's element and its
    #: ancestors; 0 unless `segment(..., marked=True)`.
    marks: int = 0
    #: (xpath, bits) of the block's element and ancestors that carry a mark of
    #: elementmarks.RECORDED (NEGATIVE, BODY when `stated`; the furniture marks),
    #: outermost first; () unless `marked`.
    stated: tuple[tuple[str, int], ...] = ()


def composed(segments: list[Segment]) -> list[Segment]:
    """The segments with their texts in Unicode NFC.

    Decomposed text is real on the web: pages written on macOS (`fu\u0308r`), and
    every page decoded from windows-1258 (Vietnamese: the code page has combining
    tone marks). Left so, its words miss the stoplists (NFC), the same word is two
    types in the corpus and a query in NFC finds neither. ASCII blocks (most) are
    passed over; the rest cost ~8 us a page on the gold pages.
    """
    out = segments
    for index, item in enumerate(segments):
        text = item.text
        if not text.isascii():
            nfc = unicodedata.normalize("NFC", text)
            if nfc != text:
                if out is segments:
                    out = list(segments)
                out[index] = item._replace(text=nfc)
    return out


def normalize_whitespace(text: str) -> str:
    """A whitespace run becomes LF if it holds a line break, else one space (as jusText)."""
    if "\n" in text or "\r" in text:
        text = _NEWLINE_RUN.sub("\n", text)
    return _SPACE_RUN.sub(" ", text)


def block_text(text: str) -> str:
    """`normalize_whitespace(text).strip()`, with str methods instead of regexes (hot path)."""
    if "\n" not in text and "\r" not in text:
        return " ".join(text.split())
    # A run holding CR or LF becomes one LF: split lines, fold each, drop blank ones.
    lines = (" ".join(line.split()) for line in text.replace("\r", "\n").split("\n"))
    return "\n".join([line for line in lines if line])


def stripped_length(text: str) -> int:
    """len(normalize_whitespace(text).strip())."""
    return len(" ".join(text.split()))


def normalized_length(text: str) -> int:
    """len(normalize_whitespace(text)) for a text that is not blank."""
    return len(" ".join(text.split())) + text[0].isspace() + text[-1].isspace()


class _Paths:
    """dom path and xpath of elements, computed on demand and cached per element.

    A parent's children are numbered once, in one pass, so a page with 100k
    sibling blocks costs linear time, not quadratic.
    """

    __slots__ = ("_cache", "_orders", "_root")

    def __init__(self, root: etree._Element) -> None:
        self._root = root
        self._cache: dict[etree._Element, tuple[str, str]] = {}
        self._orders: dict[etree._Element, dict[etree._Element, int]] = {}

    def _order(self, node: etree._Element) -> int:
        parent = node.getparent()
        if parent is None:
            return 1
        orders = self._orders.get(parent)
        if orders is None:
            counts: dict[str, int] = {}
            orders = {}
            for child in parent.iterchildren(etree.Element):
                tag = child.tag
                counts[tag] = orders[child] = counts.get(tag, 0) + 1
            self._orders[parent] = orders
        return orders[node]

    def of(self, el: etree._Element | None) -> tuple[str, str]:
        if el is None:
            return "", "/"
        cache = self._cache
        found = cache.get(el)
        if found is not None:
            return found
        # Iterative: hostile pages nest deeply.
        chain = []
        node: etree._Element | None = el
        while node is not None and node not in cache:
            chain.append(node)
            node = None if node is self._root else node.getparent()
        dom, xpath = ("", "") if node is None else cache[node]
        for node in reversed(chain):
            tag = node.tag
            order = 1 if node is self._root else self._order(node)
            dom = f"{dom}.{tag}" if dom else tag
            xpath = f"{xpath}/{tag}[{order}]"
            cache[node] = (dom, xpath)
        return cache[el]


def _walk_python(
    root: etree._Element,
    reference: bool,
    max_blocks: int = DEFAULT_MAX_BLOCKS,
    *,
    page_links_only: bool = False,
    drop_hidden_inline: bool = False,
) -> list[tuple[list[str], int, etree._Element | None, int]]:
    """Raw blocks: (text nodes, link characters, anchor element, images).

    Stops after max_blocks + 1 blocks: the caller treats more than max_blocks
    as a page too large to segment. `page_links_only` and `drop_hidden_inline`
    as in `segment`.
    """
    block_tags = REFERENCE_BLOCK_TAGS if reference else SEED_BLOCK_TAGS
    # jusText 3.0.2 has no image blocks; the seed classifies them BAD.
    image_tag = "" if reference else "img"
    # jusText 3.0.2 skips whitespace-only text nodes, gluing `<b>a</b> <i>b</i>`
    # into "ab"; the seed keeps them as the space a browser shows.
    keep_blank = not reference
    raw: list[tuple[list[str], int, etree._Element | None, int]] = []
    append_raw = raw.append
    # jusText counts a link's edge spaces, so its link density can pass 1; the
    # seed counts the characters the block text keeps.
    link_length = normalized_length if reference else stripped_length

    nodes: list[str] = []
    link_chars = 0
    images = 0
    anchor: etree._Element | None = None
    in_link = False
    after_br = False

    walker = etree.iterwalk(root, events=("start", "end", "pi"))
    skipped: etree._Element | None = None
    for event, el in walker:
        if skipped is not None:
            # the end of a hidden inline element: only its tail is shown
            skipped = None
            content = None if el is root else el.tail
        elif event == "start":
            tag = el.tag
            if (
                drop_hidden_inline
                and tag not in block_tags
                and tag != "br"
                and _own_marks(el) & HIDDEN
            ):
                walker.skip_subtree()
                skipped = el
                continue
            if tag in block_tags or (after_br and tag == "br"):
                if nodes or images:
                    append_raw((nodes, link_chars, anchor, images))
                    nodes = []
                    link_chars = 0
                    images = 0
                    if len(raw) > max_blocks:
                        return raw
                anchor = el
            elif tag == "br":
                after_br = True
                nodes.append(" ")
            else:
                after_br = False
                if tag == "a":
                    in_link = not page_links_only or links_elsewhere(el.get("href"))
                elif tag == image_tag:
                    images += 1
            content = el.text
        elif event == "end":
            tag = el.tag
            if tag in block_tags:
                if nodes or images:
                    append_raw((nodes, link_chars, anchor, images))
                    nodes = []
                    link_chars = 0
                    images = 0
                    if len(raw) > max_blocks:
                        return raw
                anchor = None if el is root else el.getparent()
            else:
                if tag == "a":
                    in_link = False
                if keep_blank and not nodes and tag != "br" and anchor is not None and anchor is el:
                    # A block begun at `</option>` sits in its SELECT; text after
                    # `</select>` is not select content (jusText keeps the path).
                    anchor = None if anchor is root else anchor.getparent()
            # jusText reads the tree as SAX events from the root, which end
            # with the root's tail: a fragment's text after its </body>
            content = el.tail
        else:
            # A processing instruction's tail is text (jusText keeps PIs).
            content = el.tail
        if content:
            if not content.isspace():
                nodes.append(content)
                if in_link:
                    link_chars += link_length(content)
                after_br = False
            elif keep_blank:
                # the seed keeps it (a newline in it stays a line break)
                nodes.append(content)
    if nodes or images:
        append_raw((nodes, link_chars, anchor, images))

    return raw


# Pages of a site repeat their template's attribute sets.
_cached_marks = functools.lru_cache(maxsize=4096)(element_marks)
# The same without the marks elements state about themselves (segment(stated=False)).
_cached_furniture_marks = functools.lru_cache(maxsize=4096)(furniture_marks)


def clear_mark_caches() -> None:
    """Forget the marks of every attribute set met so far (both walkers' caches), as
    a page of a template never seen before finds them: for benchmarks and tests."""
    _cached_marks.cache_clear()
    _cached_furniture_marks.cache_clear()
    clear_style_cache()
    if _fast is not None:
        _fast.clear_mark_caches()


def _own_marks(el: etree._Element) -> int:
    """elementmarks bits of one element, without its ancestors'."""
    attrib = el.attrib
    if el.tag not in MARKED_TAGS and not any(name in attrib for name in MARKED_ATTRIBUTES):
        return 0
    return _cached_marks(el.tag, *(attrib.get(n) for n in MARKED_ATTRIBUTES))


class _Marks:
    """elementmarks bits of elements and their ancestors, with the ancestors
    that state a mark of their own (elementmarks.RECORDED), cached per element."""

    __slots__ = ("_cache", "_marker", "_paths", "_root")

    def __init__(
        self, root: etree._Element, paths: _Paths, marker: Callable[..., int] = _cached_marks
    ) -> None:
        self._root = root
        self._paths = paths
        self._marker = marker
        self._cache: dict[etree._Element, tuple[int, tuple[tuple[str, int], ...]]] = {}

    def of(self, el: etree._Element | None) -> tuple[int, tuple[tuple[str, int], ...]]:
        if el is None:
            return 0, ()
        cache = self._cache
        chain = []
        node: etree._Element | None = el
        while node is not None and node not in cache:
            chain.append(node)
            node = None if node is self._root else node.getparent()
        marks, stated = (0, ()) if node is None else cache[node]
        for node in reversed(chain):
            attrib = node.attrib
            if node.tag in MARKED_TAGS or any(name in attrib for name in MARKED_ATTRIBUTES):
                own = self._marker(node.tag, *(attrib.get(n) for n in MARKED_ATTRIBUTES))
                marks = inherited(marks, own)
                if own & RECORDED:
                    stated = (*stated, (self._paths.of(node)[1], own & RECORDED))
            cache[node] = (marks, stated)
        return marks, stated


class TooManyBlocks(ValueError):
    """The page has more blocks than `max_blocks`."""


def furniture(segments: Sequence[Segment]) -> list[int]:
    """Per block, its furniture marks: elementmarks.UNLIKELY when it lies in page
    furniture, with ASIDE when that furniture is a comment section, a sidebar or a
    footer, and COMMENTS when it is a comment section (0: neither); what the
    presets' container pass takes as `unlikely`.

    A block in a `<form>` is not a reader's comment, whatever the form's fields are
    named: WordPress names the reply form's labels `comment-form-author`,
    `comment-notes` ("Your email address will not be published"), and a thread's
    reply form sits inside it. Its COMMENTS mark is dropped (it stays furniture).
    A form that holds most of the page's blocks is not one a reader fills in but a
    framework's wrapper (ASP.NET WebForms posts the whole page back through one
    `<form>`), and the comments inside it stay comments."""
    marks = [s.marks & (UNLIKELY | ASIDE | COMMENTS) for s in segments]
    commented = [i for i, m in enumerate(marks) if m & COMMENTS]
    if not commented:
        return marks
    read: dict[int, tuple[str, ...]] = {}  # the forms in a chain; chains are shared
    small: dict[str, bool] = {}
    wrapper = len(segments) / 2
    for i in commented:
        chain = segments[i].stated
        forms = read.get(id(chain))
        if forms is None:
            # a form is furniture by its tag (elementmarks.UNLIKELY), so it is in the
            # chain; one whose names say content (`id="mainForm"`) is not, nor read here
            forms = read[id(chain)] = tuple(
                x for x, _ in chain if "/form[" in x and last_tag(x) == "form"
            )
        for form in forms:
            if form not in small:
                small[form] = _blocks_under(segments, form, i) <= wrapper
            if small[form]:
                marks[i] &= ~COMMENTS
                break
    return marks


def _blocks_under(segments: Sequence[Segment], xpath: str, inside: int) -> int:
    """How many blocks lie in the element at `xpath`, given block `inside` does: a
    subtree's blocks follow one another in the walk's order."""
    prefix = xpath + "/"

    def within(k: int) -> bool:
        path = segments[k].xpath
        return path == xpath or path.startswith(prefix)

    first = inside
    while first > 0 and within(first - 1):
        first -= 1
    end = inside + 1
    while end < len(segments) and within(end):
        end += 1
    return end - first


def stated_elements(segments: Sequence[Segment]) -> dict[str, int]:
    """xpath -> elementmarks.STATED bits of the elements above the blocks that
    state one (NEGATIVE, BODY): what the presets' container pass takes as `stated`."""
    found: dict[str, int] = {}
    for s in segments:
        for xpath, bits in s.stated:
            if bits & STATED:
                found[xpath] = bits & STATED
    return found


def lead_elements(segments: Sequence[Segment]) -> list[tuple[str, ...]]:
    """Per block, the xpaths of the elements above it that name an article's lead
    (elementmarks.LEAD), outermost first: what the standfirst pass takes as `leads`."""
    read: dict[int, tuple[str, ...]] = {}
    out = []
    for s in segments:
        chain = s.stated
        found = read.get(id(chain))
        if found is None:
            found = read[id(chain)] = tuple(xpath for xpath, bits in chain if bits & LEAD)
        out.append(found)
    return out


def segment(
    root: etree._Element,
    *,
    reference: bool = False,
    compiled: bool | None = None,
    max_blocks: int = DEFAULT_MAX_BLOCKS,
    marked: bool = False,
    stated: bool = True,
    page_links_only: bool = False,
    drop_hidden_inline: bool = False,
) -> list[Segment]:
    """Split the tree into text blocks in document order.

    `compiled` picks the walker (default: the compiled one when it was built);
    both give the same blocks. Raises TooManyBlocks past `max_blocks`.
    `marked` fills each block's `marks` from its element's and its ancestors'
    attributes (corpus_crawler.elementmarks) during the same walk; with
    `stated=False` only the hidden and furniture marks (no NEGATIVE or BODY, and
    only the furniture in `Segment.stated`): a preset that reads none of them does
    not weigh class names for them.

    Two options of the `article` preset (off: jusText's walk):
    `page_links_only` counts an <a>'s text as link text only when it links to a
    page (elementmarks.links_elsewhere: not a `javascript:`, empty or "#" href);
    `drop_hidden_inline` (with `marked`) leaves out an inline element a browser
    hides (elementmarks.HIDDEN: a MathML fallback span, NOSCRIPT) with its text,
    as `drop_hidden` in the presets leaves out a hidden block.
    """
    if drop_hidden_inline and not marked:
        raise ValueError("drop_hidden_inline reads the elements' marks: pass marked=True")
    if compiled is None:
        compiled = _fast is not None
    if compiled and _fast is not None:
        # text folded, empty blocks left out and paths found during the walk
        found = _fast.walk(
            root,
            reference,
            max_blocks,
            # uncached: the compiled walk keeps its own cache per attribute set
            (element_marks if stated else furniture_marks) if marked else None,
            Segment,
            page_links_only,
            drop_hidden_inline,
        )
        if found is None:
            raise TooManyBlocks(f"more than {max_blocks} blocks")
        blocks = found
    else:
        blocks = _segment_python(
            root, reference, max_blocks, marked, page_links_only, drop_hidden_inline, stated
        )
    if not reference:
        page = "".join([b.text for b in blocks])
        if _CONTROL_OR_INVISIBLE.search(page) is not None:
            controls = _CONTROL_CHARS.search(page) is not None
            blocks = [b for b in (_cleaned(b, controls) for b in blocks) if b.text or b.images]
    return blocks


def _cleaned(block: Segment, controls: bool) -> Segment:
    """The block without control characters (with `controls`: the page has some) and
    soft hyphens, and empty when all it holds is invisible (corpus_crawler.invisible)."""
    text = block.text
    if controls and _CONTROL_CHARS.search(text) is not None:
        text = block_text(_CONTROL_CHARS.sub("", text))
    if SOFT_HYPHEN in text:
        text = block_text(text.replace(SOFT_HYPHEN, ""))
    if text and shows_nothing(text):
        text = ""
    return block if text is block.text else block._replace(text=text)


def _segment_python(
    root: etree._Element,
    reference: bool,
    max_blocks: int,
    marked: bool = False,
    page_links_only: bool = False,
    drop_hidden_inline: bool = False,
    stated: bool = True,
) -> list[Segment]:
    raw = _walk_python(
        root,
        reference,
        max_blocks,
        page_links_only=page_links_only,
        drop_hidden_inline=drop_hidden_inline,
    )
    if len(raw) > max_blocks:
        raise TooManyBlocks(f"more than {max_blocks} blocks")
    paths = _Paths(root)
    marker = _cached_marks if stated else _cached_furniture_marks
    marks = _Marks(root, paths, marker) if marked else None
    blocks = []
    for nodes, link_chars, anchor, images in raw:
        text = block_text("".join(nodes))
        if text or images:
            dom_path, xpath = paths.of(anchor)
            block_marks, above = (0, ()) if marks is None else marks.of(anchor)
            blocks.append(Segment(text, link_chars, dom_path, xpath, images, block_marks, above))
    return blocks

"""Split a tree into Kimatu's "HTML text elements", each with its aspect.

A text element is the text of one block-level element (a `p`, `td`, `li`,
`h2`, the loose text of a `div`...) with its inline descendants; two `<br>` in a
row also end one, as they end a paragraph on screen. Its aspect (seed 003, 3.2)
is the tag name and the presentational attributes of the element, of the
inline formatting around all its words (`<p><b>...</b></p>`) and of a few
enclosing elements, because CSS makes `#sidebar p` and `#content p` look
different.

One pass of `etree.iterwalk`; features are counted once, when an element ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import NamedTuple

from lxml import etree

from ..elementmarks import RUBY_ANNOTATION_TAGS
from ..invisible import shows_nothing, without_soft_hyphens
from ._options import KimatuOptions
from ._text import boundary_count, normalize_space, word_count

_fast: ModuleType | None
try:  # the compiled walk (corpus_crawler/_kimatu_fast.pyx), built by pip install
    from .. import _kimatu_fast as _fast
except ImportError:  # no compiler: the walk below
    _fast = None

BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
        "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
        "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "header",
        "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol", "optgroup",
        "option", "p", "pre", "section", "select", "summary", "table", "tbody", "td",
        "textarea", "tfoot", "th", "thead", "title", "tr", "ul",
    }
)  # fmt: skip
#: Elements whose content is never page text.
SKIP_TAGS = frozenset(
    {
        "applet", "audio", "canvas", "embed", "head", "iframe", "map", "math", "meta",
        "noscript", "object", "script", "style", "svg", "template", "video",
    }
    | RUBY_ANNOTATION_TAGS  # a reading above the text, not in it
)  # fmt: skip
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_ITEM_TAGS = frozenset({"li", "dd", "dt"})
_SELECT_TAGS = frozenset({"select", "option", "optgroup", "textarea"})
#: Inline elements counted in an aspect (`<p><b><i><font>` ...): bounds the work per word.
MAX_INLINE_ASPECT = 8
#: Deeper elements keep only their last steps in dom_path/xpath, so that a
#: pathologically nested page costs linear, not quadratic, memory.
MAX_PATH_STEPS = 256


class TextElement(NamedTuple):
    """One text element with every feature the ratios need, counted once (a named
    tuple: the walk makes ~170 a page, and a frozen dataclass's `__init__` cost a
    third of the compiled walk)."""

    #: Its place in the page's sequence of text elements, from 0.
    number: int
    text: str
    tag: str
    aspect: str
    length: int
    word_count: int
    boundary_count: int
    link_count: int
    link_chars: int
    dom_path: str
    xpath: str
    heading: bool
    in_select: bool


@dataclass(slots=True)
class _Frame:
    """One open element of the walk."""

    el: etree._Element
    tag: str
    #: Position among its parent's children of the same tag (xpath step index).
    position: int
    block: bool
    child_counts: dict[str, int] = field(default_factory=dict)
    #: Tag plus aspect attributes, computed when an aspect first needs it.
    look: str | None = None
    #: Its dom_path and xpath (the frames from the root to it), computed when a
    #: text element first needs them, from its parent's.
    paths: tuple[str, str] | None = None


@dataclass(slots=True)
class _Pending:
    """The text element being collected inside the innermost open block."""

    block_depth: int
    parts: list[str] = field(default_factory=list)
    link_count: int = 0
    link_chars: int = 0
    #: Inline elements around every word so far (None before the first word).
    inline: list[_Frame] | None = None
    br_pending: bool = False
    has_words: bool = False


class _Walker:
    def __init__(self, options: KimatuOptions) -> None:
        self.options = options
        self.frames: list[_Frame] = []
        #: Indices into `frames` of the open block elements.
        self.blocks: list[int] = []
        self.pending: list[_Pending] = []
        self.elements: list[TextElement] = []
        self.link_depth = 0
        self.heading_depth = 0
        self.select_depth = 0

    # ------------------------------------------------------------------ frames
    def descriptor(self, frame: _Frame) -> str:
        if frame.look is None:
            parts = [frame.tag]
            for name in self.options.aspect_attributes:
                value = frame.el.get(name)
                if value:
                    parts.append(f"[{name}={element_text(value).lower()}]")
            frame.look = "".join(parts)
        return frame.look

    def push(self, el: etree._Element, tag: str) -> _Frame:
        parent = self.frames[-1] if self.frames else None
        position = 1
        if parent is not None:
            position = parent.child_counts.get(tag, 0) + 1
            parent.child_counts[tag] = position
        # The root always collects text, even when it is a bare inline element.
        block = tag in BLOCK_TAGS or parent is None
        frame = _Frame(el, tag, position, block)
        self.frames.append(frame)
        if block:
            # The enclosing block's text so far is one text element; its text
            # after this block is the next (this flush leaves it a fresh one).
            self.flush()
            self.blocks.append(len(self.frames) - 1)
            self.pending.append(_Pending(len(self.blocks)))
        return frame

    def pop(self) -> None:
        if self.frames[-1].block:
            pending = self.pending[-1]
            if pending.has_words:
                self.flush()
            self.pending.pop()
            self.blocks.pop()
        self.frames.pop()

    # ------------------------------------------------------------------ text
    def current(self) -> _Pending | None:
        return self.pending[-1] if self.pending else None

    def add_text(self, text: str | None) -> None:
        if not text or not self.pending:
            return
        pending = self.pending[-1]
        pending.parts.append(text)
        if not text.isspace():
            pending.has_words = True
            pending.br_pending = False
            if self.options.aspect_inline:
                self._narrow_inline(pending)
            if self.link_depth:
                pending.link_chars += len(element_text(text))

    def _narrow_inline(self, pending: _Pending) -> None:
        start = self.blocks[pending.block_depth - 1] + 1
        around = self.frames[start : start + MAX_INLINE_ASPECT]
        if pending.inline is None:
            pending.inline = around
            return
        common = 0
        for mine, now in zip(pending.inline, around, strict=False):
            if mine is not now:
                break
            common += 1
        del pending.inline[common:]

    def line_break(self) -> None:
        pending = self.current()
        if pending is None:
            return
        if pending.br_pending:
            self.flush()
        else:
            pending.parts.append(" ")
            pending.br_pending = True

    def link(self) -> None:
        pending = self.current()
        if pending is not None:
            pending.link_count += 1

    def flush(self) -> None:
        """End the current text element (if it has text) and start a new one."""
        if not self.pending:
            return
        pending = self.pending[-1]
        if not pending.has_words:
            # Only whitespace so far (the common case between blocks): reuse it.
            if pending.parts:
                pending.parts.clear()
            pending.link_count = 0
            pending.br_pending = False
            return
        self.pending[-1] = _Pending(pending.block_depth)
        text = element_text("".join(pending.parts))
        if not text:
            return
        block_index = self.blocks[pending.block_depth - 1]
        block = self.frames[block_index]
        levels = self.options.aspect_ancestor_levels
        ancestors = self.frames[max(0, block_index - levels) : block_index]
        aspect = "/".join(self.descriptor(frame) for frame in ancestors)
        aspect += f"/{self.descriptor(block)}"
        if pending.inline:
            aspect += "".join(f">{self.descriptor(frame)}" for frame in pending.inline)
        dom_path, xpath = self.paths(block_index)
        self.elements.append(
            TextElement(
                len(self.elements),
                text,
                block.tag,
                aspect,
                len(text),
                word_count(text),
                boundary_count(text),
                pending.link_count,
                min(pending.link_chars, len(text)),
                dom_path,
                xpath,
                self.heading_depth > 0,
                self.select_depth > 0,
            )
        )

    def paths(self, index: int) -> tuple[str, str]:
        """dom_path and xpath of the open frame at `index`: its last MAX_PATH_STEPS
        frames, built once per frame from its parent's."""
        frames = self.frames
        if index >= MAX_PATH_STEPS:
            # a pathologically deep page: a window of the path, made afresh
            path = frames[index + 1 - MAX_PATH_STEPS : index + 1]
            return (
                ".".join(frame.tag for frame in path),
                "/" + "".join(f"/{frame.tag}[{frame.position}]" for frame in path),
            )
        start = index
        while start >= 0 and frames[start].paths is None:
            start -= 1
        dom_path, xpath = ("", "") if start < 0 else frames[start].paths  # type: ignore[misc]
        for frame in frames[start + 1 : index + 1]:
            dom_path = f"{dom_path}.{frame.tag}" if dom_path else frame.tag
            xpath = f"{xpath}/{frame.tag}[{frame.position}]"
            frame.paths = (dom_path, xpath)
        return dom_path, xpath


def _tag_name(el: etree._Element) -> str | None:
    tag = el.tag
    if not isinstance(tag, str):
        return None  # comment or processing instruction
    name = _TAG_NAMES.get(tag)
    if name is None:
        name = tag.rpartition("}")[2] if tag.startswith("{") else tag
        # lxml's HTML parser lower-cases tag names already; other builders may not.
        name = name if name.islower() else name.lower()
        if len(_TAG_NAMES) < 4096:
            _TAG_NAMES[tag] = name
    return name


#: Raw tag -> the name the walk uses (a page has a few dozen distinct tags).
_TAG_NAMES: dict[str, str] = {}
#: What a start tag does besides opening a frame (the tag's counter, or a call).
_HEADING, _SELECT, _LINK, _BR = 1, 2, 3, 4
_ACTIONS = {
    **dict.fromkeys(HEADING_TAGS, _HEADING),
    **dict.fromkeys(_SELECT_TAGS, _SELECT),
    "a": _LINK,
    "br": _BR,
}


def element_text(text: str) -> str:
    """`normalize_space` of a text without its soft hyphens; "" when what is left
    shows nothing (corpus_crawler.invisible). Both walks fold every text with it."""
    text = normalize_space(without_soft_hyphens(text))
    return "" if shows_nothing(text) else text


def text_elements(
    root: etree._Element, options: KimatuOptions, *, compiled: bool | None = None
) -> tuple[TextElement, ...]:
    """The text elements of the tree under `root`, in document order.

    `compiled` picks the walk: the compiled twin in corpus_crawler/_kimatu_fast.pyx
    (the default when it is built; the same elements in half the time: 1.4 against
    2.8 ms a page, most of the rest being the text helpers both call) or this
    module's.
    """
    if compiled is None:
        compiled = _fast is not None
    if compiled and _fast is not None:
        return _fast.text_elements(
            root,
            options.aspect_attributes,
            options.aspect_inline,
            options.aspect_ancestor_levels,
            MAX_PATH_STEPS,
            MAX_INLINE_ASPECT,
            BLOCK_TAGS,
            SKIP_TAGS,
            HEADING_TAGS,
            _SELECT_TAGS,
            element_text,
            word_count,
            boundary_count,
            TextElement,
        )
    return _text_elements_python(root, options)


def _text_elements_python(root: etree._Element, options: KimatuOptions) -> tuple[TextElement, ...]:
    walker = _Walker(options)
    add_text = walker.add_text
    events = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    # Per open element, whether it opened a frame (-1: skipped) and what its start
    # did, undone at its end.
    undo: list[int] = []
    for event, el in events:
        if event == "start":
            tag = _tag_name(el)
            if tag is None or tag in SKIP_TAGS:
                events.skip_subtree()
                undo.append(-1)  # its end event comes: no frame, but the tail
                continue
            walker.push(el, tag)
            action = _ACTIONS.get(tag, 0)
            if action == _HEADING:
                walker.heading_depth += 1
            elif action == _SELECT:
                walker.select_depth += 1
            elif action == _LINK:
                if el.get("href") is not None:
                    walker.link_depth += 1
                    walker.link()
                else:
                    action = 0
            elif action == _BR:
                walker.line_break()
            undo.append(action)
            text = el.text
            if text:
                add_text(text)
        elif event == "end":
            action = undo.pop() if undo else -1
            if action >= 0:
                # Pop first: the element's text is flushed while its heading/select flags hold.
                walker.pop()
                if action == _HEADING:
                    walker.heading_depth -= 1
                elif action == _SELECT:
                    walker.select_depth -= 1
                elif action == _LINK:
                    walker.link_depth -= 1
            if el is not root:
                tail = el.tail
                if tail:
                    add_text(tail)
        elif el is not root:
            # A comment or processing instruction left in by a caller that did not
            # preprocess: invisible, but its tail is text.
            tail = el.tail
            if tail:
                add_text(tail)
    walker.flush()
    return tuple(walker.elements)

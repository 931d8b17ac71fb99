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

from lxml import etree

from ._options import KimatuOptions
from ._text import boundary_count, normalize_space, word_count

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
)  # fmt: skip
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_ITEM_TAGS = frozenset({"li", "dd", "dt"})
_SELECT_TAGS = frozenset({"select", "option", "optgroup", "textarea"})
#: Inline elements counted in an aspect (`<p><b><i><font>` ...): bounds the work per word.
MAX_INLINE_ASPECT = 8
#: Deeper elements keep only their last steps in dom_path/xpath, so that a
#: pathologically nested page costs linear, not quadratic, memory.
MAX_PATH_STEPS = 256


@dataclass(frozen=True, slots=True)
class TextElement:
    """One text element with every feature the ratios need, counted once."""

    index: int
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
                    parts.append(f"[{name}={normalize_space(value).lower()}]")
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
            self.flush()
            self.blocks.append(len(self.frames) - 1)
            self.pending.append(_Pending(len(self.blocks)))
        return frame

    def pop(self) -> None:
        if self.frames[-1].block:
            self.flush()
            self.pending.pop()
            self.blocks.pop()
            # The enclosing block's text resumes as a new text element.
            self.flush()
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
                pending.link_chars += len(normalize_space(text))

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
            pending.parts.clear()
            pending.link_count = 0
            pending.br_pending = False
            return
        self.pending[-1] = _Pending(pending.block_depth)
        text = normalize_space("".join(pending.parts))
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
        path = self.frames[max(0, block_index + 1 - MAX_PATH_STEPS) : block_index + 1]
        prefix = "" if block_index + 1 <= MAX_PATH_STEPS else "/"
        self.elements.append(
            TextElement(
                index=len(self.elements),
                text=text,
                tag=block.tag,
                aspect=aspect,
                length=len(text),
                word_count=word_count(text),
                boundary_count=boundary_count(text),
                link_count=pending.link_count,
                link_chars=min(pending.link_chars, len(text)),
                dom_path=".".join(frame.tag for frame in path),
                xpath=prefix + "".join(f"/{frame.tag}[{frame.position}]" for frame in path),
                heading=self.heading_depth > 0,
                in_select=self.select_depth > 0,
            )
        )


def _tag_name(el: etree._Element) -> str | None:
    tag = el.tag
    if not isinstance(tag, str):
        return None  # comment or processing instruction
    if tag.startswith("{"):
        tag = tag.rpartition("}")[2]
    # lxml's HTML parser lower-cases tag names already; other builders may not.
    return tag if tag.islower() else tag.lower()


def text_elements(root: etree._Element, options: KimatuOptions) -> tuple[TextElement, ...]:
    """The text elements of the tree under `root`, in document order."""
    walker = _Walker(options)
    events = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    for event, el in events:
        if event in ("comment", "pi"):
            # Left in by a caller that did not preprocess: invisible, but their tail is text.
            if el is not root:
                walker.add_text(el.tail)
            continue
        tag = _tag_name(el)
        if event == "start":
            if tag is None or tag in SKIP_TAGS:
                events.skip_subtree()
                continue
            walker.push(el, tag)
            if tag in HEADING_TAGS:
                walker.heading_depth += 1
            elif tag in _SELECT_TAGS:
                walker.select_depth += 1
            elif tag == "a" and el.get("href") is not None:
                walker.link_depth += 1
                walker.link()
            elif tag == "br":
                walker.line_break()
            walker.add_text(el.text)
        else:
            if tag is not None and tag not in SKIP_TAGS:
                # Pop first: the element's text is flushed while its heading/select flags hold.
                walker.pop()
                if tag in HEADING_TAGS:
                    walker.heading_depth -= 1
                elif tag in _SELECT_TAGS:
                    walker.select_depth -= 1
                elif tag == "a" and el.get("href") is not None:
                    walker.link_depth -= 1
            if el is not root:
                walker.add_text(el.tail)
    walker.flush()
    return tuple(walker.elements)

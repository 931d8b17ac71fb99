"""The text blocks of a decluttered page, kept and removed, as Paragraphs.

One walk over the marked tree (before anything is deleted): block and
paragraph tags end a block; text inside a removed subtree goes to a block of
its own, so an inline <span class="promo"> inside a kept paragraph shows up
as a separate BAD paragraph while the words around it stay together.
"""

from __future__ import annotations

from lxml import etree

from ..elementmarks import RUBY_ANNOTATION_TAGS
from ..invisible import shows_nothing, without_soft_hyphens
from ..model import Paragraph, ParagraphClass
from ._options import DeclutterOptions
from ._shake import Decision
from ._text import fold_space

_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_LIST_ITEM_TAGS = frozenset({"li", "dt", "dd"})

#: Pruned tags whose content is code, not text, or a ruby annotation (a reading set
#: above the text): not worth a BAD paragraph.
_SILENT_TAGS = frozenset({"script", "style", "template", "svg", "canvas"}) | RUBY_ANNOTATION_TAGS

#: Paths keep at most this many levels (the deepest ones, after "…"): a tree
#: nested thousands deep must not cost depth x paragraphs characters. Real
#: pages stay far below (the gold pages nest at most 37 deep).
MAX_PATH_DEPTH = 64


class _Block:
    """Text gathered for one paragraph."""

    __slots__ = (
        "decision",
        "dom_path",
        "kind",
        "link_pieces",
        "order",
        "pieces",
        "removed",
        "xpath",
    )

    def __init__(self, removed: bool) -> None:
        self.removed = removed
        self.pieces: list[str] = []
        self.link_pieces: list[str] = []
        self.order = 0
        self.decision: Decision | None = None
        self.dom_path = ""
        self.xpath = ""
        self.kind = "p"


class _Segmenter:
    """Paragraph state of one walk; `segment` drives it."""

    def __init__(self) -> None:
        # The open elements, one entry each: tag, xpath step ("/div[2]"), whether it
        # is inside a link, the decision that governs it, counts of its children by tag.
        self.tags: list[str] = []
        self.steps: list[str] = []
        self.links: list[bool] = []
        self.governing: list[Decision] = []
        self.children: list[dict[str, int] | None] = []
        #: Depths (indexes into the lists above) of the open elements that start a paragraph.
        self.anchors: list[int] = []
        self.kept = _Block(False)
        self.cut = _Block(True)
        self.found: list[tuple[int, Paragraph]] = []
        self.order = 0
        #: id(decision) -> its scores; the decisions outlive the walk, so ids are stable.
        self.scores: dict[int, dict[str, float]] = {}

    def add(self, block: _Block, text: str, in_link: bool) -> None:
        if not block.pieces:
            if text.isspace():
                return
            self.order += 1
            block.order = self.order
            block.decision = self.governing[-1]
            self._place(block)
        block.pieces.append(text)
        if in_link:
            block.link_pieces.append(text)

    def _place(self, block: _Block) -> None:
        """Path and kind of the innermost open element that started the paragraph."""
        anchor = self.anchors[-1] if self.anchors else 0
        first = max(0, anchor + 1 - MAX_PATH_DEPTH)
        tag = self.tags[anchor]
        block.kind = "h" if tag in _HEADING_TAGS else "l" if tag in _LIST_ITEM_TAGS else "p"
        prefix = "…" if first else ""
        block.dom_path = prefix + ".".join(self.tags[first : anchor + 1])
        block.xpath = prefix + "".join(self.steps[first : anchor + 1])

    def flush(self, block: _Block) -> None:
        text = fold_space(without_soft_hyphens("".join(block.pieces)))
        if not shows_nothing(text) and block.decision is not None:
            self.found.append((block.order, self._paragraph(block, text)))
        block.pieces = []
        block.link_pieces = []

    def _scores(self, decision: Decision) -> dict[str, float]:
        # One dict per decision, shared by its paragraphs (a plain dict, so writers
        # can serialise it; nobody mutates a Paragraph's scores).
        found = self.scores.get(id(decision))
        if found is None:
            found = self.scores[id(decision)] = decision.as_scores()
        return found

    def _paragraph(self, block: _Block, text: str) -> Paragraph:
        length = len(text)
        link_chars = min(length, sum(len(fold_space(p)) for p in block.link_pieces))
        cls = ParagraphClass.BAD if block.removed else ParagraphClass.GOOD
        assert block.decision is not None
        return Paragraph(
            text=text,
            cf_class=cls,
            final_class=cls,
            length=length,
            word_count=text.count(" ") + 1,  # `text` is whitespace-folded and not empty
            link_chars=link_chars,
            link_density=link_chars / length if length else 0.0,
            dom_path=block.dom_path,
            xpath=block.xpath,
            heading=block.kind == "h",
            kind=block.kind,
            scores=self._scores(block.decision),
        )


def segment(
    root: etree._Element, decisions: dict[etree._Element, Decision], options: DeclutterOptions
) -> tuple[tuple[Paragraph, ...], list[etree._Element]]:
    """The paragraphs in document order, and the outermost removed subtrees."""
    state = _Segmenter()
    tags = state.tags
    steps = state.steps
    links = state.links
    governing = state.governing
    children_of = state.children
    anchors = state.anchors
    kept = state.kept
    cut = state.cut
    add = state.add
    flush = state.flush
    breaks = options.block_tags | options.paragraph_tags
    get_decision = decisions.get
    removed_roots: list[etree._Element] = []
    #: The outermost removed subtree the walk is in, if any.
    region: etree._Element | None = None
    #: Whether the region's text is code (a pruned <script>), not worth reporting.
    silent = False
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag
        if event == "start":
            decision = get_decision(el)
            if region is None and decision is not None and decision.removed:
                region = el
                silent = decision.pruned and tag in _SILENT_TAGS
                removed_roots.append(el)
            is_break = tag in breaks
            if is_break:
                if kept.pieces:
                    flush(kept)
                if cut.pieces:
                    flush(cut)
            if tags:
                children = children_of[-1]
                if children is None:
                    children = children_of[-1] = {}
                order = children[tag] = children.get(tag, 0) + 1
                in_link = links[-1] or tag == "a"
                if decision is None:
                    decision = governing[-1]
            else:
                order = 1
                in_link = tag == "a"
            assert decision is not None  # the root always has one
            tags.append(tag)
            steps.append(f"/{tag}[{order}]")
            links.append(in_link)
            governing.append(decision)
            children_of.append(None)
            if is_break or el is region:
                anchors.append(len(tags) - 1)
            if region is None or not silent:
                block = kept if region is None else cut
                if tag == "br":
                    add(block, "\n", False)  # "line<br>next" is two words, not "linenext"
                text = el.text
                if text:
                    add(block, text, in_link)
            continue

        if anchors and anchors[-1] == len(tags) - 1:
            anchors.pop()
        if tag in breaks:
            if kept.pieces:
                flush(kept)
            if cut.pieces:
                flush(cut)
        tags.pop()
        steps.pop()
        links.pop()
        governing.pop()
        children_of.pop()
        if el is region:
            if cut.pieces:
                flush(cut)
            region = None
            silent = False
        tail = el.tail
        if tail and tags and (region is None or not silent):
            add(kept if region is None else cut, tail, links[-1])
    if kept.pieces:
        flush(kept)
    if cut.pieces:
        flush(cut)
    state.found.sort(key=lambda item: item[0])
    return tuple(p for _, p in state.found), removed_roots

"""Text inside a picture's `<figure>`: a caption or a credit, kept by its own class
only (ContainerOptions.figures_context_free).

jusText's context-sensitive pass keeps a short or near-good block that sits between
good paragraphs: in running text that is a short sentence of the article. A figure's
caption or credit between two paragraphs ("Foto: GdP/Hagen Immel", "Imagen: Télam",
"© Lisa Niekel") is another element that the page lays beside the text, and its
neighbours say nothing about it. With the option, a block inside a `<figure>` or a
`<figcaption>` that the context-sensitive pass made GOOD and that was not GOOD by its
own class (after the container's lift) is BAD: a caption that is a sentence of prose
stays, the credit lines go. trafilatura leaves figures out altogether and
readability keeps them; this keeps the captions that read as text.

A figure's blocks are those whose element path (`Paragraph.dom_path`, the path where
the block starts) passes through a `<figure>` or `<figcaption>`. jusText's
segmentation has no figure tags, so a caption written as bare text right after the
image starts its block above the figure and is judged as before; one in its own
`<p>` or `<div>` (most templates) is a figure's block.
"""

from __future__ import annotations

from collections.abc import Sequence

from .classify import BAD, GOOD
from .model import Paragraph, reclassified

__all__ = ["figure_blocks", "figure_pass"]

_FIGURE_TAGS = frozenset(("figure", "figcaption"))


def figure_blocks(paragraphs: Sequence[Paragraph]) -> list[bool]:
    """Per block: whether it lies inside a `<figure>` or a `<figcaption>`."""
    # the substring test first: most blocks are in no figure
    return [
        "fig" in p.dom_path and not _FIGURE_TAGS.isdisjoint(p.dom_path.split("."))
        for p in paragraphs
    ]


def figure_pass(paragraphs: Sequence[Paragraph]) -> tuple[Paragraph, ...]:
    """`paragraphs` with the figures' blocks that only their neighbours kept made BAD
    (their context-free class stays). Run after the container pass, whose lifts are
    in the context-free classes; the other blocks keep their classes, as if the
    figure's text had been read as context and then left out."""
    inside = figure_blocks(paragraphs)
    if not any(inside):
        return tuple(paragraphs)
    return tuple(
        reclassified(p, p.cf_class, BAD)
        if f and p.final_class is GOOD and p.cf_class is not GOOD
        else p
        for p, f in zip(paragraphs, inside, strict=True)
    )

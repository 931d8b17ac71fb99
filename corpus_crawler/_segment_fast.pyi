from collections.abc import Callable

from lxml import etree

#: elementmarks.element_marks: (tag, class, id, role, hidden, aria-hidden, style) -> bits
_Marker = Callable[
    [str, str | None, str | None, str | None, str | None, str | None, str | None], int
]

def walk(
    root_element: etree._Element,
    reference: bool,
    max_blocks: int = ...,
    marker: _Marker | None = ...,
) -> list[tuple[str, int, str, str, int, int]] | None: ...
def block_text(text: str) -> str: ...

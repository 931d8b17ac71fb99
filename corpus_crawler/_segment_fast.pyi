from collections.abc import Callable
from typing import TypeVar, overload

from lxml import etree

#: elementmarks.element_marks: (tag, class, id, role, hidden, aria-hidden, style, itemprop)
#: -> bits
_Marker = Callable[
    [str, str | None, str | None, str | None, str | None, str | None, str | None, str | None],
    int,
]
_Stated = tuple[tuple[str, int], ...]
_Block = TypeVar("_Block", bound=tuple[str, int, str, str, int, int, _Stated])

@overload
def walk(
    root_element: etree._Element,
    reference: bool,
    max_blocks: int = ...,
    marker: _Marker | None = ...,
    block_type: None = ...,
) -> list[tuple[str, int, str, str, int, int, _Stated]] | None: ...
@overload
def walk(
    root_element: etree._Element,
    reference: bool,
    max_blocks: int,
    marker: _Marker | None,
    block_type: type[_Block],
) -> list[_Block] | None: ...
def block_text(text: str) -> str: ...
def clear_mark_caches() -> None: ...

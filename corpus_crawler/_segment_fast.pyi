from collections.abc import Callable

from lxml import etree

def walk(
    root_element: etree._Element,
    reference: bool,
    max_blocks: int = ...,
    marker: Callable[[str, str | None, str | None, str | None, str | None, str | None, str | None], int]
    | None = ...,
) -> list[tuple[str, int, str, str, int, int]] | None: ...
def block_text(text: str) -> str: ...

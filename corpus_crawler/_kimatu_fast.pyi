from collections.abc import Callable

from lxml import etree

from .kimatu._segment import TextElement

def text_elements(
    root_element: etree._Element,
    aspect_attributes: tuple[str, ...],
    aspect_inline: bool,
    levels: int,
    max_path_steps: int,
    max_inline: int,
    block_tags: frozenset[str],
    skip_tags: frozenset[str],
    heading_tags: frozenset[str],
    select_tags: frozenset[str],
    normalize_space: Callable[[str], str],
    word_count: Callable[[str], int],
    boundary_count: Callable[[str], int],
    element_type: type[TextElement],
) -> tuple[TextElement, ...]: ...

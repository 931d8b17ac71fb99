"""Element paths as the segmentation walk writes them ("/html[1]/body[1]/div[2]"):
the string operations the preset passes share, on paths, never on the tree."""

from __future__ import annotations

from collections.abc import Sequence


def last_tag(xpath: str) -> str:
    """The tag of an xpath's last step ("/html[1]/body[1]/div[2]" -> "div")."""
    step = xpath[xpath.rfind("/") + 1 :]
    bracket = step.find("[")
    return step[:bracket] if bracket >= 0 else step


def parent_of(xpath: str) -> str:
    """The parent element's xpath ("" above the root element)."""
    cut = xpath.rfind("/")
    return xpath[:cut] if cut > 0 else ""


def shared_steps(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading steps two xpaths (split at "/") share: their common
    ancestor's depth."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared


def within_any(xpath: str, ancestors: frozenset[str]) -> bool:
    """Whether the element at `xpath` is one of `ancestors` or lies inside one."""
    path = xpath
    while path:
        if path in ancestors:
            return True
        path = parent_of(path)
    return False

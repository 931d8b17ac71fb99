"""Word counts and whitespace folding that stay linear on a 20 MB text node.

`str.split()` on a huge text builds a list of millions of small strings (and
`re.sub` a list of millions of pieces), several times the memory of the text
itself; above `_CHUNK` characters both work on chunks instead.
"""

from __future__ import annotations

_CHUNK = 1 << 16


def count_words(text: str) -> int:
    """Runs of non-whitespace characters in `text`."""
    size = len(text)
    if size <= _CHUNK:
        return len(text.split())
    count = 0
    for start in range(0, size, _CHUNK):
        count += len(text[start : start + _CHUNK].split())
        # A word cut by the chunk boundary was counted on both sides.
        if start and not text[start - 1].isspace() and not text[start].isspace():
            count -= 1
    return count


def fold_space(text: str) -> str:
    """Whitespace runs become one space; no leading or trailing space."""
    size = len(text)
    if size <= _CHUNK:
        return " ".join(text.split())
    parts: list[str] = []
    space_before = False
    for start in range(0, size, _CHUNK):
        chunk = text[start : start + _CHUNK]
        folded = " ".join(chunk.split())
        if folded:
            if parts and (space_before or chunk[0].isspace()):
                parts.append(" ")
            parts.append(folded)
            space_before = chunk[-1].isspace()
        else:
            space_before = True  # an all-blank chunk separates its neighbours
    return "".join(parts)

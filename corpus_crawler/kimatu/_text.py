"""Counting words and phrase-boundary punctuation in a text element's text.

Seed 003, 3.3: the punctuation ratio counts "points, quotes... that are used
only as phrase boundaries (not contained in hours, acronyms...)". A sign counts
when it sits at a word's edge: closing signs after the word (`end.`, `said,`,
`it."`), opening quotes and brackets before it (`"Hello`, `(see`). Signs inside
a word (`10:30`, `3.5`, `e.g`) never count, nor the final point of an acronym or
an initial (`U.S.A.`, `J.`). Texts are whitespace-normalised (single spaces),
and every count is a C-level scan: a 20 MB element costs no Python loop.
"""

from __future__ import annotations

import re
from itertools import islice

_SPACES = re.compile(r"\s+")
_ODD_SPACE = re.compile(r"[^\S ]|  ")
_CLOSING_SIGNS = ".,;:!?…\"'»”’)]"
_OPENING_SIGNS = "\"'«“‘„([¿¡"
_CLOSING = re.compile(f"[{re.escape(_CLOSING_SIGNS)}](?= |$)")
_OPENING = re.compile(f"(?:^|(?<= ))[{re.escape(_OPENING_SIGNS)}]")
#: From this length on, `str.count` scans beat the regular expressions.
_LONG_TEXT = 2048
# Acronyms and initials, searched in " " + text so that the pattern starts with a
# literal (which the regex engine finds with a fast scan, not position by position).
_ACRONYM = re.compile(r" (?:\w\.)+(?= |$)")
# CJK scripts put no space after their full stops and commas: every one is a boundary.
_CJK_BOUNDARY = re.compile(r"[。、，！？；：」』）．]")
_SENTENCE_END = re.compile(r"[.,;:!?…。、，！？；：．]\W*$")
_WORD = re.compile(r"\w+")


def normalize_space(text: str) -> str:
    """Runs of whitespace become one space; ends are stripped."""
    if _ODD_SPACE.search(text) is None:
        return text.strip(" ")
    return _SPACES.sub(" ", text).strip()


def word_count(text: str) -> int:
    """Words of a whitespace-normalised text."""
    return text.count(" ") + 1 if text else 0


def boundary_count(text: str) -> int:
    """Phrase-boundary punctuation signs of a whitespace-normalised text.

    A run of closing signs counts once, at its last sign (the one before the
    space). Short texts take one regex pass each way; long ones a few
    `str.count` scans, which stay fast on a 20 MB element (the same count).
    """
    if not text:
        return 0
    if len(text) < _LONG_TEXT:
        closing = _CLOSING.subn("", text)[1]
        opening = _OPENING.subn("", text)[1]
    else:
        closing = sum(text.count(sign + " ") for sign in _CLOSING_SIGNS)
        closing += text[-1] in _CLOSING_SIGNS
        opening = sum(text.count(" " + sign) for sign in _OPENING_SIGNS)
        opening += text[0] in _OPENING_SIGNS
    acronyms = _ACRONYM.subn("", " " + text)[1] if "." in text else 0
    cjk = 0 if text.isascii() else _CJK_BOUNDARY.subn("", text)[1]
    return max(0, closing + opening - acronyms) + cjk


def ends_phrase(text: str) -> bool:
    """Whether the text ends with a phrase-boundary sign (possibly before quotes)."""
    return _SENTENCE_END.search(text[-8:]) is not None


def words(text: str, limit: int | None = None) -> list[str]:
    """Lower-cased `\\w+` words, at most `limit` of them."""
    # A text has at most one word per two characters: short texts take one findall.
    if limit is None or len(text) <= 2 * limit:
        found = [word.lower() for word in _WORD.findall(text)]
        return found if limit is None else found[:limit]
    return [match.group().lower() for match in islice(_WORD.finditer(text), limit)]

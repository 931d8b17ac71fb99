"""Format characters that show nothing by themselves, and texts made only of them.

A soft hyphen (`&shy;`) is a hyphenation hint, not a character of its word: German,
Dutch and Nordic news sites put one between every syllable of a long word. The
extractors take it out of the text (not the `reference` preset), so that
"Donau&shy;dampf&shy;schiff" is one word for the tokenizer, dedup and language
identification.

Editors leave paragraphs that hold nothing a reader sees (`<p>&#8203;</p>`,
`<p>&shy;</p>`, a stray byte-order mark): jusText keeps such a block between good
ones, and the corpus formats then got a `<p>` without a token. Every extractor
leaves them out (not the `reference` preset, which is jusText 3.0.2's output).
Between words the characters stay: a zero-width space separates Thai and Khmer
words, and a joiner belongs to the word it joins.
"""

from __future__ import annotations

import re

# soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width space,
# (non-)joiners and direction marks, embeddings and overrides, word joiner and
# invisible operators, isolates, zero-width no-break space (a BOM mid-text)
_RANGES = (
    (0x00AD, 0x00AD), (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200F),
    (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF),
)  # fmt: skip
SOFT_HYPHEN = "\u00ad"
INVISIBLE_CHARS = frozenset(chr(c) for low, high in _RANGES for c in range(low, high + 1))
#: The characters as a regex character-class body.
INVISIBLE_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _RANGES)
_VISIBLE = re.compile(f"[^\\s{INVISIBLE_CLASS}]")


def shows_nothing(text: str) -> bool:
    """Whether a text holds only invisible characters and whitespace (an empty text
    shows nothing too)."""
    if not text:
        return True
    first = text[0]
    # most texts begin with a visible character, which ends the question
    if first not in INVISIBLE_CHARS and not first.isspace():
        return False
    return _VISIBLE.search(text) is None


def without_soft_hyphens(text: str) -> str:
    """`text` without its soft hyphens (the caller folds the spaces again)."""
    return text.replace(SOFT_HYPHEN, "") if SOFT_HYPHEN in text else text

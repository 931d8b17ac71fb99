"""Tokens and sentences for the vertical corpus format.

`tokenize(text)` returns `Token` values, each with a `glue` flag: true when no
whitespace separated it from the previous token (the vertical writer turns this
into a ``<g/>`` line, and `detokenize` restores the text with single spaces).
`split_sentences(tokens)` groups them into sentences.

One compiled regular expression, tried in this order at each token start:

* URLs (``http://``, ``https://``, ``ftp://``, ``www.``) up to whitespace, with
  trailing punctuation left out and balanced parentheses kept;
* e-mail addresses;
* abbreviations: a list (``Dr.``, ``etc.``, ``Prof.``, Czech ``např.`` ...) and
  dotted letter runs (``e.g.``, ``U.S.``, ``z.B.``) keep their final dot;
* numbers with inner separators (``1,000.5``, ``3.14``, ``12:30``, ``1/2``);
* words: letters, digits, ``_`` and combining marks, joined by inner hyphens,
  apostrophes, dots or middle dots (``well-known``, ``2024-01-02``,
  ``example.com``, ``v1.2``, ``1st``). Apostrophes inside a word stay in it:
  ``don't``, ``l'homme``, ``O'Neil`` are one token each (lossless, unlike the
  Penn Treebank's ``do n't``); a leading or trailing apostrophe is its own token;
* Han ideographs and kana: one token per character; Thai, Lao, Khmer and
  Myanmar: one token per run of the script (no dictionary segmentation);
* emoji, with skin-tone modifiers, variation selectors, ZWJ sequences and flags;
* punctuation: a run of one repeated character is one token (``...``, ``!!!``,
  ``--``), otherwise one token per character (``?!`` is two glued tokens);
* anything else: one character.

Whitespace, zero-width spaces and BOMs separate tokens and are not tokens.

Why not a PyPI tokenizer: syntok 1.4.4 rewrites text (``don't`` -> ``do`` +
``not``), splits ``Dr.`` into two tokens and leaves CJK runs and emoji pairs
whole; sacremoses and NLTK's Treebank tokenizer give no glue flags and split
contractions. A single regex is lossless, fast and easy to test.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from .invisible import INVISIBLE_CLASS

__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "SENTENCE_FINAL_ABBREVIATIONS",
    "Token",
    "Tokenizer",
    "detokenize",
    "split_sentences",
    "tokenize",
]


class Token(NamedTuple):
    """One token. A NamedTuple, not a frozen dataclass: tokens are made by the
    hundred thousand and a frozen dataclass's ``__init__`` took 60% of the
    tokenizer's time on the gold texts."""

    text: str
    #: True when the token directly follows the previous one, with no whitespace.
    glue: bool
    start: int
    end: int


_ABBREVIATION_LINES = {
    "English": "Mr Mrs Ms Dr Prof Sr Jr St Mt Rev Gen Col Lt Sgt Capt Gov Sen Rep Hon Pres"
    " Adm Maj vs etc approx appt dept univ Inc Ltd Co Corp Bros Assn Vol vol vols pp"
    " Fig fig Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Ave Blvd Rd cf al ca viz misc tel",
    "German": "usw bzw ggf vgl Nr Str Hr Fr bspw evtl inkl insb",
    "French, Spanish": "Mme Mlle Sra Srta Ud Uds pág núm",
    "Czech, Slovak": "tj atd apod např resp tzv mj popř př str č",
}

#: Abbreviations that keep their final dot (listed without it). A lowercase entry
#: also matches capitalised ("etc" matches "Etc."); other entries match exactly.
#: Words that often end a sentence are left out even when they are abbreviations
#: too ("No." as in "No. 5" but also as in "He said No.").
DEFAULT_ABBREVIATIONS: frozenset[str] = frozenset(
    word for line in _ABBREVIATION_LINES.values() for word in line.split()
)

#: Abbreviations that may also end a sentence ("... and so on etc. The next ...").
SENTENCE_FINAL_ABBREVIATIONS: frozenset[str] = frozenset({"etc", "usw", "atd", "apod"})

# Scripts written without spaces between words.
_CJK_RANGES = (
    "\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3040-\u309f\u30a0-\u30ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\U0001b000-\U0001b16f\U00020000-\U0003134f"
)
#: Han ideographs and kana as a regex character-class body: one token per character.
CJK_CHARACTERS = _CJK_RANGES
_SEA_RANGES = "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
_NO_SPACE = re.compile(f"[{_CJK_RANGES}{_SEA_RANGES}]")

_EMOJI_BASE = "\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"
_EMOJI_MODIFIERS = "\U0001f3fb-\U0001f3ff\ufe0e\ufe0f\u20e3\U000e0020-\U000e007f"
# Invisible format characters (corpus_crawler.invisible) separate tokens and are
# never tokens: zero-width spaces, direction marks, a stray byte-order mark.
_SEPARATORS = INVISIBLE_CLASS
# ... except between two parts of a word, where a soft hyphen (a hyphenation hint),
# a zero-width non-joiner (Persian writes one inside most verbs and plurals:
# "می‌خواهم") or joiner keeps the word whole.
_WORD_JOINERS = "\u00ad\u200c\u200d"

_URL_CHAR = r"""[^\s<>"'()\[\]{}]"""
_URL_LAST = r"""[^\s<>"'()\[\]{}.,;:!?…»”’]"""
_URL_PARENS = r"""\([^\s<>"'()]*\)"""

_SENTENCE_END = frozenset(".!?…")
_CJK_SENTENCE_END = frozenset("。！？｡")
_ANY_END = _SENTENCE_END | _CJK_SENTENCE_END
_CLOSERS = frozenset("\"'”’»)]}」』）›")
_OPENERS = frozenset("\"'“‘„«([{¿¡「『（‹")


def _ranges(codepoints: Iterable[int]) -> str:
    """A character-class body for the given sorted code points."""
    parts: list[str] = []
    run_start = previous = -2
    for cp in codepoints:
        if cp != previous + 1:
            if run_start >= 0:
                parts.append(_class_range(run_start, previous))
            run_start = cp
        previous = cp
    if run_start >= 0:
        parts.append(_class_range(run_start, previous))
    return "".join(parts)


def _class_range(first: int, last: int) -> str:
    if first == last:
        return _escape_cp(first)
    return f"{_escape_cp(first)}-{_escape_cp(last)}"


def _escape_cp(cp: int) -> str:
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"


@functools.cache
def _word_classes() -> tuple[str, str]:
    """Letters, digits, ``_`` and combining marks, minus the no-space scripts,
    as two character-class bodies: the Basic Multilingual Plane and beyond.

    Python's ``\\w`` leaves out combining marks, which would cut Devanagari or
    Arabic words apart, and it includes Han and Thai, which get their own rules.
    The split keeps matching fast: ``re`` tests a BMP-only class with a bitmap
    but a class with astral ranges by scanning them (10x slower, measured on
    the gold texts).
    """

    def is_word(cp: int) -> bool:
        char = chr(cp)
        if _NO_SPACE.match(char):
            return False
        return char.isalnum() or char == "_" or unicodedata.category(char).startswith("M")

    bmp = _ranges(cp for cp in range(0x10000) if is_word(cp))
    astral = _ranges(
        cp
        for plane in (range(0x10000, 0x30000), range(0xE0100, 0xE01F0))
        for cp in plane
        if is_word(cp)
    )
    return bmp, astral


_Trie = dict[str, "_Trie"]


def _trie(words: Iterable[str]) -> str:
    """A regex matching exactly `words`, factored by common prefixes (fast to fail)."""
    root: _Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        ends_here = "" in node
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        if len(branches) == 1:
            body = branches[0]
            if ends_here and len(body) > 1:
                body = f"(?:{body})"
        else:
            body = "(?:" + "|".join(branches) + ")"
        return body + ("?" if ends_here else "")

    return emit(root)


def _abbreviation_pattern(abbreviations: Iterable[str]) -> str:
    forms: set[str] = set()
    for abbreviation in abbreviations:
        abbreviation = abbreviation.rstrip(".")
        if not abbreviation:
            continue
        forms.add(abbreviation)
        if abbreviation[0].islower():
            forms.add(abbreviation[0].upper() + abbreviation[1:])
    if not forms:
        return "(?!)"
    first_letters = "".join(sorted({re.escape(form[0]) for form in forms}))
    return f"(?=[{first_letters}])(?:{_trie(forms)})\\."


class Tokenizer:
    """A compiled tokenizer; `tokenize` and `split_sentences` use a default one."""

    def __init__(
        self,
        abbreviations: Iterable[str] = DEFAULT_ABBREVIATIONS,
        sentence_final_abbreviations: Iterable[str] = SENTENCE_FINAL_ABBREVIATIONS,
    ) -> None:
        bmp, astral = _word_classes()
        astral_char = f"(?=[\\U00010000-\\U0010ffff])[{astral}]"
        word_char = f"(?:[{bmp}]|{astral_char})"
        # Unrolled so the common case stays in the fast BMP class.
        word = f"{word_char}[{bmp}]*(?:{astral_char}+[{bmp}]*)*"
        letter_dot = r"[^\W\d_]\."
        final = set()
        for abbreviation in sentence_final_abbreviations:
            abbreviation = abbreviation.rstrip(".")
            final.add(abbreviation + ".")
            final.add(abbreviation[:1].upper() + abbreviation[1:] + ".")
        self._sentence_final_abbreviations = frozenset(final)
        alternatives = [
            # URL: scheme or www., then up to whitespace; must not end on punctuation.
            rf"(?:(?:https?|ftp)://|www\.)(?:{_URL_CHAR}|{_URL_PARENS})*"
            rf"(?:{_URL_LAST}|{_URL_PARENS})",
            # e-mail address
            r"(?=[\w.+\-]+@)[\w+\-]+(?:\.[\w+\-]+)*@[\w\-]+(?:\.[\w\-]+)+",
            # abbreviations: listed ones, then dotted letter runs (e.g. U.S. z.B.)
            rf"{_abbreviation_pattern(abbreviations)}(?!{word_char})",
            rf"(?:{letter_dot}){{2,}}",
            # numbers with inner separators
            r"\d+(?:[.,:/]\d+)+",
            # words with inner hyphens, apostrophes, dots, middle dots
            rf"{word}(?:[\-‐'’.·{_WORD_JOINERS}]{word})*",
            # one ideograph or kana (with its marks); a run of Thai, Lao, Khmer, Myanmar
            rf"[{_CJK_RANGES}][\u0300-\u036f\u3099-\u309a]*",
            rf"[{_SEA_RANGES}]+",
            # emoji: flags, then a base with modifiers and ZWJ sequences
            r"[\U0001f1e6-\U0001f1ff]{2}",
            rf"[{_EMOJI_BASE}][{_EMOJI_MODIFIERS}]*"
            rf"(?:\u200d[{_EMOJI_BASE}][{_EMOJI_MODIFIERS}]*)*",
            # a run of one repeated punctuation character
            rf"(?P<punct>[^\w\s{_SEPARATORS}])(?P=punct)*",
            rf"[^\s{_SEPARATORS}]",
        ]
        self._pattern = re.compile("|".join(f"(?:{a})" for a in alternatives))

    def tokenize(self, text: str) -> list[Token]:
        # Spans first, then the tokens made as plain tuples: a NamedTuple's own
        # constructor and a match object's group() cost more than the regex on
        # typical text (1.9 -> 1.55 ms a page of the gold sets' kept text).
        spans = [match.span() for match in self._pattern.finditer(text)]
        tokens: list[Token] = []
        append = tokens.append
        new = tuple.__new__
        previous_end = -1
        for start, end in spans:
            append(new(Token, (text[start:end], start == previous_end, start, end)))
            previous_end = end
        return tokens

    def split_sentences(self, tokens: Sequence[Token]) -> list[list[Token]]:
        """Sentences: a run ends after ``. ! ? …`` (and glued closing quotes or
        brackets) when whitespace and a capital or caseless letter follow
        (possibly after opening quotes or brackets); after CJK ``。！？``
        always. Listed abbreviations do not end a sentence, except
        `SENTENCE_FINAL_ABBREVIATIONS` before a capital.
        """
        sentences: list[list[Token]] = []
        current: list[Token] = []
        index, count = 0, len(tokens)
        while index < count:
            token = tokens[index]
            current.append(token)
            index += 1
            text = token.text
            if text[0] not in _ANY_END and text not in self._sentence_final_abbreviations:
                continue
            cjk_end = _all_in(text, _CJK_SENTENCE_END)
            if not (
                cjk_end
                or _all_in(text, _SENTENCE_END)
                or text in self._sentence_final_abbreviations
            ):
                continue
            while (
                index < count
                and tokens[index].glue
                and tokens[index].text[0] in _CLOSERS
                and _all_in(tokens[index].text, _CLOSERS)
            ):
                current.append(tokens[index])
                index += 1
            if index < count and (
                cjk_end or (not tokens[index].glue and _starts_sentence(tokens, index))
            ):
                sentences.append(current)
                current = []
        if current:
            sentences.append(current)
        return sentences


def _all_in(text: str, characters: frozenset[str]) -> bool:
    return bool(text) and all(char in characters for char in text)


def _starts_sentence(tokens: Sequence[Token], index: int) -> bool:
    while index < len(tokens) and _all_in(tokens[index].text, _OPENERS):
        index += 1
    if index >= len(tokens):
        return False
    first = tokens[index].text[0]
    # Capitals, and letters of scripts without case (Han, Arabic, Thai...).
    return first.isupper() or (first.isalpha() and not first.islower())


@functools.cache
def _default() -> Tokenizer:
    return Tokenizer()


def tokenize(text: str) -> list[Token]:
    """Tokens of `text` with the default abbreviation list (see the module docstring)."""
    return _default().tokenize(text)


def split_sentences(tokens: Sequence[Token]) -> list[list[Token]]:
    return _default().split_sentences(tokens)


def detokenize(tokens: Iterable[Token]) -> str:
    """The text again, each whitespace run as one space."""
    parts: list[str] = []
    for token in tokens:
        if parts and not token.glue:
            parts.append(" ")
        parts.append(token.text)
    return "".join(parts)

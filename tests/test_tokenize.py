"""Tokenizer and sentence splitter for the vertical format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_crawler.invisible import INVISIBLE_CLASS, shows_nothing
from corpus_crawler.tokenize import Token, Tokenizer, detokenize, split_sentences, tokenize

#: Whitespace and the invisible characters: between tokens, never tokens.
SEPARATORS = re.compile(f"[\\s{INVISIBLE_CLASS}]+")
#: The invisible characters a word keeps between two of its parts.
JOINERS = "\u00ad\u200c\u200d"


def texts(text: str) -> list[str]:
    return [token.text for token in tokenize(text)]


def marked(text: str) -> list[str]:
    """Tokens with a leading "+" on those glued to the previous one."""
    return [("+" if token.glue else "") + token.text for token in tokenize(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # URLs keep everything up to whitespace, minus trailing punctuation.
        ("see https://example.com/a?b=1&c=2.", ["see", "https://example.com/a?b=1&c=2", "."]),
        ("(http://x.org/wiki/A_(b))", ["(", "http://x.org/wiki/A_(b)", ")"]),
        ("at www.example.co.uk, or", ["at", "www.example.co.uk", ",", "or"]),
        ("ftp://files.example.org/pub/", ["ftp://files.example.org/pub/"]),
        # e-mail addresses
        (
            "mail jan.novak+corpus@mail.example.cz.",
            ["mail", "jan.novak+corpus@mail.example.cz", "."],
        ),
        # numbers
        ("$1,000.5 or 3.14", ["$", "1,000.5", "or", "3.14"]),
        (
            "at 12:30 on the 1st, 2nd and 23rd",
            ["at", "12:30", "on", "the", "1st", ",", "2nd", "and", "23rd"],
        ),
        ("1/2 of 2024-01-02", ["1/2", "of", "2024-01-02"]),
        ("in 2020, then", ["in", "2020", ",", "then"]),
        # abbreviations keep their dot; a word before a full stop does not
        ("e.g. Dr. Smith of the U.S.", ["e.g.", "Dr.", "Smith", "of", "the", "U.S."]),
        ("Drama. Sept. Sep. Ltd. Lt.", ["Drama", ".", "Sept.", "Sep.", "Ltd.", "Lt."]),
        ("vgl. z.B. např. tj.", ["vgl.", "z.B.", "např.", "tj."]),
        ("Etc. and etc.", ["Etc.", "and", "etc."]),
        ("No.5", ["No.5"]),
        ('"No." No. 5', ['"', "No", ".", '"', "No", ".", "5"]),
        # apostrophes: inside a word they stay, at its edge they do not
        ("don't l'homme O'Neil it’s", ["don't", "l'homme", "O'Neil", "it’s"]),
        ("students' '90s", ["students", "'", "'", "90s"]),
        # hyphens and dashes
        ("well-known e-mail — dash -- x", ["well-known", "e-mail", "—", "dash", "--", "x"]),
        ("pre- and post-war", ["pre", "-", "and", "post-war"]),
        # ellipsis and punctuation runs
        ("Wait... what…", ["Wait", "...", "what", "…"]),
        ("wow!!! really?!", ["wow", "!!!", "really", "?", "!"]),
        # emoji
        ("ok 😀👍 👍🏽 🇨🇿 👨‍👩‍👧", ["ok", "😀", "👍", "👍🏽", "🇨🇿", "👨‍👩‍👧"]),
        # scripts without spaces: one token per ideograph or kana, per Thai run
        ("東京は日本です。", ["東", "京", "は", "日", "本", "で", "す", "。"]),
        ("カタカナー", ["カ", "タ", "カ", "ナ", "ー"]),
        ("ภาษาไทย ง่าย", ["ภาษาไทย", "ง่าย"]),
        ("Hello世界", ["Hello", "世", "界"]),
        # combining marks stay inside words
        ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),
        ("cafe\u0301 naïve", ["cafe\u0301", "naïve"]),
        # scripts with spaces
        ("안녕하세요 세계", ["안녕하세요", "세계"]),
        ("Привет, мир!", ["Привет", ",", "мир", "!"]),
        ("𝐀𝐁 𐌰𐌱", ["𝐀𝐁", "𐌰𐌱"]),
        # zero-width spaces separate tokens and are not tokens
        ("a\u200bb\ufeffc", ["a", "b", "c"]),
        # nor are direction marks, nor a joiner or soft hyphen outside a word
        ("שלום\u200f עולם \u200e, x\u200c \u00ad", ["שלום", "עולם", ",", "x"]),
        # inside a word a zero-width non-joiner (Persian), a joiner or a soft hyphen
        # keeps it whole
        ("می\u200cخواهم بروم", ["می\u200cخواهم", "بروم"]),
        ("Donau\u00addampf\u00adschiff", ["Donau\u00addampf\u00adschiff"]),
        ("", []),
        (" \n\t ", []),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_glue_marks_tokens_without_space_before() -> None:
    assert marked("Hello, world! (It's) 東京") == [
        "Hello",
        "+,",
        "world",
        "+!",
        "(",
        "+It's",
        "+)",
        "東",
        "+京",
    ]
    assert marked("a\u200bb") == ["a", "b"]


def test_offsets_point_into_the_text() -> None:
    text = "  Dr. Smith\tpaid $3.14 (see https://x.org/a)."
    for token in tokenize(text):
        assert text[token.start : token.end] == token.text


def _visible(text: str) -> str:
    return SEPARATORS.sub("", text)


@given(st.text(max_size=200))
def test_tokens_cover_all_but_whitespace(text: str) -> None:
    tokens = tokenize(text)
    assert all(not shows_nothing(token.text) for token in tokens)
    # no separator inside a token, but for a word's joiners
    assert all(
        not SEPARATORS.search(token.text.translate({ord(j): None for j in JOINERS}))
        for token in tokens
    )
    # every character that shows is in exactly one token, in order
    assert _visible("".join(token.text for token in tokens)) == _visible(text)
    if not any(joiner in text for joiner in JOINERS):
        assert detokenize(tokens) == SEPARATORS.sub(" ", text).strip(" ")
    assert not tokens or tokens[0].glue is False


def test_gold_texts_round_trip(gold_dir: Path) -> None:
    paths = sorted(gold_dir.glob("*/gold/*.txt"))
    assert len(paths) > 200
    count = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        tokens = tokenize(text)
        count += len(tokens)
        if any(joiner in text for joiner in JOINERS):
            assert _visible(detokenize(tokens)) == _visible(text), path.name
        else:
            assert detokenize(tokens) == SEPARATORS.sub(" ", text).strip(" "), path.name
    assert count > 100_000


# --- sentences ----------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    return [detokenize(group) for group in split_sentences(tokenize(text))]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("Dr. Smith came. He left.", ["Dr. Smith came.", "He left."]),
        ("It is e.g. this one. Or not.", ["It is e.g. this one.", "Or not."]),
        ("A lowercase. start stays.", ["A lowercase. start stays."]),
        ("Digits. 5 people came.", ["Digits. 5 people came."]),
        ('He said "Hi." Then he left.', ['He said "Hi."', "Then he left."]),
        ('Hm. "Why?" she asked.', ["Hm.", '"Why?" she asked.']),
        ("Wait... What?! Really.", ["Wait...", "What?!", "Really."]),
        ("Apples, pears etc. The end.", ["Apples, pears etc.", "The end."]),
        ("Apples, pears etc. and more.", ["Apples, pears etc. and more."]),
        ("The U.S. Army won.", ["The U.S. Army won."]),
        ("Moscow. Москва. Τέλος.", ["Moscow.", "Москва.", "Τέλος."]),
        ("End. 東京です。大阪です。", ["End.", "東京です。", "大阪です。"]),
        ("No end.", ["No end."]),
        ("end.Next", ["end.Next"]),
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


def test_sentence_tokens_are_the_tokens() -> None:
    tokens = tokenize("One. Two. Three.")
    groups = split_sentences(tokens)
    assert [token for group in groups for token in group] == tokens
    assert split_sentences([]) == []


def test_custom_abbreviations() -> None:
    tokenizer = Tokenizer(abbreviations=["approx", "Bc"], sentence_final_abbreviations=[])
    assert [t.text for t in tokenizer.tokenize("Bc. Novák approx. Dr. X")] == [
        "Bc.",
        "Novák",
        "approx.",
        "Dr",
        ".",
        "X",
    ]
    assert [detokenize(s) for s in tokenizer.split_sentences(tokenizer.tokenize("Dr. X"))] == [
        "Dr.",
        "X",
    ]
    bare = Tokenizer(abbreviations=[])
    assert [t.text for t in bare.tokenize("Dr. e.g.")] == ["Dr", ".", "e.g."]


def test_token_is_a_small_value() -> None:
    token = Token("a", False, 0, 1)
    assert token == ("a", False, 0, 1)
    assert token.text == "a"

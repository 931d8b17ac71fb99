"""corpus_crawler/_names_fast.pyx: the word lists read in class and id names, in one
pass over the name's bytes. It must give the bits of its pure-Python twins
(elementmarks._python_name_bits and _python_weight_bits) for every text, and
elementmarks must give the same marks whichever it uses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import _names_fast as fast  # built by pip install (setup.py)
from corpus_crawler import elementmarks

LISTS = (*elementmarks._NAME_LISTS, *elementmarks._WEIGHT_LISTS)
WORDS = sorted({word for words, _bit in LISTS for word in words})


def test_the_compiled_matcher_is_built_and_used() -> None:
    # pip install builds it; without it names are read ~10x slower
    assert isinstance(elementmarks._name_bits, fast.WordBits)
    assert isinstance(elementmarks._weight_bits, fast.WordBits)


def _names() -> st.SearchStrategy[str]:
    """Class and id text: the lists' words and their pieces, joined by what names
    hold (hyphens, underscores, spaces, digits), with capitals, accents, other
    scripts and lone surrogates."""
    pieces = st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(WORDS).map(lambda w: w[: len(w) // 2]),
        st.sampled_from(WORDS).map(lambda w: w[len(w) // 2 :]),
        st.sampled_from(["-", "_", " ", "\t", "://", "2", "İ", "ß", "é", "К", "评论", "\ud800"]),
        st.text(max_size=4),
    )
    return st.lists(pieces, max_size=8).map("".join)


def _read(bits: int) -> int:
    """The bits elementmarks reads: the picture bit only with the lead bit (the
    Python twin does not look for picture words in names without a lead word)."""
    if bits & elementmarks._LEAD_BIT:
        return bits
    return bits & ~elementmarks._PICTURE_BIT


@settings(max_examples=3000, deadline=None)
@given(_names())
def test_the_compiled_bits_are_the_python_bits(text: str) -> None:
    names = fast.WordBits(elementmarks._NAME_LISTS)
    weights = fast.WordBits(elementmarks._WEIGHT_LISTS)
    for value in (text, text.lower()):
        assert _read(names(value)) == elementmarks._python_name_bits(value)
        assert weights(value) == elementmarks._python_weight_bits(value)


@settings(max_examples=500, deadline=None)
@given(_names(), _names(), st.sampled_from(["div", "footer", "form", "article", "ul", "a"]))
def test_elementmarks_gives_the_same_marks_without_the_compiled_matcher(
    class_name: str, element_id: str, tag: str
) -> None:
    compiled = elementmarks.element_marks(tag, class_name, element_id, None, None, None, None)
    original = elementmarks._name_bits, elementmarks._weight_bits
    elementmarks._name_bits = elementmarks._python_name_bits
    elementmarks._weight_bits = elementmarks._python_weight_bits
    try:
        python = elementmarks.element_marks(tag, class_name, element_id, None, None, None, None)
    finally:
        elementmarks._name_bits, elementmarks._weight_bits = original
    assert compiled == python


def test_a_word_of_several_lists_sets_each_list_bit() -> None:
    matcher = fast.WordBits(((("comment", "menu"), 1), (("comment",), 2), (("ent",), 4)))
    assert matcher("user-comments") == 1 | 2 | 4
    assert matcher("menu") == 1
    assert matcher("commen") == 0
    assert matcher("") == 0


def test_words_sharing_a_first_byte_are_all_tried() -> None:
    matcher = fast.WordBits(((("ab",), 1), (("abc",), 2), (("ax",), 4), (("b",), 8)))
    assert matcher("xabc") == 1 | 2 | 8
    assert matcher("ax") == 4
    assert matcher("a") == 0  # a word longer than what is left is not read past the end


def test_an_empty_word_is_refused() -> None:
    with pytest.raises(ValueError, match="empty word"):
        fast.WordBits(((("menu", ""), 1),))


def test_every_aside_word_holds_an_unlikely_word() -> None:
    # The Python twin looks for aside words only in names holding an unlikely word,
    # and furniture_marks splits names into words only when the aside bit is set:
    # both shortcuts are exact only while this holds.
    for word in elementmarks._ASIDE_SUBSTRINGS:
        assert any(unlikely in word for unlikely in elementmarks._UNLIKELY_WORDS), word


@settings(max_examples=1000, deadline=None)
@given(_names())
def test_the_aside_bit_never_hides_an_aside(names: str) -> None:
    # _aside_marks without its shortcut: the words of every class or id value split
    # at non-letters, read at both ends
    bits = elementmarks._name_bits(names.lower())
    every_word_read = elementmarks._aside_marks(names, -1)  # every bit set: no shortcut
    assert elementmarks._aside_marks(names, bits) == every_word_read

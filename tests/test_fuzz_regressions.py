"""Pages found by tools/fuzz_pages.py, cut down to the smallest page that failed.

Each test holds the minimal page, not the fuzz seed, so it keeps failing the same
way if the bug comes back, whatever the fuzzer's generator turns into.
"""

from __future__ import annotations

import justext
import pytest

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.model import DropReason

REFERENCE = ExtractConfig(preset=Preset.REFERENCE, language="en")
ENGLISH = justext.get_stoplist("English")


def _ours(html: bytes) -> list[tuple[str, str, str, str]]:
    doc = extract(html, "http://fuzz.test/", REFERENCE)
    assert doc.drop_reason is not DropReason.EXTRACTOR_ERROR, doc.drop_detail
    return [(p.text, p.final_class.value, p.cf_class.value, p.xpath) for p in doc.paragraphs]


def _justext(html: bytes) -> list[tuple[str, str, str, str]]:
    return [(p.text, p.class_type, p.cf_class, p.xpath) for p in justext.justext(html, ENGLISH)]


# A fragment with two <body> elements makes lxml.html.fromstring merge the second
# into the first; the merge assigns joined strings, which lxml refuses when they hold
# a control character its own parser kept.
CONTROL_CHARACTER_PAGES = (
    b"<body><p>a</p></body><body>\x01b<p>c</p></body>",  # text after the first body's child
    b"<body>z</body><body>\x01b<p>c</p></body>",  # text joined to the first body's text
    b"<body><p>a</p>t\x07</body><body>\x1bb<p>c</p></body>",  # two, on both sides
)


@pytest.mark.parametrize("html", CONTROL_CHARACTER_PAGES)
def test_reference_preset_extracts_a_second_body_with_control_characters(html: bytes) -> None:
    """jusText 3.0.2 raises ValueError on these; the reference preset must extract them.

    Parity: the same page with every control character replaced by a letter is one
    jusText can read, and its output, with the letter put back, is ours.
    """
    with pytest.raises(ValueError, match="XML compatible"):
        justext.justext(html, ENGLISH)
    # (none of these is whitespace to Python's \s, which jusText collapses to a space)
    controls = [chr(code) for code in range(32) if chr(code) in html.decode("latin-1")]
    letters = "QXZ"
    readable, expected_back = html, {}
    for control, letter in zip(controls, letters, strict=False):
        readable = readable.replace(control.encode(), letter.encode())
        expected_back[letter] = control
    expected = []
    for text, final_class, cf_class, xpath in _justext(readable):
        for letter, control in expected_back.items():
            text = text.replace(letter, control)
        expected.append((text, final_class, cf_class, xpath))
    ours = _ours(html)
    assert ours == expected
    assert any(control in text for text, *_ in ours for control in controls)


# Pages where jusText merges bodies or heads and gives output: the merge done by
# moving nodes must give exactly jusText's paragraphs.
MERGE_PAGES = (
    b"<body><p>a</p></body><body>b<p>c</p>tail</body>",
    b"<p>one</p><body><!--c--></body><body>q<i>i</i>w</body>",
    b"<p>a</p><head></head><head>\x02</head>y\x03",
    b"<body>first<b>x</b>after</body><body>second<p>para</p></body><body>third</body>",
    b"<p>a</p><head><title>t</title></head><head><meta name=x></head><p>b</p>",
)


@pytest.mark.parametrize("html", MERGE_PAGES)
def test_merging_bodies_and_heads_equals_justext(html: bytes) -> None:
    assert _ours(html) == _justext(html)


@pytest.mark.parametrize("html", [b"<body><!--c--></body>", b"<body><?php x ?></body>"])
def test_reference_preset_on_a_body_holding_only_a_comment(html: bytes) -> None:
    """lxml.html.fromstring returns the lone comment as the document, and jusText 3.0.2
    raises ValueError on it; the page has no text, so it is an empty page, not an error."""
    with pytest.raises(ValueError, match="not an XML element"):
        justext.justext(html, ENGLISH)
    doc = extract(html, "http://fuzz.test/", REFERENCE)
    assert doc.drop_reason is not DropReason.EXTRACTOR_ERROR, doc.drop_detail
    assert doc.paragraphs == ()
    assert doc.drop_reason is not None  # dropped as a page without text


# A fragment's text after its </body> is the tail of the element lxml.html.fromstring
# returns; jusText reads the tree as SAX events from that element, and they end with
# its tail, so the text is in jusText's output (in the last paragraph, or its own when
# the element is a block). Found by random multi-body fragments: 564 of 19,792 differed.
ROOT_TAIL_PAGES = (
    b"with are one of one a they at</body>and to a with and be on a to a had and",
    b"<p>a b c</p><p>d e</p></body>tail words after the body",
    b"had as hadhe was is of<i></body></a>or is or that itthis they</body>and was are",
    b"<body>to you</p><br></body></body>this from have with they to",
    b"<div>x<?pi y?>z</div></body>after<!--c-->more",
)
# lxml.html.fromstring names a fragment's body div when it holds one of lxml.html's
# block tags, span otherwise; the list is lxml's own (6.x has option, caption, td,
# del, ins ... which a copy of an older list lacked: the paragraph's xpath differed).
BLOCK_TAG_PAGES = (
    b"you had at you from<select><option>o</option></select>this for as at</p>",
    b"some words<caption>c</caption>and more words",
    b"some words<del>d</del>and more<ins>i</ins>",
    b"text<legend>l</legend>tail",
)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("html", ROOT_TAIL_PAGES + BLOCK_TAG_PAGES)
def test_fragment_root_equals_justext(
    html: bytes, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corpus_crawler.segment as segment

    if not compiled:
        monkeypatch.setattr(segment, "_fast", None)
    else:
        assert segment._fast is not None
    assert _ours(html) == _justext(html)

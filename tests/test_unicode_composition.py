"""Decomposed text is composed (NFC) before classification, in the corpus presets.

Every page decoded from windows-1258 is decomposed (the code page writes Vietnamese
tone marks as combining characters), and so are pages written on macOS. Before, such
a page's words missed the stoplist (which is NFC): on the Vietnamese page below the
stop-word density fell from 0.74 to 0.35, and its text reached the corpus in a form a
query typed in NFC does not find.
"""

from __future__ import annotations

import unicodedata

import pytest

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig, Preset
from corpus_crawler.segment import Segment, composed

VIETNAMESE = (
    "Việt Nam là một quốc gia nằm ở phía đông bán đảo Đông Dương thuộc khu vực Đông Nam Á."
    " Thủ đô của đất nước là thành phố Hà Nội, còn thành phố đông dân nhất là Thành phố"
    " Hồ Chí Minh. Người dân ở đây rất thân thiện và họ luôn chào đón những du khách đến"
    " từ các nước khác trên thế giới."
)
GERMAN = (
    "Die neuen Kopfhörer sind für Musiker gedacht, die über viele Stunden hinweg in einem"
    " Studio arbeiten müssen, und sie würden nach dem Test auch im Büro eine gute Figur"
    " machen, weil sie sehr leicht sind und kaum drücken."
)


def windows_1258(text: str) -> bytes:
    """`text` as a windows-1258 page writes it: a precomposed letter where the code
    page has one (ê), the other marks as combining characters."""
    out = []
    for char in text:
        try:
            out.append(char.encode("cp1258"))
            continue
        except UnicodeEncodeError:
            pass
        base, *marks = unicodedata.normalize("NFD", char)
        for mark in marks:
            try:
                head = unicodedata.normalize("NFC", base + mark).encode("cp1258")
            except UnicodeEncodeError:
                continue
            rest = "".join(m for m in marks if m is not mark)
            out.append(head + rest.encode("cp1258"))
            break
        else:
            out.append((base + "".join(marks)).encode("cp1258"))
    return b"".join(out)


def page(body: bytes, charset: str, title: bytes = b"t") -> bytes:
    head = f'<html><head><meta charset="{charset}"><title>'.encode() + title
    head += b"</title></head><body>"
    return head + b"".join(b"<p>" + body + b"</p>" for _ in range(3)) + b"</body></html>"


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_a_windows_1258_page_is_classified_as_its_nfc_twin(preset: Preset) -> None:
    decomposed = page(windows_1258(VIETNAMESE), "windows-1258")
    assert not unicodedata.is_normalized("NFC", decomposed.decode("cp1258"))
    twin = page(VIETNAMESE.encode(), "utf-8")
    config = ExtractConfig(preset=preset, language="auto")
    got, expected = extract(decomposed, None, config), extract(twin, None, config)
    assert got.language == expected.language == "vi"
    assert [p.text for p in got.paragraphs] == [p.text for p in expected.paragraphs]
    assert [p.stopword_density for p in got.paragraphs] == [
        p.stopword_density for p in expected.paragraphs
    ]
    assert [p.final_class for p in got.paragraphs] == [p.final_class for p in expected.paragraphs]
    assert got.paragraphs[0].stopword_density > 0.7


def test_a_macos_nfd_page_in_utf_8_is_composed() -> None:
    nfd = unicodedata.normalize("NFD", GERMAN).encode()
    html = page(nfd, "utf-8", title=unicodedata.normalize("NFD", "Kopfhörer").encode())
    config = ExtractConfig(preset=Preset.CORPUS, language="de")
    doc = extract(html, None, config)
    assert doc.kept and doc.text.split("\n")[0] == GERMAN and doc.title == "Kopfhörer"
    nfc = extract(page(GERMAN.encode(), "utf-8"), None, config)
    assert [p.stopword_count for p in doc.paragraphs] == [p.stopword_count for p in nfc.paragraphs]


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.REFERENCE])
def test_the_exact_presets_keep_the_text_as_decoded(preset: Preset) -> None:
    # seed 000 and jusText 3.0.2 do not normalise: their presets stay exact
    nfd = unicodedata.normalize("NFD", GERMAN)
    doc = extract(page(nfd.encode(), "utf-8"), None, ExtractConfig(preset=preset, language="de"))
    assert doc.paragraphs and doc.paragraphs[0].text == nfd


def test_composed_leaves_ascii_and_nfc_segments_alone() -> None:
    ascii_block = Segment("plain text", 0, "/p", "/p[1]", 0)
    nfc_block = Segment("für", 0, "/p", "/p[2]", 0)
    nfd_block = Segment("fu\u0308r", 3, "/p", "/p[3]", 0)
    unchanged = [ascii_block, nfc_block]
    assert composed(unchanged) is unchanged  # nothing copied
    out = composed([ascii_block, nfd_block])
    assert out[1] == nfd_block._replace(text="für") and out[0] is ascii_block

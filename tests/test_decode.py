"""Decoding (issue 2, item 1): BOM, then HTTP charset, then meta, then a detector."""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import GoldPageTuple
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import decode
from corpus_crawler.config import ExtractConfig, Preset
from corpus_crawler.decode import (
    clean_text,
    decode_html,
    decode_like_justext,
    meta_charset,
    normalize_charset,
)
from corpus_crawler.extract import extract
from corpus_crawler.model import DropReason

CZECH = "Příliš žluťoučký kůň úpěl ďábelské ódy. Řeřicha, čeština a šťovík jsou v zahradě. "
RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России. "
ENGLISH_QUOTES = "The fox’s tail is “long” — and that’s all… "
CONTROL = "".join(chr(c) for c in range(32) if chr(c) not in "\t\n\r") + "\x7f"


def html_page(text: str, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><p>{text}</p></body></html>"


def test_utf8_bom_wins_over_http_and_meta() -> None:
    data = codecs.BOM_UTF8 + html_page(CZECH, '<meta charset="windows-1250">').encode()
    decoded = decode_html(data, http_charset="iso-8859-2")
    assert decoded.encoding == "utf-8"
    assert decoded.source == "bom"
    assert CZECH in decoded.text
    assert not decoded.text.startswith("\ufeff")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_bom_wins(codec: str) -> None:
    bom = codecs.BOM_UTF16_LE if codec.endswith("le") else codecs.BOM_UTF16_BE
    data = bom + html_page(CZECH, '<meta charset="utf-8">').encode(codec)
    decoded = decode_html(data, http_charset="utf-8")
    assert decoded.encoding == codec
    assert decoded.source == "bom"
    assert CZECH in decoded.text
    assert "\ufeff" not in decoded.text


@pytest.mark.parametrize("codec", ["utf-8", "utf-16-le", "utf-16-be"])
def test_bom_page_through_extract(codec: str) -> None:
    bom = {
        "utf-8": codecs.BOM_UTF8,
        "utf-16-le": codecs.BOM_UTF16_LE,
        "utf-16-be": codecs.BOM_UTF16_BE,
    }[codec]
    data = bom + html_page(CZECH * 3).encode(codec)
    doc = extract(data, config=ExtractConfig(language="cs"), http_charset="iso-8859-1")
    assert doc.encoding == codec
    assert doc.declared_encoding == "iso-8859-1"
    assert any(CZECH.strip() in p.text for p in doc.paragraphs)


def test_http_charset_beats_meta() -> None:
    data = html_page(RUSSIAN, '<meta charset="koi8-r">').encode("cp1251")
    decoded = decode_html(data, http_charset="windows-1251")
    assert decoded.encoding == "cp1251"
    assert decoded.source == "http"
    assert decoded.declared == "windows-1251"
    assert RUSSIAN in decoded.text


@pytest.mark.parametrize(
    "meta",
    [
        '<meta charset="windows-1251">',
        "<meta charset=windows-1251>",
        "<meta charset='windows-1251' />",
        '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">',
        "<META HTTP-EQUIV='content-type' CONTENT='text/html;charset=WINDOWS-1251'>",
    ],
)
def test_meta_charset(meta: str) -> None:
    data = html_page(RUSSIAN, meta).encode("cp1251")
    decoded = decode_html(data)
    assert decoded.encoding == "cp1251"
    assert decoded.source == "meta"
    assert decoded.declared is not None and decoded.declared.lower() == "windows-1251"
    assert RUSSIAN in decoded.text


def test_meta_charset_found_after_a_long_head() -> None:
    head = "<script>" + "x" * 20000 + "</script>" + '<meta charset="windows-1251">'
    assert meta_charset(html_page(RUSSIAN, head).encode("cp1251")) == "windows-1251"


@pytest.mark.parametrize("label", ["iso-1252", "0", "x-foo"])
@pytest.mark.parametrize("where", ["http", "meta"])
def test_unknown_labels_fall_back_to_detection(label: str, where: str) -> None:
    assert normalize_charset(label) is None
    head = f'<meta charset="{label}">' if where == "meta" else ""
    data = html_page(CZECH, head).encode("cp1250")
    decoded = decode_html(data, http_charset=label if where == "http" else None)
    assert decoded.source == "detected"
    assert decoded.declared == label
    assert CZECH in decoded.text


NOT_WEB_CHARSETS = (
    "undefined",
    "unicode_escape",
    "raw_unicode_escape",
    "idna",
    "punycode",
    "rot13",
    "base64",
    "hex",
)


def test_python_codecs_that_are_not_web_charsets_are_unknown_labels() -> None:
    """`undefined` fails every decode; the escape codecs rewrite backslashes in the page."""
    found = {label: normalize_charset(label) for label in NOT_WEB_CHARSETS}
    assert found == dict.fromkeys(NOT_WEB_CHARSETS)


@pytest.mark.parametrize(
    "label",
    [
        "undefined",
        "idna",
        "punycode",
        "unicode_escape",
        "raw_unicode_escape",
        "utf-7",
        "hz",
        "utf-32",
        "utf-16",
        "rot13",
        "0",
        "",
        " ",
        "\u00e9",
        "utf-8\x00",
    ],
)
@pytest.mark.parametrize("where", ["http", "meta"])
def test_odd_labels_never_raise(label: str, where: str) -> None:
    head = f'<meta charset="{label}">' if where == "meta" else ""
    data = html_page(CZECH, head).encode("cp1250")
    decoded = decode_html(data, http_charset=label if where == "http" else None)
    assert isinstance(decoded.text, str)
    assert not set(decoded.text) & set(CONTROL)
    codecs.lookup(decoded.encoding)
    doc = extract(
        data, config=ExtractConfig(language="cs"), http_charset=label if where == "http" else None
    )
    assert doc.drop_reason is not DropReason.EXTRACTOR_ERROR, doc.drop_detail


def test_meta_declaring_utf16_on_ascii_compatible_bytes_is_not_obeyed() -> None:
    """A meta tag readable as ASCII proves the page is not UTF-16/32; the WHATWG prescan
    then uses UTF-8 (a common copy-paste error in real pages)."""
    readable = {}
    for label in ("utf-16", "utf-16le", "UTF-16BE", "utf-32"):
        data = html_page("caf\u00e9 " + CZECH, f'<meta charset="{label}">').encode("utf-8")
        ascii_only = html_page("plain text", f'<meta charset="{label}">').encode("ascii")
        readable[label] = (
            CZECH in decode_html(data).text,
            "plain text" in decode_html(ascii_only).text,
        )
    assert readable == dict.fromkeys(readable, (True, True))


@pytest.mark.parametrize("where", ["http", "meta"])
@pytest.mark.parametrize("label", ["ISO-8859-1", "latin1", "windows-1252", "us-ascii"])
def test_declared_latin1_but_utf8_bytes(where: str, label: str) -> None:
    text = "Café, naïve, “quoted” — " + CZECH
    head = f'<meta http-equiv="Content-Type" content="text/html; charset={label}">'
    data = html_page(text, head if where == "meta" else "").encode("utf-8")
    decoded = decode_html(data, http_charset=label if where == "http" else None)
    assert decoded.encoding == "utf-8"
    assert decoded.declared == label
    assert text in decoded.text


@pytest.mark.parametrize("where", ["http", "meta"])
@pytest.mark.parametrize("repeat", [1, 3])
def test_declared_utf8_but_windows1250_bytes(where: str, repeat: int) -> None:
    head = '<meta charset="utf-8">' if where == "meta" else ""
    data = html_page(CZECH * repeat, head).encode("cp1250")
    decoded = decode_html(data, http_charset="utf-8" if where == "http" else None)
    assert "ř" in decoded.text and "ž" in decoded.text and "ů" in decoded.text
    assert CZECH * repeat in decoded.text
    assert "\ufffd" not in decoded.text
    assert decoded.declared == "utf-8"


def test_windows1250_charset_only_in_http_header() -> None:
    data = html_page(CZECH).encode("cp1250")
    decoded = decode_html(data, http_charset="windows-1250")
    assert decoded.encoding == "cp1250"
    assert decoded.source == "http"
    assert CZECH in decoded.text
    doc = extract(data, config=ExtractConfig(language="cs"), http_charset="windows-1250")
    assert doc.encoding == "cp1250"
    assert doc.declared_encoding == "windows-1250"


def test_declared_and_used_encodings_on_the_document() -> None:
    config = ExtractConfig(language="cs")
    utf8_bytes = html_page(CZECH * 3).encode("utf-8")
    doc = extract(utf8_bytes, config=config, http_charset="ISO-8859-1")
    assert (doc.declared_encoding, doc.encoding) == ("ISO-8859-1", "utf-8")
    meta_bytes = html_page(CZECH * 3, '<meta charset="windows-1250">').encode("cp1250")
    doc = extract(meta_bytes, config=config)
    assert (doc.declared_encoding, doc.encoding) == ("windows-1250", "cp1250")
    undeclared = extract(html_page(CZECH * 3).encode("cp1250"), config=config)
    assert undeclared.declared_encoding is None
    assert undeclared.encoding == "cp1250"


LEGACY_SAMPLES = {
    "fr": (
        "cp1252",
        "Le château où l’été commence à Noël : une fenêtre ouverte sur la forêt, "
        "déjà très agréable. ",
    ),
    "pt": (
        "cp1252",
        "A população brasileira está preocupada com a situação econômica e política "
        "do país, segundo a pesquisa. ",
    ),
    "es": (
        "cp1252",
        "El niño comió una manzana en el jardín mientras su padre leía el periódico. "
        "¿Qué más quería? ",
    ),
    "cs": ("cp1250", CZECH),
    "pl": ("cp1250", "Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig. "),
    "ru": ("cp1251", RUSSIAN),
    "el": ("cp1253", "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας και μία από τις αρχαιότερες πόλεις. "),
}


@pytest.mark.parametrize("language", sorted(LEGACY_SAMPLES))
def test_undeclared_legacy_pages_are_detected(language: str) -> None:
    codec, text = LEGACY_SAMPLES[language]
    decoded = decode_html(html_page(text * 2).encode(codec))
    assert text * 2 in decoded.text, decoded.encoding


def _detector_refused(sample: bytes) -> str | None:
    raise AssertionError("the detector was asked")


@pytest.mark.parametrize("telling", ["café", "señor's café"])
def test_a_page_with_one_or_two_telling_bytes_is_not_given_to_the_detector(
    telling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An English page with a stray accented letter or two: the detector (3-13 ms)
    # has nothing to go on, and windows-1252 is what a browser would use.
    monkeypatch.setattr(decode, "_run_detector", _detector_refused)
    text = f"{ENGLISH_QUOTES * 20} The {telling} opened on the corner."
    decoded = decode_html(html_page(text).encode("cp1252"))
    assert (decoded.encoding, decoded.source) == ("cp1252", "detected")
    assert text in decoded.text


def test_three_telling_bytes_go_to_the_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bytes] = []

    def detector(sample: bytes) -> str | None:
        asked.append(sample)
        return "cp1251"

    monkeypatch.setattr(decode, "_run_detector", detector)
    decoded = decode_html(html_page(f"{ENGLISH_QUOTES * 20} The word мир.").encode("cp1251"))
    assert asked
    assert "мир" in decoded.text


def _telling_bytes(html: bytes) -> int:
    return len(html.translate(None, decode._ASCII_OR_SHARED))


def test_skipping_the_detector_changes_no_bundled_page(
    gold_dir: Path,
    gold_pages: Callable[[str], Iterator[GoldPageTuple]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every gold page decodes as it does when the detector is asked whatever the
    # page holds; and some pages with telling bytes (CleanEval's) do skip it, or
    # this proves nothing.
    sets = sorted(p.name for p in gold_dir.iterdir())
    pages = [html for name in sets for _, html, _, _ in gold_pages(name)]
    skipped = 0
    with monkeypatch.context() as patched:
        patched.setattr(decode, "_run_detector", _detector_refused)
        for html in pages:
            try:
                decoded = decode_html(html)
            except AssertionError:
                continue
            skipped += decoded.source == "detected" and _telling_bytes(html) > 0
    assert skipped >= 3
    shortcut = [decode_html(html) for html in pages]
    monkeypatch.setattr(decode, "_DETECTOR_EVIDENCE", 0)
    assert [decode_html(html) for html in pages] == shortcut


def test_nul_and_control_characters_are_removed() -> None:
    data = b"<p>a\x00b\x01c\x08d\x0be\x0cf\x1fg\x7fh\ti\nj\rk</p>"
    decoded = decode_html(data)
    assert decoded.text == "<p>abcdefgh\ti\nj\rk</p>"
    assert clean_text("x\x00y") == "xy"


@pytest.mark.parametrize(
    "codec",
    [
        "utf-8",
        "cp1252",
        "koi8-r",
        "cp437",
        "cp037",
        "cp500",
        "utf-16-le",
        "utf-32",
        "shift_jis",
        "gb18030",
        "iso-2022-jp",
        "euc-kr",
    ],
)
def test_control_characters_are_removed_in_every_codec(codec: str) -> None:
    """The fast byte scan is used only where controls are the same bytes; the rest
    (EBCDIC, UTF-16/32, multi-byte) are scanned as text."""
    # \x04 and \x05 are 0x37 and 0x2d in EBCDIC: "7" and "-" in ASCII
    text = "<p>Přílišžluťoučký kůň\x04úpěl\x05ďábelské ódy.</p>" * 50
    data = text.encode(codec, "replace")
    decoded = decode_html(data, http_charset=codec)
    assert not set(decoded.text) & set(CONTROL), decoded.encoding
    assert "kůň" in decoded.text or "?" in data.decode(codec)


@pytest.mark.parametrize("preset", list(Preset))
def test_nul_bytes_through_extract(preset: Preset) -> None:
    text = "This is the text of the page and it is in the main part of it for all. " * 3
    data = html_page(text.replace(" ", " \x00", 5) + "\x01\x02").encode()
    doc = extract(data, config=ExtractConfig(language="en", preset=preset))
    assert doc.drop_reason is None, doc.drop_detail
    assert all("\x00" not in p.text for p in doc.paragraphs)
    if preset is not Preset.REFERENCE:
        assert all(not set(p.text) & set(CONTROL) for p in doc.paragraphs)


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.LANGUAGE_INDEPENDENT])
def test_control_characters_from_character_references_are_removed(preset: Preset) -> None:
    """libxml2 turns `&#4;` into U+0004; the text must be as clean as with raw bytes."""
    data = b"<p>a&#4;b&#1;c&#x1f;d&#127;e&#0;f&#x80;g</p>"
    doc = extract(data, config=ExtractConfig(language="en", preset=preset))
    (paragraph,) = doc.paragraphs
    assert not set(paragraph.text) & set(CONTROL), repr(paragraph.text)
    assert paragraph.text.startswith("ab")


def test_nul_only_input_never_raises() -> None:
    for preset in Preset:
        doc = extract(b"\x00" * 1000, config=ExtractConfig(language="en", preset=preset))
        assert doc.drop_reason is not DropReason.EXTRACTOR_ERROR


@pytest.mark.parametrize("declaration", ["none", "meta", "http"])
def test_truncated_multibyte_sequence_at_the_end_czech(declaration: str) -> None:
    head = '<meta charset="utf-8">' if declaration == "meta" else ""
    data = (html_page(CZECH * 3, head).removesuffix("</p></body></html>") + " ř").encode()[:-1]
    decoded = decode_html(data, http_charset="utf-8" if declaration == "http" else None)
    assert decoded.encoding == "utf-8"
    assert CZECH * 3 in decoded.text


def test_truncated_multibyte_sequence_at_the_end_english() -> None:
    """A crawler's size cut (or extract's max_bytes) splits a character: the rest of the
    page is still UTF-8 and must not turn into mojibake, declared or not."""
    used = {}
    for declaration in ("none", "meta", "http"):
        head = '<meta charset="utf-8">' if declaration == "meta" else ""
        page = html_page(ENGLISH_QUOTES * 5, head).removesuffix("</p></body></html>")
        data = (page + " it’").encode()[:-2]
        decoded = decode_html(data, http_charset="utf-8" if declaration == "http" else None)
        used[declaration] = (decoded.encoding, ENGLISH_QUOTES * 5 in decoded.text)
    assert used == dict.fromkeys(used, ("utf-8", True))


def test_max_bytes_cut_inside_a_character_keeps_utf8() -> None:
    text = ENGLISH_QUOTES * 30
    data = html_page(text).encode()
    cut = data.index("’".encode(), 500) + 1
    doc = extract(data, config=ExtractConfig(language="en", max_bytes=cut))
    assert doc.encoding == "utf-8"
    assert doc.paragraphs and ENGLISH_QUOTES.strip() in doc.paragraphs[0].text


#: One paragraph in each multi-byte legacy encoding of the web's CJK pages.
CJK_TEXTS = {
    "gb18030": "我们在这里讨论的是一个关于中文网页编码的问题。"
    "网页被截断以后，浏览器仍然能够正确地显示前面的内容。",
    "big5": "我們在這裡討論的是一個關於中文網頁編碼的問題。"
    "網頁被截斷以後，瀏覽器仍然能夠正確地顯示前面的內容。",
    "shift_jis": "日本語のウェブページが途中で切れても、"
    "ブラウザは前の部分を正しく表示します。これは文字コードの問題です。",
    "euc_jp": "日本語のウェブページが途中で切れても、"
    "ブラウザは前の部分を正しく表示します。これは文字コードの問題です。",
    "cp949": "한국어 웹 페이지가 중간에 잘려도 브라우저는 앞부분을 올바르게 보여 줍니다. "
    "이것은 문자 인코딩의 문제입니다.",
}


def cjk_page(codec: str, declaration: str) -> bytes:
    head = f'<meta charset="{codec}">' if declaration == "meta" else ""
    text = CJK_TEXTS[codec]
    page = f"<html><head>{head}<title>t</title></head><body>" + f"<p>{text}</p>" * 6
    return page.encode(codec)


@pytest.mark.parametrize("declaration", ["none", "meta", "http"])
@pytest.mark.parametrize("codec", sorted(CJK_TEXTS))
def test_legacy_multibyte_page_cut_inside_a_character(codec: str, declaration: str) -> None:
    """A size cap or a dropped connection leaves a lead byte at the end. The strict
    decode fails there: the page was read as UTF-8 with every character replaced (no
    declaration) or handed to the detector against its own declaration."""
    data = cjk_page(codec, declaration) + CJK_TEXTS[codec][:1].encode(codec)[:1]
    decoded = decode_html(data, http_charset=codec if declaration == "http" else None)
    assert decoded.encoding == codec
    assert decoded.source == {"none": "detected"}.get(declaration, declaration)
    assert f"<p>{CJK_TEXTS[codec]}</p>" * 6 in decoded.text
    assert "\ufffd" not in decoded.text


@pytest.mark.parametrize("declaration", ["none", "meta"])
@pytest.mark.parametrize("codec", sorted(CJK_TEXTS))
def test_legacy_multibyte_page_with_a_stray_byte(codec: str, declaration: str) -> None:
    """One undecodable byte in the middle of the page is one U+FFFD, not a page read in
    another encoding (a GBK forum page became windows-1251 mojibake)."""
    data = cjk_page(codec, declaration)
    middle = data.index(b"</p>", len(data) // 2)
    damaged = data[:middle] + b"\xff" + data[middle:]
    decoded = decode_html(damaged)
    assert decoded.encoding == codec
    assert decoded.text.count("\ufffd") == 1
    assert decoded.text.count(CJK_TEXTS[codec]) >= 5


@pytest.mark.parametrize("declaration", ['<meta charset="utf-8">', ""])
def test_a_utf8_page_with_a_few_latin1_bytes_stays_utf8(declaration: str) -> None:
    """A UTF-8 food blog with three Latin-1 bytes in image alt texts (trafilatura's
    evaluation page der-erfolg-gibt-recht.de): 3 stray bytes among 106 non-ASCII
    characters is more than 1 in 100 of the high bytes, and the detector read the
    page as windows-1250 ("schĂ¶n"). Most of its non-ASCII characters are valid
    UTF-8, which a legacy page almost never is by chance: it stays UTF-8, the stray
    bytes become U+FFFD."""
    story = "So schön winterlich ist es wie schon lange nicht mehr. Dazu gab es Äpfel. " * 12
    alt = ' <img alt="K\xfcchenblogs"> <img alt="Hosting f\xfcr Profit" title="f\xfcr">'
    data = (
        html_page(story, declaration)
        .encode("utf-8")
        .replace(b"</body>", alt.encode("latin-1") + b"</body>")
    )
    decoded = decode_html(data)
    assert decoded.encoding == "utf-8"
    assert story in decoded.text
    assert decoded.text.count("\ufffd") == 3


def test_a_legacy_page_with_a_few_utf8_characters_is_still_detected() -> None:
    """The other way round: a windows-1250 page with two UTF-8 quotation marks pasted
    in has far more stray bytes than valid characters, and is detected."""
    data = html_page(CZECH * 3, "").encode("cp1250") + "“”".encode()
    decoded = decode_html(data)
    assert decoded.encoding == "cp1250"
    assert CZECH * 3 in decoded.text


def test_a_page_mostly_in_another_encoding_is_not_kept_in_its_declaration() -> None:
    """The damage allowed a declaration is a few bytes: a windows-1251 page declared
    as GBK fails on far more than 1 in 100 of its bytes and is detected."""
    data = html_page(RUSSIAN * 20, '<meta charset="gbk">').encode("cp1251")
    decoded = decode_html(data)
    assert decoded.encoding == "cp1251"
    assert RUSSIAN * 20 in decoded.text


@pytest.mark.parametrize("padding", [0, 1])
def test_an_undeclared_gbk_page_longer_than_the_detector_sample(padding: int) -> None:
    """The detector reads the first 256 KiB; on a longer page that cut falls inside a
    character half the time, and the whole page was read as UTF-8, every character
    replaced."""
    text = CJK_TEXTS["gb18030"]
    page = "<html><body>" + " " * padding + f"<p>{text}</p>" * 3000
    decoded = decode_html(page.encode("gb18030"))
    assert (decoded.encoding, decoded.source) == ("gb18030", "detected")
    assert decoded.text == page


def test_max_bytes_cut_inside_a_gbk_character_keeps_the_text() -> None:
    text = CJK_TEXTS["gb18030"]
    data = cjk_page("gb18030", "none")
    cut = data.index(text.encode("gb18030"), len(data) // 2) + 5  # after a lead byte
    doc = extract(data, config=ExtractConfig(max_bytes=cut))
    assert doc.encoding == "gb18030"
    assert any(text in p.text for p in doc.paragraphs)


def test_str_input_with_lone_surrogates() -> None:
    text = "This is the text of the page and it is in the main part of it for all. " * 3
    html = html_page("a\ud800b \udfff " + text)
    for preset in Preset:
        doc = extract(html, config=ExtractConfig(language="en", preset=preset))
        assert doc.drop_reason is None, doc.drop_detail
        assert doc.encoding == "utf-8"
        assert text.strip() in doc.paragraphs[0].text
        assert all("\ud800" not in p.text for p in doc.paragraphs)


def test_str_input_is_not_decoded_again() -> None:
    doc = extract(html_page("naïve café " * 20), config=ExtractConfig(language="fr"))
    assert "naïve café" in doc.paragraphs[0].text


def test_reference_decoding_is_justext_decode_html() -> None:
    assert decode_like_justext(b"<p>\xc5\x99</p>").text == "<p>ř</p>"
    assert decode_like_justext(b"<p>\xff</p>").text == "<p>\ufffd</p>"
    latin = decode_like_justext(b'<meta charset="iso-8859-2"><p>\xf8</p>')
    assert latin.source == "meta" and "ř" in latin.text
    assert decode_like_justext(b"<p>\xe9</p>", http_charset="latin-1").text == "<p>é</p>"


LABELS = [
    "utf-8",
    "iso-8859-1",
    "windows-1250",
    "koi8-r",
    "shift_jis",
    "gb2312",
    "big5",
    "euc-kr",
    "utf-16",
    "iso-1252",
    "0",
    "x-foo",
    "",
    "UTF8",
    "ascii",
    "cp037",  # EBCDIC: its controls come from bytes that are letters in ASCII
    "iso-2022-jp",
    "utf-16-be",
]


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=2000),
    http=st.none() | st.sampled_from(LABELS),
    meta=st.none() | st.sampled_from(LABELS),
)
def test_decode_never_raises(data: bytes, http: str | None, meta: str | None) -> None:
    if meta is not None:
        data = f'<meta charset="{meta}">'.encode() + data
    decoded = decode_html(data, http_charset=http)
    assert isinstance(decoded.text, str)
    assert not set(decoded.text) & set(CONTROL)
    codecs.lookup(decoded.encoding)
    reference = decode_like_justext(data, http_charset=http)
    assert isinstance(reference.text, str)

"""Bytes plus an optional HTTP charset become text.

Order (issue 2, item 1): byte-order mark, then the HTTP charset, then a meta
charset, then a detector when the declaration is missing, unknown (`iso-1252`,
`0`) or contradicted by the bytes. In real crawls many pages declare ISO-8859-1
or windows-125x but are UTF-8; valid UTF-8 with non-ASCII bytes is almost never
an accident, so it overrides a legacy single- or multi-byte declaration.

Undecodable bytes become U+FFFD; NUL and other C0 control characters (except
tab, LF, CR) are removed, because libxml2 rejects them. Nothing here raises.
"""

from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# `<meta charset=x>` and `<meta http-equiv=content-type content="...; charset=x">`.
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([^'"/>\s;,]+)""", re.IGNORECASE)
# jusText 3.0.2's own pattern, for the `reference` preset.
_REFERENCE_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([^'"/>\s]+)""", re.IGNORECASE)
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])

# Labels as browsers interpret them (WHATWG Encoding Standard): a declared
# latin-1 or ascii page is decoded as windows-1252, gb2312 as gb18030, etc.
_WHATWG_ALIASES = {
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "iso_8859-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    "iso-8859-9": "cp1254",
    "iso-8859-11": "cp874",
    "tis-620": "cp874",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "x-sjis": "shift_jis",
    "shift-jis": "shift_jis",
    "sjis": "shift_jis",
    "windows-31j": "cp932",
    "x-mac-roman": "mac_roman",
    "unicode": "utf-16",
    "utf8": "utf-8",
}

_DETECT_SAMPLE = 256 * 1024

_NOT_CHARSETS = frozenset(
    (
        "rot-13", "base64", "hex", "bz2", "zlib", "quopri", "uu", "undefined", "idna",
        "punycode", "unicode-escape", "raw-unicode-escape", "unicode-internal", "utf-7",
        "palmos",
    )
)  # fmt: skip
# Single-byte Latin code pages a detector confuses with each other on short
# pages; the one whose non-ASCII words are stop words of some language wins.
_LATIN_CODE_PAGES = ("cp1252", "cp1250", "iso8859-2", "cp1257", "cp1254")
_LATIN_SAMPLE = 20_000
_LATIN_EVIDENCE = 30  # three accented stop words
_ASCII_BYTES = bytes(range(128))
_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_])[^\x00-\x7f](?=[^\W\d_])")
_C1_CONTROL = re.compile("[\x80-\x9f]")
_WORD_RUN = re.compile(r"\w+")

# Bytes that are the same punctuation or symbol in windows-1250/1252/1257 and
# latin-1 (quotes, dashes, nbsp, (c), ...). An undeclared page whose only
# non-ASCII bytes are these decodes the same under any of them, so the slow
# detector (1-25 ms a page here) is skipped: typical of English pages. Deleting
# them and ASCII from the page costs an eighth of a regex's scan for other bytes.
_SHARED_PUNCTUATION = bytes([
    0x80, 0x82, *range(0x84, 0x88), 0x89, 0x8B, *range(0x91, 0x98), 0x99, 0x9B, 0xA0,
    *range(0xA6, 0xAA), *range(0xAB, 0xAF), 0xB0, 0xB1, *range(0xB4, 0xB9), 0xBB,
])  # fmt: skip
_ASCII_OR_SHARED = _ASCII_BYTES + _SHARED_PUNCTUATION
# Fewer bytes than this that tell encodings apart (not ASCII, not shared punctuation)
# are at most one letter of a two-byte encoding, two of a one-byte one: too little
# for the detector, which costs 3-13 ms on such a page and whose answer there is a
# Latin code page that the stop-word scores then settle anyway (every such page among
# the 6,000 gold and held-out pages; tests/test_decode.py).
_DETECTOR_EVIDENCE = 3
# Candidates for the detector: the encodings found on the web (WHATWG), so a
# page of Latin text is not read as, say, big5hkscs.
_WEB_ENCODINGS = [
    "cp1252",
    "cp1250",
    "cp1251",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "cp874",
    "iso8859_2",
    "iso8859_15",
    "koi8_r",
    "koi8_u",
    "mac_roman",
    "shift_jis",
    "euc_jp",
    "iso2022_jp",
    "gb18030",
    "big5",
    "cp949",
]
#: The detector's multi-byte candidates, where one bad byte fails a whole page.
_MULTIBYTE = ("gb18030", "big5", "shift_jis", "euc_jp", "cp949")


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    #: Python codec name actually used.
    encoding: str
    #: The charset the page declared (HTTP header first, else meta), as written.
    declared: str | None
    #: Where `encoding` came from: bom, http, meta, utf-8, detected, fallback, text.
    source: str
    #: The page's bytes when they are `text` in UTF-8 exactly (a UTF-8 or ASCII page
    #: that decoding neither repaired nor cleaned): the parser reads them directly.
    utf8: bytes | None = None


def normalize_charset(label: str | None) -> str | None:
    """A declared label -> a Python codec name, or None if unknown (`iso-1252`, `0`)."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    if not label:
        return None
    label = _WHATWG_ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except (LookupError, ValueError):
        return None
    # Python codecs that are no web charset (rot13, base64, undefined, idna,
    # unicode_escape ...): real pages do send `charset=undefined`.
    if name.replace("_", "-") in _NOT_CHARSETS or name.endswith("_codec"):
        return None
    return name


def meta_charset(data: bytes) -> str | None:
    match = _META_CHARSET.search(data, 0, 16384) or _META_CHARSET.search(data)
    return match.group(1).decode("ascii", "replace") if match else None


def _bom(data: bytes) -> tuple[str, int] | None:
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    return None


def _utf8_or_none(data: bytes) -> tuple[str | None, bool]:
    """The page as UTF-8 when its bytes are UTF-8, allowing for damage (None when
    they are not), and whether it was damaged (repaired).

    A character cut at the end (a size cap, a truncated download) and a few
    stray bytes in an otherwise UTF-8 page (under 1 in 50 of its non-ASCII
    characters) still count as UTF-8; a legacy-encoded page fails on nearly
    every non-ASCII byte.

    So does a page most of whose non-ASCII characters are valid UTF-8: a UTF-8
    blog with three Latin-1 bytes in an image's alt text among a hundred
    umlauts, or a news page whose curly quotes are UTF-8 and whose meta
    description holds a mangled one, which the byte ratio alone sends to the
    detector (and every umlaut or quote to mojibake, in cp1250 or mac-roman).
    A legacy page almost never forms a valid multi-byte sequence by chance:
    decoded as UTF-8, none of the 370 legacy or damaged pages among the gold
    sets and trafilatura's evaluation pages has more than 0.29 valid
    characters per stray one (GBK); the damaged UTF-8 pages have 1.2 to 500,
    but for one whose em dashes each lost a byte (0.59), left to the detector.
    """
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError as failure:
        return _repaired(data, "utf-8", failure, mostly_valid=True), True


def _decode_damaged(data: bytes, codec: str) -> str | None:
    """`data` in `codec`, allowing for the damage a crawl meets; None when it is more.

    A character cut at the end (a size cap, a truncated download: a GBK or
    Shift_JIS page cut after a lead byte as well as a UTF-8 one) is left out, and
    a few undecodable bytes (at most 1 in 100 of the non-ASCII bytes: a stray
    byte, a spliced fragment) become U+FFFD, as a browser shows them. Bytes
    mostly in another encoding fail on far more than that.
    """
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        return _repaired(data, codec, exc)


def _repaired(
    data: bytes, codec: str, failure: UnicodeDecodeError, *, mostly_valid: bool = False
) -> str | None:
    """`_decode_damaged` once the strict decode has failed with `failure`; with
    `mostly_valid` (UTF-8: `_utf8_or_none`) also when the page's valid non-ASCII
    characters outnumber its stray bytes."""
    if failure.end >= len(data) and failure.start >= len(data) - 3:
        # only the last character is cut: everything before it decodes
        return data[: failure.start].decode(codec, "replace")
    text = data.decode(codec, "replace")
    written = "\ufffd".encode(codec, "ignore")  # U+FFFD the page itself holds
    damaged = text.count("\ufffd") - (data.count(written) if written else 0)
    high_bytes = len(data.translate(None, _ASCII_BYTES))
    if damaged * 100 <= high_bytes:
        return text
    if mostly_valid and len(text) - len(text.encode("ascii", "ignore")) - damaged > damaged:
        return text
    return None


def _is_unicode_family(name: str) -> bool:
    return name.startswith(("utf-16", "utf-32", "utf_16", "utf_32"))


def _detect(data: bytes) -> str | None:
    telling = len(data.translate(None, _ASCII_OR_SHARED))
    if not telling:
        return "cp1252"
    # Accented stop words (très, že, für...) settle a Latin page without the
    # detector, which costs 2-15 ms a page; it is left for pages without them.
    latin, evidence = _latin_code_page_scores(data, "cp1252")
    if evidence >= _LATIN_EVIDENCE or telling < _DETECTOR_EVIDENCE:
        return latin
    sample = data[:_DETECT_SAMPLE]
    found = _run_detector(sample)
    if found in _MULTIBYTE:
        return found
    # One bad byte (a page cut inside a character, a stray byte) rules a multi-byte
    # encoding out of the detector's running, and a GBK page then reads as
    # windows-1251: ask again without the bytes that encoding cannot decode.
    for codec in _MULTIBYTE:
        try:
            sample.decode(codec)
            continue  # valid throughout: the detector has weighed it already
        except UnicodeDecodeError as failure:
            text = _repaired(sample, codec, failure)
        if (
            text is not None
            and _run_detector(text.replace("\ufffd", "").encode(codec, "ignore")) == codec
        ):
            return codec
    return found


def _run_detector(sample: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - declared dependency
        return None
    try:
        best = from_bytes(sample, cp_isolation=_WEB_ENCODINGS).best()
    except Exception:  # the detector must never take a page down with it
        return None
    return normalize_charset(best.encoding) if best is not None else None


@functools.lru_cache(maxsize=128)
def _controls_are_bytes(codec: str) -> bool:
    """Does a control character in this codec's text always come from that same byte?

    True for UTF-8 and for single-byte codecs that keep ASCII and map no high
    byte to a control: then bytes without a control byte decode to text without
    one. (Not for UTF-16/32, EBCDIC, the CJK multi-byte codecs: they get the
    regex on the text.)
    """
    if codecs.lookup(codec).name in ("utf-8", "ascii"):
        return True
    try:
        text = bytes(range(256)).decode(codec, "replace")
    except (LookupError, UnicodeError, ValueError):  # odd codecs: keep the regex
        return False
    if len(text) != 256 or text[:128] != "".join(map(chr, range(128))):
        return False
    return _CONTROL_CHARS.search(text, 128) is None


def _clean_decoded(text: str, data: bytes, codec: str) -> str:
    """clean_text(text) for `text` decoded from `data`; a fast byte scan first.

    The regex over a 100 KB non-Latin page costs ~0.5 ms; deleting control
    bytes from the raw page and comparing lengths costs ~0.07 ms.
    """
    if _controls_are_bytes(codec) and len(data.translate(None, _CONTROL_BYTES)) == len(data):
        return text
    return clean_text(text)


def clean_text(text: str) -> str:
    """Remove NUL and other control characters that libxml2 refuses."""
    if _CONTROL_CHARS.search(text) is None:
        return text
    return _CONTROL_CHARS.sub("", text)


def decode_html(data: bytes, http_charset: str | None = None) -> Decoded:
    """Decode a page the way issue 2 item 1 describes; never raises."""
    bom = _bom(data)
    declared = http_charset or None
    if bom is not None:
        name, size = bom
        text = data[size:].decode(name, "replace")
        return Decoded(_clean_decoded(text, data, name), name, declared, "bom")

    source = "http"
    codec = normalize_charset(http_charset)
    if codec is None:
        meta = meta_charset(data)
        if meta is not None:
            declared = declared or meta
            codec = normalize_charset(meta)
            source = "meta"
            if codec is not None and _is_unicode_family(codec):
                # A meta tag readable as ASCII cannot be UTF-16/32 (WHATWG: use UTF-8).
                codec = "utf-8"

    has_high = not data.isascii()
    if not has_high and (codec is None or not _is_unicode_family(codec)):
        # Pure ASCII: every ASCII-compatible declaration gives the same text.
        ascii_text = data.decode("ascii")
        text = _clean_decoded(ascii_text, data, "ascii")
        exact = data if text is ascii_text else None
        return Decoded(text, codec or "ascii", declared, source, exact)

    if codec is not None and _is_unicode_family(codec):
        text = _clean_decoded(data.decode(codec, "replace"), data, codec)
        return Decoded(text, codec, declared, source)

    as_utf8, repaired = _utf8_or_none(data)
    if as_utf8 is not None:
        # Valid UTF-8 with non-ASCII bytes: trust the bytes over a legacy label.
        used_source = source if codec == "utf-8" else "utf-8"
        text = _clean_decoded(as_utf8, data, "utf-8")
        exact = data if text is as_utf8 and not repaired else None
        return Decoded(text, "utf-8", declared, used_source, exact)

    if codec is not None and codec != "utf-8":
        # A declared page cut inside a character, or with a stray byte, keeps its
        # declaration (as a browser does); one contradicted by the bytes is detected.
        declared_text = _decode_damaged(data, codec)
        if declared_text is not None:
            return Decoded(_clean_decoded(declared_text, data, codec), codec, declared, source)

    detected = _detect(data)
    if detected in _LATIN_CODE_PAGES or detected in ("iso8859-1", "latin-1", "iso8859-15"):
        # no decisive evidence: windows-1252 unless another Latin page scores higher
        detected = _best_latin_code_page(data, "cp1252")
    if detected is not None:
        detected_text = _decode_damaged(data, detected)
        if detected_text is not None:
            return Decoded(
                _clean_decoded(detected_text, data, detected), detected, declared, "detected"
            )
    # A damaged page: keep the declaration if there was one, else UTF-8, and replace.
    fallback = codec or detected or "utf-8"
    try:
        text = data.decode(fallback, "replace")
    except UnicodeError:
        fallback, text = "utf-8", data.decode("utf-8", "replace")
    return Decoded(clean_text(text), fallback, declared, "fallback")


def _best_latin_code_page(data: bytes, detected: str) -> str:
    """Among the Latin code pages, the one whose non-ASCII words are stop words.

    charset-normalizer reads short French pages as cp1257 ("chāteau") and
    English ones as cp1250; decoding each candidate and counting its
    accented words that some language's stoplist holds (très, že, für...)
    settles it; C1 control characters count against a code page. With no
    evidence either way the detector's answer stands.
    """
    return _latin_code_page_scores(data, detected)[0]


@functools.lru_cache(maxsize=1)
def _latin_alphabet() -> str:
    """Every character a Latin code page decodes a byte to, with what `str.lower`
    makes of it (the scores look words up lowercased: "İ" lowers to "i" and U+0307)."""
    chars: set[str] = set()
    for codec in ("cp1252", *_LATIN_CODE_PAGES):
        for ch in bytes(range(256)).decode(codec, "replace"):
            chars.add(ch)
            chars.update(ch.lower())
    return "".join(sorted(chars))


def _latin_code_page_scores(data: bytes, default: str) -> tuple[str, int]:
    """(best Latin code page, its score); `default` unless another scores higher."""
    from .stoplists import stop_words_within

    # Only words these code pages can spell can be hits: the index's other 130 k
    # words are never asked for, and loading them was most of a fixed-language
    # `extract`'s start-up on a Latin page.
    index = stop_words_within(_latin_alphabet())
    # Only lines with non-ASCII bytes tell code pages apart; 20 KB of them is plenty.
    lines = data[: 8 * _LATIN_SAMPLE].split(b"\n")
    sample = b"\n".join(line for line in lines if not line.isascii())[:_LATIN_SAMPLE]
    # Non-ASCII words, wedged symbols and C1 controls all lie in tokens that
    # hold a high byte; scoring only those reads a tenth of the text.
    sample = b" ".join([token for token in sample.split() if not token.isascii()])
    contains = index.__contains__

    def score(codec: str) -> int:
        text = sample.decode(codec, "replace")
        # the word runs holding a non-ASCII letter (a regex asking for that letter inside
        # the run backtracks quadratically on a long ASCII run: 15 s on one fuzzed page)
        words = [w.lower() for w in _WORD_RUN.findall(text) if len(w) > 1 and not w.isascii()]
        hits = sum(map(contains, words))
        # C1 controls mean the code page has no letter for those bytes; a symbol
        # wedged between two letters (Za¿ó³æ) is a letter of another code page.
        wedged = sum(1 for ch in _BETWEEN_LETTERS.findall(text) if not ch.isalpha())
        return 10 * (hits - len(_C1_CONTROL.findall(text)) - wedged)

    best, best_score = default, score(default)
    for candidate in _LATIN_CODE_PAGES:
        if candidate != default:
            candidate_score = score(candidate)
            if candidate_score > best_score:
                best, best_score = candidate, candidate_score
    return best, best_score


def decode_like_justext(data: bytes, http_charset: str | None = None) -> Decoded:
    """jusText 3.0.2's `decode_html`, for the `reference` preset.

    An explicit charset wins; else its meta pattern over the whole page; else
    strict UTF-8; else UTF-8 with replacement. Control characters are left
    to libxml2, which turns them into U+FFFD as it does for jusText.
    """
    if http_charset:
        codec = normalize_charset(http_charset) or "utf-8"
        return Decoded(data.decode(codec, "replace"), codec, http_charset, "http")
    match = _REFERENCE_META_CHARSET.search(data)
    if match:
        declared = match.group(1).decode("ascii", "replace")
        try:
            codec = codecs.lookup(declared).name
            text = data.decode(declared, "replace")
        except (LookupError, ValueError):
            pass
        else:
            return Decoded(text, codec, declared, "meta")
    as_utf8, _ = _utf8_or_none(data)
    if as_utf8 is not None:
        return Decoded(as_utf8, "utf-8", None, "utf-8")
    return Decoded(data.decode("utf-8", "replace"), "utf-8", None, "fallback")

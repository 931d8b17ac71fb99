"""`corpus_crawler.mediatype`: the one table of binary signatures and what it decides."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest

from corpus_crawler._cli_extract import sniff
from corpus_crawler.mediatype import SIGNATURES, Signature, binary_signature, is_html
from corpus_crawler.warc import identify_payload_type


def _sample(signature: Signature) -> bytes:
    head = bytearray(signature.magic.ljust(64, b"\x00"))
    if signature.then:
        head[signature.then_at : signature.then_at + len(signature.then)] = signature.then
    return bytes(head) + b"<html><p>text after the signature</p></html>"


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: s.description)
def test_each_signature_decides_all_three_uses(signature: Signature) -> None:
    body = _sample(signature)
    found = binary_signature(body)
    assert found is not None
    # the first match is this entry, or one of the same magic listed before it (RIFF)
    assert found == signature or (found.magic == signature.magic and found.then)
    assert not is_html("text/html", body)
    assert sniff(body) == found.description
    assert identify_payload_type(body, [("Content-Type", "text/html")]) == found.media_type


@pytest.mark.parametrize(
    ("body", "media_type"),
    [
        (bz2.compress(b"x" * 100), "application/x-bzip2"),
        (gzip.compress(b"x", mtime=0), "application/gzip"),
        (lzma.compress(b"x"), "application/x-xz"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", "audio/wav"),
        (b"RIFF\x10\x00\x00\x00CDXAfmt ", "application/octet-stream"),
    ],
)  # fmt: skip
def test_real_files_are_named_by_their_format(body: bytes, media_type: str) -> None:
    assert identify_payload_type(body, []) == media_type


@pytest.mark.parametrize(
    "body",
    [b"BZh is how this page starts", b"RIF: not a RIFF", b"GIF8 is not enough", b"PK and more",
     b"<!doctype html><title>x</title>", b"\xef\xbb\xbf<html>"],
)  # fmt: skip
def test_text_that_starts_like_a_signature_is_not_binary(body: bytes) -> None:
    assert binary_signature(body) is None
    assert is_html("text/html", body)


def test_no_gold_page_looks_binary(gold_dir: Path) -> None:
    pages = sorted(gold_dir.glob("*/html/*"))
    assert len(pages) > 100
    assert [p.name for p in pages if binary_signature(p.read_bytes()[:64])] == []

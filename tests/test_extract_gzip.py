"""`corpus-crawler extract` on gzip-compressed pages (`page.html.gz`), run as a real
subprocess: extracted as `zcat` prints them, damage named, never decompressed past
what the extractor reads."""

from __future__ import annotations

import gzip
import io
import json
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from corpus_crawler import _cli_extract
from corpus_crawler._cli_extract import gunzipped
from corpus_crawler.config import ExtractConfig


def _article(title: str, paragraphs: int = 4, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    words = ("the", "river", "town", "of", "and", "a", "to", "was", "in", "that", "it", "with")
    body = "".join(
        f"<p>{title} {n}: " + " ".join(rng.choice(words) for _ in range(60)) + ".</p>"
        for n in range(paragraphs)
    )
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def _extract(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "extract", "--lang", "en", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _records(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_gzip_page_gives_the_text_of_the_page_it_holds(tmp_path: Path) -> None:
    page = _article("Rivers")
    (tmp_path / "plain.html").write_bytes(page)
    (tmp_path / "packed.html.gz").write_bytes(gzip.compress(page))
    (tmp_path / "notes.txt.gz").write_bytes(gzip.compress(page))  # not a page's name
    result = _extract("--format", "json", str(tmp_path))
    assert result.returncode == 0, result.stderr
    by_name = {Path(str(r["source"])).name: r for r in _records(result)}
    assert sorted(by_name) == ["packed.html.gz", "plain.html"]
    plain, packed = by_name["plain.html"], by_name["packed.html.gz"]
    assert plain["text"] and packed["text"] == plain["text"]
    assert packed["raw_size"] == len(page)  # the page's size, not the file's
    assert "gzip-compressed pages: 1" in result.stderr


def test_every_gzip_member_is_read_as_zcat_reads_them(tmp_path: Path) -> None:
    first, second = _article("First", seed=1), _article("Second", seed=2)
    path = tmp_path / "two.html.gz"
    path.write_bytes(
        gzip.compress(first[: len(first) // 2]) + gzip.compress(first[len(first) // 2 :] + second)
    )
    (record,) = _records(_extract("--format", "json", str(path)))
    assert record["raw_size"] == len(first) + len(second)
    assert "First 3:" in str(record["text"]) and "Second 0:" in str(record["text"])


def test_a_gzip_page_on_standard_input() -> None:
    page = _article("Stdin")
    piped = _extract("-", stdin=gzip.compress(page))
    assert piped.returncode == 0, piped.stderr
    assert "Stdin 2:" in piped.stdout
    assert _extract("-", stdin=page).stdout == piped.stdout


def test_a_gzip_file_cut_short_gives_what_it_holds_and_says_so(tmp_path: Path) -> None:
    page = _article("Cut", paragraphs=40, seed=3)
    packed = gzip.compress(page)
    path = tmp_path / "cut.html.gz"
    path.write_bytes(packed[: len(packed) // 2])
    result = _extract(str(path))
    assert result.returncode == 0
    assert "Cut 1:" in result.stdout and "Cut 39:" not in result.stdout
    assert f"{path}: the gzip data is cut short: extracted as far as it goes" in result.stderr


def test_trailing_bytes_and_a_damaged_later_member_are_named(tmp_path: Path) -> None:
    page = _article("Trail", seed=4)
    trailing = tmp_path / "trailing.html.gz"
    trailing.write_bytes(gzip.compress(page) + b"\0\0junk from a copy")
    damaged = tmp_path / "damaged.html.gz"
    damaged.write_bytes(gzip.compress(page) + b"\x1f\x8b\x08\x00\0\0\0\0\0\xffnot deflate")
    result = _extract("--format", "json", str(trailing), str(damaged))
    records = _records(result)
    assert [bool(r["text"]) for r in records] == [True, True]
    assert records[0]["text"] == records[1]["text"]
    assert f"{trailing}: bytes that are no gzip member follow the data: ignored" in result.stderr
    assert (
        f"{damaged}: the gzip data does not decompress past some point: extracted up to it"
        in result.stderr
    )
    assert "gzip files with trailing bytes: 1" in result.stderr
    assert "gzip files damaged: 1" in result.stderr


def test_gzip_data_that_does_not_decompress_is_refused_never_printed(tmp_path: Path) -> None:
    path = tmp_path / "broken.html.gz"
    # a deflate block of the reserved type 3 (its first byte's bits 1-2)
    path.write_bytes(b"\x1f\x8b\x08\x00\0\0\0\0\0\xff\x07" + bytes(range(256)))
    result = _extract("--format", "json", str(path))
    (record,) = _records(result)
    assert record["drop_reason"] == "not-html" and record["text"] == ""
    assert str(record["drop_detail"]).startswith("gzip-compressed data that does not decompress")
    assert "refused: gzip-compressed data that does not decompress" in result.stderr


def test_a_gzip_bomb_is_decompressed_no_further_than_the_extractor_reads(tmp_path: Path) -> None:
    limit = ExtractConfig().max_bytes
    # 200 MiB of spaces inside a paragraph, 200 KiB on disk
    path = tmp_path / "bomb.html.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"<html><body><p>")
        for _ in range(200):
            handle.write(b" " * (1 << 20))
        handle.write(b"</p></body></html>")
    assert path.stat().st_size < 1 << 20
    (record,) = _records(_extract("--format", "json", str(path)))
    assert record["raw_size"] == limit + 1  # one byte past the extractor's cut: cut
    assert record["drop_reason"] == "empty"


def test_a_plain_page_past_max_bytes_is_read_no_further(tmp_path: Path) -> None:
    limit = ExtractConfig().max_bytes
    path = tmp_path / "huge.html"
    with open(path, "wb") as handle:
        handle.write(_article("Huge"))
        for _ in range(limit // (1 << 20) + 5):  # 5 MiB past the limit
            handle.write(b" " * (1 << 20))
    (record,) = _records(_extract("--format", "json", str(path)))
    assert record["raw_size"] == limit + 1  # read to one byte past the extractor's cut
    assert "Huge 3:" in str(record["text"])


@pytest.mark.parametrize("chunk", [1, 2, 7, 1 << 16])
@pytest.mark.parametrize("limit", [0, 1, 499, 500, 999, 1000, 1001, 5000])
def test_gunzipped_stops_one_byte_past_its_limit(
    limit: int, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cli_extract, "_CHUNK", chunk)  # members straddle the reads
    data = bytes(range(256)) * 4  # 1024 bytes
    packed = gzip.compress(data[:500]) + gzip.compress(data[500:])
    stream = io.BytesIO(packed)
    out, problem = gunzipped(stream, limit)
    assert out == data[: limit + 1] and problem is None
    if limit < 500:  # the first member's output reached the limit: no more was read
        assert stream.tell() <= len(gzip.compress(data[:500])) + chunk


@pytest.mark.parametrize("chunk", [1, 3, 1 << 16])
def test_gunzipped_names_what_is_wrong(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cli_extract, "_CHUNK", chunk)
    data = b"a page " * 100
    whole = gzip.compress(data)
    assert gunzipped(io.BytesIO(whole + whole), 10_000) == (data + data, None)
    assert gunzipped(io.BytesIO(whole[:-10]), 10_000)[1] == "cut"
    assert gunzipped(io.BytesIO(whole + b"\x1f\x8b\x08"), 10_000)[1] == "cut"  # a member begun
    assert gunzipped(io.BytesIO(whole + b"\x1f"), 10_000)[1] == "trailing"  # as gzip -t says
    assert gunzipped(io.BytesIO(whole + b"junk"), 10_000) == (data, "trailing")
    damaged = whole + b"\x1f\x8b\x08\x00\0\0\0\0\0\xff\x07"
    assert gunzipped(io.BytesIO(damaged), 10_000) == (data, "damaged")


@pytest.mark.parametrize("chunk", [1, 1 << 16])
def test_gunzipped_raises_when_nothing_decompresses(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_cli_extract, "_CHUNK", chunk)  # empty output from the header's reads
    with pytest.raises(zlib.error):
        gunzipped(io.BytesIO(b"\x1f\x8b\x08\x00\0\0\0\0\0\xff" + b"\xff" * 100), 1000)

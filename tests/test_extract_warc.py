"""`corpus-crawler extract` on WARC input and on binary input (run as a real subprocess)."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

ARTICLE = (
    "<html><head><title>{title}</title></head><body><div id='nav'><a href='/'>Home</a></div>"
    "<article>"
    + "".join(
        f"<p>{{title}}: paragraph {n} of a long article about the history of Czech rivers"
        " and the towns that were built along their banks over many centuries. It is"
        " a story that has been told by many people who lived there and who have"
        " written about it in their own books and letters.</p>"
        for n in range(4)
    )
    + "</article></body></html>"
)


def _response(
    writer: WARCWriter,
    url: str,
    body: bytes,
    headers: list[tuple[str, str]],
    status: str = "200 OK",
) -> None:
    http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
    writer.write_record(record)


def make_warc(path: Path, *, gzip_records: bool = True) -> None:
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=gzip_records)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "test"}))
        # a page in ISO-8859-2 whose charset is only in the HTTP header
        czech = ARTICLE.format(title="Řeky a města").encode("iso-8859-2")
        _response(
            writer, "http://a.test/cz", czech, [("Content-Type", "text/html; charset=iso-8859-2")]
        )
        # gzip Content-Encoding, as received: warcio's content_stream decodes it
        body = gzip.compress(ARTICLE.format(title="Gzipped page").encode())
        _response(
            writer,
            "http://a.test/gz",
            body,
            [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
        )
        _response(
            writer,
            "http://a.test/img.png",
            b"\x89PNG\r\n\x1a\n" + bytes(200),
            [("Content-Type", "image/png")],
        )
        _response(
            writer,
            "http://a.test/missing",
            ARTICLE.format(title="Not found").encode(),
            [("Content-Type", "text/html")],
            status="404 Not Found",
        )
        request = writer.create_warc_record(
            "http://a.test/cz",
            "request",
            http_headers=StatusAndHeaders(
                "GET /cz HTTP/1.1", [("Host", "a.test")], is_http_request=True
            ),
        )
        writer.write_record(request)


def run_extract(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "extract", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def test_every_html_response_record_is_extracted_with_its_url_and_charset(
    tmp_path: Path,
) -> None:
    # named .bin: the WARC is recognised by its bytes, not its name
    path = tmp_path / "capture.bin"
    make_warc(path)
    result = run_extract("--format", "json", "--lang", "en", str(path))
    assert result.returncode == 0, result.stderr.decode()
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [r["url"] for r in records] == ["http://a.test/cz", "http://a.test/gz"]
    assert all(r["source"].startswith(f"{path}#<urn:uuid:") for r in records)
    czech, gzipped = records
    assert czech["encoding"].replace("_", "-").lower() in ("iso8859-2", "iso-8859-2")
    assert "Řeky a města: paragraph 0" in czech["text"]
    assert "Gzipped page: paragraph 3" in gzipped["text"]
    stderr = result.stderr.decode()
    assert "warc responses not HTML or not 2xx (skipped): 2" in stderr


def test_plain_warc_and_text_output(tmp_path: Path) -> None:
    path = tmp_path / "capture.warc"
    make_warc(path, gzip_records=False)
    result = run_extract("--lang", "en", str(path))
    assert result.returncode == 0
    assert "Řeky a města: paragraph 1" in result.stdout.decode("utf-8")
    # corpus formats carry the record's URL and its WARC-Date as the crawl date
    prevert = run_extract("--lang", "en", "--format", "prevertical", str(path))
    with open(path, "rb") as handle:
        dates = [
            r.rec_headers.get_header("WARC-Date")
            for r in ArchiveIterator(handle)
            if r.rec_type == "response"
        ]
    first = prevert.stdout.decode("utf-8").splitlines()[0]
    assert 'url="http://a.test/cz"' in first
    assert f'crawl_date="{dates[0][:10]} {dates[0][11:16]}"' in first


def test_a_warc_folder_is_expanded_and_a_warc_without_html_is_refused(tmp_path: Path) -> None:
    make_warc(tmp_path / "a.warc.gz")
    empty = tmp_path / "b.warc.gz"
    with open(empty, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        writer.write_record(writer.create_warcinfo_record("b", {"software": "test"}))
    result = run_extract("--format", "json", "--lang", "en", str(tmp_path))
    assert result.returncode == 1  # one input had nothing to extract
    assert len(result.stdout.decode().splitlines()) == 2
    assert "b.warc.gz: a WARC file with no HTML response record" in result.stderr.decode()


def test_a_truncated_warc_keeps_the_records_before_the_damage(tmp_path: Path) -> None:
    path = tmp_path / "torn.warc"
    make_warc(path, gzip_records=False)
    data = path.read_bytes()
    cut = data.index(b"WARC-Target-URI: http://a.test/gz")
    path.write_bytes(data[: cut + 200] + b"\r\n\r\nWARC/1.0\r\ngarbage")
    result = run_extract("--format", "json", "--lang", "en", str(path))
    urls = [json.loads(line)["url"] for line in result.stdout.decode().splitlines()]
    assert urls[0] == "http://a.test/cz"
    assert result.returncode == 1 and "torn.warc" in result.stderr.decode()


def test_binary_input_is_refused_never_printed(tmp_path: Path) -> None:
    # a gzip file is opened (tests/test_extract_gzip.py), and what is inside judged
    compressed = tmp_path / "page.html.gz"
    compressed.write_bytes(gzip.compress(b"%PDF-1.7\n" + bytes(range(256)) * 10))
    pdf = tmp_path / "paper.html"  # a lying name
    pdf.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 10)
    result = run_extract(str(compressed), str(pdf))
    assert result.stdout == b""
    stderr = result.stderr.decode()
    assert f"{compressed}: refused: a PDF document, gzip-compressed, not a web page" in stderr
    assert f"{pdf}: refused: a PDF document, not a web page" in stderr
    assert "not-html: 2" in stderr
    as_json = run_extract("--format", "json", "-", stdin=compressed.read_bytes())
    (record,) = [json.loads(line) for line in as_json.stdout.decode().splitlines()]
    assert record["drop_reason"] == "not-html" and record["text"] == ""
    assert record["drop_detail"] == "a PDF document, gzip-compressed, not a web page"


def test_a_warc_on_standard_input(tmp_path: Path) -> None:
    path = tmp_path / "c.warc.gz"
    make_warc(path)
    result = run_extract("--format", "json", "--lang", "en", "-", stdin=path.read_bytes())
    assert [json.loads(x)["url"] for x in result.stdout.decode().splitlines()] == [
        "http://a.test/cz",
        "http://a.test/gz",
    ]


def test_a_record_cut_inside_its_body_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cut.warc"
    make_warc(path, gzip_records=False)
    data = path.read_bytes()
    start = data.index(b"WARC-Target-URI: http://a.test/gz")
    cut = data.index(b"WARC/1.0", start) - 40  # inside the gzip page's body
    path.write_bytes(data[:cut])
    result = run_extract("--format", "json", "--lang", "en", str(path))
    assert result.returncode == 1
    assert "record cut short: the file ends" in result.stderr.decode()
    assert [json.loads(x)["url"] for x in result.stdout.decode().splitlines()] == [
        "http://a.test/cz"
    ]


def test_warc_records_are_judged_html_as_the_crawl_judges_them(tmp_path: Path) -> None:
    # `mediatype.is_html`, as in the live crawl and `process`: a PDF labelled text/html is
    # not a page (the extractor made paragraphs of the article inside it), and an
    # unlabelled or octet-stream page that starts like HTML is one
    path = tmp_path / "labels.warc.gz"
    article = ARTICLE.format(title="Octet page").encode()
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        _response(writer, "http://a.test/paper.pdf", b"%PDF-1.4\n" + article,
                  [("Content-Type", "text/html")])  # fmt: skip
        _response(writer, "http://a.test/octet", article,
                  [("Content-Type", "application/octet-stream")])  # fmt: skip
        _response(writer, "http://a.test/data.bin", b"\x00\x01" + bytes(300),
                  [("Content-Type", "application/octet-stream")])  # fmt: skip
    result = run_extract("--format", "json", "--lang", "en", str(path))
    assert result.returncode == 0, result.stderr.decode()
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [r["url"] for r in records] == ["http://a.test/octet"]
    assert "Octet page: paragraph 2" in records[0]["text"]
    assert "warc responses not HTML or not 2xx (skipped): 2" in result.stderr.decode()

"""`corpus-crawler extract -`: standard input is read as a file is, in one pass and
never whole. A page is read to one byte past what the extractor reads; a WARC file
is streamed record by record, each payload read no further than that either, so
`zcat crawl.warc.gz | corpus-crawler extract -` does not hold the archive in memory."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpus_crawler.config import ExtractConfig

EXTRACT = (sys.executable, "-m", "corpus_crawler.cli", "extract", "--lang", "en")
#: A guard against a hung run, not a speed assertion.
TIMEOUT = 180
LIMIT = ExtractConfig().max_bytes
MIB = 1 << 20
ARTICLE = b"<html><body>" + b"".join(
    b"<p>The river runs past the old town and the mill, and the people who live there"
    b" have told its story in many books and letters over the years, as their parents"
    b" did before them. Paragraph %d of the article is as plain as the others.</p>" % n
    for n in range(4)
)

#: Runs `extract` on standard input from a file and prints its peak RSS in KiB:
#: the only child of this process, so RUSAGE_CHILDREN is its own.
_PEAK = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as source, open(sys.argv[2], "wb") as out:
    done = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "extract", "--lang", "en",
         "--format", "json", "-"],
        stdin=source, stdout=out, stderr=subprocess.DEVNULL,
    )
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_kib(source: Path, out: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(source), str(out)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    code, peak = done.stdout.split()
    return int(code), int(peak)


def test_a_page_on_standard_input_is_read_no_further_than_the_extractor_reads(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.json"
    with open(out, "wb") as stdout:
        process = subprocess.Popen(
            [*EXTRACT, "--format", "json", "-"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None
        accepted = 0
        try:
            process.stdin.write(ARTICLE)
            accepted += len(ARTICLE)
            while accepted < 3 * LIMIT:  # three times what the extractor reads
                process.stdin.write(b" " * MIB)
                process.stdin.flush()
                accepted += MIB
        except BrokenPipeError:  # the extractor closed its end: it read all it needs
            pass
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        assert process.wait(timeout=TIMEOUT) == 0
    # what the pipe and the two processes' buffers hold past the reader's last read
    assert accepted < LIMIT + 8 * MIB
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["raw_size"] == LIMIT + 1  # one byte past the cut: cut, as a file is
    assert "runs past the old town" in record["text"]


def _warc(path: Path, huge: int, *, gzip_records: bool = False) -> None:
    """A WARC with a page, an HTML record of `huge` bytes, and a page after it."""
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=gzip_records)
        for url, body in (
            ("http://a.test/first", ARTICLE + b"<p>first</p>"),
            ("http://a.test/huge", ARTICLE + b" " * huge),
            ("http://a.test/last", ARTICLE + b"<p>last</p>"),
        ):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=http
                )
            )


def test_a_warc_file_on_standard_input_is_streamed(tmp_path: Path) -> None:
    small, big = tmp_path / "small.warc", tmp_path / "big.warc"
    _warc(small, 0)
    _warc(big, 6 * LIMIT)  # 120 MiB in one record
    code, base = _peak_kib(small, tmp_path / "small.json")
    assert code == 0
    code, peak = _peak_kib(big, tmp_path / "big.json")
    assert code == 0
    records = [json.loads(line) for line in (tmp_path / "big.json").read_text().splitlines()]
    assert [r["url"] for r in records] == [f"http://a.test/{n}" for n in ("first", "huge", "last")]
    assert records[1]["raw_size"] == LIMIT + 1
    # read whole, the archive alone is 120 MiB; streamed, the huge payload is read
    # to LIMIT + 1 (and parsed: a few times that at most)
    assert (peak - base) * 1024 < 5 * LIMIT, (base, peak)


def test_a_warc_on_standard_input_gives_what_the_file_gives(tmp_path: Path) -> None:
    path = tmp_path / "big.warc"
    _warc(path, 3 * MIB)
    packed = tmp_path / "big.warc.gz"
    _warc(packed, 3 * MIB, gzip_records=True)
    outputs = []
    for args, stdin in (
        ([str(packed)], None),
        (["-"], packed.read_bytes()),
        (["-"], path.read_bytes()),
    ):
        done = subprocess.run(
            [*EXTRACT, *args],
            input=stdin,
            capture_output=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr.decode()
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0].count(b"runs past the old town") == 3 * 4  # records x paragraphs


def test_an_input_shorter_than_the_head_is_one_page(tmp_path: Path) -> None:
    for data in (b"", b"<p>x</p>", ARTICLE):
        done = subprocess.run(
            [*EXTRACT, "--format", "json", "-"],
            input=data,
            capture_output=True,
            timeout=TIMEOUT,
        )
        (record,) = [json.loads(line) for line in done.stdout.decode().splitlines()]
        assert record["raw_size"] == len(data)

"""The crawl log: line format round trip, the buffered writer thread, crash recovery."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corpus_crawler.crawllog import (
    CrawlLogEntry,
    CrawlLogWriter,
    format_entry,
    parse_line,
    read_crawl_log,
    recover_crawl_logs,
)

NOW = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone.utc)


def test_a_line_has_ten_columns_like_heritrix() -> None:
    entry = CrawlLogEntry(
        time=NOW, status=200, url="http://a.test/x%C3%A9", outcome="kept", size=5120,
        discovery="LLR", via="http://a.test/", mime="text/html", duration_ms=134,
        annotations={"lang": "en", "doc": "3f2a", "detail": "a, b=c 100%"},
    )  # fmt: skip
    line = format_entry(entry)
    assert line == (
        "2024-05-06T07:08:09.123Z 200 5120 http://a.test/x%C3%A9 LLR http://a.test/"
        " text/html 134 kept lang=en,doc=3f2a,detail=a%2C%20b%3Dc%20100%25\n"
    )
    assert parse_line(line) == entry
    # a raw space cannot stand in a column: the equivalent escaped URL is logged
    spaced = CrawlLogEntry(time=NOW, status=200, url="http://a.test/x y", outcome="kept")
    assert parse_line(format_entry(spaced)).url == "http://a.test/x%20y"
    refused = CrawlLogEntry(time=NOW, status=0, url="http://a.test/p", outcome="refused:robots")
    assert format_entry(refused) == (
        "2024-05-06T07:08:09.123Z 0 - http://a.test/p - - - - refused:robots -\n"
    )
    assert parse_line(format_entry(refused)) == refused


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
# URLs as Scrapy sends them: no whitespace (and "-" alone means "none")
_url = _text.filter(lambda s: not any(c.isspace() for c in s) and s != "-")


@given(url=_url, outcome=_url, via=st.none() | _url, notes=st.dictionaries(_text, _text))
def test_any_value_survives_the_round_trip(
    url: str, outcome: str, via: str | None, notes: dict[str, str]
) -> None:
    entry = CrawlLogEntry(
        time=NOW, status=200, url=url, outcome=outcome, via=via, annotations=notes
    )
    line = format_entry(entry)
    assert line.count("\n") == 1 and len(line.split(" ")) == 10
    assert parse_line(line) == entry


def test_bad_lines_are_named() -> None:
    with pytest.raises(ValueError, match="10 columns"):
        parse_line("2024-05-06T07:08:09.123Z 200 -\n")


def test_the_writer_takes_lines_from_many_threads_and_loses_none(tmp_path: Path) -> None:
    writer = CrawlLogWriter(tmp_path, prefix="t", flush_interval=0.01).start()
    assert writer.current_path is not None and writer.current_path.name.endswith(".open")

    def append(worker: int) -> None:
        for number in range(500):
            writer.append(
                CrawlLogEntry(time=NOW, status=200, url=f"http://a.test/{worker}/{number}",
                              outcome="kept")
            )  # fmt: skip

    threads = [threading.Thread(target=append, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.close()
    (path,) = writer.files
    assert path.name.endswith(".crawl.log") and not list(tmp_path.glob("*.open"))
    urls = [entry.url for entry in read_crawl_log(path)]
    assert len(urls) == len(set(urls)) == 2000 == writer.lines


def test_a_crashed_log_keeps_its_whole_lines(tmp_path: Path) -> None:
    writer = CrawlLogWriter(tmp_path, flush_interval=60)
    writer.start()
    for number in range(3):
        writer.append(CrawlLogEntry(time=NOW, status=200, url=f"http://a/{number}", outcome="kept"))
    writer.flush()
    open_path = writer.current_path
    assert open_path is not None
    with open(open_path, "ab") as handle:
        handle.write(b"2024-05-06T07:08:09.123Z 200 12 http://a/torn")  # a crash mid-line
    (recovered,) = recover_crawl_logs(tmp_path)
    assert str(recovered.action) == "truncated" and recovered.units == 3
    assert [e.url for e in read_crawl_log(recovered.destination)] == [
        "http://a/0",
        "http://a/1",
        "http://a/2",
    ]


def test_a_log_killed_before_its_first_line_is_removed(tmp_path: Path) -> None:
    """A crawler killed right after opening its log leaves an empty ``.open`` file; a
    restart removes it rather than quarantining it (the distributed kill tests met one)."""
    writer = CrawlLogWriter(tmp_path, flush_interval=60)
    writer.start()
    writer.append(CrawlLogEntry(time=NOW, status=200, url="http://a/0", outcome="kept"))
    writer.flush()
    open_path = writer.current_path
    assert open_path is not None
    open_path.write_bytes(b"")  # as the kill left it: opened, nothing written yet
    (recovered,) = recover_crawl_logs(tmp_path)
    assert str(recovered.action) == "removed"
    assert not open_path.exists() and not (tmp_path / "quarantine").exists()

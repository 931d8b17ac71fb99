"""The report's figures of a long crawl stay the size of its duration, not of its pages.

`benchmarks/soak.py` (50,000 pages) showed the report's render process growing by
~6 MiB per 10,000 pages: each refresh re-read the crawl log into a timeline point and
two sizes per line (~300 B a page, ~300 MB per refresh at 10^6 pages, and a 10^6-point
plot). The timeline now has a point per second with lines, the sizes a count per
quarter decade.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from corpus_crawler.crawllog import CrawlLogEntry
from corpus_crawler.report import collect, render_html, size_bin

START = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)
#: 50 pages a second for 20 minutes
PAGES, PER_SECOND = 60_000, 50


def _entries(count: int) -> Iterator[CrawlLogEntry]:
    for number in range(count):
        kept = number % 4 != 0
        yield CrawlLogEntry(
            time=START + timedelta(seconds=number / PER_SECOND),
            status=200,
            url=f"http://h{number % 7}.test/p/{number}.html",
            outcome="kept" if kept else "dropped:duplicate",
            size=3000 + (number * 7919) % 90_000,
            annotations={"clean": "900", "words": "150", "lang": "en"} if kept else {},
        )


def _peak_bytes(count: int) -> int:
    tracemalloc.start()
    try:
        collect(_entries(count))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_timeline_has_a_point_per_second_and_the_sizes_a_count_per_bin() -> None:
    stats = collect(_entries(PAGES))
    assert len(stats.timeline) == PAGES // PER_SECOND
    assert stats.timeline[-1][1:] == (PAGES, PAGES - PAGES // 4)
    assert [t for t, _, _ in stats.timeline] == [float(s) for s in range(PAGES // PER_SECOND)]
    assert sum(stats.size_bins.values()) == PAGES
    assert sum(stats.kept_size_bins.values()) == PAGES - PAGES // 4
    assert len(stats.size_bins) <= 8  # 3 KB to 93 KB: two decades
    assert render_html(stats, None).count('class="plot"') >= 2


def test_collecting_ten_times_the_pages_takes_no_more_memory() -> None:
    small = _peak_bytes(PAGES // 10)
    large = _peak_bytes(PAGES)
    # a number per line would make it ~10x (per-line lists: ~20 MB at 60,000 lines)
    assert large < 2 * small + 2**20, (small, large)


def test_a_size_falls_in_its_quarter_decade() -> None:
    assert [size_bin(s) for s in (0, 1, 9, 10, 17, 18, 100, 99_999, 100_000)] == [
        0,
        0,
        3,
        4,
        4,
        5,
        8,
        19,
        20,
    ]

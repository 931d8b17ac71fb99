"""The report library: what it counts from a crawl log, and reports of empty or running crawls."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from corpus_crawler.crawllog import CrawlLogEntry, CrawlLogWriter, read_crawl_log
from corpus_crawler.report import collect, render_html, write_report

START = datetime(2024, 5, 6, 7, 0, tzinfo=timezone.utc)


def _entries() -> list[CrawlLogEntry]:
    out = []
    for number in range(30):
        host = "a.test" if number % 3 else "b.test"
        kept = number % 2 == 0
        out.append(
            CrawlLogEntry(
                time=START + timedelta(seconds=29 - number),  # logged out of time order
                status=200,
                url=f"http://{host}/{number}",
                outcome="kept" if kept else "dropped:wrong-language",
                size=1000,
                annotations={"clean": "100", "words": "20", "lang": "cs" if number < 10 else "en"}
                if kept
                else {},
            )
        )
    out.append(CrawlLogEntry(time=START, status=0, url="http://b.test/x", outcome="refused:robots"))
    return out


def test_collect_counts_hosts_yield_languages_and_a_monotonic_timeline() -> None:
    stats = collect(_entries())
    assert stats.entries == 31 and sum(stats.host_pages.values()) == 30
    assert stats.outcomes["kept"] == 15 and stats.outcomes["refused:robots"] == 1
    assert stats.host_pages == {"a.test": 20, "b.test": 10}
    assert stats.host_kept["b.test"] == 5 and stats.host_clean["b.test"] == 500
    assert stats.bytes_raw == 15_000 and stats.bytes_clean == 1500 and stats.words == 300
    assert stats.languages == {"cs": 5, "en": 10}
    fetched = [f for _, f, _ in stats.timeline]
    kept = [k for _, _, k in stats.timeline]
    assert fetched == sorted(fetched) and fetched[-1] == 30
    assert kept == sorted(kept) and kept[-1] == 15
    html = render_html(stats, {"dropped": {"wrong-language": 15}}, title="T & <x>")
    assert "<title>T &amp; &lt;x&gt;</title>" in html
    assert html.count('class="plot"') == 6
    assert "<td>b.test</td><td>10</td><td>5</td><td>50.0%</td>" in html


def test_kept_documents_are_counted_by_the_year_they_declare() -> None:
    entries = _entries()
    dates = iter(["2019-11-21", "2019-02-01", "2023-06-01", "", "2021-01-05"] * 3)
    for index, entry in enumerate(entries):
        if entry.outcome == "kept" and (date := next(dates)):
            annotations = {**entry.annotations, "published": date}
            entries[index] = dataclasses.replace(entry, annotations=annotations)
    stats = collect(entries)
    assert stats.published_years == {"2019": 6, "2023": 3, "2021": 3, "undated": 3}
    html = render_html(stats, {}, title="T")
    assert html.count('class="plot"') == 7 and 'alt="Publication years"' in html
    assert "<td>2019</td><td>6</td><td>40.0%</td>" in html
    assert "<td>undated</td><td>3</td><td>20.0%</td>" in html
    # a crawl that dated nothing shows neither
    assert "Publication years" not in render_html(collect(_entries()), {}, title="T")


def test_urls_waiting_for_a_retry_are_in_the_headline() -> None:
    # a cron-driven campaign: the summary's deferred retries (corpus_crawler.retries)
    campaign = {"retries_pending": 3, "next_retry": "2024-05-06T09:30:00+00:00"}
    html = render_html(collect(_entries()), {"campaign": campaign}, title="T")
    assert "<b>3</b>URLs waiting for a retry (first 2024-05-06 09:30 UTC)" in html
    assert "waiting for a retry" not in render_html(collect(_entries()), {}, title="T")


def test_an_empty_crawl_still_gets_a_report(tmp_path: Path) -> None:
    with CrawlLogWriter(tmp_path) as writer:
        pass
    target = write_report(list(writer.files), tmp_path / "r.html")
    html = target.read_text(encoding="utf-8")
    assert "<b>0</b>documents kept" in html and 'class="plot"' not in html


def test_a_report_of_a_running_crawl_reads_the_open_log(tmp_path: Path) -> None:
    writer = CrawlLogWriter(tmp_path, flush_interval=60).start()
    for entry in _entries():
        writer.append(entry)
    writer.flush()
    assert writer.current_path is not None
    with open(writer.current_path, "ab") as handle:
        handle.write(b"2024-05-06T07:00:00.000Z 200 10 http://torn")  # a line being written
    target = write_report([writer.current_path], tmp_path / "live.html", final=False)
    html = target.read_text(encoding="utf-8")
    assert "in progress" in html and "<b>15</b>documents kept" in html
    assert len(list(read_crawl_log(writer.current_path))) == 31


def test_the_report_command_finds_the_latest_crawl_and_its_own_log(tmp_path: Path) -> None:
    from corpus_crawler.report import find_crawl_files

    for name in (
        "c-20240506070000-summary.json",
        "c-20240506070000123-00000-h.crawl.log",
        "c-20240507080000-summary.json",
        "c-20240507080000456-00000-h.crawl.log",
        "c-20240508090000789-00000-h.crawl.log",  # a crawl still running: no summary yet
    ):
        (tmp_path / name).write_text("{}" if name.endswith(".json") else "", encoding="utf-8")
    logs, summary = find_crawl_files(tmp_path)
    assert summary is not None and summary.name == "c-20240507080000-summary.json"
    assert [p.name for p in logs] == ["c-20240507080000456-00000-h.crawl.log"]
    assert find_crawl_files(tmp_path / "nothing-here") == ([], None)


def test_the_latest_crawl_is_every_file_of_its_rotated_log(tmp_path: Path) -> None:
    from corpus_crawler.report import find_crawl_files

    for name in (
        "c-20240506070000123-00000-h.crawl.log",  # an earlier run, rotated once
        "c-20240506080000456-00001-h.crawl.log",
        "c-20240507080000-summary.json",
        "c-20240507080000456-00000-h.crawl.log",  # the latest, rotated twice
        "c-20240507090000001-00001-h.crawl.log",
        "c-20240507100000002-00002-h.crawl.log.open",  # killed: not recovered yet
    ):
        (tmp_path / name).write_text("{}" if name.endswith(".json") else "", encoding="utf-8")
    logs, summary = find_crawl_files(tmp_path)
    assert summary is not None and summary.name == "c-20240507080000-summary.json"
    assert [p.name for p in logs] == [
        "c-20240507080000456-00000-h.crawl.log",
        "c-20240507090000001-00001-h.crawl.log",
        "c-20240507100000002-00002-h.crawl.log.open",
    ]
    (tmp_path / "c-20240507080000-summary.json").unlink()  # no summary: the latest run
    assert find_crawl_files(tmp_path)[0] == logs


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(1.7, "1.7 s"), (119.0, "119.0 s"), (150.0, "2.5 min"), (5400.0, "1.5 h")],
)
def test_durations_read_as_a_person_reads_them(seconds: float, text: str) -> None:
    """The HTML report showed a 1.7 s demo crawl as "0.0 min"."""
    from corpus_crawler.report_runs import duration_text

    assert duration_text(seconds) == text


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (1, "1 B"),
        (100, "100 B"),
        (1000, "1 kB"),
        (10**4.5, "31.6 kB"),
        (1e6, "1 MB"),
        (2e9, "2 GB"),
    ],
)
def test_size_ticks_read_in_bytes_and_their_multiples(size: float, text: str) -> None:
    """The sizes plot labels its log axis "10 kB", not mathtext's 10^4 (which also
    loaded matplotlib's TeX parser, ~0.15 s of every crawl's report)."""
    from corpus_crawler.report import byte_size_label

    assert byte_size_label(size) == text


def test_a_report_parses_no_mathtext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every plot of a report with sizes from 1 kB to 1 MB, without a TeX string."""
    from matplotlib import mathtext

    parsed: list[str] = []
    parse = mathtext.MathTextParser.parse

    def counted(self: mathtext.MathTextParser, text: str, *args: object, **kw: object) -> object:
        parsed.append(text)
        return parse(self, text, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(mathtext.MathTextParser, "parse", counted)
    with CrawlLogWriter(tmp_path) as writer:
        for number, entry in enumerate(_entries()):
            writer.append(dataclasses.replace(entry, size=1000 * 2**number % 10**6 + 1000))
    html = write_report(list(writer.files), tmp_path / "r.html").read_text(encoding="utf-8")
    assert html.count('class="plot"') >= 6
    assert parsed == []


@pytest.mark.parametrize(("points", "marker"), [(1, "o"), (3, "o"), (200, "None")])
def test_a_short_crawl_s_timeline_is_drawn_with_its_points(points: int, marker: str) -> None:
    """A crawl of one second is one point of the timeline, which a line alone leaves
    blank (the demo's report showed empty axes); short timelines get a marker on
    each point, long ones stay plain lines."""
    from matplotlib.figure import Figure

    from corpus_crawler.report import _draw_timeline
    from corpus_crawler.report_stats import CrawlStats

    stats = CrawlStats(timeline=[(float(t), 2 * t + 1, t) for t in range(points)])
    axes = Figure().add_subplot()
    _draw_timeline(axes, stats)
    fetched, kept = axes.get_lines()
    assert list(fetched.get_ydata()) == [2 * t + 1 for t in range(points)]
    assert list(kept.get_ydata()) == list(range(points))
    assert fetched.get_marker() == marker and kept.get_marker() == marker


def test_a_one_second_crawl_s_timeline_reads_from_zero_on_a_second() -> None:
    """The demo's crawl, all in one second: its one point sat on an x axis of
    -0.04..0.04 s and a y axis of 10..13; counts now read from zero, over a second."""
    from matplotlib.figure import Figure

    from corpus_crawler.report import _draw_timeline
    from corpus_crawler.report_stats import CrawlStats

    axes = Figure().add_subplot()
    _draw_timeline(axes, CrawlStats(timeline=[(0.0, 13, 10)]))
    assert axes.get_ylim()[0] == 0
    assert axes.get_xlim() == (-0.5, 1.0)
    longer = Figure().add_subplot()
    _draw_timeline(longer, CrawlStats(timeline=[(0.0, 2, 1), (30.0, 40, 20)]))
    assert longer.get_ylim()[0] == 0 and longer.get_xlim()[1] >= 30

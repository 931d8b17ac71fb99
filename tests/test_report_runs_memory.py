"""`corpus-crawler report` counts a killed run from its crawl log in memory that does not
grow with the log.

A run killed before it wrote its summary is counted from the crawl log lines of its
time span. They were all read into one list first (~1 KB of memory a line: GBs for
a TenTen-sized campaign); now one pass adds each line to its run's tally. Here a
campaign folder as a killed crawl leaves it (the store's ``runs`` rows, no summary for
the first run, its crawl log rotated into several files) is reported with
tracemalloc on: the figures are the lines' and the peak stays under a cap that the
list of lines exceeds several times.
"""

from __future__ import annotations

import json
import sqlite3
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

from corpus_crawler.crawllog import CrawlLogEntry, format_entry
from corpus_crawler.report_runs import campaign_runs

KILLED = datetime(2026, 11, 20, 8, 0, tzinfo=timezone.utc)
RESUMED = datetime(2026, 11, 21, 8, 0, tzinfo=timezone.utc)
LINES = 100_000
FILES = 4
#: Generous: the lines held in a list peaked at 104 MiB here; one pass at 4.5 MiB (a
#: 1 MiB chunk of the file and its lines).
CAP_BYTES = 40 * 2**20


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def _campaign(folder: Path) -> None:
    folder.mkdir()
    db = sqlite3.connect(folder / "campaign.sqlite")
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT NOT NULL,"
               " finished TEXT, reason TEXT)")  # fmt: skip
    db.execute("INSERT INTO runs VALUES (1, ?, NULL, NULL)", (KILLED.isoformat(),))
    finished = RESUMED + timedelta(minutes=5)
    db.execute("INSERT INTO runs VALUES (2, ?, ?, 'finished')",
               (RESUMED.isoformat(), finished.isoformat()))  # fmt: skip
    db.commit()
    db.close()
    summary = {
        "started": RESUMED.isoformat(),
        "finished": finished.isoformat(),
        "finish_reason": "finished",
        "elapsed_seconds": 300,
        "pages": {"responses": 7, "kept": 5},
        "text": {"words": 500},
        "dropped": {},
    }
    (folder / f"c-{_stamp(RESUMED)[:14]}-summary.json").write_text(json.dumps(summary))
    per_file = LINES // FILES
    for serial in range(FILES):
        opened = KILLED + timedelta(seconds=serial * per_file / 20)
        name = f"c-{_stamp(opened)}-{serial:05d}-h.crawl.log"
        with open(folder / name, "w", encoding="utf-8") as handle:
            for number in range(serial * per_file, (serial + 1) * per_file):
                kept = number % 4 != 0
                entry = CrawlLogEntry(
                    time=KILLED + timedelta(seconds=number / 20),
                    status=200,
                    url=f"http://h{number % 113}.test/page/{number}.html",
                    outcome="kept" if kept else "dropped:duplicate",
                    size=20_000 + number % 7000,
                    discovery="LL",
                    via=f"http://h{number % 113}.test/",
                    mime="text/html",
                    duration_ms=150,
                    annotations={
                        "doc": f"{number:032x}",
                        "words": "120",
                        "clean": "800",
                        "lang": "en",
                    }
                    if kept
                    else {},
                )
                handle.write(format_entry(entry))
    with open(folder / f"c-{_stamp(RESUMED)}-00000-h.crawl.log", "w", encoding="utf-8") as handle:
        handle.write(
            format_entry(
                CrawlLogEntry(time=RESUMED, status=200, url="http://h1.test/x", outcome="kept")
            )
        )


def test_a_killed_run_is_counted_from_its_crawl_log_without_holding_its_lines(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "campaign"
    _campaign(folder)
    tracemalloc.start()
    try:
        runs = campaign_runs(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    killed, resumed = runs
    assert killed.counted_from == "crawl log" and not killed.has_summary
    assert killed.pages_fetched == LINES
    assert killed.documents == LINES - LINES // 4
    assert killed.words == 120 * (LINES - LINES // 4)
    assert killed.dropped == {"duplicate": LINES // 4}
    assert abs(killed.duration_seconds - (LINES - 1) / 20) < 0.01
    assert resumed.has_summary and resumed.pages_fetched == 7
    assert peak < CAP_BYTES, f"peak {peak / 2**20:.1f} MiB"

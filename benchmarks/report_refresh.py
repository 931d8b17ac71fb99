"""The crawl report at the scale of a long crawl: a refresh's CPU, a campaign report's memory.

1. **Refresh.** A crawl log of `--lines` lines (written with `format_entry`, rotated
   into files of `--file-bytes`) grows in `--refreshes` equal steps; after each step
   the report's figures are brought up to date. Timed (CPU, `time.process_time`) at
   the last step: a full read (`RunStats().update(files)`, what every refresh did
   before: read and count every line) against the incremental read (the `RunStats`
   that made the earlier refreshes, reading on from its offsets), and the figures
   are checked to be the same. With `--render`, the HTML (matplotlib) is drawn too,
   once, for the fixed cost a refresh adds.
2. **Campaign report.** A campaign folder whose first run was killed (a store row,
   no summary) with `--campaign-lines` crawl-log lines: the tracemalloc peak of
   `campaign_runs` against that of the list of every line (what it built before).

    python benchmarks/report_refresh.py [--lines 1000000] [--refreshes 10]
        [--file-bytes 50000000] [--campaign-lines 300000] [--render]
"""

from __future__ import annotations

import argparse
import gc
import sqlite3
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from corpus_crawler.crawllog import CrawlLogEntry, format_entry, read_crawl_log
from corpus_crawler.report import RunStats, render_html
from corpus_crawler.report_runs import campaign_runs, crawl_logs

START = datetime(2026, 11, 24, 8, 0, tzinfo=timezone.utc)


def _lines(first: int, count: int) -> Iterator[str]:
    """Crawl-log lines like a crawl's: 50 pages a second over 997 hosts, 3 in 4 kept."""
    for number in range(first, first + count):
        kept = number % 4 != 0
        host = f"h{number % 997}.test"
        notes = {"doc": f"{number:032x}", "clean": "900", "words": "150", "lang": "en"}
        yield format_entry(
            CrawlLogEntry(
                time=START + timedelta(seconds=number / 50),
                status=200,
                url=f"http://{host}/p/{number}.html",
                outcome="kept" if kept else "dropped:duplicate",
                size=3000 + (number * 7919) % 90_000,
                discovery="LL",
                via=f"http://{host}/",
                mime="text/html",
                duration_ms=120,
                annotations=notes if kept else {},
            )
        )


class _GrowingLog:
    """A crawl log written as a crawl writes it: appended, rotated at `max_bytes`."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.files: list[Path] = []
        self.written = 0

    def append(self, count: int) -> None:
        handle = open(self.files[-1], "a", encoding="utf-8") if self.files else None  # noqa: SIM115
        try:
            for line in _lines(self.written, count):
                if handle is None or handle.tell() >= self.max_bytes:
                    if handle is not None:
                        handle.close()
                    moment = START + timedelta(seconds=self.written / 50)
                    name = f"b-{moment:%Y%m%d%H%M%S}000-{len(self.files):05d}-h.crawl.log"
                    self.files.append(self.directory / name)
                    handle = open(self.files[-1], "w", encoding="utf-8")  # noqa: SIM115
                handle.write(line)
                self.written += 1
        finally:
            if handle is not None:
                handle.close()


def _cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    started = time.process_time()
    result = run()
    return time.process_time() - started, result


def refresh(args: argparse.Namespace, directory: Path) -> None:
    log = _GrowingLog(directory, args.file_bytes)
    step = args.lines // args.refreshes
    incremental = RunStats()
    for _ in range(args.refreshes - 1):
        log.append(step)
        incremental.update(log.files)
    log.append(args.lines - log.written)
    full_cpu, full = _cpu(lambda: RunStats().update(log.files))
    read_on_cpu, read_on = _cpu(lambda: incremental.update(log.files))
    assert full == read_on, "the incremental figures differ from a full read"
    size = sum(path.stat().st_size for path in log.files)
    print(
        f"crawl log: {args.lines:,} lines, {size / 1e6:,.0f} MB in {len(log.files)} files;"
        f" refresh {args.refreshes} of {args.refreshes} (the last {step:,} lines are new)"
    )
    print(f"  full read       {full_cpu:8.2f} s CPU  {1e6 * full_cpu / args.lines:6.2f} us/line")
    print(
        f"  incremental     {read_on_cpu:8.2f} s CPU  {1e6 * read_on_cpu / step:6.2f} us/new line"
    )
    print(f"  full / incremental: {full_cpu / read_on_cpu:.1f}x")
    if args.render:
        render_cpu, _ = _cpu(lambda: render_html(read_on, None, final=False))
        print(
            f"  + drawing the HTML {render_cpu:6.2f} s CPU: a refresh costs"
            f" {full_cpu + render_cpu:.2f} s full, {read_on_cpu + render_cpu:.2f} s incremental"
            f" ({(full_cpu + render_cpu) / (read_on_cpu + render_cpu):.1f}x)"
        )


def _killed_campaign(folder: Path, lines: int) -> None:
    folder.mkdir()
    db = sqlite3.connect(folder / "campaign.sqlite")
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT NOT NULL,"
               " finished TEXT, reason TEXT)")  # fmt: skip
    db.execute("INSERT INTO runs VALUES (1, ?, NULL, NULL)", (START.isoformat(),))
    db.commit()
    db.close()
    with open(folder / "c-20261124080000000-00000-h.crawl.log", "w", encoding="utf-8") as out:
        out.writelines(_lines(0, lines))


def _peak(run: Callable[[], Any]) -> tuple[int, Any]:
    gc.collect()
    tracemalloc.start()
    try:
        result = run()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def campaign(args: argparse.Namespace, directory: Path) -> None:
    folder = directory / "campaign"
    _killed_campaign(folder, args.campaign_lines)
    listed, entries = _peak(
        lambda: [entry for path in crawl_logs(folder) for entry in read_crawl_log(path)]
    )
    del entries
    streamed, runs = _peak(lambda: campaign_runs(folder))
    assert runs[0].pages_fetched == args.campaign_lines, runs
    print(f"campaign report, a killed run of {args.campaign_lines:,} crawl-log lines:")
    print(f"  every line in a list (before)  peak {listed / 2**20:8.1f} MiB")
    print(f"  campaign_runs (one pass)       peak {streamed / 2**20:8.1f} MiB")
    print(f"  list / pass: {listed / streamed:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--refreshes", type=int, default=10)
    parser.add_argument("--file-bytes", type=int, default=50_000_000)
    parser.add_argument("--campaign-lines", type=int, default=300_000)
    parser.add_argument("--render", action="store_true", help="time drawing the HTML too")
    args = parser.parse_args()
    if args.refreshes < 2 or args.lines < args.refreshes:
        parser.error("--refreshes must be 2 or more and --lines at least as many")
    with tempfile.TemporaryDirectory() as temporary:
        refresh(args, Path(temporary))
    with tempfile.TemporaryDirectory() as temporary:
        campaign(args, Path(temporary))


if __name__ == "__main__":
    main()

"""What the crawl report counts (`CrawlStats`), added up line by line, read as a log grows.

`StatsAccumulator` adds crawl log entries one at a time and gives a `CrawlStats`
snapshot whenever asked; `collect` is one accumulator over some entries. `RunStats`
keeps an accumulator and, per crawl-log file of a run, the offset just past the last
whole line it read: `update` reads only what was appended since (measured on a log of
10^6 lines, a full read and count costs ~9 us of CPU a line, ~90 s a refresh at 10^7
lines; see ``benchmarks/report_refresh.py``). A full read is an update of a fresh
`RunStats`, so both go through the same code, and an update after any number of
earlier ones gives what a full read of the same files gives.

An update starts over (a full re-read) when the files it was given before are not the
first ones it is given now, or when one of them shrank or was replaced (another
inode): a log truncated by a crash recovery, or a folder emptied. A ``.open`` file
renamed to its final name when closed is the same file (same inode): read on from
its offset.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from .crawllog import CrawlLogEntry, LogPosition, final_path, read_appended

__all__ = ["CrawlStats", "RunStats", "StatsAccumulator", "collect", "size_bin"]


@dataclass(slots=True)
class CrawlStats:
    """What the report shows, gathered from crawl log entries."""

    entries: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    languages: Counter[str] = field(default_factory=Counter)
    #: Kept documents by the year they declare (`pagedate`); "undated" for the others.
    published_years: Counter[str] = field(default_factory=Counter)
    discovery: Counter[str] = field(default_factory=Counter)
    host_pages: Counter[str] = field(default_factory=Counter)
    host_kept: Counter[str] = field(default_factory=Counter)
    host_raw: Counter[str] = field(default_factory=Counter)
    host_clean: Counter[str] = field(default_factory=Counter)
    #: Responses (and kept documents) by body size, per quarter decade (`size_bin`):
    #: a report of a long crawl holds a few dozen counts, not a number per page.
    size_bins: Counter[int] = field(default_factory=Counter)
    kept_size_bins: Counter[int] = field(default_factory=Counter)
    #: (seconds since the first line's second, cumulative fetched, cumulative kept), one
    #: point per second that has lines: bounded by the crawl's duration, not its pages
    #: (a per-line timeline made each refresh of a 10^6-page crawl hold ~300 MB).
    timeline: list[tuple[float, int, int]] = field(default_factory=list)
    first: datetime | None = None
    last: datetime | None = None
    bytes_raw: int = 0
    bytes_clean: int = 0
    words: int = 0


def size_bin(size: int) -> int:
    """The quarter decade of a body size: bin `i` holds sizes in [10^(i/4), 10^((i+1)/4))."""
    return math.floor(4 * math.log10(max(size, 1)))


#: The counters of `CrawlStats`, copied into each snapshot.
_COUNTERS = (
    "outcomes",
    "statuses",
    "languages",
    "published_years",
    "discovery",
    "host_pages",
    "host_kept",
    "host_raw",
    "host_clean",
    "size_bins",
    "kept_size_bins",
)


class StatsAccumulator:
    """Adds crawl log entries to the report's figures; `snapshot` is a `CrawlStats`."""

    def __init__(self) -> None:
        self._stats = CrawlStats()
        # per second with lines: what the timeline is drawn from at a snapshot
        self._fetched_per_second: Counter[int] = Counter()
        self._kept_per_second: Counter[int] = Counter()

    def add(self, entry: CrawlLogEntry) -> None:
        stats = self._stats
        stats.entries += 1
        stats.first = entry.time if stats.first is None else min(stats.first, entry.time)
        stats.last = entry.time if stats.last is None else max(stats.last, entry.time)
        stats.outcomes[entry.outcome] += 1
        stats.statuses[str(entry.status) if entry.status else "no response"] += 1
        stats.discovery[entry.discovery[-1:] if entry.discovery else "seed"] += 1
        host = urlsplit(entry.url).hostname or "?"
        if entry.status:
            stats.host_pages[host] += 1
            if entry.size is not None:
                stats.size_bins[size_bin(entry.size)] += 1
        if entry.kept:
            stats.host_kept[host] += 1
            if entry.size is not None:
                stats.kept_size_bins[size_bin(entry.size)] += 1
                stats.host_raw[host] += entry.size
                stats.bytes_raw += entry.size
            clean = int(entry.annotations.get("clean", 0) or 0)
            stats.host_clean[host] += clean
            stats.bytes_clean += clean
            stats.words += int(entry.annotations.get("words", 0) or 0)
            stats.languages[entry.annotations.get("lang") or "unknown"] += 1
            stats.published_years[(entry.annotations.get("published") or "")[:4] or "undated"] += 1
        second = math.floor(entry.time.timestamp())
        self._fetched_per_second[second] += bool(entry.status)
        self._kept_per_second[second] += entry.kept

    def add_all(self, entries: Iterable[CrawlLogEntry]) -> StatsAccumulator:
        for entry in entries:
            self.add(entry)
        return self

    def snapshot(self) -> CrawlStats:
        """The figures so far (a copy: adding more entries leaves it as it is)."""
        stats = self._stats
        copy = CrawlStats(
            entries=stats.entries,
            first=stats.first,
            last=stats.last,
            bytes_raw=stats.bytes_raw,
            bytes_clean=stats.bytes_clean,
            words=stats.words,
        )
        for name in _COUNTERS:
            setattr(copy, name, Counter(getattr(stats, name)))
        fetched = kept = 0
        seconds = sorted(self._fetched_per_second.keys() | self._kept_per_second.keys())
        for second in seconds:
            fetched += self._fetched_per_second[second]
            kept += self._kept_per_second[second]
            copy.timeline.append((float(second - seconds[0]), fetched, kept))
        return copy


def collect(entries: Iterable[CrawlLogEntry]) -> CrawlStats:
    return StatsAccumulator().add_all(entries).snapshot()


@dataclass(slots=True)
class _FileRead:
    """How far `RunStats` read one crawl-log file."""

    #: The file's final name (a ``.open`` file is read on under it once renamed).
    path: Path
    #: (device, inode): a file replaced under the same name is another file.
    identity: tuple[int, int]
    position: LogPosition = field(default_factory=LogPosition)


class _StartOver(Exception):
    """What `RunStats` read before no longer matches the files."""


class RunStats:
    """The report's figures of one run's crawl-log files, read on from where the last
    `update` stopped."""

    def __init__(self) -> None:
        self._accumulator = StatsAccumulator()
        self._files: list[_FileRead] = []

    @property
    def offsets(self) -> dict[Path, int]:
        """Per file read (final name), the offset just past its last whole line read."""
        return {read.path: read.position.offset for read in self._files}

    def update(self, paths: Sequence[Path]) -> CrawlStats:
        """Read what was appended to `paths` (the run's files, in order) since the last
        update, and return the figures of all their whole lines.

        A ``.open`` path no longer there is read under its final name (closed meanwhile).
        A file missing under both names raises FileNotFoundError; a line that is not a
        crawl log line raises ValueError naming the file and line."""
        try:
            self._read(paths)
        except _StartOver:
            self._accumulator = StatsAccumulator()
            self._files = []
            self._read(paths)
        return self._accumulator.snapshot()

    def _read(self, paths: Sequence[Path]) -> None:
        if len(paths) < len(self._files):
            raise _StartOver
        for index, given in enumerate(paths):
            name = final_path(Path(given))
            known = self._files[index] if index < len(self._files) else None
            if known is not None and known.path != name:
                raise _StartOver
            with _open(Path(given)) as handle:
                status = os.fstat(handle.fileno())
                identity = (status.st_dev, status.st_ino)
                if known is None:
                    known = _FileRead(name, identity)
                    self._files.append(known)
                elif known.identity != identity or status.st_size < known.position.offset:
                    raise _StartOver
                self._accumulator.add_all(read_appended(handle, known.path, known.position))


def _open(path: Path) -> BinaryIO:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        if path.name.endswith(".open"):
            return open(final_path(path), "rb")
        raise

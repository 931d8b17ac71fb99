"""A per-URL crawl log, one line per fetch attempt, after Heritrix's ``crawl.log``.

Each line has ten space-separated columns (``-`` for an unknown value)::

    2024-05-06T07:08:09.123Z 200 5120 http://a.test/x LL http://a.test/ text/html 134 kept lang=en

1. time the outcome was known (UTC, milliseconds);
2. HTTP status (``0``: no response; see the outcome);
3. size of the body as received, in bytes;
4. URL;
5. discovery path: one letter per hop from a seed, as in Heritrix: ``L`` link,
   ``R`` redirect, ``S`` sitemap, ``P`` prerequisite (robots.txt); ``-`` a seed;
6. via: the URL this one was found on (or redirected from);
7. MIME type from Content-Type;
8. fetch duration in milliseconds;
9. outcome: ``kept``, ``dropped:<reason>`` (a `DropReason`), ``refused:<why>``
   (robots.txt, scope, address, size cap), ``error:<kind>`` (network errors,
   ``http-404``...), ``redirect``, ``fetched`` (robots.txt, sitemaps),
   ``deferred:<reason>`` (``network``, ``robots-unreachable``: the request waits
   for a later attempt, ``due=`` then; `corpus_crawler.retries`) or ``no-item``;
10. annotations: comma-separated ``key=value`` (``lang``, ``doc`` id, ``words``,
    ``published``: the date a kept page declares).

`CrawlLogWriter` takes lines from any thread and appends them from its own
thread once a second (buffered: a line per page at hundreds of pages per
second costs one small write a second). The file is ``*.crawl.log.open``
while written and renamed when closed; `recover_crawl_logs` keeps every whole
line of one left by a crash. `read_crawl_log` parses a log back.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote, unquote

from ._files import (
    OPEN_SUFFIX,
    Clock,
    Recovered,
    RotatingFile,
    as_utc,
    default_hostname,
    recover_files,
    utc_now,
)

__all__ = [
    "CrawlLogEntry",
    "CrawlLogWriter",
    "LogPosition",
    "crawl_log_runs",
    "final_path",
    "format_entry",
    "parse_line",
    "read_appended",
    "read_crawl_log",
    "recover_crawl_logs",
]

EXTENSION = ".crawl.log"
OPEN_EXTENSION = EXTENSION + OPEN_SUFFIX
#: The rotation size of a crawl log when none is set (`output.crawl_log_max_file_bytes`).
DEFAULT_MAX_BYTES = 1_000_000_000


@dataclass(frozen=True, slots=True)
class CrawlLogEntry:
    time: datetime
    status: int
    url: str
    outcome: str
    size: int | None = None
    discovery: str = ""
    via: str | None = None
    mime: str | None = None
    duration_ms: int | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.outcome == "kept"


_WHITESPACE = re.compile(r"\s")


def _field(value: object) -> str:
    """A URL-like column as it is, whitespace percent-encoded (an equivalent URL)."""
    if value is None or value == "":
        return "-"
    return _WHITESPACE.sub(lambda m: quote(m.group()), str(value))


def _note(value: str) -> str:
    # annotations are free text: escaped losslessly, the separators included
    return quote(value, safe="/:@.+-_~()'!*")


def format_entry(entry: CrawlLogEntry) -> str:
    """One log line (with its newline)."""
    moment = as_utc(entry.time)
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    annotations = ",".join(f"{_note(k)}={_note(v)}" for k, v in entry.annotations.items())
    columns = [
        stamp,
        str(entry.status),
        _field(entry.size),
        _field(entry.url),
        entry.discovery or "-",
        _field(entry.via),
        _field(entry.mime),
        _field(entry.duration_ms),
        _field(entry.outcome),
        annotations or "-",
    ]
    return " ".join(columns) + "\n"


def _value(column: str) -> str | None:
    return None if column == "-" else column


def _int(column: str) -> int | None:
    return None if column == "-" else int(column)


def parse_line(line: str) -> CrawlLogEntry:
    """The entry of one log line; ValueError names what is wrong."""
    columns = line.rstrip("\n").split(" ")
    if len(columns) != 10:
        raise ValueError(f"a crawl log line has 10 columns, this one {len(columns)}: {line!r}")
    stamp, status, size, url, discovery, via, mime, duration, outcome, notes = columns
    annotations: dict[str, str] = {}
    if notes != "-":
        for pair in notes.split(","):
            key, _, value = pair.partition("=")
            annotations[unquote(key)] = unquote(value)
    return CrawlLogEntry(
        time=datetime.fromisoformat(stamp.replace("Z", "+00:00")),
        status=int(status),
        url=_value(url) or "",
        outcome=_value(outcome) or "",
        size=_int(size),
        discovery="" if discovery == "-" else discovery,
        via=_value(via),
        mime=_value(mime),
        duration_ms=_int(duration),
        annotations=annotations,
    )


def read_crawl_log(path: Path | str) -> Iterator[CrawlLogEntry]:
    """The entries of a crawl log; a torn last line (a crash, or a line being written)
    is skipped, even one cut inside a UTF-8 character (read as text, that one raised)."""
    with open(path, "rb") as handle:
        yield from read_appended(handle, path, LogPosition())


#: Bytes read at a time by `read_appended`: a refresh of a multi-GB log holds one chunk
#: (and its lines: ~3 MiB in all).
_CHUNK = 1 << 20


@dataclass(slots=True)
class LogPosition:
    """How far a crawl log was read: just past its last whole line read, and lines read."""

    offset: int = 0
    lines: int = 0


def read_appended(
    handle: BinaryIO, path: Path | str, position: LogPosition
) -> Iterator[CrawlLogEntry]:
    """The entries of the whole lines of `handle` after `position`, which moves past
    each line as it is given.

    A torn last line (one being written, or left by a crash) is not consumed: the
    next read starts at it. A line that is not a crawl log line raises ValueError
    naming `path` and its line number."""
    handle.seek(position.offset)
    carry = b""
    while chunk := handle.read(_CHUNK):
        lines = (carry + chunk).split(b"\n")
        carry = lines.pop()  # after the last newline: a part of the next line, or b""
        # one entry at a time: a chunk's entries held in a list kept the garbage
        # collector busy, reading took 5.2 us a line instead of 3.2 (300k lines)
        for raw in lines:
            try:
                entry = parse_line(raw.decode("utf-8"))
            except ValueError as exc:  # UnicodeDecodeError included
                raise ValueError(f"{path}:{position.lines + 1}: {exc}") from None
            position.offset += len(raw) + 1
            position.lines += 1
            yield entry


def final_path(path: Path) -> Path:
    """`path` without its ``.open`` suffix: the name a log has once closed."""
    return path.with_name(path.name.removesuffix(OPEN_SUFFIX))


_NAME = re.compile(
    r"(?P<prefix>.+?)-(?P<stamp>\d{14}|\d{17})-(?P<serial>\d{5})-(?P<host>.+)"
    + re.escape(EXTENSION)
    + f"(?:{re.escape(OPEN_SUFFIX)})?"
)


def crawl_log_runs(paths: Iterable[Path]) -> list[list[Path]]:
    """The crawl logs of `paths` (``.open`` ones included) grouped by the run that wrote
    them, each run's files in order, runs ordered by their first file's name.

    A writer numbers its files from 00000 as it rotates them (each named after the
    moment it was opened), so among the files of one prefix and host in time order a
    serial that does not grow starts another run. A name not made by a writer is a
    run of its own."""
    keyed: dict[tuple[str, str], list[tuple[str, int, str, Path]]] = {}
    runs: list[tuple[str, list[Path]]] = []
    for path in paths:
        match = _NAME.fullmatch(path.name)
        if match is None:
            runs.append(("", [path]))
            continue
        stamp = match["stamp"].ljust(17, "0")
        group = keyed.setdefault((match["prefix"], match["host"]), [])
        group.append((stamp, int(match["serial"]), path.name, path))
    for group in keyed.values():
        group.sort()
        previous = -1
        for stamp, serial, _name, path in group:
            if serial <= previous or previous < 0:
                runs.append((stamp, []))
            runs[-1][1].append(path)
            previous = serial
    runs.sort(key=lambda run: (run[0], run[1][0].name))
    return [files for _stamp, files in runs]


class CrawlLogWriter:
    """Appends entries from any thread; a background thread writes them every second."""

    def __init__(
        self,
        directory: Path,
        *,
        prefix: str = "corpus",
        flush_interval: float = 1.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        hostname: str = "",
        clock: Clock | None = None,
    ) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise ValueError(
                "a crawl log's rotation size (max_bytes) must be a whole number of bytes > 0,"
                f" got {max_bytes!r}"
            )
        self._file = RotatingFile(
            Path(directory),
            prefix=prefix,
            extension=EXTENSION,
            max_bytes=max_bytes,
            hostname=hostname or default_hostname(),
            timestamp_digits=17,
            clock=clock or utc_now,
        )
        self._interval = flush_interval
        self._pending: list[str] = []
        self._lock = threading.Lock()
        #: `paths` as of the last write, rotation or close: replaced whole by the thread
        #: that writes, read by any other (the report's, on the reactor) without a lock
        #: that a rotation's fsync would hold
        self._paths: tuple[Path, ...] = ()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="corpus-crawl-log", daemon=True)
        self.lines = 0
        self._started = False

    @property
    def files(self) -> tuple[Path, ...]:
        return self._file.closed_paths

    @property
    def current_path(self) -> Path | None:
        """The ``*.open`` file being written (for a report during the crawl)."""
        return self._file.open_path

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file of this log in order: the finished ones, then the ``*.open`` one."""
        return self._paths

    def _list_paths(self) -> None:
        current = self._file.open_path
        self._paths = self._file.closed_paths + ((current,) if current is not None else ())

    def start(self) -> CrawlLogWriter:
        # the file exists from the start, so a crawl that fetches nothing still has its log
        self._file.ensure_open()
        self._list_paths()
        self._thread.start()
        self._started = True
        return self

    def append(self, entry: CrawlLogEntry) -> None:
        line = format_entry(entry)
        with self._lock:
            self._pending.append(line)
            self.lines += 1

    def flush(self) -> None:
        """Write what is pending now (called by the thread, and by `close`)."""
        with self._lock:
            lines, self._pending = self._pending, []
        if lines:
            data = "".join(lines).encode("utf-8")
            self._file.write(data)
            self._file.rotate_if_full()
            self._list_paths()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.flush()

    def close(self) -> None:
        """Write the rest and finish the file. Idempotent."""
        self._stop.set()
        if self._started and self._thread.is_alive():
            self._thread.join()
        self.flush()
        self._file.close()
        self._list_paths()

    def __enter__(self) -> CrawlLogWriter:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def recover_crawl_logs(directory: Path | str) -> list[Recovered]:
    """Finish ``*.crawl.log.open`` files left by a crash: keep every whole line."""
    return recover_files(Path(directory), (EXTENSION,), _whole_lines)


def _whole_lines(path: Path) -> tuple[int, int]:
    end = units = offset = 0
    with open(path, "rb") as handle:
        for line in handle:
            offset += len(line)
            if line.endswith(b"\n"):
                end, units = offset, units + 1
    return end, units

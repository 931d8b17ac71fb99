"""The crash-safe state of a crawl campaign: one SQLite database in the campaign folder.

A campaign folder (``corpus-crawler crawl PROFILE -o OUT``) holds the output files
and ``OUT/campaign.sqlite``: the frontier, the seen set, the page budgets, the
committed length of every output file, per-URL fetch history and running totals.
It is written as the crawl goes, in WAL mode, never dumped at close; so any stop
(`kill -9`, power loss, a full disk) leaves a state that the next run of the same
command continues from.

Exactly-once, in one paragraph: output files are append-only. The writer thread
appends all the records of one request (its WARC exchanges, its document) in one
go, then marks the request done here; every ~0.5 s it commits, in ONE
transaction, the lengths its files have reached together with the requests done
up to that point (`CampaignStore.commit`). On restart every output file is cut
back to its committed length (`reconcile_files`) and every request that was not
committed done goes back to the queue; so each page ends up exactly once in the
files, whatever instant the process died at.

One connection serves the reactor thread (enqueue, lease) and the writer thread
(finish, commit); a lock serialises them, and each public method is atomic with
respect to a commit. No Scrapy import: requests are stored as JSON text.
"""

from __future__ import annotations

import enum
import functools
import json
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import IO, Any, TypeAlias, TypeVar
from urllib.parse import urlsplit

from ._files import OPEN_SUFFIX, fsync_directory
from .domains import registered_domain
from .recrawl import LIVE, Change, Decision, PreviousCapture, Schedule, next_interval
from .retries import RetryPolicy

__all__ = [
    "DATABASE_NAME",
    "LOCK_NAME",
    "OUTPUT_EXTENSIONS",
    "SCHEMA_VERSION",
    "Admission",
    "BudgetLimits",
    "CampaignLocked",
    "CampaignStore",
    "FolderLock",
    "QueueEntry",
    "budget_key",
    "fingerprint_key",
    "reconcile_files",
]

logger = logging.getLogger(__name__)

_seen_fast: ModuleType | None
try:  # the compiled SeenFilter probes (corpus_crawler/_seen_fast.pyx), built by pip install
    from . import _seen_fast
except ImportError:  # pragma: no cover - no compiler where it was installed
    _seen_fast = None

DATABASE_NAME = "campaign.sqlite"
LOCK_NAME = ".corpus-crawler.lock"
#: Uncommitted output (written after the last commit of a crashed run) is moved here.
UNCOMMITTED_DIR = "uncommitted"
#: The files whose length the campaign commits.
OUTPUT_EXTENSIONS = (
    ".warc.gz",
    ".warc.wet.gz",
    ".prevert",
    ".prevert.gz",
    ".vert",
    ".vert.gz",
    ".jsonl",
    ".jsonl.gz",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS frontier (
    id INTEGER PRIMARY KEY,
    priority INTEGER NOT NULL,
    -- 0 queued, 1 leased (handed to the downloader in this run), 2 deferred (failed
    -- with a network error: queued again from not_before on, `CampaignStore.defer`)
    state INTEGER NOT NULL DEFAULT 0,
    request TEXT NOT NULL,
    -- the site it is leased in turn with (its budget key; '' in rows of older campaigns)
    site TEXT NOT NULL DEFAULT '',
    -- deferred attempts made so far, and (state 2) the epoch time it is due again
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before REAL
);
-- the lease order: runs of consecutive queued frontier rows of one priority and site
-- (rows head..tail; head moves on as they are leased), one index entry per run instead
-- of one per row (`CampaignStore._write_rows`)
CREATE TABLE IF NOT EXISTS frontier_runs (
    id INTEGER PRIMARY KEY,
    priority INTEGER NOT NULL,
    site TEXT NOT NULL,
    head INTEGER NOT NULL,
    tail INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS frontier_runs_order ON frontier_runs (priority DESC, site, head);
-- the seen set: the first 64 bits of each request fingerprint (`fingerprint_key`), as rowid
CREATE TABLE IF NOT EXISTS seen_keys (key INTEGER PRIMARY KEY);
-- the newest part of the seen set, appended as keys come (held in RAM too) and moved into
-- seen_keys by the commit once it holds `_SEEN_LOG_KEYS` (`CampaignStore._mark_seen`)
CREATE TABLE IF NOT EXISTS seen_log (key INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS budgets (key TEXT PRIMARY KEY, pages INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (name TEXT PRIMARY KEY, length INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fetches (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    run INTEGER NOT NULL,
    finished_at TEXT NOT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fetches_url ON fetches (url);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
-- recrawls (corpus_crawler.recrawl): one row per URL with a tracked capture
CREATE TABLE IF NOT EXISTS urls (
    url TEXT PRIMARY KEY,
    etag TEXT,
    last_modified TEXT,
    digest TEXT,
    -- the last FULL capture (a response record): what revisits refer to
    record_id TEXT,
    target_uri TEXT,
    capture_date TEXT,
    status INTEGER,
    depth INTEGER NOT NULL DEFAULT 0,
    interval REAL,
    next_due REAL NOT NULL,
    outcome TEXT NOT NULL,
    -- 1 while a recrawl request for it is in the frontier
    queued INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS urls_due ON urls (next_due) WHERE queued = 0;
-- the first full capture of each payload digest (identical copies at other URLs)
CREATE TABLE IF NOT EXISTS payloads (
    digest TEXT PRIMARY KEY,
    record_id TEXT NOT NULL,
    target_uri TEXT NOT NULL,
    capture_date TEXT NOT NULL
) WITHOUT ROWID;
"""

#: The deferred rows by due time: a partial index, empty while no request waits for a retry
#: (made after `_migrate` has given an older frontier its `not_before` column).
_DEFERRED_INDEX = (
    "CREATE INDEX IF NOT EXISTS frontier_deferred ON frontier (not_before) WHERE state = 2"
)

#: The schema of the campaign database (`PRAGMA user_version`). 4: frontier rows can be
#: deferred (columns `attempts`, `not_before`; added in place to an older frontier by
#: `_migrate_deferred`). 3: the lease order is
#: kept by runs of frontier rows (`frontier_runs`); 2 and older: by an index on every
#: queued row (`frontier_sites`), converted when a campaign is opened (`_migrate_frontier`).
#: 2: the seen set holds 64-bit integer keys (table `seen_keys`); 0 or 1: 20-byte
#: fingerprints (table `seen`), converted when a campaign is opened (`_migrate_seen_set`).
SCHEMA_VERSION = 4
#: Old seen marks converted per INSERT statement while migrating.
_MIGRATION_CHUNK = 1024

#: The per-row lease indexes of older campaigns (schema 2: sites in turn; before it:
#: priority then FIFO), replaced by `frontier_runs`.
_OLD_QUEUE_INDEXES = ("frontier_sites", "frontier_queue")

#: The key of the campaign-wide page count in `budgets` (no host is empty).
_TOTAL = ""
#: SQLite page cache of the campaign database, KiB (bounded: the frontier stays on disk).
_CACHE_KIB = 16 * 1024
#: Queue rows held back before they are inserted together, and rows per INSERT.
_PENDING_ROWS = 512
_ROWS_PER_INSERT = 64
#: Seen keys per statement of `enqueue_many` (well under SQLite's 32766 variables).
_KEYS_PER_INSERT = 256
#: Keys the seen log holds (in the database and in RAM, ~4 MB) before a commit moves them
#: into `seen_keys`, all at once in key order. A key inserted into `seen_keys` as it came
#: dirtied its own page of the table: with 10^6 keys, ~3000 pages written per commit,
#: ~600 us a page of 100 new links (benchmarks/campaign_state.py --seen-keys 1000000).
_SEEN_LOG_KEYS = 65536
#: Keys the seen log holds at most, commit or not.
_SEEN_LOG_MAX_KEYS = 4 * _SEEN_LOG_KEYS
#: Size bounds of the `SeenFilter` (log2 of its bits): 1 MB and 16 MB.
_FILTER_MIN_BITS = 23
_FILTER_MAX_BITS = 27


@functools.lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_rows_sql(rows: int) -> str:
    return "INSERT INTO frontier (id, priority, site, request) VALUES " + ",".join(
        ["(?, ?, ?, ?)"] * rows
    )


@functools.lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_runs_sql(runs: int) -> str:
    return "INSERT INTO frontier_runs (priority, site, head, tail) VALUES " + ",".join(
        ["(?, ?, ?, ?)"] * runs
    )


@functools.lru_cache(maxsize=_KEYS_PER_INSERT)
def _seen_before_sql(keys: int) -> str:
    return "SELECT key FROM seen_keys WHERE key IN (" + ",".join(["?"] * keys) + ")"


@functools.lru_cache(maxsize=_KEYS_PER_INSERT)
def _log_seen_sql(keys: int) -> str:
    return "INSERT INTO seen_log (key) VALUES " + ",".join(["(?)"] * keys)


def fingerprint_key(fingerprint: bytes) -> int:
    """The seen set's key of a request fingerprint: its first 64 bits as a signed integer
    (SQLite's rowid). An integer key is a third of a 20-byte blob key's size and ~1.5 us
    cheaper to insert (benchmarks/campaign_state.py); 64 bits are what Heritrix's and
    BUbiNG's seen sets keep too: ~3 in a million campaigns of 10 million URLs would lose
    one URL to a collision."""
    return int.from_bytes(fingerprint[:8], "big", signed=True)


#: One request for `CampaignStore.enqueue_many`: (url, request, priority, fingerprint,
#: budget, site), each as `CampaignStore.enqueue` takes it; the URL names the request
#: for stores that need it (the Redis store's host queues).
QueueEntry: TypeAlias = tuple[str, str | Callable[[], str], int, bytes | None, str | None, str]

#: A request as `CampaignStore.enqueue_links` takes it: anything its `render` makes text of.
_Request = TypeVar("_Request")


def _request_text(request: str | Callable[[], str]) -> str:
    """The JSON text of a request given as text or as a function that makes it."""
    return request if isinstance(request, str) else request()


def budget_key(url: str) -> str:
    """What page budgets are counted by: the registered domain (public-suffix aware,
    offline), so www.x.cz, x.cz and a wildcard's endless subdomains share one budget."""
    separator = url.find("://")
    if 0 < separator <= len("https"):
        # the crawl asks this for every link it schedules: one cache lookup for the URL's
        # start up to its path, all that the host is read from, however it is read
        end = url.find("/", separator + 3)
        return _origin_budget_key(url if end < 0 else url[:end])
    return _read_budget_key(url)


@functools.lru_cache(maxsize=65536)
def _origin_budget_key(origin: str) -> str:
    return _read_budget_key(origin)


def _read_budget_key(url: str) -> str:
    scheme, separator, rest = url.partition("://")
    if separator and scheme in ("http", "https"):
        authority = rest.partition("/")[0]
        if not _UNUSUAL_AUTHORITY.search(authority):
            return _authority_budget_key(authority)
    return registered_domain((urlsplit(url).hostname or "").lower())


#: What makes an authority end before its first "/" (a query or fragment right after
#: the host) or be read differently by urlsplit (a backslash, stripped control chars).
_UNUSUAL_AUTHORITY = re.compile(r"[?#\\\x00-\x20\x7f]")


@functools.lru_cache(maxsize=65536)
def _authority_budget_key(authority: str) -> str:
    return registered_domain((urlsplit(f"http://{authority}/").hostname or "").lower())


class SeenFilter:
    """A Bloom filter of the keys in `seen_keys`, in RAM: a key it does not know is new
    without a lookup in the table (~1.5 us a key once the table holds 10^6 keys,
    benchmarks/campaign_state.py). Never a false "new": every key that goes into
    `seen_keys` goes into the filter first; a false "maybe" only costs the lookup.

    Two probes (the key's low and high 32 bits: fingerprint keys are uniformly random)
    into 2**bits bits, sized when the campaign is opened for 16 bits a key (2 MB per
    10^6 keys, between 1 and 16 MB): ~1.4% false "maybe" at that size, and the
    share grows smoothly if one run doubles the set (~5%) or more."""

    __slots__ = ("_bits", "_mask")

    def __init__(self, keys: int) -> None:
        bits = max(_FILTER_MIN_BITS, min(_FILTER_MAX_BITS, (16 * keys).bit_length()))
        self._mask = (1 << bits) - 1
        self._bits = bytearray(1 << (bits - 3))

    def add_all(self, keys: Iterable[int]) -> None:
        table, mask = self._bits, self._mask
        if _seen_fast is not None:
            _seen_fast.add_all(table, mask, keys)
            return
        for key in keys:
            low = key & mask
            high = (key >> 32) & mask
            table[low >> 3] |= 1 << (low & 7)
            table[high >> 3] |= 1 << (high & 7)

    def maybe_held(self, keys: Iterable[int]) -> list[int]:
        """The keys of `keys` that may be in the set (`may_hold` of each, in one loop:
        a method call per key cost as much as the probes)."""
        table, mask = self._bits, self._mask
        if _seen_fast is not None:
            return _seen_fast.maybe_held(table, mask, keys)
        return [
            key
            for key in keys
            if table[(key & mask) >> 3] >> (key & 7) & 1
            and table[((key >> 32) & mask) >> 3] >> ((key >> 32) & 7) & 1
        ]

    def may_hold(self, key: int) -> bool:
        low = key & self._mask
        if not self._bits[low >> 3] >> (low & 7) & 1:
            return False
        high = (key >> 32) & self._mask
        return bool(self._bits[high >> 3] >> (high & 7) & 1)


class CampaignLocked(RuntimeError):
    """Another process holds the campaign folder."""


class CampaignTooNew(RuntimeError):
    """The campaign database was written by a newer corpus-crawler."""


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring a campaign written by an older corpus-crawler to `SCHEMA_VERSION` (inside the
    caller's transaction: a run killed or stopped by a full disk while converting leaves
    the old tables whole, and the next run converts them again); refuse a newer one."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise CampaignTooNew(
            f"{path} has campaign schema {version}, this corpus-crawler reads up to"
            f" {SCHEMA_VERSION}: upgrade corpus-crawler, or start a new campaign in another"
            " output folder (-o OUTDIR)"
        )
    if version == SCHEMA_VERSION:
        # a corpus-crawler of schema 2 creates its lease index before it refuses a newer
        # campaign: kept, it would cost an index entry per queued row again
        for index in _OLD_QUEUE_INDEXES:
            db.execute(f"DROP INDEX IF EXISTS {index}")
        return
    if version < 2:
        _migrate_seen_set(db, path)
    if version < 3:
        _migrate_frontier(db, path)
    _migrate_deferred(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _migrate_deferred(db: sqlite3.Connection) -> None:
    """The columns of deferred rows, added to the frontier of a campaign written before
    schema 4 (an ALTER TABLE that rewrites no row: none of its rows is deferred)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(frontier)")}
    if "attempts" not in columns:
        db.execute("ALTER TABLE frontier ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0")
    if "not_before" not in columns:
        db.execute("ALTER TABLE frontier ADD COLUMN not_before REAL")


def _migrate_seen_set(db: sqlite3.Connection, path: Path) -> None:
    """The seen set of a campaign written before schema 2, as 64-bit keys."""
    old = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'seen'")
    if old.fetchone() is None:
        return
    marks = int(db.execute("SELECT count(*) FROM seen").fetchone()[0])
    logger.info("campaign %s: converting %d seen marks to 64-bit keys", path, marks)
    after = b""
    while True:
        # in key order, a chunk at a time: the old set need not fit in RAM
        chunk = db.execute(
            "SELECT fingerprint FROM seen WHERE fingerprint > ? ORDER BY fingerprint LIMIT ?",
            (after, _MIGRATION_CHUNK),
        ).fetchall()
        if not chunk:
            break
        db.execute(
            "INSERT OR IGNORE INTO seen_keys (key) VALUES " + ",".join(["(?)"] * len(chunk)),
            [fingerprint_key(bytes(fingerprint)) for (fingerprint,) in chunk],
        )
        after = chunk[-1][0]
    db.execute("DROP TABLE seen")


def _migrate_frontier(db: sqlite3.Connection, path: Path) -> None:
    """The lease order of a frontier written before schema 3 (an index entry per queued
    row) as runs: one run per queued row, which leases them in the same order (runs of
    several rows are made only for rows queued from now on)."""
    logger.info("campaign %s: converting the frontier's lease order", path)
    db.execute("DELETE FROM frontier_runs")
    db.execute(
        "INSERT INTO frontier_runs (priority, site, head, tail)"
        " SELECT priority, site, id, id FROM frontier WHERE state = 0 ORDER BY id"
    )
    for index in _OLD_QUEUE_INDEXES:
        db.execute(f"DROP INDEX IF EXISTS {index}")


class Admission(enum.Enum):
    """What `CampaignStore.enqueue` did with a request."""

    QUEUED = "queued"
    DUPLICATE = "duplicate"
    OVER_MAX_PAGES = "over-max-pages"
    OVER_MAX_PAGES_PER_DOMAIN = "over-max-pages-per-domain"
    #: It cannot be written to the frontier (meta that is not plain data, a callback that
    #: is no method of the spider): `enqueue_many` only, where `enqueue` raises.
    UNSERIALISABLE = "unserialisable"


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Page budgets of the campaign (None: no limit); they count over all runs."""

    max_pages: int | None = None
    max_pages_per_domain: int | None = None


def _epoch() -> float:
    return datetime.now(timezone.utc).timestamp()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class FolderLock:
    """An exclusive `flock` on an output folder: held by a crawl while its campaign store is
    open, and by `corpus-crawler process` while it writes (the same lock file, so the two
    never write into one folder at once)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_NAME
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            import fcntl
        except ImportError:  # not POSIX: no locking
            self._handle = handle
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise CampaignLocked(
                f"another crawl is using {self.path.parent}: wait for it to finish, or give"
                " this one its own output folder (-o OUTDIR)"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self.path.unlink(missing_ok=True)


#: The name the crawl's writer and CLI knew the lock by.
_FolderLock = FolderLock


class CampaignStore:
    """The campaign database; see the module docstring. Thread-safe."""

    def __init__(
        self,
        directory: Path | str,
        *,
        fsync: bool = False,
        schedule: Schedule | None = None,
        retries: RetryPolicy | None = None,
    ) -> None:
        self.directory = Path(directory)
        #: Bounds of the per-URL revisit intervals (`corpus_crawler.recrawl`).
        self.schedule = schedule or Schedule()
        #: When a request that failed with a network error is tried again (`defer`).
        self.retries = retries or RetryPolicy()
        self.path = self.directory / DATABASE_NAME
        self._lock = threading.Lock()
        self._folder_lock = _FolderLock(self.directory)
        self._folder_lock.acquire()
        try:
            #: The database existed before: this run continues a campaign.
            self.resumed = self.path.exists()
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            # 16 KiB pages instead of 4 (a new database only: an existing one keeps its
            # size): a commit writes a page's new rows in fewer, fuller pages
            # (benchmarks/campaign_state.py, 100 new links a page: the COMMIT ~70 -> ~45 us)
            self._db.execute("PRAGMA page_size=16384")
            self._db.execute("PRAGMA journal_mode=WAL")
            # 16 MiB of page cache instead of SQLite's 2 MiB: the seen set takes a random
            # insert per new link, and once its pages outgrow the cache each one is a read
            # (benchmarks/campaign_state.py, 100 new links a page: ~20% less upkeep)
            self._db.execute(f"PRAGMA cache_size={-_CACHE_KIB}")
            # NORMAL: a commit survives a process crash; FULL: also a power loss.
            self._db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(frontier)")}
            if "site" not in columns:
                self._db.execute("ALTER TABLE frontier ADD COLUMN site TEXT NOT NULL DEFAULT ''")
            self._db.execute("BEGIN IMMEDIATE")
            _migrate(self._db, self.path)
            self._db.execute(_DEFERRED_INDEX)
            # leased by a run that ended before finishing them: each a run of its own, so
            # they go first within their site, as they were leased first
            self._requeued = self._db.execute(
                "INSERT INTO frontier_runs (priority, site, head, tail)"
                " SELECT priority, site, id, id FROM frontier WHERE state = 1 ORDER BY id"
            ).rowcount
            self._db.execute("UPDATE frontier SET state = 0 WHERE state = 1")
            self._queued = self._scalar("SELECT count(*) FROM frontier WHERE state = 0")
            self._budgets: dict[str, int] = dict(
                self._db.execute("SELECT key, pages FROM budgets").fetchall()
            )
            self.run = int(
                self._db.execute("INSERT INTO runs (started) VALUES (?)", (_now(),)).lastrowid or 0
            )
            #: The keys of the seen log (`_mark_seen`), and the filter of `seen_keys`.
            self._seen_logged: set[int] = {
                key for (key,) in self._db.execute("SELECT key FROM seen_log")
            }
            self._seen_filter = self._load_seen_filter()
            #: The id of the next frontier row (ids are given here, so that the rows of a
            #: run are consecutive).
            self._next_row = self._scalar("SELECT max(id) FROM frontier") + 1
            #: The due time of the first deferred row (None: none is deferred).
            self._next_retry = self._first_retry()
            self._db.execute("COMMIT")
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            # the connection first: an open transaction would keep the database locked
            db = getattr(self, "_db", None)
            if db is not None:
                db.close()
            self._folder_lock.release()
            raise
        self._pending_counts: dict[str, int] = {}
        self._dirty_budgets: set[str] = set()
        #: Queue rows not inserted yet, by (priority, site), in arrival order: written
        #: before any read of the frontier and at every commit (`_write_rows`).
        self._pending_rows: dict[tuple[int, str], list[str]] = {}
        self._pending_count = 0
        #: The priority and site `lease` served last: the next lease goes on from there.
        self._turn: tuple[int, str] | None = None
        #: Changes since the last commit (any thread).
        self._changes = 0
        self.commits = 0
        self._closed = False
        #: Why the open transaction can no longer be committed (an enqueue failed half
        #: way): every later commit raises, so the run ends at the last good commit.
        self._broken: str | None = None

    def _scalar(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        row = self._db.execute(sql, args).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # -- facts --------------------------------------------------------------------------

    @property
    def requeued(self) -> int:
        """Requests leased by an earlier run that never finished, put back in the queue."""
        return self._requeued

    @property
    def queued(self) -> int:
        """Requests waiting in the frontier (not leased)."""
        return self._queued

    @property
    def changed(self) -> bool:
        """Something changed since the last commit (or the next commit must fail)."""
        return self._changes > 0 or self._broken is not None

    def in_frontier(self) -> int:
        with self._lock:
            self._write_rows()
            return self._scalar("SELECT count(*) FROM frontier")

    def committed_files(self) -> dict[str, int]:
        """Output file name -> length committed (read from the committed state)."""
        with self._lock:
            return dict(self._db.execute("SELECT name, length FROM files").fetchall())

    def counters(self) -> dict[str, int]:
        """Campaign totals, as last committed plus what this run added since."""
        with self._lock:
            totals = dict(self._db.execute("SELECT key, value FROM counters").fetchall())
        return totals

    def fetch_history(self, url: str) -> list[tuple[int, str, str]]:
        """(run, finished_at, outcome) of every finished request for `url`."""
        with self._lock:
            rows = self._db.execute(
                "SELECT run, finished_at, outcome FROM fetches WHERE url = ? ORDER BY id", (url,)
            ).fetchall()
        return [(int(r), str(f), str(o)) for r, f, o in rows]

    def get_meta(self, key: str) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_meta(self, key: str, value: Any) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, json.dumps(value)),
            )

    # -- the reactor thread: frontier -----------------------------------------------------

    def enqueue(
        self,
        request: str | Callable[[], str],
        priority: int,
        *,
        fingerprint: bytes | None,
        budget: str | None = None,
        limits: BudgetLimits = BudgetLimits(),
        recrawl: str | None = None,
        site: str = "",
    ) -> Admission:
        """Queue a request (JSON text, or a function that makes it: called only for a
        request that is queued) unless it was seen or is over a page budget.

        `fingerprint` None: never filtered (retries). `budget`: the budget key of a
        page request (`budget_key`), None for requests outside the page budgets.
        `site`: what `lease` takes turns by (the scheduler gives the budget key).
        The seen mark, the budget count and the queue row are one atomic change.
        """
        # (a request that cannot be serialised raises before anything is counted)
        with self._lock, self._breaks_on_error(sqlite3.Error):
            db = self._db
            if recrawl is not None:
                # a recrawl of a known URL: once in the frontier at a time
                marked = db.execute(
                    "UPDATE urls SET queued = 1 WHERE url = ? AND queued = 0", (recrawl,)
                ).rowcount
                if not marked:
                    return Admission.DUPLICATE
            if fingerprint is not None and not self._mark_seen([fingerprint_key(fingerprint)]):
                return Admission.DUPLICATE
            refusals = self._admit_all(
                [(0, request, priority, budget, site)], _request_text, limits
            )
            return refusals.get(0, Admission.QUEUED)

    def enqueue_many(
        self, entries: Sequence[QueueEntry], limits: BudgetLimits = BudgetLimits()
    ) -> list[Admission]:
        """`enqueue` of each entry in turn (no recrawls), with the same admissions, as one
        atomic change (`enqueue_links`). A request that cannot be serialised is refused
        alone (`Admission.UNSERIALISABLE`)."""
        keys = [None if entry[3] is None else fingerprint_key(entry[3]) for entry in entries]
        return self.enqueue_links(
            keys,
            [entry[1] for entry in entries],
            _request_text,
            [entry[2] for entry in entries],
            [entry[4] for entry in entries],
            [entry[5] for entry in entries],
            limits,
        )

    def enqueue_links(
        self,
        keys: Sequence[int | None],
        requests: Sequence[_Request],
        render: Callable[[_Request], str],
        priorities: Sequence[int],
        budgets: Sequence[str | None],
        sites: Sequence[str],
        limits: BudgetLimits = BudgetLimits(),
    ) -> list[Admission]:
        """`enqueue` of a page's links in turn, with the same admissions, as one atomic
        change, given as columns: the seen key of each (`fingerprint_key`; None: never
        filtered), the request (`render` of it is its JSON text, made only for a
        request that is queued), its priority, budget key and site. The seen marks of
        a whole page's links go in with one statement per 256 links instead of one
        each (benchmarks/campaign_state.py: the seen set was a quarter of the upkeep of
        a page of new links). A request whose `render` raises TypeError or ValueError is
        refused alone (`Admission.UNSERIALISABLE`)."""
        with self._lock, self._breaks_on_error(Exception):
            count = len(keys)
            new = self._mark_seen([key for key in keys if key is not None])
            refused: dict[int, Admission] = {}
            rows: Iterable[tuple[int, _Request, int, str | None, str]]
            if len(new) == count:
                # each has its own key and each key is new (a page of new links)
                rows = zip(range(count), requests, priorities, budgets, sites, strict=True)
            else:
                admitted: list[tuple[int, _Request, int, str | None, str]] = []
                for number, key in enumerate(keys):
                    if key is not None:
                        if key not in new:
                            refused[number] = Admission.DUPLICATE
                            continue
                        new.discard(key)  # a second copy in this batch is a duplicate
                    admitted.append(
                        (
                            number,
                            requests[number],
                            priorities[number],
                            budgets[number],
                            sites[number],
                        )
                    )
                rows = admitted
            refused.update(self._admit_all(rows, render, limits, tolerant=True))
            if not refused:
                return [Admission.QUEUED] * count
            queued = Admission.QUEUED
            return [refused.get(number, queued) for number in range(count)]

    @contextmanager
    def _breaks_on_error(
        self, errors: type[BaseException] | tuple[type[BaseException], ...]
    ) -> Iterator[None]:
        """An error in the middle of a change leaves part of it in the open transaction
        (a seen mark without its queue row): that transaction must never be committed."""
        try:
            yield
        except errors as exc:
            self._broken = f"{type(exc).__name__}: {exc}"
            raise

    def _mark_seen(self, keys: list[int]) -> set[int]:
        """Add `keys` to the seen set (caller holds the lock); the ones that were new
        (a key twice in `keys` is in it once). New keys are appended to the seen log,
        the set's newest part, also held in RAM: an append per new key (and a lookup
        in `seen_keys` when its `SeenFilter` may hold it), instead of an insert at a
        random place of `seen_keys`."""
        logged = self._seen_logged
        # (a set difference looks each of `keys` up in `logged`, in C)
        new = set(keys).difference(logged)
        if not new:
            return new
        db = self._db
        candidates = self._seen_filter.maybe_held(new)
        if candidates:
            for start in range(0, len(candidates), _KEYS_PER_INSERT):
                chunk = candidates[start : start + _KEYS_PER_INSERT]
                new.difference_update(
                    key for (key,) in db.execute(_seen_before_sql(len(chunk)), chunk)
                )
        if new:
            appended = list(new)
            for start in range(0, len(appended), _KEYS_PER_INSERT):
                chunk = appended[start : start + _KEYS_PER_INSERT]
                db.execute(_log_seen_sql(len(chunk)), chunk)
            logged.update(appended)
            if len(logged) >= _SEEN_LOG_MAX_KEYS:
                # no commit for a long while (commits normally move the log): RAM stays
                # bounded all the same (the move is part of the open transaction)
                self._merge_seen_log()
        return new

    def _merge_seen_log(self) -> None:
        """Move the seen log into `seen_keys` (caller holds the lock, in the transaction
        of a commit) once it is full: in key order, so each page of `seen_keys` is
        written once for all the keys it takes."""
        if len(self._seen_logged) < _SEEN_LOG_KEYS:
            return
        db = self._db
        # the filter first: a key in seen_keys that it did not know would be taken as new
        self._seen_filter.add_all(self._seen_logged)
        db.execute("INSERT OR IGNORE INTO seen_keys (key) SELECT key FROM seen_log ORDER BY key")
        db.execute("DELETE FROM seen_log")
        self._seen_logged = set()

    def _load_seen_filter(self) -> SeenFilter:
        """The `SeenFilter` of `seen_keys`, read a chunk at a time (at open: ~1 s a
        10^6 keys)."""
        db = self._db
        keys = self._scalar("SELECT count(*) FROM seen_keys")
        seen_filter = SeenFilter(keys + _SEEN_LOG_KEYS)
        if keys:
            cursor = db.execute("SELECT key FROM seen_keys")
            while chunk := cursor.fetchmany(65536):
                seen_filter.add_all(key for (key,) in chunk)
        return seen_filter

    def _admit_all(
        self,
        requests: Iterable[tuple[int, _Request, int, str | None, str]],
        render: Callable[[_Request], str],
        limits: BudgetLimits,
        *,
        tolerant: bool = False,
    ) -> dict[int, Admission]:
        """The page budgets and the queue rows of (number, request, priority, budget key,
        site) whose seen marks are set (caller holds the lock), in turn; the refused
        ones by number (the others are queued). `render`: the JSON text of a request.
        A request that cannot be serialised raises, or with `tolerant` is refused as
        `Admission.UNSERIALISABLE` (its seen mark stays: the same request would be
        refused again). One loop for a page's links: a call per link was ~1 us of the
        upkeep of each."""
        refused: dict[int, Admission] = {}
        budgets = self._budgets
        dirty = self._dirty_budgets
        pending = self._pending_rows
        max_pages = limits.max_pages
        per_domain = limits.max_pages_per_domain
        queued = 0
        total = used = 0
        for number, request, priority, budget, site in requests:
            if budget is not None:
                total = budgets.get(_TOTAL, 0)
                if max_pages is not None and total >= max_pages:
                    refused[number] = Admission.OVER_MAX_PAGES
                    continue
                used = budgets.get(budget, 0)
                if per_domain is not None and used >= per_domain:
                    refused[number] = Admission.OVER_MAX_PAGES_PER_DOMAIN
                    continue
            # made before anything is counted: a request that cannot be serialised is
            # not queued
            try:
                text = render(request)
            except (TypeError, ValueError):
                if not tolerant:
                    raise
                refused[number] = Admission.UNSERIALISABLE
                continue
            if budget is not None:
                budgets[_TOTAL] = total + 1
                budgets[budget] = used + 1
                # written at the next commit, in the same transaction as this row
                dirty.add(budget)
            place = (priority, site)
            group = pending.get(place)
            if group is None:
                pending[place] = [text]
            else:
                group.append(text)
            queued += 1
        if queued:
            self._queued += queued
            self._changes += queued
            self._pending_count += queued
            if self._pending_count >= _PENDING_ROWS:
                self._write_rows()
        return refused

    def _write_rows(self) -> None:
        """Insert the queue rows held back by `enqueue` (caller holds the lock), with their
        runs: one multi-row INSERT per 64 rows costs ~40% of one INSERT per row, and
        one run per (priority, site) of the batch takes the place of an index entry per
        row, the largest share of a queue row's cost while the frontier had one
        (benchmarks/campaign_state.py, 100 new links a page over 50 sites)."""
        pending = self._pending_rows
        if not pending:
            return
        # in the lease order's (priority, site) order, FIFO within each: each group is a
        # run of consecutive ids
        row = self._next_row
        values: list[int | str] = []
        runs: list[int | str] = []
        for place in sorted(pending):
            priority, site = place
            head = row
            # (a flat loop: half the cost of chaining zip/repeat iterators per group, for
            # groups of one or two rows, what a page of links over many sites makes)
            for text in pending[place]:
                values += (row, priority, site, text)
                row += 1
            runs += (priority, site, head, row - 1)
        db = self._db
        columns = 4 * _ROWS_PER_INSERT
        for start in range(0, len(values), columns):
            chunk = values[start : start + columns]
            db.execute(_insert_rows_sql(len(chunk) // 4), chunk)
        for start in range(0, len(runs), columns):
            chunk = runs[start : start + columns]
            db.execute(_insert_runs_sql(len(chunk) // 4), chunk)
        # only once the rows are in: a failed INSERT must not leave a gap the runs skip
        self._next_row = row
        pending.clear()
        self._pending_count = 0

    def lease(self, count: int) -> list[tuple[int, str]]:
        """Up to `count` queued requests, highest priority first; within a priority the
        sites take turns (one request each, in site order, going on where the last
        lease stopped), FIFO within a site. A crawl of many sites so hands the
        downloader a batch of many sites, not the one whose links came first."""
        with self._lock:
            self._write_rows()
            self._queue_due_retries()
            db = self._db
            leased: list[tuple[int, str]] = []
            priority = self._top_priority()
            after = self._turn[1] if self._turn and self._turn[0] == priority else None
            while priority is not None and len(leased) < count:
                found = self._next_in_turn(priority, after)
                if found is None and after is not None:
                    found = self._next_in_turn(priority, None)  # round again
                if found is None:  # the priority is all leased: the next one
                    priority, after = self._top_priority(), None
                    continue
                run, after, row, tail = found
                if row >= tail:
                    db.execute("DELETE FROM frontier_runs WHERE id = ?", (run,))
                else:
                    db.execute("UPDATE frontier_runs SET head = ? WHERE id = ?", (row + 1, run))
                taken = db.execute(
                    "UPDATE frontier SET state = 1 WHERE id = ? AND state = 0 RETURNING request",
                    (row,),
                ).fetchone()
                if taken is not None:  # (a run only ever holds queued rows: never None)
                    leased.append((row, str(taken[0])))
            if leased:
                self._turn = None if priority is None or after is None else (priority, after)
                self._queued -= len(leased)
                self._changes += 1
            return leased

    def _first_retry(self) -> float | None:
        found = self._db.execute("SELECT min(not_before) FROM frontier WHERE state = 2").fetchone()
        return None if found is None or found[0] is None else float(found[0])

    def _queue_due_retries(self, now: float | None = None) -> None:
        """Queue again the deferred rows whose time has come (caller holds the lock): each a
        run of its own, so it goes first within its site and priority, as it was queued
        before the rows queued since. Not a new page: the budgets are untouched."""
        first = self._next_retry
        moment = _epoch() if now is None else now
        if first is None or first > moment:
            return
        db = self._db
        due = db.execute(
            "SELECT id, priority, site FROM frontier WHERE state = 2 AND not_before <= ?"
            " ORDER BY id",
            (moment,),
        ).fetchall()
        if due:
            db.executemany(
                "INSERT INTO frontier_runs (priority, site, head, tail) VALUES (?, ?, ?, ?)",
                ((priority, site, row, row) for row, priority, site in due),
            )
            db.executemany(
                "UPDATE frontier SET state = 0 WHERE id = ?", ((row,) for row, _, _ in due)
            )
            self._queued += len(due)
            self._changes += 1
        self._next_retry = self._first_retry()

    @property
    def next_retry(self) -> float | None:
        """The epoch time the first deferred request is due again (None: none waits)."""
        return self._next_retry

    def retries_pending(self) -> tuple[int, float | None]:
        """(deferred requests waiting for their time, the epoch time the first is due)."""
        with self._lock:
            row = self._db.execute(
                "SELECT count(*), min(not_before) FROM frontier WHERE state = 2"
            ).fetchone()
        return int(row[0]), None if row[1] is None else float(row[1])

    def _top_priority(self) -> int | None:
        found = self._db.execute("SELECT max(priority) FROM frontier_runs").fetchone()
        return None if found is None or found[0] is None else int(found[0])

    def _next_in_turn(self, priority: int, after: str | None) -> tuple[int, str, int, int] | None:
        """(run, site, row, run's last row) of the oldest queued request of the first site
        after `after` (None: of the first site) at `priority`: one step down the runs'
        (priority, site, head) index."""
        if after is None:
            found = self._db.execute(
                "SELECT id, site, head, tail FROM frontier_runs WHERE priority = ?"
                " ORDER BY site, head LIMIT 1",
                (priority,),
            ).fetchone()
        else:
            found = self._db.execute(
                "SELECT id, site, head, tail FROM frontier_runs WHERE priority = ?"
                " AND site > ? ORDER BY site, head LIMIT 1",
                (priority, after),
            ).fetchone()
        return (
            None if found is None else (int(found[0]), str(found[1]), int(found[2]), int(found[3]))
        )

    # -- the writer thread: done, totals, commits -----------------------------------------

    def finish(self, row: int, url: str, outcome: str) -> bool:
        """The request `row` is done: its output is in the files (committed with them).

        True if the request failed for a URL that had content at its last capture
        (it is now gone)."""
        with self._lock:
            db = self._db
            db.execute("DELETE FROM frontier WHERE id = ?", (row,))
            db.execute(
                "INSERT INTO fetches (url, run, finished_at, outcome) VALUES (?, ?, ?, ?)",
                (url, self.run, _now(), outcome),
            )
            self._changes += 1
            found = db.execute(
                "SELECT interval, outcome FROM urls WHERE url = ?", (url,)
            ).fetchone()
            if found is None:
                return False
            interval, last = found
            gone = outcome.startswith("failed:") and last in LIVE
            if gone:
                interval = next_interval(interval, Change.GONE, self.schedule)
                db.execute(
                    "UPDATE urls SET queued = 0, outcome = ?, interval = ?, next_due = ?"
                    " WHERE url = ?",
                    (Change.GONE.value, interval, _epoch() + interval, url),
                )
            else:
                db.execute("UPDATE urls SET queued = 0 WHERE url = ?", (url,))
            return gone

    def defer(self, row: int, url: str, outcome: str, now: float | None = None) -> float | None:
        """The request `row` failed with a network error (`corpus_crawler.retries`): unless
        it has had its deferred attempts, it stays in the frontier, deferred, and is leased
        again from the returned epoch time on (committed with the files, as `finish`).
        None: its attempts are used up, or the campaign defers nothing: `finish` it."""
        with self._lock:
            found = self._db.execute(
                "SELECT attempts FROM frontier WHERE id = ? AND state = 1", (row,)
            ).fetchone()
            if found is None or int(found[0]) >= self.retries.retries:
                return None
            attempt = int(found[0]) + 1
            due = (_epoch() if now is None else now) + self.retries.delay_for(attempt)
            self._db.execute(
                "UPDATE frontier SET state = 2, attempts = ?, not_before = ? WHERE id = ?",
                (attempt, due, row),
            )
            # no `fetches` row: it is not finished (corpus_crawler.report_runs counts each
            # row there as a request done in its run)
            self._changes += 1
            if self._next_retry is None or due < self._next_retry:
                self._next_retry = due
            return due

    # -- recrawls -------------------------------------------------------------------------

    def previous_capture(self, url: str) -> PreviousCapture | None:
        """The last full capture of `url` (None: never captured with content)."""
        with self._lock:
            row = self._db.execute(
                "SELECT record_id, target_uri, capture_date, digest, etag, last_modified,"
                " interval, outcome FROM urls WHERE url = ?",
                (url,),
            ).fetchone()
        if row is None or row[0] is None:
            return None
        record_id, target, date, digest, etag, modified, interval, outcome = row
        return PreviousCapture(
            record_id=record_id,
            target_uri=target,
            date=datetime.fromisoformat(date),
            digest=digest,
            etag=etag,
            last_modified=modified,
            interval=interval,
            outcome=outcome,
        )

    def payload_capture(self, digest: str) -> PreviousCapture | None:
        """The first full capture in the campaign whose payload has this digest."""
        with self._lock:
            row = self._db.execute(
                "SELECT record_id, target_uri, capture_date FROM payloads WHERE digest = ?",
                (digest,),
            ).fetchone()
        if row is None:
            return None
        return PreviousCapture(row[0], row[1], datetime.fromisoformat(row[2]), digest)

    def record_capture(
        self,
        url: str,
        decision: Decision,
        *,
        status: int,
        record_id: str,
        date: datetime,
        etag: str | None,
        last_modified: str | None,
        depth: int,
    ) -> None:
        """Remember a capture once its records are written (the writer thread): its
        validators, digest, interval and next due time. `record_id`: the record just
        written (used as the URL's last full capture when it is a response)."""
        change = decision.change
        if change is Change.OTHER:
            return
        with self._lock:
            db = self._db
            found = db.execute("SELECT interval FROM urls WHERE url = ?", (url,)).fetchone()
            interval = next_interval(found[0] if found else None, change, self.schedule)
            due = _epoch() + interval
            if change is Change.GONE:
                db.execute(
                    "UPDATE urls SET queued = 0, outcome = ?, status = ?, interval = ?,"
                    " next_due = ? WHERE url = ?",
                    (change.value, status, interval, due, url),
                )
                self._changes += 1
                return
            if decision.revisit is None:
                full = (record_id, url, date.isoformat())
                if decision.digest is not None:
                    db.execute(
                        "INSERT OR IGNORE INTO payloads (digest, record_id, target_uri,"
                        " capture_date) VALUES (?, ?, ?, ?)",
                        (decision.digest, *full),
                    )
            else:
                assert decision.refers_to is not None
                ref = decision.refers_to
                full = (ref.record_id, ref.target_uri, ref.date.isoformat())
            db.execute(
                "INSERT INTO urls (url, etag, last_modified, digest, record_id, target_uri,"
                " capture_date, status, depth, interval, next_due, outcome, queued)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"
                " ON CONFLICT (url) DO UPDATE SET"
                " etag = coalesce(excluded.etag, etag),"
                " last_modified = coalesce(excluded.last_modified, last_modified),"
                " digest = coalesce(excluded.digest, digest),"
                " record_id = excluded.record_id, target_uri = excluded.target_uri,"
                " capture_date = excluded.capture_date, status = excluded.status,"
                " interval = excluded.interval, next_due = excluded.next_due,"
                " outcome = excluded.outcome, queued = 0",
                (
                    url,
                    etag,
                    last_modified,
                    decision.digest,
                    *full,
                    status,
                    depth,
                    interval,
                    due,
                    change.value,
                ),
            )
            self._changes += 1

    def due_urls(
        self, now: float | None = None, batch: int = 1000
    ) -> Iterator[tuple[str, str | None, str | None, int]]:
        """(url, etag, last_modified, depth) of every URL due for a recrawl at `now`
        (epoch seconds) and not queued already; read in batches, not all in RAM."""
        moment = _epoch() if now is None else now
        after = ""
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT url, etag, last_modified, depth FROM urls"
                    " WHERE queued = 0 AND next_due <= ? AND url > ? ORDER BY url LIMIT ?",
                    (moment, after, batch),
                ).fetchall()
            if not rows:
                return
            for url, etag, modified, depth in rows:
                yield str(url), etag, modified, int(depth)
            after = rows[-1][0]

    @contextmanager
    def shared_connection(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, for tables another component keeps in the
        campaign database so that they commit with the campaign's own state (the dedup
        stores, `corpus_crawler.dedup.Deduplicator`): write in the open transaction,
        never commit; the next `commit` makes it durable."""
        with self._lock:
            yield self._db
            self._changes += 1

    def count(self, counts: Mapping[str, int]) -> None:
        """Add to the campaign totals (committed with the next `commit`)."""
        with self._lock:
            for key, value in counts.items():
                self._pending_counts[key] = self._pending_counts.get(key, 0) + value

    def commit(self, file_lengths: Mapping[str, int], *, fsync_files: Iterable[Path] = ()) -> None:
        """Make durable, in one transaction, the lengths of the output files together
        with every change made since the last commit. `fsync_files` are synced first
        (when the campaign is set to survive power loss)."""
        for path in fsync_files:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        with self._lock:
            if self._broken is not None:
                raise sqlite3.OperationalError(
                    f"the campaign state was left half-changed ({self._broken}): nothing"
                    " after the last commit is kept; the next run resumes from it"
                )
            db = self._db
            db.executemany(
                "INSERT INTO files (name, length) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET length = excluded.length",
                file_lengths.items(),
            )
            self._write_pending()
            db.execute("COMMIT")
            db.execute("BEGIN IMMEDIATE")
            self.commits += 1
            self._changes = 0

    def _write_pending(self) -> None:
        """Queue rows, budgets and totals changed since the last commit (caller holds the
        lock): a queue row is committed with its seen mark and its budget count."""
        db = self._db
        self._write_rows()
        self._merge_seen_log()
        if self._dirty_budgets:
            self._dirty_budgets.add(_TOTAL)
            db.executemany(
                "INSERT INTO budgets (key, pages) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET pages = excluded.pages",
                ((key, self._budgets[key]) for key in self._dirty_budgets),
            )
            self._dirty_budgets = set()
        if self._pending_counts:
            db.executemany(
                "INSERT INTO counters (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = value + excluded.value",
                self._pending_counts.items(),
            )
            self._pending_counts = {}

    def close(self, reason: str | None = None) -> None:
        """Record the run's end, commit and release the folder. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._write_pending()
                if reason is not None:
                    self._db.execute(
                        "UPDATE runs SET finished = ?, reason = ? WHERE id = ?",
                        (_now(), reason, self.run),
                    )
                self._db.execute("COMMIT")
                self._db.close()
            finally:
                self._folder_lock.release()

    def abandon(self) -> None:
        """Release the folder WITHOUT committing (after a write failure: the files may
        hold bytes the state does not describe; the next run cuts them off)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._pending_rows.clear()
            self._pending_count = 0
            try:
                self._db.execute("ROLLBACK")
                self._db.close()
            finally:
                self._folder_lock.release()


# -- restart --------------------------------------------------------------------------------


def _output_files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.iterdir()):
        name = path.name.removesuffix(OPEN_SUFFIX)
        if path.is_file() and name.endswith(OUTPUT_EXTENSIONS):
            yield path


def reconcile_files(directory: Path, committed: Mapping[str, int]) -> list[str]:
    """Cut every output file in `directory` back to its committed length.

    A file (or ``*.open`` file) longer than its committed length is truncated; one
    with nothing committed is moved to ``uncommitted/`` (its pages are fetched
    again). Committed ``*.open`` files keep their name: the writers' own recovery
    renames them. Returns one line per change, for the log.
    """
    changes: list[str] = []
    for path in _output_files(directory):
        final_name = path.name.removesuffix(OPEN_SUFFIX)
        length = committed.get(final_name, 0)
        size = path.stat().st_size
        if size < length:
            # only after a power loss without CORPUS_CAMPAIGN_FSYNC: say so, keep going
            changes.append(
                f"{path.name}: {size} bytes, shorter than the {length} committed"
                " (data lost before it reached the disk)"
            )
        if size <= length:
            continue
        if length == 0:
            target_dir = directory / UNCOMMITTED_DIR
            target_dir.mkdir(exist_ok=True)
            target = target_dir / path.name
            counter = 1
            while target.exists():
                target = target_dir / f"{path.name}.{counter}"
                counter += 1
            os.replace(path, target)
            changes.append(f"{path.name}: nothing committed, moved to {target}")
        else:
            with open(path, "r+b") as handle:
                handle.truncate(length)
                handle.flush()
                os.fsync(handle.fileno())
            changes.append(f"{path.name}: cut from {size} to {length} committed bytes")
    if changes:
        fsync_directory(directory)
    return changes

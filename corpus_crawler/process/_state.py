"""The state of reprocessing into one output folder: a SQLite file, written as it changes.

What it records, so that a run killed at any instruction (``kill -9``) resumes
with every document written exactly once:

* **units** - an input file (or a batch of resolved revisits) whose outputs
  are committed together. A unit is ``done`` once all its output files are
  closed (renamed from ``*.open``); a later run skips it.
* **unit files** - every output file a unit opens, recorded *before* the
  first byte goes into it ("append, then act", like Scrapy's
  ``requests.seen``). A unit that is not done when a run starts is redone from
  its start: its recorded files are deleted first.
* **captures** - the 2xx HTML responses of done units (record id, payload
  digest, URI and date -> file and offset), which revisit records are
  resolved against; and the **revisits** still waiting for their capture.

Rows written for a unit are deleted when the unit is redone, so nothing from
an interrupted attempt survives.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._archive import ArchiveKind
from ._task import Capture, PendingRevisit

__all__ = ["PreparedUnit", "ProcessState", "UnitRecord"]

STATE_NAME = "process-state.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    prefix TEXT NOT NULL UNIQUE,
    done INTEGER NOT NULL DEFAULT 0,
    stats TEXT
);
CREATE TABLE IF NOT EXISTS unit_files (unit TEXT NOT NULL, path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS captures (
    unit TEXT NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    offset INTEGER NOT NULL,
    record_id TEXT,
    payload_digest TEXT,
    uri TEXT,
    date TEXT
);
CREATE INDEX IF NOT EXISTS captures_record_id ON captures (record_id);
CREATE INDEX IF NOT EXISTS captures_digest ON captures (payload_digest);
CREATE INDEX IF NOT EXISTS captures_uri ON captures (uri, date);
CREATE TABLE IF NOT EXISTS prepared (
    unit TEXT PRIMARY KEY,
    stats TEXT NOT NULL,
    resolved TEXT NOT NULL,
    dedup_documents INTEGER NOT NULL,
    ngrams BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS revisits (
    id INTEGER PRIMARY KEY,
    unit TEXT NOT NULL,
    resolved_by TEXT,
    data TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class PreparedUnit:
    """A unit whose files are closed and whose dedup stores were about to commit."""

    key: str
    stats: dict[str, Any]
    resolved: list[int]
    #: Documents the dedup stores hold once the unit's additions are committed.
    dedup_documents: int
    #: The unit's paragraph n-grams (uint64), for the filter file.
    ngrams: bytes


@dataclass(frozen=True, slots=True)
class UnitRecord:
    key: str
    kind: str
    path: str
    size: int
    mtime_ns: int
    prefix: str
    done: bool
    stats: dict[str, Any] | None


class ProcessState:
    def __init__(self, directory: Path) -> None:
        self.path = directory / STATE_NAME
        # Explicit transactions only; WAL with synchronous=FULL makes each commit durable.
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    # -- units ------------------------------------------------------------------------------

    def unit(self, key: str) -> UnitRecord | None:
        row = self._db.execute(
            "SELECT key, kind, path, size, mtime_ns, prefix, done, stats FROM units WHERE key=?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        stats = json.loads(row[7]) if row[7] else None
        return UnitRecord(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), stats)

    def units(self) -> list[UnitRecord]:
        keys = [row[0] for row in self._db.execute("SELECT key FROM units ORDER BY rowid")]
        return [u for u in (self.unit(k) for k in keys) if u is not None]

    def add_unit(self, key: str, kind: str, path: str, size: int, mtime_ns: int, stem: str) -> str:
        """Register a unit (once) and return its output file prefix, unique in the folder."""
        existing = self.unit(key)
        if existing is not None:
            if not existing.done:
                # redone from the start: it is the file as it is now that gets processed
                with self._transaction():
                    self._db.execute(
                        "UPDATE units SET size=?, mtime_ns=? WHERE key=?", (size, mtime_ns, key)
                    )
            return existing.prefix
        taken = {row[0] for row in self._db.execute("SELECT prefix FROM units")}
        prefix, serial = stem, 1
        while prefix in taken:
            serial += 1
            prefix = f"{stem}.{serial}"
        with self._transaction():
            self._db.execute(
                "INSERT INTO units (key, kind, path, size, mtime_ns, prefix) VALUES (?,?,?,?,?,?)",
                (key, kind, path, size, mtime_ns, prefix),
            )
        return prefix

    def restart_unit(self, key: str) -> list[Path]:
        """Forget an unfinished attempt at `key`: delete its files and rows. Returns the files."""
        files = [Path(row[0]) for row in self._db.execute(
            "SELECT path FROM unit_files WHERE unit=?", (key,)
        )]  # fmt: skip
        removed: list[Path] = []
        for path in files:
            for candidate in (path, path.with_name(path.name + ".open")):
                if candidate.exists():
                    candidate.unlink()
                    removed.append(candidate)
        with self._transaction():
            self._db.execute("DELETE FROM unit_files WHERE unit=?", (key,))
            self._db.execute("DELETE FROM captures WHERE unit=?", (key,))
            self._db.execute("DELETE FROM revisits WHERE unit=?", (key,))
            self._db.execute("UPDATE revisits SET resolved_by=NULL WHERE resolved_by=?", (key,))
            self._db.execute("UPDATE units SET done=0, stats=NULL WHERE key=?", (key,))
        return removed

    def add_file(self, key: str, path: Path) -> None:
        with self._transaction():
            self._db.execute("INSERT INTO unit_files (unit, path) VALUES (?, ?)", (key, str(path)))

    def files(self, key: str) -> list[Path]:
        return [
            Path(row[0])
            for row in self._db.execute(
                "SELECT path FROM unit_files WHERE unit=? ORDER BY rowid", (key,)
            )
        ]

    def prepare_unit(
        self,
        key: str,
        stats: dict[str, Any],
        resolved: list[int],
        dedup_documents: int,
        ngrams: bytes,
    ) -> None:
        """Phase one of a unit's commit with dedup stores (see `_dedup`)."""
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO prepared VALUES (?, ?, ?, ?, ?)",
                (key, json.dumps(stats), json.dumps(resolved), dedup_documents, ngrams),
            )

    def prepared_units(self) -> list[PreparedUnit]:
        rows = self._db.execute(
            "SELECT unit, stats, resolved, dedup_documents, ngrams FROM prepared"
        ).fetchall()
        return [
            PreparedUnit(row[0], json.loads(row[1]), json.loads(row[2]), row[3], bytes(row[4]))
            for row in rows
        ]

    def forget_prepared(self, key: str) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM prepared WHERE unit=?", (key,))

    def finish_unit(self, key: str, stats: dict[str, Any], resolved: Iterable[int] = ()) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM prepared WHERE unit=?", (key,))
            self._db.execute(
                "UPDATE units SET done=1, stats=? WHERE key=?", (json.dumps(stats), key)
            )
            self._db.executemany(
                "UPDATE revisits SET resolved_by=? WHERE id=?", ((key, i) for i in resolved)
            )

    # -- captures and revisits -------------------------------------------------------------

    def add_task_rows(
        self,
        key: str,
        path: str,
        kind: ArchiveKind,
        captures: list[Capture],
        revisits: list[PendingRevisit],
    ) -> None:
        if not captures and not revisits:
            return
        with self._transaction():
            self._db.executemany(
                "INSERT INTO captures (unit, path, kind, offset, record_id, payload_digest, uri,"
                " date) VALUES (?,?,?,?,?,?,?,?)",
                (
                    (key, path, kind.value, c.offset, c.record_id or None,
                     c.payload_digest or None, c.uri, c.date)
                    for c in captures
                ),
            )  # fmt: skip
            self._db.executemany(
                "INSERT INTO revisits (unit, data) VALUES (?, ?)",
                ((key, json.dumps(_revisit_data(r))) for r in revisits),
            )

    def pending_revisits(self, after: int, limit: int) -> list[tuple[int, PendingRevisit]]:
        """Up to `limit` revisits of done units not yet resolved, with ids above `after`."""
        rows = self._db.execute(
            "SELECT r.id, r.data FROM revisits r JOIN units u ON u.key = r.unit"
            " WHERE u.done = 1 AND r.resolved_by IS NULL AND r.id > ? ORDER BY r.id LIMIT ?",
            (after, limit),
        ).fetchall()
        return [(row_id, PendingRevisit(**json.loads(data))) for row_id, data in rows]

    def find_capture(self, revisit: PendingRevisit) -> tuple[str, int, ArchiveKind] | None:
        """The earlier capture a revisit stands for: by record id, then payload digest, then
        the URI and date it names, then the latest capture of that URI."""
        done = "AND unit IN (SELECT key FROM units WHERE done=1)"
        queries: list[tuple[str, tuple[Any, ...]]] = []
        if revisit.refers_to:
            queries.append((f"record_id=? {done}", (revisit.refers_to,)))
        if revisit.payload_digest:
            queries.append((f"payload_digest=? {done}", (revisit.payload_digest,)))
        target = revisit.refers_to_uri or revisit.uri
        if revisit.refers_to_date:
            queries.append((f"uri=? AND date=? {done}", (target, revisit.refers_to_date)))
        if revisit.refers_to_uri and not revisit.payload_digest:
            queries.append((f"uri=? {done} ORDER BY date DESC", (target,)))
        for where, params in queries:
            row = self._db.execute(
                f"SELECT path, offset, kind FROM captures WHERE {where} LIMIT 1", params
            ).fetchone()
            if row is not None:
                return str(row[0]), int(row[1]), ArchiveKind(row[2])
        return None


def _revisit_data(revisit: PendingRevisit) -> dict[str, Any]:
    return {name: getattr(revisit, name) for name in PendingRevisit.__dataclass_fields__}


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self._db.execute("COMMIT")
        else:
            self._db.execute("ROLLBACK")

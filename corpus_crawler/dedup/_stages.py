"""The dedup stages over one document at a time, with their stores on disk.

    exact digest -> near-duplicate (MinHash + LSH) -> seen paragraphs -> paragraph language

`Deduplicator.check` takes a document as plain paragraph texts (the crawl
passes a `Document`'s good paragraphs, the offline command a corpus file's
paragraphs), answers with a `Verdict` and records what the stages need to
recognise later copies. Only documents that are kept are recorded, and the
first occurrence of anything is what stays.

The stores live in one folder (``OUT/state/dedup/`` in a crawl):

* ``dedup.sqlite``: documents kept (id, name), exact digests, MinHash
  signatures and LSH bands (WAL mode; committed every `commit_every` documents);
* ``paragraphs.bloom``: the paragraph stage's fixed-size n-gram filter.

Reopening the folder continues where the last run stopped, so a duplicate of a
document kept by an earlier run (or an earlier pass of a campaign) is caught.
With no folder (`directory=None`) everything is kept in memory.
"""

from __future__ import annotations

import enum
import itertools
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from .. import faults
from ..model import DropReason
from ._config import DedupConfig, MarkAction
from ._fingerprint import DocumentFingerprint, fingerprint
from ._near import NearIndex, SqliteNearIndex
from ._ngramset import NgramSet, false_positive_rate
from ._text import NgramHashes

__all__ = ["Deduplicator", "ParagraphFate", "ParagraphVerdict", "SharedDatabase", "Verdict"]

logger = logging.getLogger(__name__)

DB_NAME = "dedup.sqlite"
FILTER_NAME = "paragraphs.bloom"


class ParagraphFate(enum.Enum):
    KEPT = "kept"
    #: Its n-grams were mostly seen before.
    DUPLICATE = "duplicate"
    #: In another language than its document.
    FOREIGN = "foreign"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class ParagraphVerdict:
    fate: ParagraphFate
    #: True when the paragraph leaves the document (its stage's action is `remove`).
    removed: bool = False
    #: Share of its n-grams seen before (paragraph stage on), else None.
    seen_share: float | None = None
    #: The other language, for `FOREIGN`.
    language: str | None = None
    #: SpiderLing's ``langdiff``: the identifier's confidence in another language (0: the
    #: document's); None when not judged (short, or the language stage off).
    lang_diff: float | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a document: drop it (`drop` set) or keep the paragraphs not removed."""

    drop: DropReason | None
    detail: str = ""
    #: The name of the kept document it duplicates (exact or near).
    duplicate_of: str | None = None
    paragraphs: tuple[ParagraphVerdict, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether any paragraph was removed or marked."""
        return any(p.fate is not ParagraphFate.KEPT for p in self.paragraphs)

    def kept_indexes(self) -> list[int]:
        return [i for i, p in enumerate(self.paragraphs) if not p.removed]


@dataclass
class DedupCounts:
    """What a run did. `paragraphs` counts every document's; the paragraph fates
    (seen, foreign, removed) count those of kept documents only."""

    documents: int = 0
    kept: int = 0
    exact: int = 0
    near: int = 0
    emptied: int = 0
    paragraphs: int = 0
    paragraphs_duplicate: int = 0
    paragraphs_foreign: int = 0
    paragraphs_removed: int = 0
    #: Documents kept again under the name they were kept under (see `check`).
    replayed: int = 0
    foreign_languages: Counter[str] = field(default_factory=Counter)

    def count_kept(self, fates: tuple[ParagraphVerdict, ...]) -> None:
        """A document kept, with its paragraphs' fates."""
        self.kept += 1
        for fate in fates:
            self.paragraphs_removed += fate.removed
            if fate.fate is ParagraphFate.DUPLICATE:
                self.paragraphs_duplicate += 1
            elif fate.fate is ParagraphFate.FOREIGN:
                self.paragraphs_foreign += 1
                self.foreign_languages[fate.language or ""] += 1


def _check_matches(print_: DocumentFingerprint, config: DedupConfig) -> None:
    missing = []
    if config.exact and print_.digest is None:
        missing.append("digest")
    if config.paragraphs is not MarkAction.OFF and print_.ngram_hashes is None:
        missing.append("paragraph n-grams")
    if config.paragraph_language is not MarkAction.OFF and (
        len(print_.lang_diffs) != print_.paragraph_count
    ):
        missing.append("paragraph languages")
    if missing:
        raise ValueError(
            f"the fingerprint lacks the {', '.join(missing)} the stages need: compute it"
            " with the same DedupConfig as the Deduplicator's"
        )


def judge_paragraphs(
    print_: DocumentFingerprint,
    config: DedupConfig,
    seen_before: npt.NDArray[np.bool_] | None,
) -> tuple[tuple[ParagraphVerdict, ...], int, int, list[NgramHashes]]:
    """Per paragraph verdicts, n-grams seen in kept documents / in all, and the
    n-grams to add if kept, given which of the document's n-grams (`print_.hashes()`)
    the store has seen (`seen_before`; None: the paragraph stage is off). Pure: the
    store that answered `seen_before` (a filter file, Redis) is the caller's.

    Nothing is added to the filter here: only a kept document's n-grams are, so
    a dropped document leaves no trace. An n-gram met earlier in the same
    document counts as seen (a paragraph repeated inside a document goes the
    second time).
    """
    count = print_.paragraph_count
    verdicts: list[ParagraphVerdict] = []
    shares: list[float | None] = [None] * count
    new_hashes: list[NgramHashes] = []
    seen_total = ngram_total = 0
    hashes = print_.hashes()
    if seen_before is not None and hashes is not None:
        offsets = print_.ngram_offsets
        # an n-gram's later occurrences in this document count as seen for its
        # paragraph, not for the document's containment (a page repeating itself
        # is not a copy of another)
        _, first = np.unique(hashes, return_index=True)
        repeated = np.ones(len(hashes), dtype=bool)
        repeated[first] = False
        seen = seen_before | repeated
        new_hashes.append(hashes[~seen])
        seen_total, ngram_total = int(seen_before.sum()), len(hashes)
        if ngram_total:
            ends = np.asarray(offsets[1:])
            seen_before_end = np.concatenate(([0], np.cumsum(seen, dtype=np.int64)))
            seen_counts = seen_before_end[ends] - seen_before_end[np.asarray(offsets[:-1])]
            for index, (begin, end) in enumerate(itertools.pairwise(offsets)):
                if end > begin:
                    shares[index] = float(seen_counts[index]) / (end - begin)
    judge_language = config.paragraph_language is not MarkAction.OFF and bool(
        print_.foreign_languages
    )
    for index in range(count):
        share = shares[index]
        lang_diff = print_.lang_diffs[index] if judge_language else None
        if share is not None and share >= config.paragraph_threshold:
            removed = config.paragraphs is MarkAction.REMOVE
            verdicts.append(
                ParagraphVerdict(ParagraphFate.DUPLICATE, removed, share, None, lang_diff)
            )
            continue
        if judge_language:
            other = print_.foreign_languages[index]
            if other is not None:
                removed = config.paragraph_language is MarkAction.REMOVE
                verdicts.append(
                    ParagraphVerdict(ParagraphFate.FOREIGN, removed, share, other, lang_diff)
                )
                continue
        verdicts.append(ParagraphVerdict(ParagraphFate.KEPT, False, share, None, lang_diff))
    return tuple(verdicts), seen_total, ngram_total, new_hashes


def language_only(print_: DocumentFingerprint, config: DedupConfig) -> tuple[ParagraphVerdict, ...]:
    """A document kept again as itself: its paragraph languages judged as the first
    time (they need no store), its paragraphs not judged against the filter, which
    holds their own n-grams. () when the language stage is off."""
    if config.paragraph_language is MarkAction.OFF or not print_.foreign_languages:
        return ()
    removed = config.paragraph_language is MarkAction.REMOVE
    return tuple(
        ParagraphVerdict(ParagraphFate.FOREIGN, removed, None, other, diff)
        if other is not None
        else ParagraphVerdict(ParagraphFate.KEPT, False, None, None, diff)
        for other, diff in zip(print_.foreign_languages, print_.lang_diffs, strict=True)
    )


def paragraphs_verdict(
    fates: tuple[ParagraphVerdict, ...],
    seen: int,
    total: int,
    config: DedupConfig,
    counts: DedupCounts,
) -> Verdict | None:
    """The document's drop for its paragraphs' fates (`judge_paragraphs`), counted in
    `counts`; None when it is kept."""
    if fates and all(p.removed for p in fates):
        counts.emptied += 1
        foreign = any(p.fate is ParagraphFate.FOREIGN for p in fates)
        reason = DropReason.WRONG_LANGUAGE if foreign else DropReason.NEAR_DUPLICATE
        detail = "every paragraph removed: " + (
            "seen before or in another language" if foreign else "seen before"
        )
        return Verdict(reason, detail, None, fates)
    if config.near_documents and total and seen / total >= config.near_seen_share:
        # contained in what was kept: e.g. the full article after a shortened copy,
        # which Jaccard similarity misses when the copy came first
        counts.near += 1
        share = f"{seen / total:.0%} of its n-grams seen before"
        return Verdict(DropReason.NEAR_DUPLICATE, share, None, fates)
    return None


class SharedDatabase(Protocol):
    """A database another component owns and commits (the campaign state,
    `corpus_crawler.state.CampaignStore`): the stages write their tables into its
    open transaction, so they are committed together with the campaign's own state."""

    #: Commits made so far: what was written while it read ``c`` is durable once it is > c.
    commits: int

    def shared_connection(self) -> AbstractContextManager[sqlite3.Connection]:
        """The connection, held (locked) for the block; never committed by the caller."""
        ...


class Deduplicator:
    """Runs the enabled stages; one instance per crawl (or offline run), one thread."""

    def __init__(
        self,
        config: DedupConfig,
        directory: Path | str | None = None,
        *,
        near_index: NearIndex | None = None,
        keep_same_name: bool = False,
        database: SharedDatabase | None = None,
    ) -> None:
        """`near_index`: another home for the near-duplicate index (e.g. a
        `DatasketchNearIndex` on Redis for a crawl shared by machines); default: SQLite
        tables in `directory`. `keep_same_name`: a document whose text was kept before
        under the same name (URL) is kept again, not a duplicate of itself (a crawl
        campaign fetches a page again after a crash, before its output was committed).

        `database`: keep the tables there (``dedup_*``) instead of in
        ``directory/dedup.sqlite``, and let its owner commit them: a crawl campaign
        commits them in the same transaction as its files' lengths. The n-gram
        filter (a file in `directory`) cannot roll back, so its additions wait in a
        journal table of that database and reach the filter only once committed.
        """
        self.keep_same_name = keep_same_name
        self.config = config
        self.directory = Path(directory) if directory is not None else None
        self.counts = DedupCounts()
        self._shared = database
        self._prefix = "dedup_" if database is not None else ""
        if database is not None:
            self._db = None
        else:
            if self.directory is not None:
                self.directory.mkdir(parents=True, exist_ok=True)
                db_path = str(self.directory / DB_NAME)
            else:
                db_path = ":memory:"
            self._db = sqlite3.connect(db_path, isolation_level="DEFERRED", check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL: a commit survives a killed process (not a power cut) and costs no fsync
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages at most
        t = self._prefix
        self._near: NearIndex | None = None
        with self._connection() as db:
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {t}documents"
                " (doc INTEGER PRIMARY KEY, name TEXT NOT NULL)"
            )
            db.execute(
                f"CREATE TABLE IF NOT EXISTS {t}exact"
                " (digest BLOB PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID"
            )
            if database is not None:
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {t}ngram_journal"
                    " (id INTEGER PRIMARY KEY, hashes BLOB NOT NULL)"
                )
            if config.near_documents:
                self._near = near_index or SqliteNearIndex(
                    db, config.near_threshold, config.num_perm, prefix=t
                )
        if self._db is not None:
            self._db.commit()
        self._ngrams: NgramSet | None = None
        if config.paragraphs is not MarkAction.OFF:
            path = self.directory / FILTER_NAME if self.directory is not None else None
            self._ngrams = NgramSet(path, bits=config.paragraph_filter_bits)
        self._ngrams_added = 0
        self._uncommitted = 0
        #: Shared database: n-gram additions not committed yet, as (commits seen when
        #: journaled, journal id, hashes), and all their hashes for lookups.
        self._pending: list[tuple[int, int, NgramHashes]] = []
        self._pending_hashes: set[int] = set()
        #: Shared database: its commits when this thread last wrote rows of a kept
        #: document (durable once it has committed again; kill points only).
        self._rows_written_at = -1
        if database is not None:
            self._adopt_own_database()
            self._replay_journal()

    # -- the stages --------------------------------------------------------------------

    def check(
        self,
        name: str,
        paragraphs: Sequence[str],
        language: str | None = None,
    ) -> Verdict:
        """Judge one document (its paragraphs' texts, in order) and record it if kept."""
        return self.check_fingerprint(name, fingerprint(paragraphs, language, self.config))

    def check_fingerprint(self, name: str, print_: DocumentFingerprint) -> Verdict:
        """`check` of a document whose `fingerprint` was computed already (in a crawl's
        extraction worker, say): only the store lookups and inserts run here."""
        config = self.config
        _check_matches(print_, config)
        counts = self.counts
        counts.documents += 1
        counts.paragraphs += print_.paragraph_count
        self._apply_committed()
        t = self._prefix
        digest = print_.digest if config.exact else None
        signature = print_.signature_values() if self._near is not None else None
        with self._connection() as db:
            if digest is not None:
                row = db.execute(
                    f"SELECT d.name FROM {t}exact e JOIN {t}documents d ON d.doc = e.doc"
                    " WHERE e.digest = ?",
                    (digest,),
                ).fetchone()
                if row is not None and self.keep_same_name and row[0] == name:
                    # The same document under the same name, kept before: a page the
                    # campaign fetches again after a crash (its output was not committed)
                    # or an unchanged page of a recrawl. Never a duplicate of itself.
                    return self._replayed(print_)
                if row is not None:
                    counts.exact += 1
                    return Verdict(DropReason.DUPLICATE, f"same text as {row[0]}", row[0])
            if self._near is not None and signature is not None:
                if isinstance(self._near, SqliteNearIndex):
                    match = self._near.find(signature, print_.band_keys)
                else:
                    match = self._near.find(signature)
                if match is not None:
                    original = self._name(db, match)
                    if self.keep_same_name and original == name:
                        # itself again with a small change (a date, a counter) after a
                        # crash: its n-grams are in the filter, so judge nothing more
                        return self._replayed(print_)
                    counts.near += 1
                    return Verdict(DropReason.NEAR_DUPLICATE, f"similar to {original}", original)

        fates, seen, total, new_hashes = self._judge_paragraphs(print_)
        dropped = paragraphs_verdict(fates, seen, total, config, counts)
        if dropped is not None:
            return dropped

        added = np.concatenate(new_hashes) if new_hashes else None
        kill = faults.due("dedup.rows_written")
        if kill and self._shared is not None:
            # the rows of the documents kept before are durable, these will not be
            self._await_commit(after=self._rows_written_at)
        with self._connection() as db:
            doc = db.execute(f"INSERT INTO {t}documents (name) VALUES (?)", (name,)).lastrowid
            assert doc is not None
            if digest is not None:
                db.execute(f"INSERT OR IGNORE INTO {t}exact VALUES (?, ?)", (digest, doc))
            if isinstance(self._near, SqliteNearIndex) and signature is not None:
                self._near.add(doc, signature, print_.band_keys)
            elif self._near is not None and signature is not None:
                self._near.add(doc, signature)
            if self._ngrams is not None and added is not None and len(added):
                if self._shared is not None:
                    journal = db.execute(
                        f"INSERT INTO {t}ngram_journal (hashes) VALUES (?)", (added.tobytes(),)
                    ).lastrowid
                    assert journal is not None
                    self._pending.append((self._shared.commits, journal, added))
                    self._pending_hashes.update(added.tolist())
                else:
                    self._ngrams.add(added)
                self._ngrams_added += len(added)
            if kill:  # still holding the shared connection: no commit can take the rows
                faults.kill("dedup.rows_written")
            if self._shared is not None:
                self._rows_written_at = self._shared.commits
        if self._shared is not None and faults.due("dedup.rows_committed"):
            self._await_commit(after=self._rows_written_at)
            faults.kill("dedup.rows_committed")
        counts.count_kept(fates)
        self._maybe_commit()
        return Verdict(None, "", None, fates)

    def _judge_paragraphs(
        self, print_: DocumentFingerprint
    ) -> tuple[tuple[ParagraphVerdict, ...], int, int, list[NgramHashes]]:
        """`judge_paragraphs` against this run's filter (and the n-grams of kept
        documents whose commit is pending)."""
        ngrams = self._ngrams
        hashes = print_.hashes()
        seen_before = None
        if ngrams is not None and hashes is not None:
            seen_before = ngrams.contains(hashes)
            if self._pending_hashes and len(hashes):
                pending = self._pending_hashes
                seen_before |= np.fromiter(
                    (h in pending for h in hashes.tolist()), dtype=bool, count=len(hashes)
                )
        return judge_paragraphs(print_, self.config, seen_before)

    def _replayed(self, print_: DocumentFingerprint) -> Verdict:
        self.counts.replayed += 1
        fates = self._language_only(print_)
        if fates and all(p.removed for p in fates):
            self.counts.emptied += 1
            return Verdict(DropReason.WRONG_LANGUAGE, "every paragraph in another language")
        self.counts.kept += 1
        return Verdict(None, "", None, fates)

    def _language_only(self, print_: DocumentFingerprint) -> tuple[ParagraphVerdict, ...]:
        return language_only(print_, self.config)

    # -- bookkeeping -------------------------------------------------------------------

    def _connection(self) -> AbstractContextManager[sqlite3.Connection]:
        if self._shared is not None:
            return self._shared.shared_connection()
        assert self._db is not None
        return nullcontext(self._db)

    def _name(self, db: sqlite3.Connection, doc: int) -> str:
        row = db.execute(
            f"SELECT name FROM {self._prefix}documents WHERE doc = ?", (doc,)
        ).fetchone()
        return str(row[0]) if row is not None else f"#{doc}"

    def _adopt_own_database(self) -> None:
        """A campaign begun before its dedup tables moved into its database kept them in
        ``directory/dedup.sqlite``: copy them in once (their n-grams are in the filter
        already), so its next runs still catch copies of what it kept."""
        if self.directory is None or not (self.directory / DB_NAME).exists():
            return
        t = self._prefix
        with self._connection() as db:
            if db.execute(f"SELECT 1 FROM {t}documents LIMIT 1").fetchone() is not None:
                return
        own = sqlite3.connect(f"file:{self.directory / DB_NAME}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in own.execute("SELECT name FROM sqlite_master")}
            copies = [("documents", 2), ("exact", 2)]
            if self._near is not None and isinstance(self._near, SqliteNearIndex):
                copies += [("near_signatures", 3), ("near_bands", 2)]
            copied = 0
            for table, columns in copies:
                if table not in tables:
                    continue
                marks = ", ".join("?" * columns)
                rows = own.execute(f"SELECT * FROM {table}")
                while batch := rows.fetchmany(10_000):
                    with self._connection() as db:
                        db.executemany(f"INSERT OR IGNORE INTO {t}{table} VALUES ({marks})", batch)
                    copied += len(batch) if table == "documents" else 0
        finally:
            own.close()
        if copied:
            logger.info(
                "dedup: %d document(s) of %s copied into the campaign database",
                copied,
                self.directory / DB_NAME,
            )

    def _replay_journal(self) -> None:
        """At start: n-grams journaled and committed by earlier runs go into the filter
        (again: adding is idempotent), then leave the journal."""
        t = self._prefix
        with self._connection() as db:
            rows = db.execute(f"SELECT id, hashes FROM {t}ngram_journal ORDER BY id").fetchall()
        if self._ngrams is not None:
            for _, blob in rows:
                self._ngrams.add(np.frombuffer(blob, dtype=np.uint64))
            self._ngrams.flush()
        if rows:
            with self._connection() as db:
                db.execute(f"DELETE FROM {t}ngram_journal WHERE id <= ?", (rows[-1][0],))

    def _apply_committed(self) -> None:
        """Journaled n-grams their owner has committed since go into the filter."""
        if self._shared is None or not self._pending:
            return
        commits = self._shared.commits
        done = 0
        while done < len(self._pending) and self._pending[done][0] < commits:
            done += 1
        if not done:
            return
        assert self._ngrams is not None
        for _, _, hashes in self._pending[:done]:
            self._ngrams.add(hashes)
        faults.reached("dedup.journal_applied")
        last_id = self._pending[done - 1][1]
        self._pending = self._pending[done:]
        self._pending_hashes = {h for _, _, hashes in self._pending for h in hashes.tolist()}
        with self._connection() as db:
            db.execute(f"DELETE FROM {self._prefix}ngram_journal WHERE id <= ?", (last_id,))

    def _await_commit(self, after: int, timeout: float = 60.0) -> None:
        """Kill points only: wait until the shared database's owner has committed
        since it had committed `after` times (what this thread wrote by then is durable)."""
        assert self._shared is not None
        deadline = time.monotonic() + timeout
        while self._shared.commits <= after and time.monotonic() < deadline:
            time.sleep(0.01)

    def _maybe_commit(self) -> None:
        if self._db is None:
            return  # the owner of the shared database commits
        self._uncommitted += 1
        if self._uncommitted >= self.config.commit_every:
            self.commit()

    def commit(self) -> None:
        """Commit the stores (own database only; a shared one is committed by its owner)."""
        if self._db is not None:
            self._db.commit()
        self._uncommitted = 0

    @property
    def stored_documents(self) -> int:
        with self._connection() as db:
            row = db.execute(f"SELECT count(*) FROM {self._prefix}documents").fetchone()
        return int(row[0])

    def filter_false_positive_rate(self) -> float | None:
        """The n-gram filter's false-positive rate after this run's additions (a lower
        bound when earlier runs added to the same filter)."""
        if self._ngrams is None:
            return None
        return false_positive_rate(
            self._ngrams.bits, self._ngrams.hash_count, max(self._ngrams_added, 0)
        )

    def close(self) -> None:
        """Commit and close the own database; with a shared one, apply what its owner
        committed and leave the rest in its journal (the owner's last commit, or the
        next run, finishes it)."""
        if self._db is not None:
            self.commit()
            self._db.close()
        else:
            self._apply_committed()
        if self._ngrams is not None:
            self._ngrams.close()

    def __enter__(self) -> Deduplicator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..model import DropReason
from ..paralang import foreign_language
from ._config import DedupConfig, MarkAction
from ._near import NearIndex, SqliteNearIndex, minhash
from ._ngramset import NgramSet, false_positive_rate
from ._text import NgramHashes, document_digest, document_ngram_hashes, words

__all__ = ["Deduplicator", "ParagraphFate", "ParagraphVerdict", "Verdict"]

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


class Deduplicator:
    """Runs the enabled stages; one instance per crawl (or offline run), one thread."""

    def __init__(
        self,
        config: DedupConfig,
        directory: Path | str | None = None,
        *,
        near_index: NearIndex | None = None,
        keep_same_name: bool = False,
    ) -> None:
        """`near_index`: another home for the near-duplicate index (e.g. a
        `DatasketchNearIndex` on Redis for a crawl shared by machines); default: SQLite
        tables in `directory`. `keep_same_name`: a document whose text was kept before
        under the same name (URL) is kept again, not a duplicate of itself (a crawl
        campaign fetches a page again after a crash, before its output was committed)."""
        self.keep_same_name = keep_same_name
        self.config = config
        self.directory = Path(directory) if directory is not None else None
        self.counts = DedupCounts()
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
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS documents (doc INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS exact (digest BLOB PRIMARY KEY, doc INTEGER NOT NULL)"
            " WITHOUT ROWID"
        )
        self._near: NearIndex | None = None
        if config.near_documents:
            self._near = near_index or SqliteNearIndex(
                self._db, config.near_threshold, config.num_perm
            )
        self._db.commit()
        self._ngrams: NgramSet | None = None
        if config.paragraphs is not MarkAction.OFF:
            path = self.directory / FILTER_NAME if self.directory is not None else None
            self._ngrams = NgramSet(path, bits=config.paragraph_filter_bits)
        self._ngrams_added = 0
        self._uncommitted = 0

    # -- the stages --------------------------------------------------------------------

    def check(
        self,
        name: str,
        paragraphs: Sequence[str],
        language: str | None = None,
    ) -> Verdict:
        """Judge one document (its paragraphs' texts, in order) and record it if kept."""
        config = self.config
        counts = self.counts
        counts.documents += 1
        counts.paragraphs += len(paragraphs)
        paragraph_words = [words(text) for text in paragraphs]
        all_words = [w for ws in paragraph_words for w in ws]

        digest = document_digest(paragraph_words) if config.exact else None
        if digest is not None:
            row = self._db.execute(
                "SELECT d.name FROM exact e JOIN documents d ON d.doc = e.doc WHERE e.digest = ?",
                (digest,),
            ).fetchone()
            if row is not None and self.keep_same_name and row[0] == name:
                # The same document under the same name, kept before: a page the
                # campaign fetches again after a crash (its output was not committed)
                # or an unchanged page of a recrawl. Never a duplicate of itself.
                counts.kept += 1
                counts.replayed += 1
                return Verdict(None, "", None, ())
            if row is not None:
                counts.exact += 1
                return Verdict(DropReason.DUPLICATE, f"same text as {row[0]}", row[0])

        signature: list[int] | None = None
        if self._near is not None and all_words:
            signature = minhash(all_words, config.num_perm, config.shingle_size)
            match = self._near.find(signature)
            if match is not None:
                original = self._name(match)
                counts.near += 1
                return Verdict(DropReason.NEAR_DUPLICATE, f"similar to {original}", original)

        fates, seen, total, new_hashes = self._judge_paragraphs(
            paragraphs, paragraph_words, language
        )
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
            return Verdict(
                DropReason.NEAR_DUPLICATE,
                f"{seen / total:.0%} of its n-grams seen before",
                None,
                fates,
            )

        doc = self._db.execute("INSERT INTO documents (name) VALUES (?)", (name,)).lastrowid
        assert doc is not None
        if digest is not None:
            self._db.execute("INSERT OR IGNORE INTO exact VALUES (?, ?)", (digest, doc))
        if self._near is not None and signature is not None:
            self._near.add(doc, signature)
        if self._ngrams is not None and new_hashes:
            added = np.concatenate(new_hashes)
            self._ngrams.add(added)
            self._ngrams_added += len(added)
        counts.kept += 1
        for fate in fates:
            counts.paragraphs_removed += fate.removed
            if fate.fate is ParagraphFate.DUPLICATE:
                counts.paragraphs_duplicate += 1
            elif fate.fate is ParagraphFate.FOREIGN:
                counts.paragraphs_foreign += 1
                counts.foreign_languages[fate.language or ""] += 1
        self._maybe_commit()
        return Verdict(None, "", None, fates)

    def _judge_paragraphs(
        self,
        paragraphs: Sequence[str],
        paragraph_words: Sequence[Sequence[str]],
        language: str | None,
    ) -> tuple[tuple[ParagraphVerdict, ...], int, int, list[NgramHashes]]:
        """Per paragraph verdicts, n-grams seen in kept documents / in all, and the
        n-grams to add if kept.

        Nothing is added to the filter here: only a kept document's n-grams are, so
        a dropped document leaves no trace. An n-gram met earlier in the same
        document counts as seen (a paragraph repeated inside a document goes the
        second time).
        """
        config, ngrams = self.config, self._ngrams
        judge_language = config.paragraph_language is not MarkAction.OFF
        verdicts: list[ParagraphVerdict] = []
        shares: list[float | None] = [None] * len(paragraphs)
        new_hashes: list[NgramHashes] = []
        seen_total = ngram_total = 0
        if ngrams is not None:
            hashes, offsets = document_ngram_hashes(paragraph_words, config.paragraph_ngram)
            seen_before = ngrams.contains(hashes)
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
                seen_counts = seen_before_end[ends] - seen_before_end[offsets[:-1]]
                for index, (begin, end) in enumerate(itertools.pairwise(offsets)):
                    if end > begin:
                        shares[index] = float(seen_counts[index]) / (end - begin)
        for text, tokens, share in zip(paragraphs, paragraph_words, shares, strict=True):
            if share is not None and share >= config.paragraph_threshold:
                removed = config.paragraphs is MarkAction.REMOVE
                verdicts.append(ParagraphVerdict(ParagraphFate.DUPLICATE, removed, share))
                continue
            if judge_language:
                foreign = foreign_language(
                    text,
                    language,
                    word_count=len(tokens),
                    min_words=config.paragraph_language_min_words,
                    min_confidence=config.paragraph_language_min_confidence,
                )
                if foreign is not None:
                    removed = config.paragraph_language is MarkAction.REMOVE
                    verdicts.append(
                        ParagraphVerdict(ParagraphFate.FOREIGN, removed, share, foreign.language)
                    )
                    continue
            verdicts.append(ParagraphVerdict(ParagraphFate.KEPT, False, share))
        return tuple(verdicts), seen_total, ngram_total, new_hashes

    # -- bookkeeping -------------------------------------------------------------------

    def _name(self, doc: int) -> str:
        row = self._db.execute("SELECT name FROM documents WHERE doc = ?", (doc,)).fetchone()
        return str(row[0]) if row is not None else f"#{doc}"

    def _maybe_commit(self) -> None:
        self._uncommitted += 1
        if self._uncommitted >= self.config.commit_every:
            self.commit()

    def commit(self) -> None:
        self._db.commit()
        self._uncommitted = 0

    @property
    def stored_documents(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM documents").fetchone()[0])

    def filter_false_positive_rate(self) -> float | None:
        """The n-gram filter's false-positive rate after this run's additions (a lower
        bound when earlier runs added to the same filter)."""
        if self._ngrams is None:
            return None
        return false_positive_rate(
            self._ngrams.bits, self._ngrams.hash_count, max(self._ngrams_added, 0)
        )

    def close(self) -> None:
        self.commit()
        self._db.close()
        if self._ngrams is not None:
            self._ngrams.close()

    def __enter__(self) -> Deduplicator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

"""The crawl's dedup stages in `corpus-crawler process`, committed with each unit.

The main process judges every kept document in archive order (whatever
``-j`` is, the same documents are kept) with `corpus_crawler.dedup.Deduplicator`,
the same stages a live crawl runs (``pipelines/dedup.py``), with their stores
in ``OUT/state/dedup/``: a later run into the same folder deduplicates new
archives against everything before.

What a unit adds to the stores becomes durable only when the unit does
(STYLE.md: the store is consistent with what was committed). The stores'
SQLite tables are committed at the unit's end only (`commit_every` is set out
of reach); the paragraph n-gram filter is a memory-mapped file that cannot
roll back, so a unit's additions wait in `_DeferredNgrams` (where they count
as seen) and reach the file at the unit's commit. The commit is two-phase,
with the process state as coordinator (`ProcessState.prepare_unit`): the
state first records the unit as *prepared* with the number of documents the
stores will hold and the n-grams to add; then the stores commit; then the
unit is done. A run that finds a prepared unit rolls it forward if the
stores did commit (same document count: the n-grams are added again, which
is idempotent) and otherwise forgets it; the unit is then redone from its
start against stores that never saw it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from ..dedup import (
    DedupConfig,
    Deduplicator,
    DocumentFingerprint,
    MarkAction,
    NgramSet,
    Verdict,
    fingerprint,
)
from ..model import Document

__all__ = ["ArchiveDedup", "document_fingerprint"]


def document_fingerprint(document: Document, config: DedupConfig) -> DocumentFingerprint:
    """The CPU-heavy half of `Deduplicator.check` (normalised words, digest, MinHash,
    n-gram hashes, paragraph languages) of a kept document, computed in a worker."""
    return fingerprint([p.text for p in document.good_paragraphs], document.language, config)


#: `DedupConfig.commit_every` out of reach: the unit's end commits, nothing else.
_NEVER = 2**62
#: Size of the in-memory filter of a unit's n-grams not committed yet.
PENDING_FILTER_BITS = 2**27


class _DeferredNgrams:
    """The paragraph filter seen through the unit in progress: additions wait here."""

    def __init__(self, target: NgramSet) -> None:
        self.target = target
        self.bits = target.bits
        self.hash_count = target.hash_count
        self._pending: list[np.ndarray[Any, np.dtype[np.uint64]]] = []
        self._pending_set: NgramSet | None = None

    def contains(self, hashes: np.ndarray[Any, np.dtype[np.uint64]]) -> np.ndarray[Any, Any]:
        seen = self.target.contains(hashes)
        if self._pending_set is not None and len(hashes):
            seen = seen | self._pending_set.contains(hashes)
        return seen

    def add(self, hashes: np.ndarray[Any, np.dtype[np.uint64]]) -> None:
        if not len(hashes):
            return
        if self._pending_set is None:
            # one unit's new n-grams only: 16 MiB keep its false-positive rate below 1e-5
            # up to a million of them (0.8 % at ten million, still far from the half of a
            # paragraph's n-grams that makes it seen), where the file's size would cost
            # up to 256 MiB of memory per run
            self._pending_set = NgramSet(
                None, bits=min(self.bits, PENDING_FILTER_BITS), hash_count=self.hash_count
            )
        self._pending.append(np.array(hashes, dtype=np.uint64, copy=True))
        self._pending_set.add(hashes)

    def pending_bytes(self) -> bytes:
        if not self._pending:
            return b""
        return np.concatenate(self._pending).tobytes()

    def apply(self, data: bytes) -> None:
        """Add journaled n-grams to the file (idempotent) and make them durable."""
        if data:
            self.target.add(np.frombuffer(data, dtype=np.uint64))
        self.target.flush()

    def commit(self) -> None:
        self.apply(self.pending_bytes())
        self.discard()

    def discard(self) -> None:
        self._pending = []
        if self._pending_set is not None:
            self._pending_set.close()
            self._pending_set = None

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        self.discard()
        self.target.close()


class ArchiveDedup:
    """The dedup stages of one `process` run; one unit's work at a time."""

    def __init__(self, config: DedupConfig, directory: Path) -> None:
        self.directory = directory
        self.config = config
        self.dedup = Deduplicator(dataclasses.replace(config, commit_every=_NEVER), directory)
        self._ngrams: _DeferredNgrams | None = None
        # The Deduplicator adds a kept document's n-grams straight to its filter file;
        # seen through the deferred view they wait for the unit's commit instead.
        target = getattr(self.dedup, "_ngrams", None)
        if target is not None:
            self._ngrams = _DeferredNgrams(target)
            self.dedup._ngrams = self._ngrams  # type: ignore[assignment]
        # Both hold the unit's uncommitted work; without them a killed run would leave
        # stores ahead of the committed files, so refuse rather than run unsafely.
        if getattr(self.dedup, "_db", None) is None or (
            target is None and config.paragraphs is not MarkAction.OFF
        ):
            self.dedup.close()
            raise RuntimeError(
                "corpus_crawler.dedup.Deduplicator no longer keeps its SQLite connection"
                " (_db) and n-gram filter (_ngrams) where corpus_crawler/process/_dedup.py"
                " defers their commits: update ArchiveDedup"
            )

    def judge(
        self, document: Document, name: str, fingerprint: DocumentFingerprint | None = None
    ) -> Verdict:
        if fingerprint is not None:
            return self.dedup.check_fingerprint(name, fingerprint)
        good = document.good_paragraphs
        return self.dedup.check(name, [p.text for p in good], document.language)

    @property
    def stored_documents(self) -> int:
        return self.dedup.stored_documents

    def prepared(self) -> tuple[int, bytes]:
        """What the unit's commit will make durable: the documents the stores will
        hold, and the n-grams to add to the filter."""
        pending = self._ngrams.pending_bytes() if self._ngrams is not None else b""
        return self.dedup.stored_documents, pending

    def commit(self) -> None:
        self.dedup.commit()
        if self._ngrams is not None:
            self._ngrams.commit()

    def roll_forward(self, ngrams: bytes) -> None:
        """Finish a commit a killed run prepared and whose tables were committed."""
        if self._ngrams is not None:
            self._ngrams.apply(ngrams)

    def rollback(self) -> None:
        """Forget the unit in progress (its rows are not committed: they go)."""
        connection = getattr(self.dedup, "_db", None)  # checked in __init__
        if connection is not None:
            connection.rollback()
        if self._ngrams is not None:
            self._ngrams.discard()

    def close(self) -> None:
        """Close the stores; anything not committed by a unit is rolled back first."""
        self.rollback()
        self.dedup.close()

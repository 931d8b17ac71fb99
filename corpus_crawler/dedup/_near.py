"""Near-duplicate documents: MinHash signatures (rensa) and an LSH index behind a protocol.

MinHash comes from `rensa` (a Rust extension): measured on 500 documents of
300 words, 128 permutations, it signs ~120 000 documents per CPU second where
datasketch's numpy `MinHash.update_batch` signs ~1 900, and a crawl signs
every kept document on the reactor thread. The LSH itself is a few lines of
banding, kept behind `NearIndex` so that the store can live where the crawl
state lives: `SqliteNearIndex` here (persistent, on disk, bounded memory);
datasketch's `MinHashLSH` with its Redis storage is the natural second
implementation for a distributed crawl (`DatasketchNearIndex`).

Candidates from the bands are verified against the stored signature, so a
document is only called a near-duplicate when its estimated Jaccard
similarity (share of equal MinHash values) reaches the threshold.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
from array import array
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import rensa

__all__ = [
    "DatasketchNearIndex",
    "NearIndex",
    "SqliteNearIndex",
    "band_keys",
    "lsh_bands",
    "minhash",
    "shingles",
]

#: MinHash seed: fixed, or signatures from two runs would not compare.
_SEED = 0x5EED


def shingles(tokens: Sequence[str], size: int) -> list[str]:
    """Word `size`-grams of a document (the whole text when it is shorter)."""
    if len(tokens) <= size:
        return [" ".join(tokens)] if tokens else []
    return [" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)]


def minhash(tokens: Sequence[str], num_perm: int, shingle_size: int) -> list[int]:
    """The MinHash signature (`num_perm` 32-bit values) of a document's words."""
    signer = rensa.RMinHash(num_perm=num_perm, seed=_SEED)
    signer.update(shingles(tokens, shingle_size))
    return list(signer.digest())


def similarity(first: Sequence[int], second: Sequence[int]) -> float:
    """Estimated Jaccard similarity: the share of equal signature values."""
    return sum(a == b for a, b in zip(first, second, strict=True)) / len(first)


@functools.lru_cache(maxsize=64)
def lsh_bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows) with bands * rows <= num_perm minimising false positives plus false
    negatives around `threshold`: the S-curve P(s) = 1 - (1 - s**r)**b integrated by the
    midpoint rule (200 steps) below the threshold (false positives) and 1 - P above it
    (false negatives); the first (b, r) in (b, then r) order wins a tie.

    Every process that reads or writes band keys computes this (a crawl's main process
    and each extraction worker), so all pairs are scored at once with numpy: ~6 ms
    for 128 permutations, where a loop over them took ~65 ms a process (tests compare
    the two over a grid of thresholds; a different answer would change every band key
    a campaign has stored)."""
    steps = 200
    pairs = [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)]
    bands, rows = (column[:, None] for column in np.array(pairs, dtype=np.float64).T)
    midpoints = (np.arange(steps) + 0.5) / steps
    below = threshold * midpoints
    above = threshold + (1 - threshold) * midpoints
    false_positives = (1.0 - (1.0 - below**rows) ** bands).sum(axis=1) * (threshold / steps)
    false_negatives = ((1.0 - above**rows) ** bands).sum(axis=1) * ((1 - threshold) / steps)
    best = int(np.argmin(false_positives + false_negatives))
    return pairs[best]


class NearIndex(Protocol):
    """Kept documents' signatures; finds one similar to a new document."""

    def find(self, signature: Sequence[int]) -> int | None:
        """The id of a kept document at least `threshold` similar, or None."""

    def add(self, doc: int, signature: Sequence[int]) -> None: ...


def _band_keys(signature: Sequence[int], bands: int, rows: int) -> list[int]:
    keys = []
    for band in range(bands):
        chunk = array("I", signature[band * rows : (band + 1) * rows]).tobytes()
        digest = hashlib.blake2b(chunk, digest_size=8, person=band.to_bytes(2, "little")).digest()
        keys.append(int.from_bytes(digest, "little", signed=True))
    return keys


def band_keys(signature: Sequence[int], threshold: float, num_perm: int) -> list[int]:
    """The LSH band keys `SqliteNearIndex` stores and looks up for `signature` (pure: a
    crawl computes them in its extraction workers)."""
    bands, rows = lsh_bands(threshold, num_perm)
    return _band_keys(signature, bands, rows)


class SqliteNearIndex:
    """LSH bands and signatures in SQLite tables of the dedup state (disk-backed)."""

    def __init__(
        self, db: sqlite3.Connection, threshold: float, num_perm: int, *, prefix: str = ""
    ) -> None:
        """`prefix`: of the table names (``dedup_`` in a campaign's database)."""
        self._db = db
        self._prefix = prefix
        self.threshold = threshold
        self.num_perm = num_perm
        self.bands, self.rows = lsh_bands(threshold, num_perm)
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {prefix}near_signatures"
            " (doc INTEGER PRIMARY KEY, num_perm INTEGER NOT NULL, signature BLOB NOT NULL)"
        )
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {prefix}near_bands"
            " (key INTEGER NOT NULL, doc INTEGER NOT NULL)"
        )
        db.execute(f"CREATE INDEX IF NOT EXISTS {prefix}near_bands_key ON {prefix}near_bands (key)")

    def find(self, signature: Sequence[int], keys: Sequence[int] | None = None) -> int | None:
        """`keys`: the signature's `band_keys` when computed already (by a worker)."""
        if keys is None:
            keys = band_keys(signature, self.threshold, self.num_perm)
        marks = ",".join("?" * len(keys))
        rows = self._db.execute(
            f"SELECT DISTINCT s.doc, s.num_perm, s.signature FROM {self._prefix}near_bands b"
            f" JOIN {self._prefix}near_signatures s ON s.doc = b.doc WHERE b.key IN ({marks})"
            f" ORDER BY s.doc",
            keys,
        ).fetchall()
        for doc, num_perm, blob in rows:
            if num_perm != self.num_perm:
                continue  # written with other settings: its bands cannot match anyway
            stored = array("I")
            stored.frombytes(blob)
            if similarity(signature, stored) >= self.threshold:
                return int(doc)
        return None

    def add(self, doc: int, signature: Sequence[int], keys: Sequence[int] | None = None) -> None:
        if keys is None:
            keys = band_keys(signature, self.threshold, self.num_perm)
        self._db.execute(
            f"INSERT OR REPLACE INTO {self._prefix}near_signatures VALUES (?, ?, ?)",
            (doc, self.num_perm, array("I", signature).tobytes()),
        )
        self._db.executemany(
            f"INSERT INTO {self._prefix}near_bands VALUES (?, ?)", [(key, doc) for key in keys]
        )


class DatasketchNearIndex:
    """datasketch's `MinHashLSH`: in memory, or in Redis with
    ``storage_config={"type": "redis", "redis": {...}}`` (for a crawl shared by machines).

    Signatures are kept beside it (in memory) to verify candidates.
    """

    def __init__(
        self, threshold: float, num_perm: int, storage_config: dict[str, Any] | None = None
    ) -> None:
        from datasketch import MinHashLSH

        self.threshold = threshold
        self.num_perm = num_perm
        self._lsh = MinHashLSH(
            threshold=threshold,
            num_perm=num_perm,
            storage_config=storage_config,
            params=lsh_bands(threshold, num_perm),
        )
        self._signatures: dict[int, Sequence[int]] = {}

    def _minhash(self, signature: Sequence[int]) -> Any:
        from datasketch import MinHash

        # rensa values are 32-bit like datasketch's affine32 scheme; LSH only hashes its bands
        return MinHash(num_perm=self.num_perm, hashvalues=list(signature), scheme="affine32")

    def find(self, signature: Sequence[int]) -> int | None:
        for doc in sorted(self._lsh.query(self._minhash(signature))):
            stored = self._signatures.get(doc)
            if stored is not None and similarity(signature, stored) >= self.threshold:
                return int(doc)
        return None

    def add(self, doc: int, signature: Sequence[int]) -> None:
        self._lsh.insert(doc, self._minhash(signature), check_duplication=False)
        self._signatures[doc] = list(signature)

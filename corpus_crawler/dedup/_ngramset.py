"""A fixed-size set of hashed n-grams on disk: a Bloom filter in a memory-mapped file.

Its size is chosen once (`bits`) and never grows, so memory does not grow with
the corpus; what grows is the false-positive rate, which `false_positive_rate`
states for any number of distinct n-grams:

    p = (1 - exp(-k * n / m)) ** k      (m bits, k hash functions, n n-grams)

With the default 2**31 bits (256 MiB) and k = 3, p is 1e-4 after 34 million
distinct 7-grams (about a million paragraphs of web text) and 5 % after 340
million. A paragraph is only called a duplicate when at least half of its
n-grams were seen, so for a paragraph of 30 n-grams a false call needs 15
independent false positives (below 1e-9 even at p = 5 %); a paragraph of fewer
than 8 words has a single n-gram, which is wrong with probability p.

The file is a shared mapping: the kernel keeps every bit set even if the
process is killed (only a power loss before writeback can forget recent bits,
which makes a later copy look new, never a new paragraph look old).
"""

from __future__ import annotations

import math
import mmap
import os
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ._text import NgramHashes

__all__ = ["NgramSet", "false_positive_rate"]

_MAGIC = b"corpus-crawler ngram bloom v1\n\0\0\0"  # 32 bytes: the header
_HEADER = len(_MAGIC)


def false_positive_rate(bits: int, hash_count: int, items: int) -> float:
    """The chance that an n-gram never added is reported as seen, after `items` adds."""
    return max(0.0, -math.expm1(-hash_count * items / bits)) ** hash_count


class NgramSet:
    """Approximate membership of 64-bit n-gram hashes: no false negatives, rare false positives.

    `path` None keeps the bits in anonymous memory (for one-off runs and tests).
    """

    def __init__(self, path: Path | None, bits: int = 2**31, hash_count: int = 3) -> None:
        if bits < 64 or bits & (bits - 1):
            raise ValueError(
                f"the n-gram filter size must be a power of two >= 64 bits, got {bits}"
            )
        if not 1 <= hash_count <= 8:
            raise ValueError(f"hash_count must be 1..8, got {hash_count}")
        self.bits = bits
        self.hash_count = hash_count
        self.path = path
        size = _HEADER + bits // 8
        self._file = None
        if path is None:
            self._map = mmap.mmap(-1, size)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            self._file = os.fdopen(fd, "r+b")
            existing = os.fstat(fd).st_size
            if existing == 0:
                # a sparse file: blocks are only allocated where bits get set
                self._file.truncate(size)
                self._file.write(_MAGIC)
                self._file.flush()
            elif existing != size:
                self._file.close()
                raise ValueError(
                    f"{path} holds a filter of {(existing - _HEADER) * 8} bits, not {bits}:"
                    " use the same dedup.paragraph_filter_mib as the run that made it,"
                    " or another state folder"
                )
            else:
                header = self._file.read(_HEADER)
                if header != _MAGIC:
                    self._file.close()
                    raise ValueError(f"{path} is not an n-gram filter of this program")
            self._map = mmap.mmap(self._file.fileno(), size)
        self._bytes: npt.NDArray[np.uint8] = np.frombuffer(
            self._map, dtype=np.uint8, count=bits // 8, offset=_HEADER
        )
        self._mask = np.uint64(bits - 1)

    def _positions(self, hashes: NgramHashes) -> npt.NDArray[np.uint64]:
        # Kirsch-Mitzenmacher double hashing: position_i = h1 + i * h2 (mod m)
        low = hashes
        step = (hashes >> np.uint64(32)) | np.uint64(1)
        rounds = np.arange(self.hash_count, dtype=np.uint64)[:, None]
        return (low[None, :] + rounds * step[None, :]) & self._mask

    def contains(self, hashes: NgramHashes) -> npt.NDArray[np.bool_]:
        """Per hash: was it (probably) added before?"""
        if len(hashes) == 0:
            return np.zeros(0, dtype=bool)
        positions = self._positions(hashes)
        bits = self._bytes[positions >> np.uint64(3)] >> (positions & np.uint64(7)).astype(np.uint8)
        return np.asarray(np.all(bits & 1, axis=0))

    def add(self, hashes: NgramHashes) -> None:
        if len(hashes) == 0:
            return
        positions = self._positions(hashes).ravel()
        np.bitwise_or.at(
            self._bytes,
            positions >> np.uint64(3),
            np.left_shift(1, (positions & np.uint64(7)).astype(np.uint8)).astype(np.uint8),
        )

    def fill_ratio(self) -> float:
        """Share of bits set (slow: reads the whole filter)."""
        return float(np.unpackbits(self._bytes).mean())

    def flush(self) -> None:
        self._map.flush()

    def close(self) -> None:
        if self._map.closed:
            return
        del self._bytes
        self._map.flush()
        self._map.close()
        if self._file is not None:
            self._file.close()

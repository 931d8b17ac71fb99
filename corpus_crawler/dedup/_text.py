"""Text as the dedup stages see it: normalised words, a stable digest, hashed n-grams.

Every stage works on *words*: runs of letters and digits, NFKC-normalised and
case-folded. Punctuation, markup and whitespace do not count, so a prevertical
file (running text) and a vertical file (one token per line) of the same
document give the same words, and so do a page and its print version with other
quotes or dashes.

Hashes must be stable across processes and machines (the stores outlive a run),
so nothing here uses Python's ``hash()``, which is salted per process.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ._config import MAX_NGRAM

__all__ = ["NgramHashes", "document_digest", "document_ngram_hashes", "ngram_hashes", "words"]

NgramHashes = npt.NDArray[np.uint64]

_WORD = re.compile(r"\w+")

#: Odd 64-bit multipliers of the polynomial n-gram hash (one per position in the n-gram);
#: fixed numbers so that a store written by one run is read by the next.
_MULTIPLIERS = np.array(
    [
        0x9E3779B97F4A7C15,
        0xC2B2AE3D27D4EB4F,
        0x165667B19E3779F9,
        0xD6E8FEB86659FD93,
        0xFF51AFD7ED558CCD,
        0xC4CEB9FE1A85EC53,
        0x94D049BB133111EB,
        0xBF58476D1CE4E5B9,
        0x2545F4914F6CDD1D,
        0x9FB21C651E98DF25,
        0x87C37B91114253D5,
        0x4CF5AD432745937F,
    ],
    dtype=np.uint64,
)

assert len(_MULTIPLIERS) == MAX_NGRAM


def words(text: str) -> list[str]:
    """The words of `text`: NFKC, case-folded, letters and digits only."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def document_digest(paragraph_words: Sequence[Sequence[str]]) -> bytes:
    """A 16-byte BLAKE2b digest of a document's words, paragraph breaks included.

    Two documents get the same digest when their texts differ only in case,
    punctuation, whitespace or Unicode compatibility forms.
    """
    text = "\n".join(" ".join(paragraph) for paragraph in paragraph_words if paragraph)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@functools.lru_cache(maxsize=1 << 16)
def _word_hash(token: str) -> int:
    # two CRC-32s with different start values make one 64-bit hash: zlib's C loop beats
    # hashlib for words this short. The cache serves the frequent words of running text
    # (98% of the gold texts' words hit at 65,536 entries, as at 2^20) in ~12 MiB a
    # worker; 2^20 entries held ~190 MiB a worker on a long crawl's endless vocabulary
    # and were no faster there (benchmarks/word_hash_cache.py)
    data = token.encode("utf-8", "surrogatepass")
    return (zlib.crc32(data) << 32) | zlib.crc32(data, 0x5BD1E995)


def _word_hashes(tokens: Sequence[str]) -> NgramHashes:
    return np.fromiter(map(_word_hash, tokens), dtype=np.uint64, count=len(tokens))


def ngram_hashes(tokens: Sequence[str], n: int) -> NgramHashes:
    """64-bit hashes of the word n-grams of `tokens` (one per n-gram, in order).

    A paragraph shorter than `n` words is one n-gram of all its words, so short
    boilerplate lines ("Share this article") are still recognised when repeated.
    """
    if not 1 <= n <= MAX_NGRAM:
        raise ValueError(f"n-gram length must be 1..{MAX_NGRAM}, got {n}")
    if not tokens:
        return np.zeros(0, dtype=np.uint64)
    hashes = _word_hashes(tokens)
    if len(hashes) < n:
        n = len(hashes)
    count = len(hashes) - n + 1
    result = hashes[:count] * _MULTIPLIERS[0]
    for position in range(1, n):
        result += hashes[position : position + count] * _MULTIPLIERS[position]
    # a final mix, so that n-grams differing in one word differ in every bit
    return _mix(result)


def _mix(result: NgramHashes) -> NgramHashes:
    result ^= result >> np.uint64(31)
    result *= np.uint64(0xBF58476D1CE4E5B9)
    result ^= result >> np.uint64(29)
    return result


def document_ngram_hashes(
    paragraph_words: Sequence[Sequence[str]], n: int
) -> tuple[NgramHashes, list[int]]:
    """`ngram_hashes` of every paragraph of a document at once: (all hashes, offsets),
    paragraph i's hashes being ``hashes[offsets[i]:offsets[i + 1]]``.

    The same values as `ngram_hashes` per paragraph, computed with a handful of
    numpy calls per document instead of per paragraph (the per-call overhead was
    most of the paragraph stage's time).
    """
    if not 1 <= n <= MAX_NGRAM:
        raise ValueError(f"n-gram length must be 1..{MAX_NGRAM}, got {n}")
    lengths = [len(tokens) for tokens in paragraph_words]
    offsets = [0]
    for length in lengths:
        offsets.append(offsets[-1] + (0 if length == 0 else max(length - n + 1, 1)))
    if offsets[-1] == 0:
        return np.zeros(0, dtype=np.uint64), offsets
    hashes = _word_hashes([token for tokens in paragraph_words for token in tokens])
    total = len(hashes)
    parts: list[NgramHashes] = []
    if total >= n:
        count = total - n + 1
        windows = hashes[:count] * _MULTIPLIERS[0]
        for position in range(1, n):
            windows += hashes[position : position + count] * _MULTIPLIERS[position]
    start = 0
    for length in lengths:
        if length >= n:
            parts.append(windows[start : start + length - n + 1])
        elif length:
            # a short paragraph: one n-gram of all its words
            short = hashes[start : start + length] * _MULTIPLIERS[:length]
            parts.append(np.array([short.sum(dtype=np.uint64)], dtype=np.uint64))
        start += length
    return _mix(np.concatenate(parts)), offsets

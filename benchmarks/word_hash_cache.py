"""What the dedup stages' word-hash cache (`corpus_crawler.dedup._text._word_hash`) buys.

Each extraction worker hashes every word of every kept document (n-gram hashes for
the paragraph and near-duplicate stages). The hash is an LRU-cached pair of CRC-32s;
this measures, in one process, the nanoseconds per word and the cache's memory at
several sizes, against no cache, on two word streams:

* ``gold``: the words of the gold texts (tests/data/gold.tar.xz), repeated: a small
  vocabulary, the best case for a cache;
* ``zipf``: words drawn from a Zipf law (s = 1.07) over 3 million ranks, as a
  crawl's vocabulary grows without end (names, numbers, typos): the hard case.

    python benchmarks/word_hash_cache.py [--tokens 2000000]

Ratios are against the uncached hash in the same run (the machine's load cancels);
memory is traced separately (tracemalloc slows what it traces).
"""

from __future__ import annotations

import argparse
import functools
import tarfile
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from corpus_crawler.dedup._text import words

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20)


def uncached(token: str) -> int:
    data = token.encode("utf-8", "surrogatepass")
    return (zlib.crc32(data) << 32) | zlib.crc32(data, 0x5BD1E995)


def gold_words(limit: int) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(ROOT / "tests" / "data" / "gold.tar.xz") as archive:
            archive.extractall(folder, filter="data")
        texts = [p.read_text("utf-8", "replace") for p in sorted(Path(folder).glob("*/*/gold/*"))]
    tokens = [w for text in texts for w in words(text)]
    return (tokens * (limit // max(len(tokens), 1) + 1))[:limit]


def zipf_words(limit: int) -> list[str]:
    ranks = np.random.default_rng(7).zipf(1.07, size=limit * 2)
    ranks = ranks[ranks <= 3_000_000][:limit]
    return ["w" + format(int(r) * 2654435761 % (1 << 40), "x") for r in ranks]


def ns_per_word(function: Callable[[str], int], tokens: Sequence[str]) -> float:
    start = time.process_time()
    for token in tokens:
        function(token)
    return (time.process_time() - start) / len(tokens) * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=2_000_000)
    args = parser.parse_args()
    for name, tokens in (("gold", gold_words(args.tokens)), ("zipf", zipf_words(args.tokens))):
        base = ns_per_word(uncached, tokens)
        print(f"{name}: {len(tokens):,} words, {len(set(tokens)):,} distinct;"
              f" no cache {base:.0f} ns/word")  # fmt: skip
        for size in SIZES:
            cached = functools.lru_cache(maxsize=size)(uncached)
            speed = ns_per_word(cached, tokens)
            info = cached.cache_info()
            hits = info.hits / max(info.hits + info.misses, 1)
            tracemalloc.start()
            traced = functools.lru_cache(maxsize=size)(uncached)
            for token in tokens:
                traced(token)
            memory = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            print(f"  cache {size:>9,}: hits {hits:6.1%}  {speed:5.0f} ns/word"
                  f" ({speed / base:.2f}x no cache)  {memory / 2**20:6.1f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()

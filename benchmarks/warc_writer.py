"""WARC writer cost of the fidelity features, against the bare writer, in the same run.

Writes the same exchanges (HTML bodies of 4-120 KB, random bytes so gzip
works as on real pages; half of them chunked, raw UTF-8 headers) three ways,
each into a fresh folder, best of `--rounds`:

(a) ``bare``: request + response records, no fetch-time metadata, no CDXJ;
(b) ``+metadata``: (a) plus the per-exchange ``fetchTimeMs`` metadata record;
(c) ``+metadata+cdxj``: (b) plus the CDXJ index written when the file closes.

Printed: exchanges/s, MB/s of bodies, and each run's time as a ratio of (a).
The writer shares a CPU with the crawl's reactor, so the ratio is what matters.

    python benchmarks/warc_writer.py [--exchanges 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from corpus_crawler.warc import Exchange, WarcConfig, WarcWriter, header_pairs


def make_exchanges(count: int, seed: int = 7) -> list[Exchange]:
    rng = random.Random(seed)
    words = [rng.randbytes(rng.randint(2, 9)).hex() for _ in range(4000)]
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    out = []
    for number in range(count):
        size = rng.randint(4_000, 120_000)
        text = " ".join(rng.choice(words) for _ in range(size // 8))
        body = f"<!DOCTYPE html><html><body><p>{text}</p></body></html>".encode()
        headers = [
            (b"Content-Type", b"text/html; charset=utf-8"),
            (b"X-Name", "naïve café".encode()),
            (b"Set-Cookie", b"a=1"),
            (b"Set-Cookie", b"b=2"),
        ]
        headers.append(
            (b"Transfer-Encoding", b"chunked")
            if number % 2
            else (b"Content-Length", str(len(body)).encode())
        )
        sent = start + timedelta(seconds=number)
        out.append(
            Exchange(
                url=f"https://example.org/page/{number}",
                status=200,
                status_line="HTTP/1.1 200 OK",
                body=body,
                response_headers=header_pairs(headers),
                request_headers=(("User-Agent", "bench"),),
                body_decoded=False,
                request_date=sent,
                date=sent + timedelta(milliseconds=120),
                fetch_time_ms=120,
            )
        )
    return out


def run(exchanges: list[Exchange], *, metadata: bool, cdxj: bool) -> float:
    directory = Path(tempfile.mkdtemp(prefix="warc-bench-"))
    try:
        config = WarcConfig(directory, prefix="bench", hostname="bench", cdxj=cdxj)
        items = exchanges if metadata else [replace(e, fetch_time_ms=None) for e in exchanges]
        began = time.perf_counter()
        with WarcWriter(config) as writer:
            for exchange in items:
                writer.write_exchange(exchange)
        return time.perf_counter() - began
    finally:
        shutil.rmtree(directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--exchanges", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    exchanges = make_exchanges(args.exchanges)
    megabytes = sum(len(e.body) for e in exchanges) / 1e6
    variants = {
        "bare": {"metadata": False, "cdxj": False},
        "+metadata": {"metadata": True, "cdxj": False},
        "+metadata+cdxj": {"metadata": True, "cdxj": True},
    }
    best = {name: float("inf") for name in variants}
    for _ in range(args.rounds):
        for name, options in variants.items():  # round-robin: contention hits all alike
            best[name] = min(best[name], run(exchanges, **options))
    print(f"{len(exchanges)} exchanges, {megabytes:.1f} MB of bodies, best of {args.rounds}")
    print(f"(machine: {os.cpu_count()} cores; other load may be present)")
    for name, seconds in best.items():
        print(
            f"  {name:16} {len(exchanges) / seconds:8.0f} exchanges/s {megabytes / seconds:7.1f}"
            f" MB/s   x{seconds / best['bare']:.2f} of bare"
        )


if __name__ == "__main__":
    main()

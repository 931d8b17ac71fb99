"""CPU a page of the WARC's CDXJ index: made while writing against re-read at close.

The writer (`corpus_crawler.warc.WarcWriter`) writes the 245 gold pages' exchanges
(request, response, fetch metadata records) and closes the file, (a) with the
index lines made as each record is written (`corpus_crawler._cdxj`, now) and
(b) without them, then cdxj-indexer re-reading the finished WARC (`write_cdxj`,
the way before and still the way of `recover`). Printed: the writer's CPU per
page while writing, at close, and in all; best of `--rounds`, process CPU time,
as ratios to (b) measured in the same run (the development VM is shared).

    python benchmarks/cdxj_live.py [--rounds 5] [--gold DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from crawl_speed import load_gold_pages  # noqa: E402

from corpus_crawler.warc import Exchange, WarcConfig, WarcWriter, write_cdxj  # noqa: E402


def measure(exchanges: list[Exchange], live: bool) -> tuple[float, float]:
    """(write, close) CPU seconds of one file of `exchanges`, index included."""
    with tempfile.TemporaryDirectory() as folder:
        writer = WarcWriter(WarcConfig(Path(folder), cdxj=live))
        started = time.process_time()
        for exchange in exchanges:
            writer.write_exchange(exchange)
        written = time.process_time()
        writer.close()
        if not live:
            write_cdxj(writer.files[0])
        closed = time.process_time()
        index = next(Path(folder).glob("*.cdxj")).read_bytes()
        assert index.count(b"\n") == len(exchanges)
    return written - started, closed - written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gold", type=Path, default=None)
    args = parser.parse_args(argv)
    pages = load_gold_pages(args.gold)
    exchanges = [
        Exchange(
            url=f"http://bench.example/{i}.html",
            status=200,
            body=body,
            response_headers=(("Content-Type", "text/html; charset=utf-8"),),
            request_headers=(("User-Agent", "corpus-crawler/bench"),),
            fetch_time_ms=5,
        )
        for i, body in enumerate(pages)
    ]
    results: dict[bool, tuple[float, float]] = {}
    for live in (False, True):
        runs = [measure(exchanges, live) for _ in range(args.rounds)]
        results[live] = (min(w for w, _ in runs), min(c for _, c in runs))
    n = len(exchanges)
    before_write, before_close = results[False]
    before = before_write + before_close
    for live, label in ((False, "re-read at close (before)"), (True, "made while writing (now)")):
        write, close = results[live]
        print(
            f"{label:27} write {1000 * write / n:.3f} ms/page,"
            f" close {1000 * close / n:.3f} ms/page,"
            f" total {1000 * (write + close) / n:.3f} ms/page  x{(write + close) / before:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""CPU a page of two parts of the full crawl, each against its old way in the same run.

(1) The writer thread's WARC records (`WarcWriter.write_exchange`: request, response
    and fetch metadata records of each gold page): built and digested by warcio's
    writer and gzipped by zlib (the code before), by `corpus_crawler._warc_record`
    with zlib, and with zlib-ng (the default now). Also the WARC file's size.
(2) The worker's page (`pipelines.worker.process_page`, English, dedup fingerprint on):
    the links taken from extract()'s own parse (now) against a second parse of the
    page for them (before).

Process CPU time, best of `--rounds`, over all 245 gold pages; the ratios are the
figures to compare across machines (the development VM is shared).

    python benchmarks/crawl_cpu_parts.py [--rounds 3] [--gold DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Mapping
from functools import partial
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from crawl_speed import load_gold_pages  # noqa: E402
from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

import corpus_crawler._warc_record as record_module  # noqa: E402
import pipelines.worker as worker  # noqa: E402
from corpus_crawler import warc  # noqa: E402
from corpus_crawler.config import ExtractConfig  # noqa: E402
from corpus_crawler.dedup import DedupConfig  # noqa: E402
from corpus_crawler.warc import Exchange, WarcConfig, WarcWriter  # noqa: E402


def warcio_serialize(
    record_type: str,
    uri: str,
    warc_headers: Mapping[str, str],
    payload: bytes,
    content_type: str,
    http_headers: StatusAndHeaders | None = None,
    *,
    compression_level: int,
) -> bytes:
    """The record path before `_warc_record`: warcio's writer, then zlib."""
    buffer = BytesIO()
    writer = WARCWriter(buffer, gzip=False, warc_version="1.1")
    record = writer.create_warc_record(
        uri,
        record_type,
        payload=BytesIO(payload),
        length=len(payload),
        warc_content_type=content_type,
        warc_headers_dict=dict(warc_headers),
        http_headers=http_headers,
    )
    writer.write_record(record)
    compressor = zlib.compressobj(compression_level, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return compressor.compress(buffer.getvalue()) + compressor.flush()


def best(rounds: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(rounds))


def writer_part(pages: list[bytes], rounds: int) -> None:
    exchanges = [
        Exchange(
            url=f"http://bench.example/{i}.html",
            status=200,
            body=body,
            response_headers=(
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(body))),
            ),
            request_headers=(("User-Agent", "corpus-crawler/bench"), ("Accept", "*/*")),
            fetch_time_ms=5,
        )
        for i, body in enumerate(pages)
    ]
    own_serialize = warc._serialize_record
    own_deflate = record_module._deflate
    variants = {
        "warcio + zlib (before)": (warcio_serialize, zlib),
        "_warc_record + zlib": (own_serialize, zlib),
        f"_warc_record + {own_deflate.__name__} (now)": (own_serialize, own_deflate),
    }
    sizes: dict[str, int] = {}

    def run(name: str) -> float:
        serialize, deflate = variants[name]
        warc._serialize_record = serialize
        record_module._deflate = deflate
        with tempfile.TemporaryDirectory() as folder:
            writer = WarcWriter(WarcConfig(Path(folder), cdxj=False))
            started = time.process_time()
            for exchange in exchanges:
                writer.write_exchange(exchange)
            seconds = time.process_time() - started
            writer.close()
            sizes[name] = sum(p.stat().st_size for p in Path(folder).glob("*.warc.gz"))
        return 1000 * seconds / len(exchanges)

    try:
        results = {name: best(rounds, partial(run, name)) for name in variants}
    finally:
        warc._serialize_record = own_serialize
        record_module._deflate = own_deflate
    before = next(iter(results.values()))
    print("(1) writer thread, WarcWriter.write_exchange, CPU ms a page:")
    for name, ms in results.items():
        print(
            f"    {name:38} {ms:6.3f} ms  x{ms / before:.2f} of before"
            f"  | WARC {sizes[name] / 2**20:.2f} MiB"
        )


def worker_part(pages: list[bytes], rounds: int) -> None:
    config = worker.WorkerConfig(
        ExtractConfig(language="en").checked(), page_timeout=0, dedup=DedupConfig()
    )
    tasks = [
        worker.PageTask(f"http://bench.example/{i}.html", body) for i, body in enumerate(pages)
    ]
    shareable = worker._tree_shareable

    def run(shared: bool) -> float:
        worker._tree_shareable = shareable if shared else (lambda *args: False)
        started = time.process_time()
        for task in tasks:
            worker.process_page(task, config)
        return 1000 * (time.process_time() - started) / len(tasks)

    try:
        run(True)  # warm-up: stop lists, caches
        separate = best(rounds, lambda: run(False))
        shared = best(rounds, lambda: run(True))
    finally:
        worker._tree_shareable = shareable
    print("(2) worker, process_page (extract + dedup fingerprint + links), CPU ms a page:")
    print(f"    links from a second parse (before) {separate:6.3f} ms")
    print(f"    links from extract()'s parse (now) {shared:6.3f} ms  x{shared / separate:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--gold", type=Path, default=None, help="folder of gold sets")
    args = parser.parse_args(argv)
    pages = load_gold_pages(args.gold)
    print(f"{len(pages)} gold pages, {sum(map(len, pages)) / 2**20:.1f} MiB; best of {args.rounds}")
    writer_part(pages, args.rounds)
    worker_part(pages, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cost of the per-page outputs of issue 12 against the extraction of the same pages.

For every page of the bundled demo site (read into memory first), in one process:

* ``extract``: `corpus_crawler.extract()` (the baseline: what every kept page costs);
* ``crawl log``: formatting and appending one crawl-log line (`CrawlLogWriter.append`,
  the part that runs on the reactor thread) and the writer thread's flush;
* ``jsonl``: building the document record and writing it to a JSONL file;
* ``parquet``: the same record into a Parquet file (row groups of 1000);
* ``report``: rendering the HTML report from a crawl log of as many lines (total).

Each runs `--rounds` times over `--copies` copies of the pages; the best round counts.
Printed: microseconds per page and the ratio to ``extract`` (0.01 = 1% of the
extraction time). Run it on a quiet machine or read only the ratios.

    python benchmarks/outputs_speed.py [--copies 50] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.crawllog import CrawlLogEntry, CrawlLogWriter
from corpus_crawler.documents import DocumentsConfig, JsonlWriter, ParquetWriter, document_record
from corpus_crawler.report import write_report
from corpus_crawler.vertical import DocMeta

SITE = Path(__file__).resolve().parent.parent / "corpus_crawler" / "demo_site"
NOW = datetime(2024, 5, 6, tzinfo=timezone.utc)


def best(rounds: int, run: Callable[[], int]) -> float:
    """Best seconds per item over `rounds` runs of `run` (which returns its item count)."""
    times = []
    for _ in range(rounds):
        gc.collect()
        started = time.perf_counter()
        count = run()
        times.append((time.perf_counter() - started) / count)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pages = [(p, p.read_bytes()) for p in sorted(SITE.rglob("*.html"))] * args.copies
    config = ExtractConfig()
    documents = [extract(data, f"http://demo.test/{p.name}", config) for p, data in pages]
    metas = [DocMeta(str(i), NOW, f"http://demo.test/{i}") for i in range(len(pages))]

    def run_extract() -> int:
        for path, data in pages:
            extract(data, f"http://demo.test/{path.name}", config)
        return len(pages)

    def run_log() -> int:
        with tempfile.TemporaryDirectory() as folder:
            writer = CrawlLogWriter(Path(folder), flush_interval=1.0).start()
            for index, (path, data) in enumerate(pages):
                writer.append(
                    CrawlLogEntry(
                        time=NOW, status=200, url=f"http://demo.test/{index}/{path.name}",
                        outcome="kept", size=len(data), discovery="LL",
                        via="http://demo.test/", mime="text/html", duration_ms=12,
                        annotations={"doc": f"{index:040x}", "words": "900", "lang": "en"},
                    )
                )  # fmt: skip
            writer.close()
        return len(pages)

    def run_records(writer_class: type[JsonlWriter] | type[ParquetWriter]) -> Callable[[], int]:
        def run() -> int:
            with (
                tempfile.TemporaryDirectory() as folder,
                writer_class(DocumentsConfig(Path(folder))) as writer,
            ):
                for document, meta in zip(documents, metas, strict=True):
                    record = document_record(document, meta)
                    if record is not None:
                        writer.write(record)
            return len(pages)

        return run

    with tempfile.TemporaryDirectory() as folder:
        log_dir = Path(folder)
        writer = CrawlLogWriter(log_dir).start()
        for index, (_, data) in enumerate(pages):
            writer.append(CrawlLogEntry(time=NOW, status=200, url=f"http://h{index % 37}.test/"
                                        f"{index}", outcome="kept", size=len(data),
                                        annotations={"lang": "en", "clean": "900"}))  # fmt: skip
        writer.close()

        def run_report() -> int:
            write_report(list(writer.files), log_dir / "r.html")
            return len(pages)

        baseline = best(args.rounds, run_extract)
        rows = [
            ("extract (baseline)", baseline),
            ("crawl log line", best(args.rounds, run_log)),
            ("jsonl record", best(args.rounds, run_records(JsonlWriter))),
            ("parquet record", best(args.rounds, run_records(ParquetWriter))),
        ]
        report_seconds = best(args.rounds, run_report) * len(pages)
    print(f"{len(pages)} pages ({len(pages) // args.copies} demo pages x {args.copies})")
    print(f"{'what':42} {'us/page':>10} {'x extract':>10}")
    for name, seconds in rows:
        print(f"{name:42} {seconds * 1e6:10.1f} {seconds / baseline:10.4f}")
    print(
        f"report from a {len(pages)}-line crawl log: {report_seconds:.2f} s"
        f" = the extraction of {report_seconds / baseline:,.0f} pages"
        " (mostly fixed: matplotlib drawing six plots)"
    )


if __name__ == "__main__":
    main()

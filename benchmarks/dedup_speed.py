"""Speed and memory of the dedup stages over a million generated paragraphs.

Documents of 6-14 paragraphs are generated from the gold pages' real paragraphs
(tests/data/gold.tar.xz), two thirds of each paragraph's words replaced at random
so that every generated paragraph is new (and still reads as its language to
CLD2). Planted: 10 % of documents are exact copies of an earlier one, 5 % the
same text under another site's boilerplate, 10 % edited copies (a paragraph
dropped, one added), and every document carries one of 200 "site" boilerplate
paragraphs.

Measured in one process, on the stores on disk as a crawl uses them
(``--state``, default a temporary folder; ``commit_every`` 1000 as in the
offline command; a crawl commits every document, see the README):

* CPU seconds per 1000 documents and paragraphs per CPU second for all the
  stages together, and without the paragraph-language stage;
* the same as a multiple of the extraction rate measured in the same run
  (`extract()` on the gold pages, pages per CPU second): the stages must not
  be what limits a crawl;
* resident memory (RSS) after every quarter of the run: its growth per
  million paragraphs, and the fixed n-gram filter it is bounded by;
* the SQLite file's size on disk per million paragraphs.

* how that CPU splits between `fingerprint()` (a crawl runs it in its extraction
  workers) and `check_fingerprint()` (the store lookups and inserts, left in the
  crawl process on the dedup pipeline's thread);
* with ``--campaign``, the tables in a campaign database committed every 50
  documents as the crawl's writer does, the n-gram filter fed through the journal.

    python benchmarks/dedup_speed.py [--paragraphs 1000000] [--filter-mib 256] [--campaign]
"""

from __future__ import annotations

import argparse
import random
import resource
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.dedup import DedupConfig, Deduplicator, MarkAction, fingerprint
from corpus_crawler.dedup._text import _word_hash
from corpus_crawler.state import CampaignStore

ROOT = Path(__file__).resolve().parent.parent
TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"
#: Documents between two campaign commits with --campaign (~0.5 s of a fast crawl).
CAMPAIGN_COMMIT_DOCS = 50


def gold() -> tuple[list[bytes], list[str]]:
    pages: list[bytes] = []
    paragraphs: list[str] = []
    with tarfile.open(TARBALL) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            if "/html/" in member.name:
                pages.append(handle.read())
            elif "/gold/" in member.name and member.name.endswith(".txt"):
                text = handle.read().decode("utf-8", "replace")
                paragraphs.extend(line for line in text.splitlines() if len(line.split()) >= 8)
    return pages, paragraphs


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def documents(paragraphs: list[str], total: int, seed: int = 1) -> Iterator[tuple[str, list[str]]]:
    rng = random.Random(seed)
    vocabulary = sorted({w for p in paragraphs[:3000] for w in p.split()})
    boilerplate = [
        f"Site {n}: " + " ".join(rng.choice(vocabulary) for _ in range(25)) for n in range(200)
    ]

    def fresh() -> str:
        words = rng.choice(paragraphs).split()
        # two thirds new: a 7-gram survives with (1/3)**7, so even a source paragraph
        # drawn a hundred times gives paragraphs that are new to the n-gram stage
        for i in rng.sample(range(len(words)), len(words) * 2 // 3):
            words[i] = rng.choice(vocabulary)
        return " ".join(words)

    kept: list[list[str]] = []
    made = 0
    number = 0
    while made < total:
        roll = rng.random()
        if kept and roll < 0.1:
            document = list(rng.choice(kept))
        elif kept and roll < 0.15:
            document = [*rng.choice(kept)[:-1], rng.choice(boilerplate)]
        elif kept and roll < 0.25:
            document = list(rng.choice(kept))
            document.pop(rng.randrange(len(document) - 1))
            document.insert(rng.randrange(len(document)), fresh())
        else:
            document = [fresh() for _ in range(rng.randint(6, 14))]
            document.append(rng.choice(boilerplate))
            if len(kept) < 5000:
                kept.append(document)
            else:
                kept[rng.randrange(5000)] = document
        made += len(document)
        number += 1
        yield f"doc-{number}", document


def extraction_rate(pages: list[bytes]) -> float:
    config = ExtractConfig(language="auto")
    for page in pages[:5]:
        extract(page, "http://x/", config)  # warm-up: stoplist index, lxml
    start = time.process_time()
    for page in pages:
        extract(page, "http://x/", config)
    return len(pages) / (time.process_time() - start)


@dataclass
class Timing:
    """CPU seconds of the two halves of `Deduplicator.check`."""

    #: `fingerprint()`: what a crawl runs in its extraction workers.
    fingerprint: float = 0.0
    #: `check_fingerprint()`: what stays in the crawl process (on the dedup thread).
    lookups: float = 0.0

    @property
    def total(self) -> float:
        return self.fingerprint + self.lookups


def run(
    paragraphs: list[str],
    total: int,
    config: DedupConfig,
    state: Path,
    campaign: CampaignStore | None = None,
) -> tuple[Timing, int, int, list[tuple[int, float]], Deduplicator]:
    """`campaign`: the tables go into its database, committed every `CAMPAIGN_COMMIT_DOCS`
    documents as the crawl's writer does (every 0.5 s), n-grams through the journal."""
    dedup = Deduplicator(config, state, database=campaign, keep_same_name=campaign is not None)
    timing = Timing()
    docs = seen_paragraphs = 0
    memory = [(0, rss_mib())]
    quarter = total // 4
    next_mark = quarter
    for name, document in documents(paragraphs, total):
        start = time.process_time()
        print_ = fingerprint(document, "en", config)
        middle = time.process_time()
        dedup.check_fingerprint(name, print_)
        if campaign is not None and docs % CAMPAIGN_COMMIT_DOCS == CAMPAIGN_COMMIT_DOCS - 1:
            campaign.commit({})
        end = time.process_time()
        timing.fingerprint += middle - start
        timing.lookups += end - middle
        docs += 1
        seen_paragraphs += len(document)
        if seen_paragraphs >= next_mark:
            memory.append((seen_paragraphs, rss_mib()))
            next_mark += quarter
    dedup.commit()
    if campaign is not None:
        campaign.commit({})
    return timing, docs, seen_paragraphs, memory, dedup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paragraphs", type=int, default=1_000_000)
    parser.add_argument("--filter-mib", type=int, default=256)
    parser.add_argument("--state", type=Path, help="store folder (default: a temporary one)")
    parser.add_argument(
        "--no-language", action="store_true", help="only the run without paragraph language"
    )
    parser.add_argument(
        "--campaign",
        action="store_true",
        help="tables in a campaign database (as a crawl keeps them), n-grams journaled",
    )
    args = parser.parse_args()
    pages, paragraphs = gold()
    rate = extraction_rate(pages)
    print(f"baseline: extract() on {len(pages)} gold pages: {rate:.0f} pages per CPU second")
    with tempfile.TemporaryDirectory() as scratch:
        base = args.state or Path(scratch)
        runs = [("all stages", "remove"), ("without paragraph language", "off")]
        for label, language in runs[1:] if args.no_language else runs:
            config = DedupConfig(
                paragraph_filter_mib=args.filter_mib,
                paragraph_language=MarkAction(language),
                commit_every=1000,
            )
            state = base / language
            campaign = None
            if args.campaign:
                (base / f"campaign-{language}").mkdir(parents=True, exist_ok=True)
                campaign = CampaignStore(base / f"campaign-{language}")
            timing, docs, count, memory, dedup = run(
                paragraphs, args.paragraphs, config, state, campaign
            )
            cpu = timing.total
            counts = dedup.counts
            fp = dedup.filter_false_positive_rate() or 0.0
            dedup.close()
            if campaign is not None:
                campaign.close()
                db_mib = campaign.path.stat().st_size / 2**20
            else:
                db_mib = (state / "dedup.sqlite").stat().st_size / 2**20
            print(f"\n{label}: {docs} documents, {count} paragraphs")
            print(
                f"  dropped: {counts.exact} duplicate, {counts.near} near-duplicate,"
                f" {counts.emptied} emptied; paragraphs removed: {counts.paragraphs_removed}"
                f" ({counts.paragraphs_duplicate} seen, {counts.paragraphs_foreign} language)"
            )
            print(
                f"  CPU: {cpu:.1f} s; {count / cpu:,.0f} paragraphs/s, {docs / cpu:,.0f}"
                f" documents/s per core = {docs / cpu / rate:.1f} x the extraction rate"
            )
            print(
                f"  of which fingerprint() (in a crawl: the extraction workers)"
                f" {timing.fingerprint:.1f} s = {1000 * timing.fingerprint / docs:.2f} ms/document;"
                f" check_fingerprint() (the crawl process, dedup thread) {timing.lookups:.1f} s"
                f" = {1000 * timing.lookups / docs:.2f} ms/document"
                f" ({timing.lookups / cpu:.0%} of the stages' CPU)"
            )
            start_rss = memory[0][1]
            for seen, rss in memory:
                print(f"  RSS after {seen:>9,} paragraphs: {rss:7.1f} MiB (+{rss - start_rss:.1f})")
            growth = memory[-1][1] - memory[1][1]
            span = (memory[-1][0] - memory[1][0]) / 1e6
            print(
                f"  RSS growth after the first quarter: {growth / span:.1f} MiB per million"
                f" paragraphs; n-gram filter fixed at {args.filter_mib} MiB"
                f" (false-positive rate now {fp:.2e})"
            )
            print(f"  SQLite on disk: {db_mib / (count / 1e6):.1f} MiB per million paragraphs")
            print(
                f"  bounded caches: word hashes {_word_hash.cache_info().currsize:,} of"
                f" {_word_hash.cache_info().maxsize:,} entries; SQLite pages <= 64 MiB"
                f" (the database is {db_mib:.0f} MiB)"
            )


if __name__ == "__main__":
    main()

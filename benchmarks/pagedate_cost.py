"""What reading a page's publication date (`corpus_crawler.pagedate`) costs and finds.

For every gold set (tests/data/gold.tar.xz, or --gold DIR): how many pages declare a
date, the CPU time of `published_date` a page, and that time as a share of the bare
parse of the same pages (`dom.parse`) and of the whole `extract()` (default config,
`--lang auto`). Each page goes through the parse, the parse then `published_date`, and
`extract()` in turn, for `--rounds` rounds (`extract_speed.interleaved_rounds`); the
date's time is the second less the first (read right after the parse, as `extract()`
reads it), and each figure is the median over rounds of one round's, so a slow spell
of a shared machine falls on all three alike.

    python benchmarks/pagedate_cost.py [--gold ../shared/data/gold] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from extract_speed import interleaved_rounds, load_pages, median_ratio  # noqa: E402

from corpus_crawler import dom  # noqa: E402
from corpus_crawler.config import ExtractConfig  # noqa: E402
from corpus_crawler.decode import decode_html  # noqa: E402
from corpus_crawler.extract import extract  # noqa: E402
from corpus_crawler.pagedate import published_date  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, help="a gold set or folder of sets")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    by_set: dict[str, list[tuple[bytes, str | None]]] = defaultdict(list)
    for page in load_pages(args.gold, ()):
        by_set[page.set_name].append((page.html, page.url))
    config = ExtractConfig().checked()
    print(f"{args.rounds} interleaved rounds, CPU time; ratios within each set")
    print(f"{'set':18} {'pages':>5} {'dated':>5} {'us/page':>8} {'x parse':>8} {'x extract':>9}")
    for name, pages in sorted(by_set.items()):
        texts = [(html, url, decode_html(html, None).text) for html, url in pages]
        dated = sum(1 for _, url, text in texts if dated_page(text, url))
        calls = page_calls(texts, config)
        seconds = interleaved_rounds(calls, len(texts), args.rounds, time.process_time)
        dates = [pd - p for pd, p in zip(seconds["parse+date"], seconds["parse"], strict=True)]
        print(
            f"{name:18} {len(texts):>5} {dated:>5} {median(dates) / len(texts) * 1e6:>8.1f}"
            f" {median_ratio(dates, seconds['parse']):>8.3f}"
            f" {median_ratio(dates, seconds['extract']):>9.3f}"
        )


def page_calls(
    texts: list[tuple[bytes, str | None, str]], config: ExtractConfig
) -> dict[str, Callable[[int], object]]:
    """The three calls each page of a set goes through, by the page's index."""

    def parse(index: int) -> object:
        return dom.parse(texts[index][2])

    def parse_and_date(index: int) -> object:
        return dated_page(texts[index][2], texts[index][1])

    def whole(index: int) -> object:
        return extract(texts[index][0], texts[index][1], config)

    return {"parse": parse, "parse+date": parse_and_date, "extract": whole}


def dated_page(text: str, url: str | None) -> object:
    """The page parsed and its date read, as `extract()` reads it: right after the
    parse, from a tree still in the CPU's caches."""
    root = dom.parse(text)
    return None if root is None else published_date(root, text, None, url)


if __name__ == "__main__":
    main()

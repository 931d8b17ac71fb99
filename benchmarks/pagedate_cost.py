"""What reading a page's publication date (`corpus_crawler.pagedate`) costs and finds.

For every gold set (tests/data/gold.tar.xz, or --gold DIR): how many pages declare a
date, the CPU time of `published_date` a page, and that time as a share of the bare
parse of the same pages (`dom.parse`) and of the whole `extract()` (default config,
`--lang auto`), each the best of `--rounds` rounds in this process, so the machine's
load cancels out of the ratios.

    python benchmarks/pagedate_cost.py [--gold ../shared/data/gold] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from extract_speed import load_pages  # noqa: E402

from corpus_crawler import dom  # noqa: E402
from corpus_crawler.config import ExtractConfig  # noqa: E402
from corpus_crawler.decode import decode_html  # noqa: E402
from corpus_crawler.extract import extract  # noqa: E402
from corpus_crawler.pagedate import published_date  # noqa: E402


def best_of(rounds: int, run: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, help="a gold set or folder of sets")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    by_set: dict[str, list[tuple[bytes, str | None]]] = defaultdict(list)
    for page in load_pages(args.gold, ()):
        by_set[page.set_name].append((page.html, page.url))
    config = ExtractConfig().checked()
    print(f"best of {args.rounds} rounds, CPU time; ratios within each set")
    print(f"{'set':18} {'pages':>5} {'dated':>5} {'us/page':>8} {'x parse':>8} {'x extract':>9}")
    for name, pages in sorted(by_set.items()):
        texts = [(decode_html(html, None).text, url) for html, url in pages]
        trees = [
            (root, text, None, url) for text, url in texts if (root := dom.parse(text)) is not None
        ]
        dated = sum(1 for tree in trees if published_date(*tree))
        parse = best_of(args.rounds, lambda texts=texts: [dom.parse(t) for t, _ in texts])
        dates = best_of(args.rounds, lambda trees=trees: [published_date(*p) for p in trees])
        whole = best_of(args.rounds, lambda pages=pages: [extract(h, u, config) for h, u in pages])
        print(
            f"{name:18} {len(pages):>5} {dated:>5} {dates / len(pages) * 1e6:>8.1f}"
            f" {dates / parse:>8.3f} {dates / whole:>9.3f}"
        )


if __name__ == "__main__":
    main()

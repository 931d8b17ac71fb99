"""What the `corpus` preset's template evidence costs (issue 13), as a ratio to
the bare lxml parse of the same pages, measured in the same run.

Each page is segmented and classified once; then the container pass runs over
all pages with the shipped corpus options and with template_shift 0 (best of
`--rounds`). The machine's load cancels out of the ratios, not of the seconds.

    PYTHONPATH=$PWD python benchmarks/container_pass_cost.py --gold ../shared/data/gold
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import lxml.html

from corpus_crawler import ExtractConfig, Preset, dom
from corpus_crawler.classify import classify_segments
from corpus_crawler.container import container_pass
from corpus_crawler.decode import decode_html
from corpus_crawler.evaluate import find_gold_sets, load_gold_set
from corpus_crawler.extractors import visible
from corpus_crawler.language_setup import choose_language, stoplist_and_params
from corpus_crawler.presets import container_options
from corpus_crawler.segment import segment
from corpus_crawler.wrappers import page_furniture


def best_of(rounds: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True, help="a gold set or a folder of them")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    pages = [p.html for path in find_gold_sets(args.gold) for p in load_gold_set(path).pages]
    config = ExtractConfig(preset=Preset.CORPUS)
    shipped = container_options(Preset.CORPUS)
    assert shipped is not None
    classified = []
    for html in pages:
        root = dom.parse_page(decode_html(html, None).text, scripting=True)
        if root is None:
            continue
        segments = visible(segment(dom.preprocess_seed(root), marked=True))
        if not segments:
            continue
        language, _ = choose_language([s.text for s in segments], config)
        stoplist, params = stoplist_and_params(language, config)
        seeded = classify_segments(segments, stoplist, params)
        classified.append(
            (seeded, params, page_furniture(segments, seeded, shipped.unwrap_layouts))
        )

    def parse_all() -> None:
        for html in pages:
            try:
                lxml.html.fromstring(html)
            except Exception:  # an unparsable page costs what it costs
                continue

    def passes(options: object) -> Callable[[], object]:
        return lambda: [container_pass(s, p, options, u) for s, p, u in classified]  # type: ignore[arg-type]

    parse = best_of(args.rounds, parse_all)
    without = best_of(args.rounds, passes(replace(shipped, template_shift=0)))
    with_templates = best_of(args.rounds, passes(shipped))
    print(f"{len(pages)} pages; bare parse {parse:.3f} s (1.0x)")
    print(f"container pass, template_shift 0: {without / parse:.3f}x parse")
    print(
        f"container pass, shipped (template_shift {shipped.template_shift}):"
        f" {with_templates / parse:.3f}x parse"
    )
    print(f"template evidence adds {(with_templates - without) / parse:.3f}x parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the `corpus` preset's template evidence costs (issue 13), as a ratio to
the bare lxml parse of the same pages, measured in the same run.

Each page is segmented and classified once; then, for `--rounds` rounds, each page
goes through the bare parse and the container pass with the shipped corpus options
and with template_shift 0, in turn (`extract_speed.interleaved_rounds`, CPU time),
each call after an untimed pass over that page, so that every pass finds the page's
blocks in the CPU's caches, as the pass does in `extract()` right after the classifier
(without it, the pass that follows a parse pays for the cold caches).
The ratios are the median over rounds of one round's ratio, so a slow spell of a
shared machine falls on all three alike; the seconds are each one's best round.

    python benchmarks/container_pass_cost.py --gold ../shared/data/gold
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import lxml.html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from extract_speed import interleaved_rounds, median_ratio  # noqa: E402

from corpus_crawler import ExtractConfig, Preset, dom  # noqa: E402
from corpus_crawler.classify import classify_segments  # noqa: E402
from corpus_crawler.container import ContainerOptions, container_pass  # noqa: E402
from corpus_crawler.decode import decode_html  # noqa: E402
from corpus_crawler.evaluate import find_gold_sets, load_gold_set  # noqa: E402
from corpus_crawler.extractors import visible  # noqa: E402
from corpus_crawler.language_setup import choose_language, stoplist_and_params  # noqa: E402
from corpus_crawler.presets import container_options  # noqa: E402
from corpus_crawler.segment import segment  # noqa: E402
from corpus_crawler.wrappers import page_furniture  # noqa: E402


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
        furniture = page_furniture(segments, seeded, shipped.unwrap_layouts)
        classified.append((html, seeded, params, furniture))
    without_templates = replace(shipped, template_shift=0)

    def parse(index: int) -> object:
        try:
            return lxml.html.fromstring(classified[index][0])
        except Exception:  # an unparsable page costs what it costs
            return None

    def container(options: ContainerOptions) -> Callable[[int], object]:
        def run(index: int) -> object:
            _, seeded, params, furniture = classified[index]
            return container_pass(seeded, params, options, furniture)

        return run

    seconds = interleaved_rounds(
        {
            "parse": parse,
            "template_shift 0": container(without_templates),
            "shipped": container(shipped),
        },
        len(classified),
        args.rounds,
        time.process_time,
        warm=container(shipped),
    )
    parse_s, without, with_templates = (
        seconds[name] for name in ("parse", "template_shift 0", "shipped")
    )
    print(
        f"{len(classified)} pages; bare parse {min(parse_s):.3f} s CPU (1.0x);"
        f" medians of {args.rounds} interleaved rounds"
    )
    print(f"container pass, template_shift 0: {median_ratio(without, parse_s):.3f}x parse")
    print(
        f"container pass, shipped (template_shift {shipped.template_shift}):"
        f" {median_ratio(with_templates, parse_s):.3f}x parse"
    )
    added = [w - o for w, o in zip(with_templates, without, strict=True)]
    print(f"template evidence adds {median_ratio(added, parse_s):.3f}x parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())

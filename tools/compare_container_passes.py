"""The compiled container pass against the Python one on any gold sets, and what each costs.

`tests/test_container_fast.py` compares the two passes on the bundled gold pages;
this runs the same comparison on sets that are not bundled (the held-out sets
`tools/gold_sets.py` lays out), with the shipped options of both presets and
with variants of them:

    python tools/compare_container_passes.py --gold /tmp/held
    python tools/compare_container_passes.py --gold ../shared/data/gold \
        --variant '{"min_container_chars": 1000000}' --variant '{"join_segments": false}'

Each page is walked and classified as the preset's extractor does it (its walk
options, `--lang auto`), once per preset; then both passes run
on the same blocks. A line per preset and variant gives the pages whose
Paragraphs differ, the blocks the pass moved (so that agreeing is not agreeing
on nothing) and each pass's time a page. The exit status is 1 when any page differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from extractor_table import _preset_blocks  # noqa: E402

from corpus_crawler import ExtractConfig, Preset  # noqa: E402
from corpus_crawler.container import container_pass  # noqa: E402
from corpus_crawler.evaluate import find_gold_sets, load_gold_set  # noqa: E402
from corpus_crawler.model import Paragraph  # noqa: E402
from corpus_crawler.presets import CONTAINER_PRESETS, container_options  # noqa: E402

#: What a page gives the pass: its id, blocks, parameters, furniture and stated marks.
Page = tuple[str, tuple[Paragraph, ...], Any, list[int], dict[str, int]]


def classified_pages(gold: Sequence[Path], preset: Preset) -> list[Page]:
    """Every page of the sets, walked and classified as `preset`'s extractor does
    (extractor_table's `_preset_blocks`, which the tuning table and
    tools/article_losses.py use too)."""
    config = ExtractConfig(preset=preset)
    pages: list[Page] = []
    for path in gold:
        for sets in find_gold_sets(path):
            gold_set = load_gold_set(sets)
            for page in gold_set.pages:
                paragraphs, params, unlikely, stated, _ = _preset_blocks(page.html, config)
                if paragraphs:
                    pages.append(
                        (f"{gold_set.name}/{page.id}", paragraphs, params, unlikely, stated)
                    )
    return pages


def compare(pages: Sequence[Page], options: Any) -> tuple[list[str], int, float, float]:
    """Pages that differ, blocks moved, and seconds in the compiled and the Python pass."""
    differing = []
    moved = 0
    compiled_time = python_time = 0.0
    for page_id, paragraphs, params, unlikely, stated in pages:
        start = time.perf_counter()
        fast = container_pass(paragraphs, params, options, unlikely, compiled=True, stated=stated)
        middle = time.perf_counter()
        slow = container_pass(paragraphs, params, options, unlikely, compiled=False, stated=stated)
        compiled_time += middle - start
        python_time += time.perf_counter() - middle
        if fast != slow:
            differing.append(page_id)
        moved += sum(
            a.final_class is not b.final_class for a, b in zip(slow, paragraphs, strict=True)
        )
    return differing, moved, compiled_time, python_time


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--gold", type=Path, action="append", required=True, help="a gold set or a folder of them"
    )
    parser.add_argument(
        "--preset",
        choices=[p.value for p in CONTAINER_PRESETS],
        action="append",
        help="only this preset (repeatable; default: all of them)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="a JSON object of options to change from the shipped ones (repeatable)",
    )
    args = parser.parse_args(argv)
    variants: list[dict[str, Any]] = [{}]
    for text in args.variant:
        value = json.loads(text)
        if not isinstance(value, dict):
            parser.error(f"--variant must be a JSON object, got {text!r}")
        variants.append(value)
    presets = [Preset(p) for p in args.preset] if args.preset else list(CONTAINER_PRESETS)
    failed = False
    for preset in presets:
        pages = classified_pages(args.gold, preset)
        shipped = container_options(preset)
        assert shipped is not None
        print(f"{preset.value}: {len(pages)} pages", flush=True)
        for variant in variants:
            differing, moved, compiled_time, python_time = compare(
                pages, replace(shipped, **variant)
            )
            failed = failed or bool(differing)
            count = max(len(pages), 1)
            print(
                f"  {json.dumps(variant) if variant else 'shipped'}: {len(differing)} differ"
                f"{' (' + ', '.join(differing[:5]) + ')' if differing else ''};"
                f" {moved} blocks moved; compiled {compiled_time * 1000 / count:.3f} ms a page,"
                f" Python {python_time * 1000 / count:.3f} ms",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Error analysis of the `corpus` preset on a gold set (issue 13).

For each page: the preset's shingle F1, precision and recall, and for each
block whether the gold keeps it (at least half of its 4-token shingles are in
the gold text; a block of fewer than 4 tokens, a user name or a date, when its
tokens run together in the gold's). Lost characters are then grouped two ways: kept but not in the
gold (precision loss) and in the gold but dropped (recall loss), by the block's
kind (heading, list item, table cell, paragraph), its place against the main
container (inside, region, outside, cleaned out of the container by readability's
conditional cleaning, furniture) and its context-free class.

    PYTHONPATH=$PWD python tools/corpus_errors.py /work/shared/data/gold/cleaneval-dev
    PYTHONPATH=$PWD python tools/corpus_errors.py GOLD_SET --worst 20 --blocks 5

The figures say where the preset loses; they choose nothing (constants are
chosen by benchmarks/extractor_table.py's cross-validation).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from corpus_crawler import ExtractConfig, Preset, dom
from corpus_crawler.classify import classify_segments
from corpus_crawler.container import (
    _Subtrees,
    dropped_elements,
    inside_containers,
    main_containers,
    main_region,
    preset_passes,
)
from corpus_crawler.decode import decode_html
from corpus_crawler.evaluate import (
    SHINGLE_SIZE,
    PageScore,
    Summary,
    load_gold_set,
    page_scores,
    shingles,
    tokens,
)
from corpus_crawler.extract import only_headings
from corpus_crawler.extractors import visible
from corpus_crawler.language_setup import choose_language, stoplist_and_params
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options
from corpus_crawler.segment import lead_elements, segment, stated_elements
from corpus_crawler.wrappers import page_furniture

GOOD = ParagraphClass.GOOD


@dataclass(frozen=True, slots=True)
class Block:
    paragraph: Paragraph
    place: str
    in_gold: bool


def block_kind(p: Paragraph) -> str:
    tags = p.dom_path.split(".")
    if p.heading:
        return "heading"
    if "li" in tags or "dd" in tags or "dt" in tags:
        return "list item"
    if "td" in tags or "th" in tags:
        return "table cell"
    return "paragraph"


def page_blocks(html: bytes, gold: str, preset: Preset) -> tuple[list[Block], str]:
    """The page's blocks after the preset's container pass, and its kept text."""
    config = ExtractConfig(preset=preset)
    options = container_options(preset)
    assert options is not None
    root = dom.parse_page(decode_html(html, None).text, scripting=True)
    if root is None:
        return [], ""
    # the preset's own walk (corpus: hidden inline text left out)
    segments = visible(
        segment(
            dom.preprocess_seed(root),
            marked=True,
            page_links_only=options.page_links_only,
            drop_hidden_inline=options.drop_hidden_inline,
        )
    )
    if not segments:
        return [], ""
    language, _ = choose_language([s.text for s in segments], config)
    stoplist, params = stoplist_and_params(language, config)
    seeded = classify_segments(segments, stoplist, params)
    unlikely = page_furniture(segments, seeded, options.unwrap_layouts)
    stated = stated_elements(segments)
    passed = preset_passes(seeded, params, options, unlikely, stated, lead_elements(segments))
    subtrees = _Subtrees(seeded, options, unlikely if any(unlikely) else None)
    containers = main_containers(seeded, options, subtrees, stated)
    region = main_region(seeded, containers, options, subtrees)
    inside = inside_containers(seeded, containers)
    in_region = inside_containers(seeded, [region] if region else [])
    # what readability's cleaning takes out of the container (its own place)
    cleaned = inside_containers(seeded, dropped_elements(containers, subtrees, options, stated))
    gold_shingles = shingles(gold)
    # a block shorter than a shingle yields one shingle of its own tokens, which
    # no 4-token gold shingle matches: look its tokens up as a run instead
    gold_run = " " + " ".join(tokens(gold)) + " "
    blocks = []
    for p, is_inside, is_region, is_cleaned, is_furniture in zip(
        passed, inside, in_region, cleaned, unlikely, strict=True
    ):
        own_tokens = tokens(p.text)
        if 0 < len(own_tokens) < SHINGLE_SIZE:
            in_gold = " " + " ".join(own_tokens) + " " in gold_run
        else:
            own = shingles(p.text)
            total = sum(own.values())
            hits = sum(min(n, gold_shingles.get(s, 0)) for s, n in own.items())
            in_gold = total > 0 and hits * 2 >= total
        place = "inside" if is_inside else "region" if is_region else "outside"
        if is_cleaned:
            place = "cleaned"
        if is_furniture:
            place += "+furniture"
        blocks.append(Block(p, place, in_gold))
    good = [p for p in passed if p.final_class is GOOD]
    text = "" if only_headings(good) else "\n".join(p.text for p in good)
    return blocks, text


def oracle_text(blocks: Sequence[Block]) -> str:
    """What a block decision that never errs would keep: the blocks the gold holds.

    It is the ceiling of every decision over these blocks (the rules, a learned
    model); what it still misses is the gold's own form (words it joins across
    lines, image alt text it keeps, text these blocks split differently).
    """
    return "\n".join(b.paragraph.text for b in blocks if b.in_gold)


def print_ceiling(preset_scores: Sequence[PageScore], oracle_scores: Sequence[PageScore]) -> None:
    for name, scores in (("preset", preset_scores), ("oracle blocks", oracle_scores)):
        summary = Summary.of(scores)
        print(
            f"{name:14s} shingle F1 {summary.f1:.4f}"
            f" (P {summary.precision:.4f}, R {summary.recall:.4f})"
        )
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gold_set", type=Path)
    parser.add_argument("--preset", default="corpus", choices=["corpus", "article"])
    parser.add_argument("--worst", type=int, default=20, help="pages listed (20)")
    parser.add_argument("--blocks", type=int, default=0, help="lost blocks shown per page")
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="also score the oracle that keeps exactly the blocks the gold holds",
    )
    args = parser.parse_args(argv)
    gold_set = load_gold_set(args.gold_set)
    preset = Preset(args.preset)
    lost_precision: Counter[tuple[str, str, str]] = Counter()
    lost_recall: Counter[tuple[str, str, str]] = Counter()
    rows = []
    oracle_scores = []
    for page in gold_set.pages:
        blocks, text = page_blocks(page.html, page.gold, preset)
        score = page_scores(text, page.gold)
        oracle_scores.append(page_scores(oracle_text(blocks), page.gold))
        for b in blocks:
            key = (block_kind(b.paragraph), b.place, b.paragraph.cf_class.name)
            kept = b.paragraph.final_class is GOOD
            if kept and not b.in_gold:
                lost_precision[key] += b.paragraph.length
            elif b.in_gold and not kept:
                lost_recall[key] += b.paragraph.length
        rows.append((score, page.id, blocks))
    rows.sort(key=lambda row: row[0].f1)
    print("| page | F1 | P | R | chars kept not gold | gold chars dropped |")
    print("|---|---:|---:|---:|---:|---:|")
    for score, page_id, blocks in rows[: args.worst]:
        fp = sum(
            b.paragraph.length for b in blocks if b.paragraph.final_class is GOOD and not b.in_gold
        )
        fn = sum(
            b.paragraph.length for b in blocks if b.in_gold and b.paragraph.final_class is not GOOD
        )
        p = "-" if score.precision is None else f"{score.precision:.3f}"
        r = "-" if score.recall is None else f"{score.recall:.3f}"
        print(f"| {page_id} | {score.f1:.3f} | {p} | {r} | {fp} | {fn} |")
        if args.blocks:
            lost = [b for b in blocks if (b.paragraph.final_class is GOOD) != b.in_gold]
            lost.sort(key=lambda b: -b.paragraph.length)
            for b in lost[: args.blocks]:
                q = b.paragraph
                sign = "+" if q.final_class is GOOD else "-"
                print(
                    f"    {sign} {block_kind(q)} {b.place} cf={q.cf_class.name}"
                    f" ld={q.link_density:.2f} sd={q.stopword_density:.2f} {q.length}c"
                    f" {q.dom_path[-40:]!r}: {q.text[:90]!r}"
                )
    if args.ceiling:
        print_ceiling([row[0] for row in rows], oracle_scores)
    for title, counter in (
        ("kept, not in gold (precision loss)", lost_precision),
        ("in gold, dropped (recall loss)", lost_recall),
    ):
        total = sum(counter.values())
        print(f"\n{title}: {total} characters")
        for (kind, place, cf), chars in counter.most_common(15):
            print(f"  {chars:7d} {chars / total:5.1%}  {kind:10s} {place:18s} cf={cf}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

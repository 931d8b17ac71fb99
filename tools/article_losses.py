"""Where a preset (`article`, or `corpus` or `article-comments` with --preset) loses
on a gold set: the worst pages.

For each page, the blocks the preset keeps and drops are split by whether their
shingles are in the gold text; a page's precision loss is the kept text that
is not in the gold (which blocks), its recall loss the gold text it dropped
(which blocks, or "no block": text the HTML never had, such as script-built
text). Blocks are classified once per page (the presets' steps before their
container pass, as benchmarks/extractor_table.py does), so trying options is fast:

    python tools/article_losses.py --gold ../shared/data/gold --worst 20
    python tools/article_losses.py --gold ../shared/data/gold --set readability \
        --option sibling_paragraphs=true --worst 0

`--oracle` also scores the block oracle: each page's blocks kept when more than
half of their shingles are in the gold, dropped otherwise. It bounds what a better
keep-or-drop decision over these blocks can gain; on cleaneval-dev, a share of 0.5
scores best of 0.2-0.7 (0.9343 / 0.9352 / 0.9357 / 0.9359 / 0.9334 / 0.9203 with
`corpus`'s blocks). It then lists the `--worst` pages farthest below their own
oracle (in precision plus recall, the page means the set's F1 pools): the pages
where the decision, not the segmentation, loses.

`--option key=value` (repeatable) overrides the shipped `article:` options
(configs/extractors/presets.yaml) for the run; the summary line per set is the
benchmark's (mean precision, mean recall, their harmonic mean).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from extractor_table import _preset_blocks, _text  # noqa: E402

from corpus_crawler import ExtractConfig, Preset  # noqa: E402
from corpus_crawler.container import BEFORE_FIELDS, WALK_FIELDS, ContainerOptions, preset_passes  # noqa: E402
from corpus_crawler.evaluate import (  # noqa: E402
    Summary,
    find_gold_sets,
    load_gold_set,
    page_scores,
    read_manifest,
    scored_by_characters,
    shingles,
)
from corpus_crawler.model import Paragraph, ParagraphClass  # noqa: E402
from corpus_crawler.presets import container_options  # noqa: E402


def _blocks(
    cache: Path | None,
    gold: Path,
    sets: Sequence[str],
    walk: ContainerOptions,
    preset: Preset = Preset.ARTICLE,
) -> dict[str, list[Any]]:
    """set -> [(page id, paragraphs, params, unlikely, stated, leads, gold text)], cached on disk
    when asked (the classification is the slow part; the container pass is what changes).
    The walk options (container.WALK_FIELDS) and those that make the furniture marks
    (BEFORE_FIELDS) are `walk`'s; the cache file's name says the preset and which of
    them are on."""
    walk_on = [name for name in sorted(WALK_FIELDS | BEFORE_FIELDS) if getattr(walk, name)]
    if cache is not None:
        # the row format's version first: rows with the stated elements are v2,
        # with the lead elements v3
        parts = ["v3", preset.value, *walk_on]
        cache = cache.with_name(f"{cache.stem}.{'.'.join(parts)}{cache.suffix}")
    if cache is not None and cache.exists():
        data: dict[str, list[Any]] = pickle.loads(cache.read_bytes())
        if all(s in data for s in sets):
            return data
    config = ExtractConfig(preset=preset)
    data = {}
    for path in find_gold_sets(gold):
        gold_set = load_gold_set(path)
        if sets and gold_set.name not in sets:
            continue
        data[gold_set.name] = [
            (page.id, *_preset_blocks(page.html, config, walk), page.gold)
            for page in gold_set.pages
        ]
    if cache is not None:
        cache.write_bytes(pickle.dumps(data))
    return data


def _options(shipped: ContainerOptions, items: Sequence[str], flag: str) -> ContainerOptions:
    """The shipped options with `key=value` overrides (values read as YAML), checked."""
    overrides = {}
    for item in items:
        key, _, value = item.partition("=")
        overrides[key] = yaml.safe_load(value)
    return ContainerOptions.from_mapping({**asdict(shipped), **overrides}, flag)


def _in_gold(block: Counter[tuple[str, ...]], gold: Counter[tuple[str, ...]]) -> float:
    """The share of a block's shingles that the gold text holds (0 for a block of none)."""
    total = sum(block.values())
    return sum(min(c, gold.get(k, 0)) for k, c in block.items()) / total if total else 0.0


def _part(value: float | None) -> float:
    """A page's precision or recall as the set means count it (undefined: 0)."""
    return 0.0 if value is None else value


def oracle_text(paragraphs: Sequence[Paragraph], gold: str, characters: bool = False) -> str:
    """The text of the blocks more than half of whose shingles are in the gold: the
    best any decision over these blocks can keep (the page's block oracle)."""
    gold_shingles = shingles(gold, characters=characters)
    return "\n".join(
        p.text
        for p in paragraphs
        if _in_gold(shingles(p.text, characters=characters), gold_shingles) > 0.5
    )


def _block_report(
    paragraphs: Sequence[Paragraph], gold: str, limit: int, characters: bool = False
) -> list[str]:
    gold_shingles = shingles(gold, characters=characters)
    lost, extra = [], []
    for p in paragraphs:
        block = shingles(p.text, characters=characters)
        total = sum(block.values())
        if not total:
            continue
        in_gold = _in_gold(block, gold_shingles)
        kept = p.final_class is ParagraphClass.GOOD
        tail = "/".join(p.xpath.split("/")[-3:])
        line = (
            f"{total:5d} sh {in_gold:4.2f} cf={p.cf_class.name[:4]} ld={p.link_density:.2f}"
            f" {tail}: {p.text[:70]!r}"
        )
        if kept and in_gold < 0.5:
            extra.append((total * (1 - in_gold), line))
        elif not kept and in_gold >= 0.5:
            lost.append((total * in_gold, line))
    out = []
    for name, rows in (("extra", extra), ("lost", lost)):
        rows.sort(reverse=True)
        out += [f"    {name} {line}" for _, line in rows[:limit]]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True, help="a folder of gold sets")
    parser.add_argument(
        "--preset",
        choices=[Preset.ARTICLE.value, Preset.CORPUS.value, Preset.ARTICLE_COMMENTS.value],
        default=Preset.ARTICLE.value,
        help="the preset whose shipped options are overridden (article)",
    )
    parser.add_argument("--set", action="append", default=[], help="only this set (repeatable)")
    parser.add_argument("--option", action="append", default=[], help="key=value override")
    parser.add_argument("--worst", type=int, default=20, help="list this many worst pages")
    parser.add_argument("--blocks", type=int, default=4, help="blocks listed per page and side")
    parser.add_argument("--page", action="append", default=[], help="report only this page id")
    parser.add_argument("--cache", type=Path, help="pickle of the classified blocks")
    parser.add_argument("--compare", action="store_true", help="per-page diff against --base")
    parser.add_argument(
        "--base", action="append", default=[], help="key=value override of the compared options"
    )
    parser.add_argument(
        "--oracle",
        action="store_true",
        help="also score the block oracle: the blocks more than half in the gold kept, the"
        " rest dropped (about how far a decision over these blocks could go)",
    )
    args = parser.parse_args(argv)

    preset = Preset(args.preset)
    shipped = container_options(preset)
    assert shipped is not None
    options = _options(shipped, args.option, "--option")
    base_options = _options(shipped, args.base, "--base")
    data = _blocks(args.cache, args.gold, args.set, options, preset)
    for set_name, rows in data.items():
        if args.set and set_name not in args.set:
            continue
        scored = []
        base_scores = []
        oracle_scores = []
        by_characters = _scored_by_characters(args.gold, set_name)
        for page_id, paragraphs, params, unlikely, stated, leads, gold in rows:
            passed = (
                preset_passes(paragraphs, params, options, unlikely, stated, leads)
                if paragraphs
                else ()
            )
            chars = page_id in by_characters
            score = page_scores(_text(passed) if paragraphs else "", gold, characters=chars)
            scored.append((page_id, passed, gold, score))
            if args.oracle:
                oracle_scores.append(
                    page_scores(oracle_text(paragraphs, gold, chars), gold, characters=chars)
                )
            if args.compare:
                base_passed = (
                    preset_passes(paragraphs, params, base_options, unlikely, stated, leads)
                    if paragraphs
                    else ()
                )
                base_scores.append(
                    page_scores(_text(base_passed) if paragraphs else "", gold, characters=chars)
                )
        summary = Summary.of(s for *_, s in scored)
        print(
            f"{set_name}: F1 {summary.f1:.4f} P {summary.precision:.4f} R {summary.recall:.4f}"
            f" ({summary.pages} pages)"
        )
        if args.oracle:
            oracle = Summary.of(oracle_scores)
            print(
                f"  block oracle: F1 {oracle.f1:.4f} P {oracle.precision:.4f}"
                f" R {oracle.recall:.4f} (the blocks more than half in the gold)"
            )
            # where the decisions (not the blocks) lose: the pages farthest below
            # their own oracle, in the page-mean precision and recall the set F1 pools
            gaps = sorted(
                (
                    (_part(o.shingles.precision) - _part(s.shingles.precision))
                    + (_part(o.shingles.recall) - _part(s.shingles.recall)),
                    page_id,
                    s,
                    o,
                )
                for (page_id, _, _, s), o in zip(scored, oracle_scores, strict=True)
            )[::-1]
            for gap, page_id, s, o in gaps[: args.worst]:
                if gap <= 0:
                    break
                print(
                    f"  below its oracle by {gap:.3f} (P+R): {page_id}: F1 {s.f1:.3f}"
                    f" (oracle {o.f1:.3f})"
                )
        if args.compare:
            for (page_id, _, _, score), base in zip(scored, base_scores, strict=True):
                if abs(score.f1 - base.f1) > 0.001:
                    print(f"  {page_id}: {base.f1:.3f} -> {score.f1:.3f}")
        worst = sorted(scored, key=lambda row: row[3].f1)[: args.worst]
        if args.page:
            worst = [row for row in scored if row[0] in args.page]
        for page_id, passed, gold, score in worst:
            p = score.precision
            r = score.recall
            print(
                f"  {page_id}: F1 {score.f1:.3f} P {'-' if p is None else f'{p:.3f}'}"
                f" R {'-' if r is None else f'{r:.3f}'}"
                f" (kept {score.shingles.predicted} sh, gold {score.shingles.gold} sh)"
            )
            chars = page_id in by_characters
            print("\n".join(_block_report(passed, gold, args.blocks, chars)))
    return 0


def _scored_by_characters(gold: Path, set_name: str) -> set[str]:
    """The pages of a set whose manifest says `"tokens": "characters"` (evaluate's rule)."""
    folder = gold if gold.name == set_name else gold / set_name
    if not (folder / "manifest.jsonl").is_file():
        return set()
    return {r["id"] for r in read_manifest(folder) if scored_by_characters(r)}


if __name__ == "__main__":
    sys.exit(main())

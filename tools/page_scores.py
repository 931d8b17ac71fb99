"""Page by page: the shingle F1 of extractors on gold sets, before and after a change,
or beside an anchor.

    python tools/page_scores.py dump before.json --gold DIR [--gold DIR] [--row article]
    ... change the code ...
    python tools/page_scores.py dump after.json --gold DIR [--gold DIR] [--row article]
    python tools/page_scores.py diff before.json after.json [--moved 0.02]
    python tools/page_scores.py versus --gold SET --row article --anchor readability-lxml

`dump` scores every page of every set with each row (default: the three container
presets) and writes the per-page scores with each set's summary; `diff` says, per set
and row, how the summary moved, how many pages rose and fell, and which pages moved
most. Every rule of issue 13 since the held-out sets was judged this way: a rule is
kept when the sets it was not found on do not lose, page by page.

`versus` lists the pages where a row trails an anchor most (readability-lxml,
trafilatura, resiliparse, a jusText 3.0.2 row, or another row): a page at 0.00 where
the anchor scores 0.95 is more often a bug than a matter of taste (an aside wrapping
the post, an XML declaration cut short, a page footer taken for the article).

Rows and anchors are `benchmarks/anchor_table.py`'s, with its settings (`--lang auto`);
an anchor's scores are cached beside `--cache` (default: none). Scores are macro
shingle F1 as `corpus-crawler evaluate` computes them; a page's F1 is 1.0 when its
gold and the output are both empty.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from anchor_table import ANCHORS, OURS, MissingAnchor, extractor  # noqa: E402

from corpus_crawler import ExtractConfig  # noqa: E402
from corpus_crawler.evaluate import (  # noqa: E402
    ExtractFn,
    GoldSet,
    SetReport,
    evaluate_set,
    find_gold_sets,
    load_gold_set,
)

DEFAULT_ROWS = ("corpus", "article", "article-comments")
#: Per page: F1, precision, recall (None where a side is empty) and the URL.
PageRow = tuple[float, float | None, float | None, str | None]


def _extractor(name: str) -> ExtractFn | ExtractConfig:
    try:
        return extractor(name)
    except KeyError:
        known = ", ".join([*OURS, *ANCHORS])
        raise SystemExit(f"no row or anchor named {name!r}; known: {known}") from None
    except MissingAnchor as missing:
        raise SystemExit(f"{name}: {missing}") from missing


def _pages(report: SetReport) -> dict[str, PageRow]:
    return {
        row.id: (row.score.f1, row.score.precision, row.score.recall, row.url)
        for row in report.rows
    }


def _score(gold: GoldSet, name: str, workers: int) -> SetReport:
    extractor = _extractor(name)
    # an anchor is a closure, not picklable: one process
    processes = workers if isinstance(extractor, ExtractConfig) else 1
    return evaluate_set(gold, extractor, workers=processes)


def dump(golds: Sequence[Path], rows: Sequence[str], workers: int = 2) -> dict[str, Any]:
    """{"scores": {"set|row": {page: f1}}, "summary": {"set|row": [f1, p, r]}}."""
    scores: dict[str, dict[str, float]] = {}
    summary: dict[str, list[float]] = {}
    for gold in golds:
        for set_dir in find_gold_sets(gold):
            pages = load_gold_set(set_dir)  # read once for every row
            for name in rows:
                report = _score(pages, name, workers)
                key = f"{set_dir.name}|{name}"
                scores[key] = {page: row[0] for page, row in _pages(report).items()}
                s = report.summary
                summary[key] = [s.f1, s.precision, s.recall]
                print(f"{key}: {s.f1:.4f}", file=sys.stderr)
    return {"scores": scores, "summary": summary}


def diff(before: dict[str, Any], after: dict[str, Any], moved: float = 0.02) -> list[str]:
    """Lines: per set and row in both dumps, the summary F1 and the mean page F1
    before -> after, the pages up and down, and those that moved more than `moved`."""
    lines = []
    for key, old in before["scores"].items():
        new = after["scores"].get(key)
        if new is None:
            continue
        common = [page for page in old if page in new]
        deltas = sorted(((new[p] - old[p], p) for p in common), key=lambda d: d[0])
        up = sum(1 for d, _ in deltas if d > 1e-9)
        down = sum(1 for d, _ in deltas if d < -1e-9)
        f1_old, f1_new = before["summary"][key][0], after["summary"][key][0]
        mean_old = statistics.fmean(old[p] for p in common) if common else 0.0
        mean_new = statistics.fmean(new[p] for p in common) if common else 0.0
        lines.append(
            f"{key}: F1 {f1_old:.4f} -> {f1_new:.4f} (page mean {mean_old:.4f} -> "
            f"{mean_new:.4f}); {up} pages up, {down} down"
        )
        for delta, page in deltas:
            if abs(delta) > moved:
                lines.append(f"    {delta:+.3f} {page}: {old[page]:.3f} -> {new[page]:.3f}")
    return lines


def versus(
    set_dir: Path,
    row: str,
    anchor: str,
    worst: int = 25,
    cache: Path | None = None,
    workers: int = 2,
) -> list[str]:
    """Lines: the pages of `set_dir` where `row` trails `anchor` most."""
    pages = load_gold_set(set_dir)
    theirs: dict[str, PageRow]
    cached = cache and cache.with_name(f"{cache.stem}-{set_dir.name}-{anchor}.json")
    if cached and cached.is_file():
        theirs = {k: (v[0], v[1], v[2], v[3]) for k, v in json.loads(cached.read_text()).items()}
    else:
        theirs = _pages(_score(pages, anchor, workers))
        if cached:
            cached.write_text(json.dumps(theirs))
    ours = _pages(_score(pages, row, workers))
    common = [page for page in ours if page in theirs]
    mean_ours = statistics.fmean(ours[p][0] for p in common) if common else 0.0
    mean_theirs = statistics.fmean(theirs[p][0] for p in common) if common else 0.0
    lines = [f"{set_dir.name}: page mean {row} {mean_ours:.4f}, {anchor} {mean_theirs:.4f}"]

    def side(page_row: PageRow) -> str:
        f1, p, r, _ = page_row
        return f"{f1:.3f} (P {p or 0:.2f} R {r or 0:.2f})"

    for page in sorted(common, key=lambda p: ours[p][0] - theirs[p][0])[:worst]:
        gap = ours[page][0] - theirs[page][0]
        if gap >= 0:
            break
        url = ours[page][3] or ""
        lines.append(f"  {gap:+.3f} {page}: {side(ours[page])} vs {side(theirs[page])} {url}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="score every page, write JSON")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--gold", type=Path, action="append", required=True)
    dumping.add_argument("--row", action="append", help=f"default: {', '.join(DEFAULT_ROWS)}")
    dumping.add_argument("--workers", type=int, default=2)
    diffing = commands.add_parser("diff", help="compare two dumps")
    diffing.add_argument("before", type=Path)
    diffing.add_argument("after", type=Path)
    diffing.add_argument("--moved", type=float, default=0.02, help="list pages moved more")
    against = commands.add_parser("versus", help="pages where a row trails an anchor")
    against.add_argument("--gold", type=Path, required=True, help="a gold set or a folder")
    against.add_argument("--row", default="article")
    against.add_argument("--anchor", default="readability-lxml")
    against.add_argument("--worst", type=int, default=25)
    against.add_argument("--cache", type=Path, help="cache the anchor's scores beside this")
    args = parser.parse_args(argv)
    if args.command == "dump":
        for name in args.row or DEFAULT_ROWS:
            _extractor(name)  # an unknown name fails before any page is scored
        found = dump(args.gold, args.row or DEFAULT_ROWS, args.workers)
        args.out.write_text(json.dumps(found), encoding="utf-8")
    elif args.command == "diff":
        before, after = (
            json.loads(p.read_text(encoding="utf-8")) for p in (args.before, args.after)
        )
        print("\n".join(diff(before, after, args.moved)))
    else:
        for set_dir in find_gold_sets(args.gold):
            print("\n".join(versus(set_dir, args.row, args.anchor, args.worst, args.cache)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

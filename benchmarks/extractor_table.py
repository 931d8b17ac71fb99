"""Issue 4's comparison table: every extractor on the three gold sets, in markdown.

Rows are jusText (the seed and reference presets), declutter, Kimatu and the
combined extractor, each through `extract()` with its shipped defaults, scored
with `corpus_crawler.evaluate` (token-shingle precision, recall and F1,
bag-of-words F1) as `corpus-crawler evaluate` scores them, plus pages/s (pages
over the sum of per-page extraction times with one worker, after an untimed
warm-up call; the machine's load shows in it, the scores do not change). The
last lines say whether the combined extractor beats each single one on every
set, which is the condition issue 4 sets for offering it.

    python benchmarks/extractor_table.py           # tests/data/gold.tar.xz, in a temp dir
    python benchmarks/extractor_table.py --gold ../shared/data/gold --lang auto
    python benchmarks/extractor_table.py --json table.json -j 2
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.evaluate import GoldSet, SetReport, evaluate_set, find_gold_sets, load_gold_set

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"
COMBINED = "combined"


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    config: ExtractConfig


CANDIDATES = (
    Candidate("justext (seed)", ExtractConfig()),
    Candidate("justext (reference)", ExtractConfig(preset=Preset.REFERENCE)),
    Candidate("declutter", ExtractConfig(extractor="declutter")),
    Candidate("kimatu", ExtractConfig(extractor="kimatu")),
    Candidate(COMBINED, ExtractConfig(extractor="combined")),
)


def _language(value: str) -> str | None:
    return None if value.lower() == "none" else value


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def detail_table(results: dict[str, dict[str, SetReport]], sets: Sequence[str]) -> list[str]:
    lines = [
        _row(["extractor", "set", "F1", "precision", "recall", "BoW F1", "pages/s"]),
        _row(["---", "---", "---:", "---:", "---:", "---:", "---:"]),
    ]
    for set_name in sets:
        for name, reports in results.items():
            report = reports[set_name]
            s = report.summary
            cells = [name, set_name, _score(s.f1), _score(s.precision), _score(s.recall)]
            cells += [_score(s.bow_f1), f"{report.pages_per_second:.1f}"]
            lines.append(_row(cells))
    return lines


def f1_table(results: dict[str, dict[str, SetReport]], sets: Sequence[str]) -> list[str]:
    lines = [
        _row(["shingle F1", *sets, "mean"]),
        _row(["---", *["---:"] * (len(sets) + 1)]),
    ]
    for name, reports in results.items():
        scores = [reports[s].summary.f1 for s in sets]
        lines.append(_row([name, *map(_score, scores), _score(sum(scores) / len(scores))]))
    return lines


def verdict(results: dict[str, dict[str, SetReport]], sets: Sequence[str]) -> list[str]:
    if COMBINED not in results or len(results) < 2:
        return []
    lines = []
    beats_all = True
    for set_name in sets:
        combined = results[COMBINED][set_name].summary.f1
        best_name, best = max(
            ((name, reports[set_name].summary.f1) for name, reports in results.items()
             if name != COMBINED),
            key=lambda item: item[1],
        )  # fmt: skip
        beats_all &= combined > best
        lines.append(
            f"- {set_name}: combined {combined:.3f}, best single {best_name} {best:.3f}"
            f" ({combined - best:+.3f})"
        )
    outcome = "beats" if beats_all else "does NOT beat"
    return [f"The combined extractor {outcome} each single extractor on every set:", *lines]


def unpack(tarball: Path, into: Path) -> Path:
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")
    return into / "gold"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--gold",
        type=Path,
        help="a gold set or a folder of them (default: tests/data/gold.tar.xz, unpacked)",
    )
    parser.add_argument("--lang", default="auto", help="language for every extractor (auto)")
    parser.add_argument("-j", "--workers", type=int, default=1, help="worker processes (1)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the scores here")
    parser.add_argument(
        "--only",
        action="append",
        choices=[c.name for c in CANDIDATES],
        help="run only this row (repeatable)",
    )
    args = parser.parse_args(argv)
    candidates = [c for c in CANDIDATES if not args.only or c.name in args.only]

    with tempfile.TemporaryDirectory(prefix="extractor-table-") as scratch:
        gold = args.gold if args.gold is not None else unpack(DEFAULT_TARBALL, Path(scratch))
        gold_sets: list[GoldSet] = [load_gold_set(path) for path in find_gold_sets(gold)]
        sets = [g.name for g in gold_sets]
        results: dict[str, dict[str, SetReport]] = {}
        started = time.perf_counter()
        for candidate in candidates:
            config = replace(candidate.config, language=_language(args.lang))
            results[candidate.name] = {}
            # Untimed first calls load stoplists, language models and option files,
            # which would otherwise be charged to the first page of the first set.
            for gold_set in gold_sets:
                extract(gold_set.pages[0].html, gold_set.pages[0].url, config)
            for gold_set in gold_sets:
                print(f"{candidate.name} on {gold_set.name}...", file=sys.stderr, flush=True)
                report = evaluate_set(gold_set, config, workers=args.workers)
                if report.errors:
                    print(f"  {report.errors} pages failed", file=sys.stderr)
                results[candidate.name][gold_set.name] = report
        elapsed = time.perf_counter() - started

    source = "tests/data/gold.tar.xz" if args.gold is None else str(args.gold)
    pages = ", ".join(f"{g.name} {len(g.pages)}" for g in gold_sets)
    print(f"Gold pages: {source} ({pages}); --lang {args.lang}; {args.workers} worker(s).\n")
    print("\n".join(detail_table(results, sets)))
    print()
    print("\n".join(f1_table(results, sets)))
    lines = verdict(results, sets)
    if lines:
        print()
        print("\n".join(lines))
    print(f"\n({elapsed:.0f} s in all)", file=sys.stderr)
    if args.json:
        data = {
            name: {
                set_name: {
                    "f1": r.summary.f1,
                    "precision": r.summary.precision,
                    "recall": r.summary.recall,
                    "bow_f1": r.summary.bow_f1,
                    "pages": r.pages,
                    "pages_per_second": r.pages_per_second,
                    "errors": r.errors,
                }
                for set_name, r in reports.items()
            }
            for name, reports in results.items()
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

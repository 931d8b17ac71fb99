"""Issues 4 and 13's comparison table: every extractor and preset on the gold sets.

Rows are jusText (the seed and reference presets), declutter, Kimatu and the
combined extractor, each through `extract()` with its shipped defaults, scored
with `corpus_crawler.evaluate` (token-shingle precision, recall and F1,
bag-of-words F1) as `corpus-crawler evaluate` scores them, plus pages/s (pages
over the sum of per-page extraction times with one worker, after an untimed
warm-up call; the machine's load shows in it, the scores do not change). The
last lines say whether the combined extractor beats each single one on every
set, which is the condition issue 4 sets for offering it.

Speed is also given as x-parse-time: the extractor's time over the time of the
bare `lxml.html.fromstring` parse of the same pages, measured in the same run
(one worker only). The speed columns come from their own timed rounds, not from
the scoring pass: set by set, `--rounds` rounds (3) in which every page goes
through the bare parse and every row in turn, each call timed by this process's
CPU clock (`--clock wall` for the wall clock): benchmarks/extract_speed.py's
`measure`. Pages/s is a row's best round; x parse is the median over rounds of its
ratio to the parse within the round. The `corpus` and `article` rows are timed a second
time with the template caches emptied before every call (`--no-cold` skips it): what a
page of a site nothing has seen costs. On a shared 2-core VM one pass per row
drifted by up to 2x between runs (the same preset at 2.3x and 5.6x the parse);
ratios within an interleaved round agree to +-0.1. Then the tuned presets
(`corpus`, `article`; with `--only`, those of the rows asked for) are
cross-validated: their container shifts are chosen by k-fold selection over a
grid (corpus_crawler.crossval), and the held-out figures are printed beside the
in-sample ones of the shipped values. `article-comments` is tuned only on a
`dragnet-with-comments` set (tools/gold_sets.py dragnet --comments), its kind.

    python benchmarks/extractor_table.py           # tests/data/gold.tar.xz, in a temp dir
    python benchmarks/extractor_table.py --gold ../shared/data/gold --lang auto
    python benchmarks/extractor_table.py --json table.json -j 2
    python benchmarks/extractor_table.py --no-tuning --rounds 5   # issue 13's speed bound
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import lxml.html

from corpus_crawler import ExtractConfig, JustextParams, Preset, dom, extract
from corpus_crawler.classify import classify_segments
from corpus_crawler.container import WALK_FIELDS, ContainerOptions, preset_passes
from corpus_crawler.crossval import cross_validate, in_sample
from corpus_crawler.decode import decode_html
from corpus_crawler.evaluate import (
    GoldSet,
    PageScore,
    SetReport,
    Summary,
    evaluate_set,
    find_gold_sets,
    load_gold_set,
    page_scores,
)
from corpus_crawler.extract import clear_template_caches, only_headings
from corpus_crawler.extractors import visible
from corpus_crawler.language_setup import choose_language, stoplist_and_params
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options
from corpus_crawler.segment import lead_elements, segment, stated_elements
from corpus_crawler.wrappers import page_furniture

# the timing of benchmarks/extract_speed.py (this folder is on the path when a script runs)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_speed import CLOCKS, PARSE, Page, measure
from extract_speed import Candidate as Timed

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"
COMBINED = "combined"
#: Issue 4's comparison: the combined extractor against each algorithm alone.
SINGLE = frozenset({"justext (seed)", "justext (reference)", "declutter", "kimatu"})


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
    Candidate("justext (corpus)", ExtractConfig(preset=Preset.CORPUS)),
    Candidate("justext (article)", ExtractConfig(preset=Preset.ARTICLE)),
    Candidate("justext (article-comments)", ExtractConfig(preset=Preset.ARTICLE_COMMENTS)),
    Candidate("combined (corpus)", ExtractConfig(extractor="combined", preset=Preset.CORPUS)),
    Candidate("combined (article)", ExtractConfig(extractor="combined", preset=Preset.ARTICLE)),
)

#: The grid the presets' shifts are chosen from (configs/extractors/presets.yaml).
#: `corpus` keeps all running text by definition, so it never demotes: its
#: outside_shift is fixed at 0.
SHIFT_GRID: dict[Preset, dict[str, tuple[object, ...]]] = {
    Preset.CORPUS: {
        "inside_shift": (1, 2, 3),
        "region_shift": (0, 1, 2),
        "outside_shift": (0,),
        "region_share": (0.0, 0.5, 0.7),
        "template_shift": (0, 1),
        # jusText's link test at readability's 0.5 in the container and region, and
        # Kimatu's function blocks kept from the lift (corpus4; both flags on/off
        # were cross-validated before function_max_length joined the grid)
        "container_link_density": (True,),
        "region_link_density": (False, True),
        "function_max_length": (0, 60, 80, 100),
        # readability's conditional cleaning of the container (corpus5; its ad
        # labels and photo credits were cross-validated on/off before they joined)
        "clean_conditionally": (False, True),
        # a long block that reads as prose moves with the container whatever its links
        "linked_prose_inside": (False, True),
        # page furniture outside the container (comment sections kept: comment_shift 0)
        "furniture_shift": (0, -1, -2),
    },
    Preset.ARTICLE: {
        "inside_shift": (1, 2, 3),
        "region_shift": (0, 1, 2),
        "outside_shift": (0, -1, -2),
        "region_share": (0.0, 0.5, 0.7),
        # readability's 0.2 against the 0.3 chosen in-sample (issue 13, article3)
        "clean_link_density": (0.2, 0.3),
    },
    # the step of a comment section outside the article (None: as `article`)
    Preset.ARTICLE_COMMENTS: {
        "comment_shift": (None, 0, 1, 2),
    },
}
#: Presets whose rows are timed cold too: they cache marks and flags per template.
COLD_PRESETS = (Preset.CORPUS, Preset.ARTICLE)
#: What each preset is tuned for: the mean F1 of these sets. A corpus takes every
#: kind of page, so `corpus` is tuned on all three; `article` on the article pages.
OBJECTIVES = {
    Preset.CORPUS: ("cleaneval-dev", "cleanportaleval", "readability"),
    Preset.ARTICLE: ("cleanportaleval", "readability"),
    # not bundled: Dragnet with its comments in the gold (tools/gold_sets.py dragnet
    # --comments); the bundled golds drop comments, so it is tuned on that set or not at all
    Preset.ARTICLE_COMMENTS: ("dragnet-with-comments",),
}
#: Presets tuned only when a set of their kind is among the gold sets.
OWN_KIND_ONLY = frozenset({Preset.ARTICLE_COMMENTS})


def _language(value: str) -> str | None:
    return None if value.lower() == "none" else value


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def detail_table(
    results: dict[str, dict[str, SetReport]],
    sets: Sequence[str],
    speed: Speed | None,
) -> list[str]:
    lines = [
        _row(["extractor", "set", "F1", "precision", "recall", "BoW F1", "pages/s", "x parse"]),
        _row(["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"]),
    ]
    for set_name in sets:
        for name, reports in results.items():
            report = reports[set_name]
            s = report.summary
            cells = [name, set_name, _score(s.f1), _score(s.precision), _score(s.recall)]
            cells.append(_score(s.bow_f1))
            if speed is None:
                # several workers: wall-clock pages/s of the scoring pass, no ratio
                cells += [f"{report.pages_per_second:.1f}", "-"]
            else:
                seconds = speed.best[name][set_name]
                cells.append(f"{report.pages / seconds:.1f}")
                cells.append(f"{speed.times_parse(name, [set_name]):.1f}")
            lines.append(_row(cells))
    return lines


def speed_table(
    results: dict[str, dict[str, SetReport]],
    sets: Sequence[str],
    speed: Speed | None,
    page_counts: Mapping[str, int],
) -> list[str]:
    """All sets together: pages/s and the time over the bare parse time."""
    pages = sum(page_counts[s] for s in sets)
    if speed is None:
        lines = [_row(["all sets (scoring pass, several workers)", "pages/s"])]
        lines.append(_row(["---", "---:"]))
        for name, reports in results.items():
            seconds = sum(reports[s].seconds for s in sets)
            lines.append(_row([name, f"{pages / seconds:.1f}"]))
        return lines
    total_parse = sum(speed.best[PARSE][s] for s in sets)
    lines = [
        _row(["all sets", "pages/s", "x parse time", f"x parse in each of {speed.rounds} rounds"]),
        _row(["---", "---:", "---:", "---"]),
        _row(["lxml.html.fromstring (bare parse)", f"{pages / total_parse:.0f}", "1.0", ""]),
    ]
    for name in results:
        seconds = sum(speed.best[name][s] for s in sets)
        each = " ".join(f"{r:.1f}" for r in speed.round_ratios(name, sets))
        ratio = f"{speed.times_parse(name, sets):.1f}"
        lines.append(_row([name, f"{pages / seconds:.1f}", ratio, each]))
    return lines


def cold_speed_table(cold: Speed, sets: Sequence[str], page_counts: Mapping[str, int]) -> list[str]:
    """The cold rows, all sets together: every call after the template caches were
    emptied, against the bare parse timed in the same rounds."""
    pages = sum(page_counts[s] for s in sets)
    lines = [
        _row(
            [
                "all sets, template caches emptied before every page",
                "pages/s",
                "x parse time",
                f"x parse in each of {cold.rounds} rounds",
            ]
        ),
        _row(["---", "---:", "---:", "---"]),
    ]
    for name in cold.seconds:
        if name == PARSE:
            continue
        seconds = sum(cold.best[name][s] for s in sets)
        each = " ".join(f"{r:.1f}" for r in cold.round_ratios(name, sets))
        ratio = f"{cold.times_parse(name, sets):.1f}"
        lines.append(_row([name, f"{pages / seconds:.1f}", ratio, each]))
    return lines


@dataclass(frozen=True, slots=True)
class Speed:
    """Seconds per row and set, from interleaved rounds: `best` is the least round,
    `times_parse` the median of the same-round ratios to the parse."""

    rounds: int
    clock: str
    #: row -> set -> the seconds of each round
    seconds: Mapping[str, Mapping[str, tuple[float, ...]]]

    @property
    def best(self) -> dict[str, dict[str, float]]:
        return {row: {s: min(t) for s, t in sets.items()} for row, sets in self.seconds.items()}

    def round_ratios(self, row: str, sets: Sequence[str]) -> list[float]:
        """The row's time over the parse's time in the same round, round by round."""
        return [
            sum(self.seconds[row][s][r] for s in sets)
            / sum(self.seconds[PARSE][s][r] for s in sets)
            for r in range(self.rounds)
        ]

    def times_parse(self, row: str, sets: Sequence[str]) -> float:
        """x parse time: the median of the same-round ratios. A best round of the
        parse and a best round of the row may come from different spells of the
        machine; a ratio within one round does not."""
        return statistics.median(self.round_ratios(row, sets))


def _parse(html: bytes, url: str | None) -> None:
    # an empty or undecodable page: the failed parse is all it costs
    with contextlib.suppress(Exception):
        lxml.html.fromstring(html)


def _extract_page(html: bytes, url: str | None, config: ExtractConfig) -> object:
    return extract(html, url, config)


def measure_speed(
    gold_sets: Sequence[GoldSet],
    configs: Mapping[str, ExtractConfig],
    rounds: int,
    clock: str = "cpu",
    before: Callable[[], object] | None = None,
) -> Speed:
    """extract_speed.measure on each set: each page goes through the bare parse and
    every row in turn (the order rotating from page to page), timed call by call.

    A slow spell of a shared machine then falls on every row alike, so the ratio
    to the parse within a round is steady even when the rounds' times are not.
    `before` runs untimed before every call (the cold rows: the template caches
    emptied, as for a page of a site nothing has seen).
    """
    timed = [Timed(PARSE, _parse)]
    timed += [
        Timed(name, functools.partial(_extract_page, config=config))
        for name, config in configs.items()
    ]
    seconds: dict[str, dict[str, tuple[float, ...]]] = {t.name: {} for t in timed}
    for gold_set in gold_sets:
        print(f"speed rounds on {gold_set.name}...", file=sys.stderr, flush=True)
        pages = [Page(gold_set.name, p.id, p.url, p.html) for p in gold_set.pages]
        for timing in measure(timed, pages, rounds, CLOCKS[clock], before):
            seconds[timing.name][gold_set.name] = timing.rounds
    return Speed(rounds=rounds, clock=clock, seconds=seconds)


# --------------------------------------------------------------------------- tuning


def _text(paragraphs: Sequence[Paragraph]) -> str:
    # what extract() keeps: nothing when only headings are GOOD (extract._finish)
    good = [p for p in paragraphs if p.final_class is ParagraphClass.GOOD]
    if only_headings(good):
        return ""
    return "\n".join(p.text for p in good)


def _preset_blocks(
    html: bytes, config: ExtractConfig, walk: ContainerOptions | None = None
) -> tuple[tuple[Paragraph, ...], JustextParams, list[int], dict[str, int], list[tuple[str, ...]]]:
    """A page's visible blocks classified as the presets classify them before
    their container pass, with each block's furniture marks (layout wrappers
    unwrapped when the options say so), the elements that state a mark and,
    per block, the elements above it named as a lead (extractors._justext up to
    the pass; both presets share these steps but for the walk options, the
    preset's or `walk`'s)."""
    root = dom.parse_page(decode_html(html, None).text, scripting=True)
    if root is None:
        return (), JustextParams(), [], {}, []
    options = walk or container_options(config.preset)
    segments = visible(
        segment(
            dom.preprocess_seed(root),
            marked=True,
            page_links_only=options is not None and options.page_links_only,
            drop_hidden_inline=options is not None and options.drop_hidden_inline,
        )
    )
    if not segments:
        return (), JustextParams(), [], {}, []
    language, _ = choose_language([s.text for s in segments], config)
    stoplist, params = stoplist_and_params(language, config)
    paragraphs = classify_segments(segments, stoplist, params)
    unwrap = options is not None and options.unwrap_layouts
    return (
        paragraphs,
        params,
        page_furniture(segments, paragraphs, unwrap),
        stated_elements(segments),
        lead_elements(segments),
    )


def grid_points(preset: Preset) -> list[tuple[tuple[str, object], ...]]:
    grid = SHIFT_GRID[preset]
    names = list(grid)
    return [
        tuple(zip(names, values, strict=True))
        for values in itertools.product(*(grid[n] for n in names))
    ]


def tuning_tables(
    gold_sets: Sequence[GoldSet],
    language: str | None,
    presets: Sequence[Preset] = tuple(OBJECTIVES),
) -> list[str]:
    """In-sample figures of the shipped presets and cross-validated ones of the grid.

    Each page's visible blocks are classified once as the presets classify them;
    `preset_passes` (the container pass, then the code pass) then runs per grid
    point on those paragraphs, which is exactly what the presets do next.
    """
    Rows = list[
        tuple[
            tuple[Paragraph, ...],
            JustextParams,
            list[int],
            dict[str, int],
            list[tuple[str, ...]],
            str,
        ]
    ]
    # the presets walk alike unless their walk options differ (article's
    # page_links_only, drop_hidden_inline): blocks once per set of walk options
    by_walk: dict[tuple[bool, ...], dict[str, Rows]] = {}

    def seeds_of(options: ContainerOptions) -> dict[str, Rows]:
        walk = tuple(getattr(options, name) for name in sorted(WALK_FIELDS))
        if walk not in by_walk:
            preset = next(p for p in OBJECTIVES if _walk_of(p) == walk)
            config = ExtractConfig(language=language, preset=preset)
            by_walk[walk] = {
                gold_set.name: [
                    (*_preset_blocks(page.html, config), page.gold) for page in gold_set.pages
                ]
                for gold_set in gold_sets
            }
        return by_walk[walk]

    page_ids = {g.name: [p.id for p in g.pages] for g in gold_sets}
    cache: dict[tuple[str, int, str], PageScore] = {}

    def scored(options: ContainerOptions) -> dict[str, list[PageScore]]:
        by_set: dict[str, list[PageScore]] = {}
        for name, rows in seeds_of(options).items():
            scores = []
            for index, (paragraphs, params, unlikely, stated, leads, gold) in enumerate(rows):
                passed = preset_passes(paragraphs, params, options, unlikely, stated, leads)
                text = _text(passed) if paragraphs else ""
                key = (name, index, text)
                if key not in cache:
                    cache[key] = page_scores(text, gold)
                scores.append(cache[key])
            by_set[name] = scores
        return by_set

    sets = [g.name for g in gold_sets]
    lines = []
    for preset in presets:
        kind = OBJECTIVES[preset]
        shipped = container_options(preset)
        assert shipped is not None
        kind_sets = [s for s in kind if s in sets] or sets
        if preset in OWN_KIND_ONLY and not set(kind) & set(sets):
            lines += [f"**{preset.value}**: not tuned here (its sets: {', '.join(kind)})", ""]
            continue
        points = grid_points(preset)
        print(f"tuning {preset.value} over {len(points)} grid points...", file=sys.stderr)
        # the shipped point first: ties go to it
        shipped_point = _point_of(shipped, preset)
        points.sort(key=lambda point: point != shipped_point)
        grid = {point: scored(_replace_options(shipped, point)) for point in points}

        def objective(summaries: Mapping[str, Summary], kind_sets: list[str] = kind_sets) -> float:
            return sum(summaries[s].f1 for s in kind_sets) / len(kind_sets)

        result = cross_validate(grid, page_ids, objective)
        shipped_scores = in_sample(scored(shipped))
        best_in_sample = max(grid, key=lambda p: objective(in_sample(grid[p])))
        lines += [
            f"**{preset.value}** (tuned for the mean of {' + '.join(kind_sets)}): shipped"
            f" {_point_text(shipped_point)}; best in-sample {_point_text(best_in_sample)};"
            f" chosen per fold: {'; '.join(_point_text(p) for p in result.chosen)}",
            "",
            _row(["shingle F1 (P / R)", *sets]),
            _row(["---", *["---:"] * len(sets)]),
            _row(["in-sample, shipped values", *(_cell(shipped_scores[s]) for s in sets)]),
            _row(
                [
                    f"cross-validated ({result.folds}-fold)",
                    *(_cell(result.held_out[s]) for s in sets),
                ]
            ),
            "",
        ]
    return lines


def _walk_of(preset: Preset) -> tuple[bool, ...]:
    options = container_options(preset)
    assert options is not None
    return tuple(getattr(options, name) for name in sorted(WALK_FIELDS))


def _cell(summary: Summary) -> str:
    return f"{summary.f1:.3f} ({summary.precision:.3f} / {summary.recall:.3f})"


def _point_of(options: ContainerOptions, preset: Preset) -> tuple[tuple[str, object], ...]:
    return tuple((name, getattr(options, name)) for name in SHIFT_GRID[preset])


def _point_text(point: Any) -> str:
    short = {
        "inside_shift": "in",
        "region_shift": "region",
        "outside_shift": "out",
        "clean_link_density": "clean",
        "template_shift": "template",
        "container_link_density": "links-in",
        "region_link_density": "links-region",
        "function_max_length": "function",
        "clean_conditionally": "cleaning",
        "linked_prose_inside": "linked-prose",
        "comment_shift": "comments",
        "furniture_shift": "furniture",
    }
    return " ".join(f"{short.get(k, 'share')} {v}" for k, v in point)


def _replace_options(
    options: ContainerOptions, point: Sequence[tuple[str, object]]
) -> ContainerOptions:
    from dataclasses import replace as _replace

    return _replace(options, **dict(point))  # type: ignore[arg-type]


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
    if COMBINED not in results or not SINGLE & results.keys():
        return []
    lines = []
    beats_all = True
    for set_name in sets:
        combined = results[COMBINED][set_name].summary.f1
        best_name, best = max(
            ((name, reports[set_name].summary.f1) for name, reports in results.items()
             if name in SINGLE),
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
        "--no-tuning", action="store_true", help="skip the presets' cross-validation"
    )
    parser.add_argument(
        "--no-cold",
        action="store_true",
        help="skip the cold speed rows (corpus and article with the template caches"
        " emptied before every page)",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=[c.name for c in CANDIDATES],
        help="run only this row (repeatable)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="timed rounds (3): pages/s from the best, x parse the median of the rounds",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="time rounds by this process's CPU time (default) or the wall clock",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
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
        speed = (
            measure_speed(
                gold_sets,
                {c.name: replace(c.config, language=_language(args.lang)) for c in candidates},
                args.rounds,
                args.clock,
            )
            if args.workers == 1
            else None
        )
        # The same rounds with the template caches emptied before every call, for the
        # rows that cache per template (the corpus and article presets): issue 13's
        # 4x bound holds for a new site's pages too, not only for a cached template.
        cold_rows = {
            f"{c.name}, cold": replace(c.config, language=_language(args.lang))
            for c in candidates
            if c.config.extractor == "justext" and c.config.preset in COLD_PRESETS
        }
        cold = (
            measure_speed(gold_sets, cold_rows, args.rounds, args.clock, clear_template_caches)
            if args.workers == 1 and cold_rows and not args.no_cold
            else None
        )
        # the presets of the rows asked for (all without --only)
        asked = {c.config.preset for c in candidates}
        tuned = [preset for preset in OBJECTIVES if preset in asked]
        tuning = (
            []
            if args.no_tuning or not tuned
            else tuning_tables(gold_sets, _language(args.lang), tuned)
        )
        elapsed = time.perf_counter() - started

    source = "tests/data/gold.tar.xz" if args.gold is None else str(args.gold)
    pages = ", ".join(f"{g.name} {len(g.pages)}" for g in gold_sets)
    timing = (
        f"speed: best of {args.rounds} interleaved rounds, {args.clock} clock"
        if speed is not None
        else "speed: the scoring pass (several workers)"
    )
    print(
        f"Gold pages: {source} ({pages}); --lang {args.lang}; {args.workers} worker(s); {timing}.\n"
    )
    print("\n".join(detail_table(results, sets, speed)))
    print()
    print("\n".join(f1_table(results, sets)))
    print()
    counts = {g.name: len(g.pages) for g in gold_sets}
    print("\n".join(speed_table(results, sets, speed, counts)))
    if cold is not None:
        print()
        print("\n".join(cold_speed_table(cold, sets, counts)))
    if tuning:
        print()
        print("\n".join(tuning))
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
                    **(
                        {}
                        if speed is None
                        else {
                            "speed_seconds": speed.seconds[name][set_name],
                            "x_parse": speed.times_parse(name, [set_name]),
                        }
                    ),
                    **(
                        {}
                        if cold is None or f"{name}, cold" not in cold.seconds
                        else {
                            "cold_speed_seconds": cold.seconds[f"{name}, cold"][set_name],
                            "cold_x_parse": cold.times_parse(f"{name}, cold", [set_name]),
                        }
                    ),
                }
                for set_name, r in reports.items()
            }
            for name, reports in results.items()
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

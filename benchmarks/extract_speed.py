"""Extraction speed on the gold pages, against baselines measured in the same run.

All pages are read into memory first; then, in this one process, the candidates
take turns page by page for several rounds (speeds are each one's best round,
ratios the median of the ratios within a round, see `measure`):

* ``lxml.html.fromstring`` alone: the parse every extractor pays (the baseline);
* jusText 3.0.2 with the English stoplist and default settings;
* ``corpus_crawler.extract()`` with each preset (language "en" and "auto") and
  each other extractor (skipped with a note when it is not implemented yet).

Then the parse and the ``corpus`` and ``article`` presets again, with the template
caches (marks of attribute sets, flags of DOM paths) emptied before every page: the
cold rows, what a page of a site nothing has seen costs (``--no-cold`` skips them).

It also checks that the reference preset's paragraphs (text and final class) are
identical to jusText's on every page. See benchmarks/README.md.

``--cli N`` adds issue 13's command-line comparison: N page files (the gold pages,
repeated) in a temporary folder, ``corpus-crawler extract FOLDER`` (the default
preset and ``--preset corpus`` / ``article``) against one Python process running
jusText 3.0.2 over the same files, each a fresh subprocess, start-up included.
``--per-file N`` runs one command per file instead, as a shell loop does, so that
start-up is paid N times: ``corpus-crawler extract FILE`` against jusText 3.0.2's own
``python -m justext -s English FILE``, in CPU seconds a file; ``--tree DIR``
(repeatable, as in crawl_startup.py) runs the commands with that checkout's code, every
tree in the same rounds (``--tree OLD --tree .``: a before and after).
``--command-line-only`` skips the in-process rows and the parity check.

    python benchmarks/extract_speed.py [--gold DIR] [--rounds 3] [--json OUT] [--profile OUT]
                                       [--cli 300] [--per-file 40 [--tree DIR ...]]
                                       [--no-cold]
                                       [--command-line-only]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import logging
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import lxml
import lxml.html

from corpus_crawler import DropReason, ExtractConfig, Preset, extract
from corpus_crawler.evaluate import GoldPage, find_gold_sets, load_gold_set
from corpus_crawler.extract import clear_template_caches

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"

PageFn = Callable[[bytes, "str | None"], object]
#: The two baselines' rows.
PARSE = "lxml.html.fromstring"
JUSTEXT = "justext 3.0.2 (English)"


@dataclass(frozen=True, slots=True)
class Page:
    set_name: str
    id: str
    url: str | None
    html: bytes


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    run: PageFn
    note: str = ""


@dataclass(frozen=True, slots=True)
class Timing:
    name: str
    pages: int
    megabytes: float
    best_seconds: float
    rounds: tuple[float, ...]
    pages_per_second: float
    mb_per_second: float
    ms_per_page: float
    #: candidate pages/s divided by jusText's: above 1 is faster than jusText
    vs_justext_speed: float | None
    #: candidate time divided by the bare parse time: 1 would cost no more than parsing
    vs_parse_time: float | None
    note: str = ""
    #: candidate time divided by the seed preset's with the same language (presets only)
    vs_seed_time: float | None = None


def load_pages(gold: Path | None, sets: Sequence[str]) -> list[Page]:
    def from_dir(root: Path) -> list[Page]:
        pages = []
        for set_dir in find_gold_sets(root):
            if sets and set_dir.name not in sets:
                continue
            pages += [_page(set_dir.name, p) for p in load_gold_set(set_dir).pages]
        return pages

    if gold is not None:
        return from_dir(gold)
    with tempfile.TemporaryDirectory(prefix="gold-") as tmp:
        with tarfile.open(DEFAULT_TARBALL) as archive:
            archive.extractall(tmp, filter="data")
        return from_dir(Path(tmp) / "gold")


def _page(set_name: str, page: GoldPage) -> Page:
    return Page(set_name=set_name, id=page.id, url=page.url, html=page.html)


def _extract_fn(config: ExtractConfig) -> PageFn:
    def run(html: bytes, url: str | None) -> object:
        return extract(html, url, config)

    return run


def build_candidates(
    pages: Sequence[Page], extractors: bool = True
) -> tuple[list[Candidate], list[str]]:
    """Baselines first, then every extract() config that works.

    Each config first runs once over all pages (untimed): one that fails on every
    page (not implemented yet) is skipped, one that fails on some is kept with a note.
    """
    import justext

    stoplist = justext.get_stoplist("English")
    candidates = [
        Candidate(PARSE, lambda html, url: lxml.html.fromstring(html)),
        Candidate(JUSTEXT, lambda html, url: justext.justext(html, stoplist)),
    ]
    configs: list[tuple[str, ExtractConfig]] = [
        (f"extract {preset.value} lang={language}", ExtractConfig(preset=preset, language=language))
        for preset in Preset
        for language in ("en", "auto")
    ]
    configs += [
        (f"extract {extractor} lang=auto", ExtractConfig(extractor=extractor))
        for extractor in ("declutter", "kimatu", "combined")
        if extractors
    ]
    notes = []
    for name, config in configs:
        failures = [
            document.drop_detail
            for document in (extract(p.html, p.url, config) for p in pages)
            if document.drop_reason is DropReason.EXTRACTOR_ERROR
        ]
        if len(failures) == len(pages):
            notes.append(f"{name}: skipped, fails on every page ({failures[0]})")
            continue
        note = f"failed on {len(failures)} of {len(pages)} pages" if failures else ""
        if note:
            notes.append(f"{name}: {note} ({failures[0]}); its speed is not meaningful")
        candidates.append(Candidate(name, _extract_fn(config), note))
    return candidates, notes


#: What a round's time is: the wall clock, or this process's CPU time. On a shared
#: machine the wall clock also counts the time other processes held the core
#: (with load 10 on 2 cores, most of it); extraction is one thread, so its CPU
#: time is its work.
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def interleaved_rounds(
    calls: Mapping[str, Callable[[int], object]],
    items: int,
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
    warm: Callable[[int], object] | None = None,
) -> dict[str, list[float]]:
    """Each round, item 0..items-1 goes through every call in turn, the first call
    rotating from item to item, each call timed on its own; the seconds each call
    spent in each round, by name. The benchmarks that compare costs (this one,
    extractor_table, container_pass_cost, pagedate_cost) share it, so a slow spell
    of a shared machine falls on every candidate of a round alike.

    `warm(index)`, when given, runs untimed before each call: calls that read data
    built beforehand (a classified page) then all find it in the CPU's caches, as in
    a real extraction, whatever call ran before them (a parse before a pass on
    classified blocks leaves the caches cold and made that pass look 20% dearer)."""
    names = list(calls)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(1, rounds + 1):
        gc.collect()
        spent = dict.fromkeys(names, 0.0)
        for index in range(items):
            turn = index % len(names)
            for name in [*names[turn:], *names[:turn]]:
                if warm is not None:
                    warm(index)
                start = clock()
                calls[name](index)
                spent[name] += clock() - start
        for name, elapsed in spent.items():
            seconds[name].append(elapsed)
        print(
            f"  round {round_number}/{rounds}: "
            + ", ".join(f"{name} {elapsed:.2f} s" for name, elapsed in spent.items()),
            file=sys.stderr,
            flush=True,
        )
    return seconds


def median_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """The median over rounds of one round's ratio (the rounds of `interleaved_rounds`)."""
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=True))


def measure(
    candidates: Sequence[Candidate],
    pages: Sequence[Page],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
    before: Callable[[], object] | None = None,
) -> list[Timing]:
    """`rounds` rounds, each interleaved page by page: every page goes through each
    candidate in turn (the order rotating from page to page), timed call by call
    (`interleaved_rounds`).

    Speeds (pages/s, MB/s, ms/page) are each candidate's best round. The ratios
    (x jusText speed, x parse time, x seed time) are the median over rounds of the
    ratio within one round: a slow spell of a shared machine falls on every
    candidate of a round alike, where best rounds may come from different spells
    (one pass per candidate put the same preset at 3.6x and 5.0x the parse).

    `before()`, when given, runs untimed before every call (`cold`: the template
    caches emptied, so that every page is a new site's).
    """

    def call(candidate: Candidate) -> Callable[[int], object]:
        return lambda index: candidate.run(pages[index].html, pages[index].url)

    warm = None if before is None else (lambda index: before())
    seconds = interleaved_rounds(
        {c.name: call(c) for c in candidates}, len(pages), rounds, clock, warm
    )
    megabytes = sum(len(p.html) for p in pages) / 1e6

    def ratio(name: str, baseline: str | None) -> float | None:
        if baseline is None or name not in seconds or baseline not in seconds:
            return None
        return median_ratio(seconds[name], seconds[baseline])

    timings = []
    for candidate in candidates:
        b = min(seconds[candidate.name])
        justext_ratio = ratio(JUSTEXT, candidate.name)
        timings.append(
            Timing(
                name=candidate.name,
                pages=len(pages),
                megabytes=megabytes,
                best_seconds=b,
                rounds=tuple(seconds[candidate.name]),
                pages_per_second=len(pages) / b,
                mb_per_second=megabytes / b,
                ms_per_page=1000 * b / len(pages),
                vs_justext_speed=justext_ratio,
                vs_parse_time=ratio(candidate.name, PARSE),
                note=candidate.note,
                vs_seed_time=ratio(candidate.name, _seed_of(candidate.name)),
            )
        )
    return timings


#: The presets timed again with cold caches (`cold_candidates`): a crawl's default
#: and the two a profile chooses between.
COLD_PRESETS = (Preset.CORPUS, Preset.ARTICLE)


def cold_candidates() -> list[Candidate]:
    """The parse and `COLD_PRESETS` (language "en"), to be timed with the template
    caches emptied before every page (`measure(before=clear_template_caches)`).

    The warm rows find most pages' attribute sets and DOM paths cached from the
    earlier pages of their site (the gold sets hold a few pages per site, and every
    round after the first meets them all again). A broad crawl meets new templates
    all the time, and a template with an id per element misses on every element;
    the cold rows are the price of a page whose template nothing has seen."""
    return [
        Candidate(PARSE, lambda html, url: lxml.html.fromstring(html)),
        *(
            Candidate(
                f"extract {preset.value} lang=en cold",
                _extract_fn(ExtractConfig(preset=preset, language="en")),
            )
            for preset in COLD_PRESETS
        ),
    ]


def _seed_of(name: str) -> str | None:
    """ "extract corpus lang=en" -> "extract seed lang=en", its row of the same run."""
    parts = name.split()
    presets = {preset.value for preset in Preset}
    if len(parts) != 3 or parts[0] != "extract" or parts[1] not in presets:
        return None
    return f"extract seed {parts[2]}"


def reference_parity(pages: Sequence[Page]) -> tuple[int, list[str]]:
    """Pages where the reference preset's (text, final class) list differs from jusText's."""
    import justext

    stoplist = justext.get_stoplist("English")
    config = ExtractConfig(preset=Preset.REFERENCE, language="en")
    differing = []
    for page in pages:
        expected = [(p.text, p.class_type) for p in justext.justext(page.html, stoplist)]
        document = extract(page.html, page.url, config)
        got = [(p.text, p.final_class.value) for p in document.paragraphs]
        if got != expected:
            differing.append(f"{page.set_name}/{page.id}")
    return len(differing), differing


def profile(pages: Sequence[Page], out: Path) -> None:
    run = _extract_fn(ExtractConfig())
    profiler = cProfile.Profile()
    profiler.enable()
    for page in pages:
        run(page.html, page.url)
    profiler.disable()
    profiler.dump_stats(str(out))
    print(f"\ncProfile of extract() with ExtractConfig() saved to {out}; top 25 by cumulative:")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


#: jusText 3.0.2 over the files named on the command line, in one process, as a
#: user would script it: English stoplist, defaults, the good paragraphs printed.
_JUSTEXT_SCRIPT = """
import sys
import justext

stoplist = justext.get_stoplist("English")
out = sys.stdout
for name in sys.argv[1:]:
    with open(name, "rb") as page:
        html = page.read()
    for paragraph in justext.justext(html, stoplist):
        if not paragraph.is_boilerplate:
            out.write(paragraph.text + "\\n")
"""


@dataclass(frozen=True, slots=True)
class CliTiming:
    name: str
    files: int
    best_seconds: float
    rounds: tuple[float, ...]
    #: jusText's best time divided by this one's: above 1 is faster than jusText
    vs_justext_speed: float


def cli_speed(pages: Sequence[Page], files: int, rounds: int, cpu: bool = False) -> list[CliTiming]:
    """`corpus-crawler extract FOLDER` against jusText 3.0.2 on the same files.

    Each command is a fresh process (start-up and imports included, as for a user
    in a shell), its output thrown away; round-robin, best of `rounds` kept.
    With `cpu`, a round's time is the command's CPU time (user + system, from
    getrusage of the finished child) instead of the wall clock.
    """
    env = _checkout_env(ROOT)
    with tempfile.TemporaryDirectory(prefix="extract-cli-") as tmp:
        folder = Path(tmp)
        names = []
        for index in range(files):
            page = pages[index % len(pages)]
            path = folder / f"{index:05d}-{page.set_name}-{page.id}.html"
            path.write_bytes(page.html)
            names.append(str(path))
        extract = [sys.executable, "-m", "corpus_crawler.cli", "extract"]
        commands = {
            "justext 3.0.2 (English), one process": [
                sys.executable,
                "-c",
                _JUSTEXT_SCRIPT,
                *names,
            ],
            "corpus-crawler extract (default)": [*extract, tmp],
            "corpus-crawler extract --preset corpus": [*extract, "--preset", "corpus", tmp],
            "corpus-crawler extract --preset article": [*extract, "--preset", "article", tmp],
        }
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        for round_number in range(1, rounds + 1):
            for name, command in commands.items():
                start = time.perf_counter()
                used = _children_cpu()
                finished = subprocess.run(
                    command,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    timeout=3600,
                )
                if finished.returncode != 0:
                    sys.stderr.buffer.write(finished.stderr)
                    raise SystemExit(f"{name} failed with exit status {finished.returncode}")
                elapsed = _children_cpu() - used if cpu else time.perf_counter() - start
                seconds[name].append(elapsed)
                print(
                    f"  round {round_number}/{rounds} {name}: {elapsed:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
    justext_best = min(seconds["justext 3.0.2 (English), one process"])
    return [
        CliTiming(name, files, min(values), tuple(values), justext_best / min(values))
        for name, values in seconds.items()
    ]


def _checkout_env(tree: Path, bytecode: bool = False) -> dict[str, str]:
    """This environment with `tree`'s code first on the path: the package may be run
    from a checkout rather than installed. `bytecode`: modules load from their cached
    bytecode, as on a user's machine, whatever PYTHONDONTWRITEBYTECODE says here."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def per_file_speed(
    pages: Sequence[Page], files: int, rounds: int, trees: Sequence[Path] = (ROOT,)
) -> list[CliTiming]:
    """One command per page file, as a shell loop runs them: start-up paid on every
    file (issue 13). jusText 3.0.2's own command line (`python -m justext -s English
    FILE`) is the baseline, run interleaved in the same rounds. Times are the CPU time
    (user + system) of the finished commands, per file; best of `rounds`.

    `trees`: the checkouts whose code runs our commands (an older commit, its
    extensions built or copied in, beside this one: a before and after measured in the
    same rounds); with more than one, each row names its tree."""

    extract = [sys.executable, "-m", "corpus_crawler.cli", "extract"]
    baseline = "python -m justext -s English FILE"
    ours = {
        "corpus-crawler extract FILE (default)": extract,
        "corpus-crawler extract --preset corpus FILE": [*extract, "--preset", "corpus"],
        "corpus-crawler extract --lang en --preset corpus FILE": [
            *extract,
            "--lang",
            "en",
            "--preset",
            "corpus",
        ],
    }
    commands = {
        baseline: (
            [sys.executable, "-m", "justext", "-s", "English"],
            _checkout_env(ROOT, bytecode=True),
        )
    }
    for name, command in ours.items():
        for tree in trees:
            label = name if len(trees) == 1 else f"{name} [{tree}]"
            commands[label] = (command, _checkout_env(tree, bytecode=True))
    with tempfile.TemporaryDirectory(prefix="extract-per-file-") as tmp:
        names = []
        for index in range(files):
            page = pages[index * max(1, len(pages) // files) % len(pages)]
            path = Path(tmp) / f"{index:05d}-{page.set_name}-{page.id}.html"
            path.write_bytes(page.html)
            names.append(str(path))
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        for round_number in range(1, rounds + 1):
            for name, (command, env) in commands.items():
                used = _children_cpu()
                for file_name in names:
                    # a page that keeps nothing exits 1; only a crash (2 and up) is an error
                    # (cwd: the temporary folder, so that `-m` finds no checkout there)
                    finished = subprocess.run(
                        [*command, file_name],
                        env=env,
                        cwd=tmp,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE,
                        timeout=600,
                    )
                    if finished.returncode not in (0, 1):
                        sys.stderr.buffer.write(finished.stderr)
                        raise SystemExit(f"{name} failed on {file_name}")
                seconds[name].append((_children_cpu() - used) / files)
                print(
                    f"  round {round_number}/{rounds} {name}: {seconds[name][-1]:.3f} s a file",
                    file=sys.stderr,
                    flush=True,
                )
    justext_best = min(seconds[baseline])
    return [
        CliTiming(name, files, min(values), tuple(values), justext_best / min(values))
        for name, values in seconds.items()
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def format_cli_timings(timings: Sequence[CliTiming], digits: int = 2) -> str:
    width = max(len(t.name) for t in timings)
    lines = [f"{'command'.ljust(width)}  best s  x jusText speed  rounds (s)"]
    lines += [
        f"{t.name.ljust(width)}  {t.best_seconds:6.{digits}f}  {t.vs_justext_speed:14.2f}  "
        + " ".join(f"{r:.{digits}f}" for r in t.rounds)
        for t in timings
    ]
    return "\n".join(lines)


def format_timings(timings: Sequence[Timing]) -> str:
    header = [
        "candidate",
        "pages/s",
        "MB/s",
        "ms/page",
        "x jusText speed",
        "x parse time",
        "x seed time",
    ]
    rows = [
        [
            t.name + (" (!)" if t.note else ""),
            f"{t.pages_per_second:.1f}",
            f"{t.mb_per_second:.2f}",
            f"{t.ms_per_page:.2f}",
            "-" if t.vs_justext_speed is None else f"{t.vs_justext_speed:.2f}",
            "-" if t.vs_parse_time is None else f"{t.vs_parse_time:.2f}",
            "-" if t.vs_seed_time is None else f"{t.vs_seed_time:.2f}",
        ]
        for t in timings
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        )
        for r in [header, *rows]
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--gold", type=Path, help="a gold set or folder of sets (default: tests/data/gold.tar.xz)"
    )
    parser.add_argument("--sets", nargs="*", default=[], help="only these set names")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved rounds (3): speeds from the best, ratios the median of the rounds",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="save the results as JSON")
    parser.add_argument(
        "--profile", type=Path, metavar="OUT", help="also dump cProfile stats of extract() here"
    )
    parser.add_argument("--no-parity", action="store_true", help="skip the jusText parity check")
    parser.add_argument(
        "--cli",
        type=int,
        metavar="FILES",
        default=0,
        help="also time `corpus-crawler extract` on this many page files against jusText"
        " 3.0.2 in one process (issue 13 measured 300)",
    )
    parser.add_argument(
        "--per-file",
        type=int,
        metavar="FILES",
        default=0,
        help="also time one `corpus-crawler extract FILE` per page file (start-up paid on"
        " each, as in a shell loop) against `python -m justext` per file, in CPU time",
    )
    parser.add_argument(
        "--tree",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="with --per-file: run the commands with this checkout's code (repeatable:"
        " every tree in the same rounds, e.g. --tree OLD --tree . for a before and after)",
    )
    parser.add_argument(
        "--command-line-only",
        action="store_true",
        help="only the --cli and --per-file commands (no in-process rows, no parity check)",
    )
    parser.add_argument(
        "--presets-only",
        action="store_true",
        help="time the jusText presets only (not declutter, kimatu, combined: the slow ones)",
    )
    parser.add_argument(
        "--no-cold",
        action="store_true",
        help="skip the cold rows (the corpus and article presets with the template"
        " caches emptied before every page)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="time rounds by the wall clock (default) or by CPU time, steadier on a"
        " machine shared with other work",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.cli < 0:
        parser.error("--cli must be a number of files (0: off)")
    if args.per_file < 0:
        parser.error("--per-file must be a number of files (0: off)")
    for tree in args.tree:
        if not (tree / "corpus_crawler").is_dir():
            parser.error(f"--tree {tree}: not a checkout (no corpus_crawler/ in it)")

    # extract() logs each failing page with a traceback; that would be timed too
    logging.getLogger("corpus_crawler").setLevel(logging.ERROR)
    pages = load_pages(args.gold, args.sets)
    if not pages:
        parser.error("no pages found")
    megabytes = sum(len(p.html) for p in pages) / 1e6
    import justext  # noqa: F401  (imported before timing so its import cost is not measured)

    print(
        f"{len(pages)} pages, {megabytes:.1f} MB of HTML; python {platform.python_version()},"
        f" lxml {'.'.join(map(str, lxml.etree.LXML_VERSION))}, best of {args.rounds} rounds,"
        f" {args.clock} clock"
    )
    timings: list[Timing] = []
    skipped: list[str] = []
    if not args.command_line_only:
        candidates, skipped = build_candidates(pages, extractors=not args.presets_only)
        for note in skipped:
            print(f"note: {note}")
        timings = measure(candidates, pages, args.rounds, CLOCKS[args.clock])
        print()
        print(format_timings(timings))

    cold: list[Timing] = []
    if not args.no_cold and not args.command_line_only:
        print("\ncold: the template caches emptied before every page (a new site's page)")
        cold = measure(
            cold_candidates(), pages, args.rounds, CLOCKS[args.clock], clear_template_caches
        )
        print(format_timings(cold))

    parity: dict[str, Any] | None = None
    if not args.no_parity and not args.command_line_only:
        try:
            count, differing = reference_parity(pages)
        except Exception as exc:
            print(f"\nparity check skipped: reference preset failed ({type(exc).__name__}: {exc})")
        else:
            parity = {"pages": len(pages), "differing": count, "differing_pages": differing}
            print(f"\nreference preset vs jusText 3.0.2: {count} of {len(pages)} pages differ")
            for name in differing[:10]:
                print(f"  {name}")

    cli: list[CliTiming] = []
    if args.cli:
        print(
            f"\ncommand line, {args.cli} page files, best of {args.rounds} rounds,"
            f" {args.clock} clock:"
        )
        cli = cli_speed(pages, args.cli, args.rounds, cpu=args.clock == "cpu")
        print(format_cli_timings(cli))

    per_file: list[CliTiming] = []
    if args.per_file:
        print(
            f"\none command per file, {args.per_file} page files, best of {args.rounds}"
            " rounds, CPU seconds a file:"
        )
        trees = [tree.resolve() for tree in args.tree] or [ROOT]
        per_file = per_file_speed(pages, args.per_file, args.rounds, trees)
        print(format_cli_timings(per_file, digits=3))

    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")

    if args.profile:
        try:
            profile(pages, args.profile)
        except Exception as exc:
            print(f"\nprofile skipped: extract() failed ({type(exc).__name__}: {exc})")

    if args.json:
        payload = {
            "pages": len(pages),
            "megabytes": megabytes,
            "rounds": args.rounds,
            "clock": args.clock,
            "python": platform.python_version(),
            "timings": [asdict(t) for t in timings],
            "cold_timings": [asdict(t) for t in cold],
            "skipped": skipped,
            "reference_parity": parity,
            "cli": [asdict(t) for t in cli],
            "per_file": [asdict(t) for t in per_file],
            "load_average": os.getloadavg(),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

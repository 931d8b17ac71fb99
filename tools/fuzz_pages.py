"""Fuzz the page path of a crawl: generated and mutated pages through `extract()` and the
link extractor (`pipelines.worker.extract_links`), as an extraction worker runs them.

    python tools/fuzz_pages.py                       # 100,000 pages, seed 0
    python tools/fuzz_pages.py --pages 1000 --seed 7 --gold tests/data/gold

Every page must come back without an exception (and without `extract()`'s own
`extractor-error` drop, which is how it reports an internal exception), within
`--max-seconds` and `--max-mb` of Python heap (tracemalloc peak) per page. The
script prints the worst cases and exits 1 on any failure; CI runs 1,000 pages
(tests/test_hostile_fuzz.py).

Pages: tag soup from a grammar of HTML elements, attributes, entities and
broken markup; then mutations (byte flips, cuts, splices, repeated chunks,
deep nesting, huge attributes and URLs, hostile `<base>`/meta-refresh/href
values, wrong encodings and BOMs). With `--gold`, pages of a folder of real HTML
(e.g. the unpacked gold set) are mutated too. The pages take turns through four
extractions (CONFIGS): `seed`, `reference`, and the `corpus` and `article` presets with
their marked walk and container pass.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

from corpus_crawler.config import ExtractConfig, Preset  # noqa: E402
from corpus_crawler.extract import extract  # noqa: E402
from corpus_crawler.model import DropReason  # noqa: E402
from pipelines.worker import extract_links  # noqa: E402

TAGS = (  # noqa: SIM905 - a word list reads better than 54 lines of quotes
    "html head body title meta p div span a b i em strong h1 h2 h3 ul ol li table tr td th"
    " select option textarea form input button script style iframe br img pre blockquote"
    " noscript svg math template frameset frame object base link area map center font dl dt"
    " dd xmp plaintext"
).split()
ATTRIBUTES = (
    "",
    " class=x",
    ' href="/a"',
    " href='../../b?c=d&e=f'",
    ' href="javascript:alert(1)"',
    ' href="data:text/html,<p>x</p>"',
    ' href="http://[::1]:80/"',
    ' href="http://user:pass@host:99999/"',
    ' href="//example.org/x"',
    ' href="mailto:a@b"',
    ' href="http://xn--n3h.com/%zz"',
    ' href="\x00\x01"',
    ' rel="nofollow"',
    ' http-equiv="refresh" content="0; url=/next"',
    ' http-equiv="refresh" content="0;URL=\'javascript:x\'"',
    ' name="robots" content="nofollow"',
    ' charset="utf-16"',
    ' http-equiv="content-type" content="text/html; charset=koi8-r"',
    ' style="x' + "y" * 200 + '"',
)
SNIPPETS = (
    "<br>",
    "</p>",
    "</div>",
    "&nbsp;",
    "&#0;",
    "&#xD800;",
    "&#x110000;",
    "&amp;copy;",
    "&bogus;",
    "<!--",
    "-->",
    "<![CDATA[x]]>",
    "<?php x ?>",
    "<!DOCTYPE html>",
    '<?xml version="1.0" encoding="utf-16"?>',
    "<",
    ">",
    "&",
    "\x00",
    "\r\n",
    "\ufeff",
    "\u2028",
    "The text of a paragraph, with enough words to be a sentence of the corpus.",
    "Home | News | Contact",
)
WORDS = ("the", "of", "and", "a", "to", "in", "is", "was", "it", "for", "on", "that", "with")
ENCODINGS = ("utf-8", "cp1250", "cp1251", "shift_jis", "utf-16", "latin-1", "gb18030")
BOMS = (b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
CHARSETS = (None, "utf-8", "iso-8859-1", "utf-16", "x-unknown", "", "shift_jis", "utf-7")


def _soup(rng: random.Random, budget: int) -> str:
    parts: list[str] = []
    depth = 0
    stack: list[str] = []
    for _ in range(budget):
        choice = rng.random()
        if choice < 0.35 and depth < 40:
            tag = rng.choice(TAGS)
            parts.append(f"<{tag}{rng.choice(ATTRIBUTES)}>")
            stack.append(tag)
            depth += 1
        elif choice < 0.55 and stack:
            parts.append(f"</{stack.pop()}>")
            depth -= 1
        elif choice < 0.75:
            parts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))))
        else:
            parts.append(rng.choice(SNIPPETS))
    return "".join(parts)


def generated(rng: random.Random) -> tuple[bytes, str, str | None]:
    soup = _soup(rng, rng.randint(1, 400))
    encoding = rng.choice(ENCODINGS)
    data = rng.choice(BOMS) + soup.encode(encoding, "replace")
    return data, f"soup/{encoding}", rng.choice(CHARSETS)


def _flip(rng: random.Random, data: bytearray) -> str:
    for _ in range(rng.randint(1, 50)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return "flip"


def _cut(rng: random.Random, data: bytearray) -> str:
    del data[rng.randint(0, len(data)) :]
    return "cut"


def _splice(rng: random.Random, data: bytearray) -> str:
    at = rng.randint(0, len(data))
    data[at:at] = rng.randbytes(rng.randint(1, 300))
    return "splice"


def _repeat(rng: random.Random, data: bytearray) -> str:
    if not data:
        return "repeat-empty"
    start = rng.randrange(len(data))
    chunk = bytes(data[start : start + rng.randint(1, 200)])
    at = rng.randint(0, len(data))
    data[at:at] = chunk * rng.randint(2, 500)
    return "repeat"


def _nest(rng: random.Random, data: bytearray) -> str:
    tag = rng.choice((b"div", b"b", b"table", b"a", b"p", b"li", b"span"))
    count = rng.randint(100, 5_000)
    at = rng.randint(0, len(data))
    data[at:at] = (b"<" + tag + b">") * count
    return f"nest-{tag.decode()}-{count}"


def _huge_value(rng: random.Random, data: bytearray) -> str:
    at = rng.randint(0, len(data))
    kind = rng.choice(("href", "attr", "base", "refresh"))
    filler = b"x" * rng.randint(1000, 100_000)
    element = {
        "href": b'<a href="http://example.org/' + filler + b'">x</a>',
        "attr": b'<p title="' + filler + b'">text</p>',
        "base": b'<base href="http://' + filler[:300] + b'.example/">',
        "refresh": b'<meta http-equiv="refresh" content="0;url=' + filler + b'">',
    }[kind]
    data[at:at] = element
    return f"huge-{kind}"


def _many_links(rng: random.Random, data: bytearray) -> str:
    count = rng.randint(500, 5_000)
    links = b"".join(b'<a href="/p%d?q=%d">%d</a>' % (i, i, i) for i in range(count))
    data.extend(links)
    return f"links-{count}"


def _open_raw(rng: random.Random, data: bytearray) -> str:
    """An element that libxml2 lets run past its end (repair.py mends these)."""
    kind = rng.choice(("title", "noscript", "noscript-many"))
    element = {
        "title": b"<title>" + rng.randbytes(rng.randint(0, 40)).replace(b"<", b"") + b"\n<p>",
        "noscript": b'<noscript><div id="w"><span></noscript>',
        "noscript-many": b"<noscript><div></noscript>x" * rng.randint(10, 3_000),
    }[kind]
    at = rng.randint(0, len(data))
    data[at:at] = element
    return f"open-{kind}"


MUTATIONS: tuple[Callable[[random.Random, bytearray], str], ...] = (
    _flip,
    _cut,
    _splice,
    _repeat,
    _nest,
    _huge_value,
    _many_links,
    _open_raw,
)


def mutated(
    rng: random.Random, seeds: list[bytes], base: tuple[bytes, str, str | None]
) -> tuple[bytes, str, str | None]:
    if seeds and rng.random() < 0.5:
        index = rng.randrange(len(seeds))
        data, name, charset = bytearray(seeds[index]), f"gold[{index}]", rng.choice(CHARSETS)
    else:
        raw, name, charset = base
        data = bytearray(raw)
    steps = [rng.choice(MUTATIONS)(rng, data) for _ in range(rng.randint(1, 3))]
    return bytes(data), f"{name}+{'+'.join(steps)}", charset


def pages(
    count: int, seed: int, seeds: list[bytes]
) -> Iterator[tuple[int, bytes, str, str | None]]:
    rng = random.Random(seed)
    for number in range(count):
        base = generated(rng)
        yield (number, *(base if rng.random() < 0.4 else mutated(rng, seeds, base)))


@dataclass
class Case:
    number: int
    name: str
    size: int
    #: CPU seconds (process time).
    seconds: float
    heap_mb: float
    wall_seconds: float = 0.0


@dataclass
class FuzzReport:
    pages: int = 0
    failures: list[str] = field(default_factory=list)
    slowest: Case | None = None
    largest: Case | None = None
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [f"{self.pages} pages in {self.seconds:.1f} s, {len(self.failures)} failures"]
        for label, case in (("slowest", self.slowest), ("most memory", self.largest)):
            if case is not None:
                lines.append(
                    f"  {label}: page {case.number} ({case.name}, {case.size:,} bytes):"
                    f" {case.seconds * 1000:.1f} ms CPU ({case.wall_seconds * 1000:.1f} ms wall),"
                    f" {case.heap_mb:.1f} MB heap"
                )
        lines.extend(f"  FAILED {failure}" for failure in self.failures[:20])
        return "\n".join(lines)


#: The pages take turns: the library's default, jusText's, and the three presets with
#: a container pass (`corpus` is what a crawl's workers run by default).
CONFIGS = (
    ExtractConfig(language="auto", preset=Preset.SEED),
    ExtractConfig(language="en", preset=Preset.REFERENCE),
    ExtractConfig(language="auto", preset=Preset.CORPUS),
    ExtractConfig(language="en", preset=Preset.ARTICLE),
    ExtractConfig(language="auto", preset=Preset.ARTICLE_COMMENTS),
)


def run(
    count: int,
    seed: int = 0,
    *,
    seeds: list[bytes] | None = None,
    max_seconds: float = 10.0,
    max_mb: float = 200.0,
    progress: Callable[[FuzzReport], None] | None = None,
) -> FuzzReport:
    """Fuzz `count` pages; every failure and bound exceeded is in the report."""
    report = FuzzReport()
    started = time.perf_counter()
    for config in CONFIGS:  # stoplists and the language indexes load once, outside the bounds
        extract(b"<p>warm up the caches</p>", "http://fuzz.test/", config)
        # undeclared Latin bytes: the decoder's code-page scorer builds its word index
        extract("<p>le caf\xe9 est tr\xe8s bon</p>".encode("latin-1"), "http://fuzz.test/", config)
    try:
        for number, data, name, charset in pages(count, seed, seeds or []):
            config = CONFIGS[number % len(CONFIGS)]
            url = f"http://fuzz.test/{number}/page.html"
            # traced from here: the page's own allocations (making the pages under
            # tracemalloc cost more than a sixth of the run)
            tracemalloc.start()
            start, cpu_start = time.perf_counter(), time.process_time()
            try:
                doc = extract(data, url, config, http_charset=charset)
                links, _nofollow = extract_links(data, url, charset, doc.encoding or None)
                if doc.drop_reason is DropReason.EXTRACTOR_ERROR:
                    report.failures.append(f"page {number} ({name}): {doc.drop_detail}")
                if any(not link[:8].lower().startswith(("http://", "https://")) for link in links):
                    report.failures.append(f"page {number} ({name}): a non-http(s) link")
            except Exception as exc:  # the point of the exercise
                report.failures.append(f"page {number} ({name}): {type(exc).__name__}: {exc}")
            # CPU time, not wall time: on a shared machine the wall clock also counts
            # other processes; the bound is about this page's own cost
            seconds = time.process_time() - cpu_start
            heap = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            case = Case(number, name, len(data), seconds, heap, time.perf_counter() - start)
            if report.slowest is None or seconds > report.slowest.seconds:
                report.slowest = case
            if report.largest is None or heap > report.largest.heap_mb:
                report.largest = case
            if seconds > max_seconds:
                report.failures.append(f"page {number} ({name}): {seconds:.1f} s CPU")
            if heap > max_mb:
                report.failures.append(f"page {number} ({name}): {heap:.0f} MB heap")
            report.pages += 1
            if progress is not None and report.pages % 1000 == 0:
                report.seconds = time.perf_counter() - started
                progress(report)
    finally:
        tracemalloc.stop()
    report.seconds = time.perf_counter() - started
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gold", type=Path, help="a folder of real HTML pages to mutate too")
    parser.add_argument("--max-seconds", type=float, default=10.0, help="CPU seconds per page")
    parser.add_argument("--max-mb", type=float, default=200.0, help="Python heap per page")
    args = parser.parse_args(argv)
    seeds = [p.read_bytes() for p in sorted(args.gold.rglob("*.html"))] if args.gold else []

    def progress(report: FuzzReport) -> None:
        # the running worst cases, so that a long run can be read while it goes
        print(report.summary().replace("\n", " |"), file=sys.stderr, flush=True)

    report = run(
        args.pages,
        args.seed,
        seeds=seeds,
        max_seconds=args.max_seconds,
        max_mb=args.max_mb,
        progress=progress,
    )
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())

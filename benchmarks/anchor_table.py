"""Issue 13's anchors beside our presets, on any gold set, in one run and one scorer.

    pip install -e '.[anchors]'
    python benchmarks/anchor_table.py --gold ../shared/data/gold
    python benchmarks/anchor_table.py --gold /data/held-out   # tools/gold_sets.py lays them out

The anchors are run at their defaults, as `../shared/data/README.md` measured them:
jusText 3.0.2 with the English stoplist and without a stoplist (its mode for a
language that has none, as Chinese, Japanese and Thai), trafilatura (`extract(html, url=url)`),
readability-lxml (`Document(html).summary()`, its text content) and resiliparse
(`extract_plain_text(..., main_content=True)` on the bytes decoded by its own
detector). An anchor whose package is missing is named with the package to install.
Every output is scored by `corpus_crawler.evaluate` (token-shingle F1, macro
precision and recall), the scorer of `corpus-crawler evaluate`, and a failing page is
an empty output, counted in the `errors` column. pages/s is each tool's own time
over the same pages in this process (wall clock: compare within one run).
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from corpus_crawler import ExtractConfig, Preset
from corpus_crawler.evaluate import (
    ExtractFn,
    SetReport,
    evaluate_set,
    find_gold_sets,
    load_gold_set,
)


def _justext(stoplist_name: str | None) -> ExtractFn:
    """jusText 3.0.2 with a stoplist, or in its own mode for a language without one
    (`-s None`: no stoplist, stop-word thresholds 0)."""
    import justext

    stoplist: frozenset[str]
    if stoplist_name is None:
        stoplist, thresholds = frozenset(), {"stopwords_low": 0, "stopwords_high": 0}
    else:
        stoplist, thresholds = justext.get_stoplist(stoplist_name), {}

    def run(html: bytes, url: str | None) -> str:
        paragraphs = justext.justext(html, stoplist, **thresholds)
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return run


def _trafilatura() -> ExtractFn:
    import trafilatura

    def run(html: bytes, url: str | None) -> str:
        return trafilatura.extract(html, url=url) or ""

    return run


def _readability() -> ExtractFn:
    import lxml.html
    from readability import Document

    def run(html: bytes, url: str | None) -> str:
        summary = Document(html).summary()
        return str(lxml.html.fromstring(summary).text_content()) if summary.strip() else ""

    return run


def _resiliparse() -> ExtractFn:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    def run(html: bytes, url: str | None) -> str:
        text = bytes_to_str(html, detect_encoding(html) or "utf-8")
        return str(extract_plain_text(text, main_content=True))

    return run


#: name -> (factory, the package that provides it)
ANCHORS: dict[str, tuple[Callable[[], ExtractFn], str]] = {
    "jusText 3.0.2 (English)": (lambda: _justext("English"), "justext==3.0.2"),
    "jusText 3.0.2 (no stoplist)": (lambda: _justext(None), "justext==3.0.2"),
    "trafilatura": (_trafilatura, "trafilatura"),
    "readability-lxml": (_readability, "readability-lxml"),
    "resiliparse": (_resiliparse, "resiliparse"),
}

OURS: dict[str, ExtractConfig] = {
    "seed": ExtractConfig(language="auto"),
    "corpus": ExtractConfig(language="auto", preset=Preset.CORPUS),
    "article": ExtractConfig(language="auto", preset=Preset.ARTICLE),
    "article-comments": ExtractConfig(language="auto", preset=Preset.ARTICLE_COMMENTS),
    "combined + corpus": ExtractConfig(language="auto", extractor="combined", preset=Preset.CORPUS),
}


class MissingAnchor(ImportError):
    """An anchor whose package is not installed; the message says what to install."""


def extractor(name: str) -> ExtractFn | ExtractConfig:
    """A row of the table by name: one of ours (an ExtractConfig) or an anchor's
    function. KeyError for a name that is neither; MissingAnchor when the anchor's
    package is not installed."""
    if name in OURS:
        return OURS[name]
    factory, package = ANCHORS[name]
    try:
        return factory()
    except ImportError as error:
        raise MissingAnchor(f"pip install {package} (or -e '.[anchors]')") from error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True, help="a gold set or a folder of them")
    parser.add_argument("--only", action="append", default=[], help="only these rows (repeat)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    # readability-lxml logs a traceback for each page it cannot parse, then raises: the
    # row's errors column counts them
    logging.getLogger("readability").setLevel(logging.CRITICAL)
    sets = [load_gold_set(path) for path in find_gold_sets(args.gold)]
    rows: list[tuple[str, dict[str, SetReport]]] = []
    missing: list[str] = []
    candidates: list[tuple[str, ExtractFn | ExtractConfig]] = []
    for name in [*OURS, *ANCHORS]:
        try:
            candidates.append((name, extractor(name)))
        except MissingAnchor as missing_anchor:
            missing.append(f"{name}: {missing_anchor}")
    for name, candidate in candidates:
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", file=sys.stderr)
        rows.append((name, {g.name: evaluate_set(g, candidate) for g in sets}))
    header = "| extractor | " + " | ".join(f"{g.name} P / R / **F1**" for g in sets)
    print(header + " | pages/s | errors |")
    print("|---" * (len(sets) + 3) + "|")
    for name, reports in rows:
        cells = []
        for gold_set in sets:
            summary = reports[gold_set.name].summary
            cells.append(f"{summary.precision:.3f} / {summary.recall:.3f} / **{summary.f1:.3f}**")
        pages = sum(r.summary.pages for r in reports.values())
        seconds = sum(r.seconds for r in reports.values())
        errors = sum(r.errors for r in reports.values())
        rate = f"{pages / seconds:.0f}" if seconds else "-"
        print(f"| {name} | " + " | ".join(cells) + f" | {rate} | {errors} |")
    for line in missing:
        print(f"not run: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

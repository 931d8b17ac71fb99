"""Our presets and the anchors on a snippet-annotated set: trafilatura's evaluation pages.

    git -C TRAFILATURA archive HEAD tests/evaldata.json tests/cache tests/eval | tar -x -C DIR
    python tools/snippet_eval.py DIR/tests                       # the table
    python tools/snippet_eval.py DIR/tests --half read --versus trafilatura --worst 30

trafilatura's repository (Apache 2.0) keeps about a thousand pages of the general web,
2015-2025, many of them German, French or Polish blogs, shops, party and association
sites, with a hand-made annotation per page: up to six passages of the main text that
an extractor must output ("with") and up to six of the furniture that it must not
("without"). No text is a gold in full, so it cannot be a `tools/gold_sets.py` set; it
is scored here as trafilatura scores it (`tests/eval_common.py` there): a passage
counts when it is a substring of the output after white space is collapsed (and soft
hyphens taken out, see `normalised`), true
positives are "with" passages found, false positives "without" passages found, and
precision, recall and F1 are taken over the counts summed over the pages.

It is the anchors' home ground: trafilatura's rules were written against these pages,
so its figure is an in-sample one. What the set is for here is finding our bugs on
kinds of pages the shingle golds lack (`--versus` lists the pages where an anchor
finds passages that a row misses). Pages are split in two by the crc32 of their file
name: read the `read` half, and measure a change on the `measured` half, which no one
looked at.

Rows and anchors are `benchmarks/anchor_table.py`'s (`--lang auto`); anchors' outputs
are cached in `--cache` (JSON) because trafilatura and readability-lxml take minutes
on the set.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zlib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from anchor_table import OURS, MissingAnchor, extractor  # noqa: E402

from corpus_crawler import ExtractConfig, extract  # noqa: E402
from corpus_crawler.invisible import without_soft_hyphens  # noqa: E402

HALVES = ("all", "read", "measured")


@dataclass(frozen=True)
class SnippetPage:
    """One annotated page: its file, its bytes and its two lists of passages."""

    url: str
    file: str
    html: bytes
    with_: tuple[str, ...]
    without: tuple[str, ...]

    @property
    def half(self) -> str:
        return "read" if zlib.crc32(self.file.encode("utf-8")) % 2 == 0 else "measured"


@dataclass(frozen=True)
class Counts:
    """Passages found and missed on one page (or summed over pages)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn
        )

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator else 0.0


def normalised(text: str) -> str:
    """White space collapsed, as the passages are compared, and soft hyphens taken out:
    some passages were copied from the page's source with them ("Werk\xadzeug"), and
    the presets leave them out of their text (`corpus_crawler.invisible`), as
    `corpus_crawler.evaluate` does for the shingle golds. The same for every row."""
    return re.sub(r"\s+", " ", without_soft_hyphens(text)).strip()


def count(page: SnippetPage, output: str) -> Counts:
    """A page's counts for one output: a passage is found when it is a substring."""
    text = normalised(output)
    found = sum(normalised(passage) in text for passage in page.with_)
    leaked = sum(normalised(passage) in text for passage in page.without)
    return Counts(found, leaked, len(page.with_) - found, len(page.without) - leaked)


def load_pages(folder: Path) -> list[SnippetPage]:
    """The annotated pages of a trafilatura `tests` folder (`evaldata.json`, and each
    page under `cache/` or `eval/`). A missing file is an error naming it."""
    annotations_path = folder / "evaldata.json"
    if not annotations_path.is_file():
        raise SystemExit(f"{annotations_path}: not found (give trafilatura's tests folder)")
    annotations: Mapping[str, Mapping[str, Any]] = json.loads(
        annotations_path.read_text(encoding="utf-8")
    )
    pages = []
    for url in sorted(annotations):
        item = annotations[url]
        candidates = [folder / sub / item["file"] for sub in ("cache", "eval")]
        found = next((path for path in candidates if path.is_file()), None)
        if found is None:
            raise SystemExit(f"{url}: {item['file']} is in neither cache/ nor eval/")
        pages.append(
            SnippetPage(
                url, item["file"], found.read_bytes(), tuple(item["with"]), tuple(item["without"])
            )
        )
    return pages


def _ours(job: tuple[ExtractConfig, bytes, str]) -> str:
    config, html, url = job
    document = extract(html, url, config)
    return document.text if document.drop_reason is None else ""


def run_ours(config: ExtractConfig, pages: Sequence[SnippetPage], workers: int) -> list[str]:
    jobs = [(config, page.html, page.url) for page in pages]
    if workers == 1:
        return [_ours(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_ours, jobs, chunksize=8))


def run_anchor(name: str, pages: Sequence[SnippetPage], cache: Path | None) -> list[str]:
    stored: dict[str, str] = {}
    if cache is not None and cache.is_file():
        stored = json.loads(cache.read_text(encoding="utf-8")).get(name, {})
    missing = [page for page in pages if page.file not in stored]
    if missing:
        function = extractor(name)
        for done, page in enumerate(missing, 1):
            try:
                stored[page.file] = function(page.html, page.url) or ""
            except Exception:  # a failing page is an empty output, as in anchor_table
                stored[page.file] = ""
            if done % 100 == 0:
                print(f"  {name}: {done}/{len(missing)}", file=sys.stderr)
        if cache is not None:
            everything = json.loads(cache.read_text(encoding="utf-8")) if cache.is_file() else {}
            everything[name] = stored
            cache.write_text(json.dumps(everything), encoding="utf-8")
    return [stored[page.file] for page in pages]


def outputs_of(
    name: str, pages: Sequence[SnippetPage], cache: Path | None, workers: int
) -> list[str]:
    if name in OURS:
        return run_ours(OURS[name], pages, workers)
    return run_anchor(name, pages, cache)


def summed(counts: Iterable[Counts]) -> Counts:
    total = Counts()
    for one in counts:
        total = total + one
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="trafilatura's tests folder")
    parser.add_argument("--row", action="append", help="our rows (default corpus, article)")
    parser.add_argument(
        "--anchor", action="append", help="anchors (default trafilatura, readability-lxml)"
    )
    parser.add_argument("--half", choices=HALVES, default="all")
    parser.add_argument("--versus", help="list the pages where this anchor beats the first row")
    parser.add_argument("--worst", type=int, default=20)
    parser.add_argument("--cache", type=Path, help="JSON file for the anchors' outputs")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    rows = args.row or ["corpus", "article"]
    anchors = args.anchor or ["trafilatura", "readability-lxml"]
    if args.versus and args.versus not in anchors:
        anchors.append(args.versus)
    pages = [p for p in load_pages(args.folder) if args.half in ("all", p.half)]
    print(f"{len(pages)} pages ({args.half})", file=sys.stderr)
    outputs: dict[str, list[str]] = {}
    for name in [*rows, *anchors]:
        print(f"{name} ...", file=sys.stderr)
        try:
            outputs[name] = outputs_of(name, pages, args.cache, args.workers)
        except MissingAnchor as missing:
            print(f"not run: {name}: {missing}", file=sys.stderr)
    counts = {
        name: [count(page, output) for page, output in zip(pages, found, strict=True)]
        for name, found in outputs.items()
    }
    print("| extractor | P | R | **F1** | with found | without leaked | empty outputs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, per_page in counts.items():
        total = summed(per_page)
        empty = sum(not o.strip() for o in outputs[name])
        print(
            f"| {name} | {total.precision:.3f} | {total.recall:.3f} | **{total.f1:.4f}** |"
            f" {total.tp}/{total.tp + total.fn} | {total.fp}/{total.fp + total.tn} | {empty} |"
        )
    if args.versus and args.versus in counts:
        row = rows[0]
        ranked = sorted(
            range(len(pages)),
            key=lambda i: (
                (counts[row][i].tp - counts[row][i].fp)
                - (counts[args.versus][i].tp - counts[args.versus][i].fp)
            ),
        )
        print(f"\npages where {row} trails {args.versus} most (found - leaked):")
        for i in ranked[: args.worst]:
            ours, theirs = counts[row][i], counts[args.versus][i]
            if ours.tp - ours.fp >= theirs.tp - theirs.fp:
                break
            page = pages[i]
            print(
                f"- {page.file} ({page.url}): {row} {ours.tp}+/{ours.fp}-,"
                f" {args.versus} {theirs.tp}+/{theirs.fp}-, {len(outputs[row][i])} chars"
            )
            text = normalised(outputs[row][i])
            for passage in page.with_:
                if normalised(passage) not in text:
                    print(f"    missed: {passage[:100]!r}")
            for passage in page.without:
                if normalised(passage) in text:
                    print(f"    leaked: {passage[:100]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

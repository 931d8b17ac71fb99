"""`corpus-crawler dedup IN... -o OUT`: the crawl's dedup stages over existing corpus files.

Reads prevertical or vertical files (ours or SpiderLing's; ``.gz`` too) one
document at a time and writes each to ``OUT/<same name>`` without the
documents that duplicate an earlier one (exactly or nearly) and without the
paragraphs seen before or in another language (or with them marked:
``dup="0.83"``, ``langdiff="0.97"`` on the ``<p>``). Memory stays bounded:
the stores are on disk in ``OUT/state/dedup/`` (or ``--state``), where the
next run into the same folder finds them, so files added later are
deduplicated against everything before.

Files are written as ``NAME.open`` and renamed when complete. A summary goes
to standard error (and to ``--summary FILE`` as JSON).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, Protocol

from ._cli_checks import finite_float, output_file_problem, output_folder_problem
from .config import ConfigError
from .dedup import DedupConfig, MarkAction

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "dedup",
        help="remove duplicate documents and paragraphs from prevertical/vertical files",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("inputs", nargs="+", metavar="IN", help="prevertical/vertical files")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="output folder")
    parser.add_argument(
        "--state",
        metavar="DIR",
        help="dedup stores (default: OUT/state/dedup); reused by later runs",
    )
    parser.add_argument("--no-exact", action="store_true", help="keep exact duplicates")
    parser.add_argument("--no-near", action="store_true", help="keep near-duplicate documents")
    parser.add_argument(
        "--near-threshold",
        type=finite_float,
        default=0.8,
        metavar="J",
        help="Jaccard similarity (MinHash of word 5-grams) of a near-duplicate",
    )
    parser.add_argument("--near-seen-share", type=finite_float, default=0.9, metavar="SHARE",
                        help="share of a document's n-grams seen before that makes it a"
                        " near-duplicate too")  # fmt: skip
    choices = [a.value for a in MarkAction]
    parser.add_argument("--paragraphs", choices=choices, default="remove")
    parser.add_argument("--paragraph-threshold", type=finite_float, default=0.5, metavar="SHARE")
    parser.add_argument("--paragraph-ngram", type=int, default=7, metavar="N")
    parser.add_argument(
        "--filter-mib",
        type=int,
        default=256,
        metavar="MIB",
        help="size of the paragraph n-gram filter (fixed; a power of two)",
    )
    parser.add_argument("--paragraph-language", choices=choices, default="remove")
    parser.add_argument(
        "--language",
        metavar="CODE",
        help="the documents' language where a <doc> has no lang attribute (SpiderLing)",
    )
    parser.add_argument("--summary", metavar="FILE", help="write the summary as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


class _Bar(Protocol):
    def update(self, n: int) -> object: ...
    def close(self) -> None: ...


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, description: str, enabled: bool) -> _Bar:
    """A byte progress bar on stderr. One place to swap for corpus_crawler.progress."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    bar: _Bar = tqdm(
        total=total, desc=description, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr
    )
    return bar


def _lines(text: IO[str], raw: IO[bytes], bar: _Bar) -> Iterator[str]:
    position = 0
    for count, line in enumerate(text, 1):
        if count % 4096 == 0:
            now = raw.tell()
            bar.update(now - position)
            position = now
        yield line
    bar.update(raw.tell() - position)


def _config(args: argparse.Namespace) -> DedupConfig:
    return DedupConfig(
        exact=not args.no_exact,
        near_documents=not args.no_near,
        near_threshold=args.near_threshold,
        near_seen_share=args.near_seen_share,
        paragraphs=args.paragraphs,
        paragraph_threshold=args.paragraph_threshold,
        paragraph_ngram=args.paragraph_ngram,
        paragraph_filter_mib=args.filter_mib,
        paragraph_language=args.paragraph_language,
        commit_every=1000,
    )


def run(args: argparse.Namespace) -> int:
    from .dedup import Deduplicator, ParagraphFate
    from .dedup._corpusfile import CorpusDocument, format_document, open_corpus_text, read_corpus

    try:
        config = _config(args)
    except ConfigError as exc:
        print(f"corpus-crawler dedup: {exc}", file=sys.stderr)
        return 2
    inputs = [Path(name) for name in args.inputs]
    out_dir = Path(args.output)
    problems: list[str | None] = [f"{path}: no such file" for path in inputs if not path.is_file()]
    names: dict[str, Path] = {}
    for path in inputs:
        if path.name in names:
            problems.append(
                f"{path} and {names[path.name]} have the same name: the output files would"
                " collide; rename one or run them into separate folders"
            )
        names[path.name] = path
        target = out_dir / path.name
        partial = target.with_name(target.name + ".open")
        if partial.exists():
            problems.append(
                f"{partial} is left from an interrupted run, and the dedup stores hold"
                " the documents it had read (they would all be dropped now): start over"
                f" with fresh stores (another -o, or rm -r {out_dir}; a new --state too"
                " if you gave one)"
            )
        elif target.exists():
            problems.append(
                f"{target} exists: this file was deduplicated into {out_dir} before (its"
                " documents are in the stores and would all be dropped); use another -o"
            )
        if path.resolve().parent == out_dir.resolve():
            problems.append(f"{path} is in the output folder: use another -o")
    if args.summary:
        problems.append(output_file_problem(Path(args.summary), "--summary"))
    if not any(problems):
        problems.append(output_folder_problem(out_dir))
    if any(problems):
        for problem in filter(None, problems):
            print(f"corpus-crawler dedup: {problem}", file=sys.stderr)
        return 2
    state = Path(args.state) if args.state else out_dir / "state" / "dedup"
    started = time.perf_counter()
    totals: dict[str, Any] = {"files": [], "bytes_in": 0, "bytes_out": 0}
    try:
        dedup = Deduplicator(config, state)
    except ValueError as exc:  # a filter of another size
        print(f"corpus-crawler dedup: {exc}", file=sys.stderr)
        return 2
    earlier = dedup.stored_documents
    documents_out = 0
    try:
        for path in inputs:
            target = out_dir / path.name
            partial = target.with_name(target.name + ".open")
            size = path.stat().st_size
            totals["bytes_in"] += size
            bar = _progress(size, path.name, not args.quiet)
            raw, text = open_corpus_text(path)
            opener = gzip.open if path.name.endswith(".gz") else open
            tokenized = path.name.removesuffix(".gz").endswith(".vert")
            written = read = 0
            try:
                with raw, text, opener(partial, "wt", encoding="utf-8", newline="\n") as out:
                    for block in read_corpus(_lines(text, raw, bar), str(path)):
                        if not isinstance(block, CorpusDocument):
                            out.write(block + "\n")
                            continue
                        read += 1
                        paragraphs = block.paragraphs
                        name = (
                            block.attribute("url")
                            or block.attribute("id")
                            or (f"{path.name}:{block.line}")
                        )
                        language = block.attribute("lang") or args.language
                        verdict = dedup.check(
                            name, [p.text(tokenized) for p in paragraphs], language
                        )
                        if verdict.drop is not None:
                            continue
                        drop = {i for i, p in enumerate(verdict.paragraphs) if p.removed}
                        marks: dict[int, tuple[str, str]] = {}
                        for i, p in enumerate(verdict.paragraphs):
                            if p.removed or p.fate is ParagraphFate.KEPT:
                                continue
                            if p.fate is ParagraphFate.DUPLICATE:
                                marks[i] = ("dup", f"{p.seen_share or 0.0:.2f}")
                            else:
                                # SpiderLing's langdiff is a number (as the crawl writes it)
                                marks[i] = ("langdiff", f"{p.lang_diff or 0.0:.2f}")
                        out.write(format_document(block, drop, marks))
                        written += 1
            except KeyboardInterrupt:
                print(
                    f"corpus-crawler dedup: interrupted; {partial} is incomplete and the"
                    f" stores in {state} hold the documents read so far: start over in a"
                    f" fresh folder (another -o, or rm -r {out_dir})",
                    file=sys.stderr,
                )
                return 130
            except (ValueError, UnicodeDecodeError) as exc:
                print(f"corpus-crawler dedup: {path}: {exc}", file=sys.stderr)
                print(
                    f"corpus-crawler dedup: stopped; {partial} is incomplete. The stores in"
                    f" {state} hold the documents read so far: fix the input and rerun into"
                    " a fresh folder",
                    file=sys.stderr,
                )
                return 1
            finally:
                bar.close()
            partial.rename(target)
            if not read:
                print(
                    f"corpus-crawler dedup: {path}: no <doc> in it: is it a prevertical or"
                    " vertical file? (copied through unchanged)",
                    file=sys.stderr,
                )
            documents_out += written
            totals["bytes_out"] += target.stat().st_size
            totals["files"].append(
                {"input": str(path), "output": str(target), "documents": written}
            )
    finally:
        rate = dedup.filter_false_positive_rate()
        counts = dedup.counts
        dedup.close()
    elapsed = time.perf_counter() - started
    summary = {
        **totals,
        "state": str(state),
        "documents_kept_by_earlier_runs": earlier,
        "documents_in": counts.documents,
        "documents_out": documents_out,
        "duplicate": counts.exact,
        "near_duplicate": counts.near,
        "emptied": counts.emptied,
        "paragraphs_in": counts.paragraphs,
        "paragraphs_seen_before": counts.paragraphs_duplicate,
        "paragraphs_other_language": counts.paragraphs_foreign,
        "paragraphs_removed": counts.paragraphs_removed,
        "other_languages": dict(counts.foreign_languages.most_common()),
        "ngram_filter_false_positive_rate": rate,
        "seconds": round(elapsed, 3),
        "config": {
            k: str(v) if isinstance(v, MarkAction) else v for k, v in asdict(config).items()
        },
    }
    print(
        f"dedup: {counts.documents} document(s) in, {documents_out} out"
        f" ({counts.exact} duplicate, {counts.near} near-duplicate, {counts.emptied} emptied);"
        f" {counts.paragraphs_removed} of {counts.paragraphs} paragraph(s) removed"
        f" ({counts.paragraphs_duplicate} seen before, {counts.paragraphs_foreign} in another"
        f" language); {elapsed:.1f} s",
        file=sys.stderr,
    )
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0

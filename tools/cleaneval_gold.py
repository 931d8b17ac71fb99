"""Lay out a CleanEval set (the 2007 shared task's `input/` pages and `GoldStandard/`
texts) as a gold set that `corpus-crawler evaluate` and the benchmarks read.

    python tools/cleaneval_gold.py CLEANEVAL_DIR OUT_DIR

CLEANEVAL_DIR holds `input/<id>.html` (each page as CleanEval served it, starting with
its `<text id=URL ...>` line) and `GoldStandard/<id>.txt` (the annotators' text with
CleanEval's `<p>`, `<h>` and `<l>` paragraph marks and a `URL:` line). OUT_DIR gets
`html/` (bytes untouched), `gold/` (the text without the marks and the URL line, one
line per non-blank line of the annotation), `gold-marked/` (the annotation as it is)
and `manifest.jsonl`, the layout of `tests/data/gold/cleaneval-dev`. A gold page
without its HTML is left out and counted; a gold file that is not UTF-8 is read as
windows-1252 (CleanEval's annotators worked on Windows), or as UTF-8 with its bad bytes
replaced when the rest of it is UTF-8, and counted.

The rule gives the bundled cleaneval-dev golds (tests/data) word for word on all 58
pages. It was written
to score the presets on CleanEval's final set (681 pages), which no preset was tuned
on: see docs/presets-steps.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

_MARK = re.compile(r"<[phlPHL]>")
_URL = re.compile(r"https?://\S+")
_TEXT_ID = re.compile(rb'\s*<text id="?([^" >]+)')


def plain_gold(annotation: str) -> str:
    """The gold text of a CleanEval annotation: its `URL:` line (with the URL on it or
    on the next line) and its paragraph marks out, each line stripped, blank lines
    dropped."""
    lines = []
    state = "start"  # -> "url" after a bare "URL:", -> "body" at the first text
    for line in annotation.lstrip("\ufeff").splitlines():
        text = line.strip()
        if state != "body" and text:
            if state == "start" and text.startswith("URL:"):
                state = "url" if text == "URL:" else "body"
                continue
            state = "body"
            if _URL.fullmatch(text):
                continue
        text = _MARK.sub("", text).strip()
        if text:
            lines.append(text)
    return "".join(line + "\n" for line in lines)


def decode_annotation(raw: bytes) -> tuple[str, str]:
    """The text of an annotation file and the encoding read: UTF-8; UTF-8 with its few
    bad bytes replaced when the rest holds UTF-8 text (a file pasted together from
    two sources); else windows-1252, the annotators' own."""
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    lenient = raw.decode("utf-8", errors="replace")
    bad = lenient.count("\ufffd")
    if sum(1 for char in lenient if ord(char) > 127) > 2 * bad:
        return lenient, "utf-8 (bad bytes replaced)"
    return raw.decode("cp1252", errors="replace"), "cp1252"


@dataclass(frozen=True, slots=True)
class Converted:
    pages: int
    without_html: tuple[str, ...]
    not_utf8: tuple[str, ...]
    empty_gold: tuple[str, ...]


def _page_key(path: Path) -> tuple[int, str]:
    digits = re.sub(r"\D", "", path.stem)
    return (int(digits) if digits else -1, path.stem)


def convert(source: Path, target: Path) -> Converted:
    """Write the gold set of `source` (CleanEval's layout) into `target`."""
    golds = sorted((source / "GoldStandard").glob("*.txt"), key=_page_key)
    if not golds:
        raise SystemExit(f"{source}: no GoldStandard/<id>.txt files (is it a CleanEval folder?)")
    for folder in ("html", "gold", "gold-marked"):
        (target / folder).mkdir(parents=True, exist_ok=True)
    records, without_html, not_utf8, empty = [], [], [], []
    for gold_path in golds:
        page_id = gold_path.stem
        html_path = source / "input" / f"{page_id}.html"
        if not html_path.is_file():
            without_html.append(page_id)
            continue
        raw = gold_path.read_bytes()
        annotation, encoding = decode_annotation(raw)
        if encoding != "utf-8":
            not_utf8.append(page_id)
        gold = plain_gold(annotation)
        if not gold:
            empty.append(page_id)
        html = html_path.read_bytes()
        (target / "html" / f"{page_id}.html").write_bytes(html)
        (target / "gold" / f"{page_id}.txt").write_text(gold, encoding="utf-8")
        (target / "gold-marked" / f"{page_id}.txt").write_bytes(raw)
        found = _TEXT_ID.match(html)
        records.append(
            {
                "id": page_id,
                "url": found.group(1).decode("latin-1") if found else None,
                "bytes": len(html),
                "gold_chars": len(gold),
                "gold_words": len(gold.split()),
                "gold_encoding": encoding,
            }
        )
    manifest = "".join(json.dumps(record) + "\n" for record in records)
    (target / "manifest.jsonl").write_text(manifest, encoding="utf-8")
    return Converted(len(records), tuple(without_html), tuple(not_utf8), tuple(empty))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="folder with input/ and GoldStandard/")
    parser.add_argument("target", type=Path, help="the gold set to write (a new folder)")
    args = parser.parse_args(argv)
    if args.target.exists() and any(args.target.iterdir()):
        print(f"cleaneval_gold: {args.target} is not empty: give a new folder", file=sys.stderr)
        return 2
    done = convert(args.source, args.target)
    print(f"{done.pages} pages written to {args.target}")
    for label, ids in (
        ("gold without its HTML, left out", done.without_html),
        ("gold not (all) UTF-8", done.not_utf8),
        ("empty gold (pages that ought to yield nothing)", done.empty_gold),
    ):
        if ids:
            print(f"  {len(ids)} {label}: {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

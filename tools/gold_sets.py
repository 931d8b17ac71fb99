"""Lay out a public boilerplate-removal data set as a gold set that `corpus-crawler
evaluate` and the benchmarks read (`html/`, `gold/`, `manifest.jsonl`: the layout of
`tests/data/gold/<set>`), so that the presets can be scored on pages no rule was
chosen on.

    python tools/gold_sets.py cleaneval SOURCE OUT      # CleanEval 2007 (dev or final)
    python tools/gold_sets.py dragnet SOURCE OUT        # Dragnet's 1381 news and blog pages
    python tools/gold_sets.py dragnet --comments SOURCE OUT
    python tools/gold_sets.py l3s-gn1 SOURCE OUT        # L3S-GN1, 621 Google News pages
    python tools/gold_sets.py chinese-web SOURCE OUT    # 69 Chinese pages, scored by character
    python tools/gold_sets.py daniel SOURCE OUT         # DAnIEL's news, a set per language
    python tools/gold_sets.py scrapinghub SOURCE OUT    # 181 news pages of 2019-2020

SOURCE holds `input/<id>.html` (the page as served; bytes are copied untouched) and
`GoldStandard/<id>.txt` (the annotation), the layout of the sets' public mirrors;
`chinese-web` reads `original/<id>.html` and `cleaned/<id>.txt`, the layout of
immortal-autumn/Chinese-Web-Content-Extraction-Dataset (MIT licence: blogs, forums
and news, 2005-2022, many of them CleanEval's Chinese pages, with the article text
copied by hand).
How each annotation becomes gold text, one line per paragraph:

* `cleaneval`: CleanEval's `<p>`, `<h>` and `<l>` marks and its `URL:` line (the URL on
  it or on the next line) out, lines stripped, blank lines dropped; the annotation is
  also kept as it is in `gold-marked/`. This gives the bundled cleaneval-dev golds
  word for word on all 58 pages. The page's URL comes from CleanEval's
  `<text id=URL ...>` first line.
* `dragnet`: the main content, the text before Dragnet's `!@#$%^&*()  COMMENTS` line;
  with `--comments` the comments after it too (Dragnet's "content and comments" task:
  what a corpus keeps).
* `daniel`: DAnIEL's news pages (Lejeune & Zhu 2018, as re-annotated in
  rundimeco/waddle's `corpora/Corpus_daniel_v2.1`: `html/<id>`, `reference/<id>`
  without file endings, `doc_lg.json` naming each page's language), one set per
  language in OUT (`daniel-en`, `daniel-zh`, `daniel-ru`, `daniel-el`, `daniel-pl`):
  the reference's `<p>` marks out, lines stripped, blank lines dropped; the Chinese
  set is scored by character.
* `chinese-web`: the text, lines stripped, blank lines dropped. Its manifest records
  say `"tokens": "characters"`: Chinese is written without spaces, so `evaluate`
  compares shingles of 4 characters, not of 4 clauses.
* `scrapinghub`: scrapinghub/article-extraction-benchmark (MIT licence: 181 English
  news and blog pages of 2019-2020 from as many sites): `html/<id>.html.gz` and
  `ground-truth.json`, whose `articleBody` (the article without its headline) is the
  gold, lines stripped, blank lines dropped; the page's URL comes from the same record.
* `l3s-gn1`: the annotated copy of the page (boilerpipe's L3S-GN1): the text of the
  spans marked `x-nc-sel1` (headline) and `x-nc-sel2` (full text), the set's main
  content, one line per span.

An annotation that is not UTF-8 is read as windows-1252 (or as UTF-8 with its bad
bytes replaced when the rest of it is UTF-8); a gold without its page is left out.
Both are counted and named. Figures measured with these sets: docs/presets-steps.md.
"""

from __future__ import annotations

import argparse
import codecs
import gzip
import json
import re
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path

_MARK = re.compile(r"<[phlPHL]>")
_URL = re.compile(r"https?://\S+")
_TEXT_ID = re.compile(rb'\s*<text id="?([^" >]+)')
_DRAGNET_COMMENTS = re.compile(r"^!@#\$%\^&\*\(\)\s+COMMENTS\s*$")
#: L3S-GN1's classes of the main content: the headline and the full text
L3S_MAIN = frozenset({"x-nc-sel1", "x-nc-sel2"})


def _lines(texts: list[str]) -> str:
    return "".join(text + "\n" for text in texts)


def plain_gold(annotation: str) -> str:
    """A gold that is the text itself: each line stripped, blank lines dropped."""
    return _lines(
        [line.strip() for line in annotation.lstrip("\ufeff").splitlines() if line.strip()]
    )


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a set's pages and annotations are, and what its manifest records add."""

    html: str = "input"
    gold: str = "GoldStandard"
    #: File name endings of the pages and the annotations ("" for none).
    html_suffix: str = ".html"
    gold_suffix: str = ".txt"
    #: Added to every manifest record (`{"tokens": "characters"}` for an unspaced script).
    record: tuple[tuple[str, str], ...] = ()


MIRROR_LAYOUT = Layout()
CHINESE_WEB_LAYOUT = Layout("original", "cleaned", record=(("tokens", "characters"),))
#: DAnIEL's files are named by date, host and hash, without an ending.
DANIEL_LAYOUT = Layout("html", "reference", html_suffix="", gold_suffix="")
#: DAnIEL's languages -> the set name's code; Chinese is scored by character.
DANIEL_LANGUAGES = {
    "English": "en",
    "Chinese": "zh",
    "Russian": "ru",
    "Greek": "el",
    "Polish": "pl",
}
_DANIEL_P = re.compile(r"</?p>")


def daniel_gold(annotation: str) -> str:
    """DAnIEL's reference: one `<p>...</p>` per paragraph, the marks out, lines
    stripped, blank lines dropped."""
    return plain_gold(_DANIEL_P.sub("\n", annotation))


def cleaneval_gold(annotation: str) -> str:
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
    return _lines(lines)


def dragnet_gold(annotation: str, comments: bool = False) -> str:
    """Dragnet's main content (the lines before its comments marker), and with
    `comments` the comments after it, stripped, blank lines dropped."""
    lines = []
    for line in annotation.lstrip("\ufeff").splitlines():
        if _DRAGNET_COMMENTS.match(line.strip()):
            if not comments:
                break
            continue
        text = line.strip()
        if text:
            lines.append(text)
    return _lines(lines)


def l3s_gold(annotation: str, classes: frozenset[str] = L3S_MAIN) -> str:
    """The text of the spans of L3S-GN1's annotated page marked with `classes`, one
    line per span, whitespace collapsed."""
    import lxml.html

    if not annotation.strip():
        return ""
    root = lxml.html.fromstring(annotation)
    lines = []
    for span in root.iter("span"):
        if span.get("class") in classes:
            text = " ".join(span.text_content().split())
            if text:
                lines.append(text)
    return _lines(lines)


_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode_annotation(raw: bytes) -> tuple[str, str]:
    """The text of an annotation file and the encoding read: the encoding its byte-order
    mark names (five of Dragnet's annotations are UTF-16, saved by a Windows editor);
    UTF-8; UTF-8 with its few bad bytes replaced when the rest holds UTF-8 text (a file
    pasted together from two sources); else windows-1252, the annotators' own."""
    if raw.startswith(_UTF16_BOMS):
        return raw.decode("utf-16", errors="replace"), "utf-16"
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


def _page_id(path: Path, layout: Layout) -> str:
    return path.name.removesuffix(layout.gold_suffix) if layout.gold_suffix else path.name


def _page_key(path: Path) -> tuple[str, int, str]:
    # CleanEval and Dragnet number their pages ("12", "R545"): in number order
    digits = re.sub(r"\D", "", path.stem)
    return (re.sub(r"\d", "", path.stem), int(digits) if digits else -1, path.stem)


def convert(
    source: Path,
    target: Path,
    gold_of: Callable[[str], str],
    *,
    keep_marked: bool = False,
    layout: Layout = MIRROR_LAYOUT,
    only: Collection[str] | None = None,
) -> Converted:
    """Write the gold set of `source` (`input/`, `GoldStandard/` unless `layout` says
    otherwise) into `target`, each annotation made gold text by `gold_of`; with `only`,
    the pages of those ids alone."""
    pattern = f"*{layout.gold_suffix}"
    golds = sorted((source / layout.gold).glob(pattern), key=_page_key)
    if only is not None:
        golds = [path for path in golds if _page_id(path, layout) in only]
    if not golds:
        raise SystemExit(
            f"{source}: no {layout.gold}/<id>{layout.gold_suffix} files: is it the set's folder?"
        )
    _make_folders(target, keep_marked)
    records: list[dict[str, object]] = []
    without_html: list[str] = []
    not_utf8: list[str] = []
    empty: list[str] = []
    for gold_path in golds:
        page_id = _page_id(gold_path, layout)
        html_path = source / layout.html / f"{page_id}{layout.html_suffix}"
        if not html_path.is_file():
            without_html.append(page_id)
            continue
        raw = gold_path.read_bytes()
        annotation, encoding = decode_annotation(raw)
        if encoding != "utf-8":
            not_utf8.append(page_id)
        gold = gold_of(annotation)
        if not gold:
            empty.append(page_id)
        html = html_path.read_bytes()
        if keep_marked:
            (target / "gold-marked" / f"{page_id}.txt").write_bytes(raw)
        found = _TEXT_ID.match(html)
        url = found.group(1).decode("latin-1") if found else None
        records.append(_write_page(target, page_id, html, gold, url, encoding, layout.record))
    _write_manifest(target, records)
    return Converted(len(records), tuple(without_html), tuple(not_utf8), tuple(empty))


def _write_page(
    target: Path,
    page_id: str,
    html: bytes,
    gold: str,
    url: str | None,
    encoding: str,
    record: tuple[tuple[str, str], ...],
) -> dict[str, object]:
    """Write one page and its gold into `target`; its manifest record."""
    (target / "html" / f"{page_id}.html").write_bytes(html)
    (target / "gold" / f"{page_id}.txt").write_text(gold, encoding="utf-8")
    return {
        "id": page_id,
        "url": url,
        "bytes": len(html),
        "gold_chars": len(gold),
        "gold_words": len(gold.split()),
        "gold_encoding": encoding,
        **dict(record),
    }


def _make_folders(target: Path, keep_marked: bool = False) -> None:
    for folder in ("html", "gold", "gold-marked") if keep_marked else ("html", "gold"):
        (target / folder).mkdir(parents=True, exist_ok=True)


def _write_manifest(target: Path, records: list[dict[str, object]]) -> None:
    manifest = "".join(json.dumps(record) + "\n" for record in records)
    (target / "manifest.jsonl").write_text(manifest, encoding="utf-8")


def convert_scrapinghub(source: Path, target: Path) -> Converted:
    """scrapinghub/article-extraction-benchmark's pages (`html/<id>.html.gz`) with the
    `articleBody` of `ground-truth.json` as gold, in the truth file's order."""
    truth_path = source / "ground-truth.json"
    if not truth_path.is_file():
        raise SystemExit(f"{source}: no ground-truth.json: is it the benchmark's folder?")
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    _make_folders(target)
    records: list[dict[str, object]] = []
    without_html: list[str] = []
    empty: list[str] = []
    for page_id, fields in truth.items():
        html_path = source / "html" / f"{page_id}.html.gz"
        if not html_path.is_file():
            without_html.append(page_id)
            continue
        gold = plain_gold(fields.get("articleBody") or "")
        if not gold:
            empty.append(page_id)
        html = gzip.decompress(html_path.read_bytes())
        records.append(_write_page(target, page_id, html, gold, fields.get("url"), "utf-8", ()))
    _write_manifest(target, records)
    return Converted(len(records), tuple(without_html), (), tuple(empty))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "format",
        choices=("cleaneval", "dragnet", "l3s-gn1", "chinese-web", "daniel", "scrapinghub"),
    )
    parser.add_argument(
        "source",
        type=Path,
        help="the set's folder: input/ and GoldStandard/ (chinese-web: original/ and"
        " cleaned/; daniel: html/, reference/ and doc_lg.json; scrapinghub: html/ and"
        " ground-truth.json)",
    )
    parser.add_argument(
        "target", type=Path, help="the gold set to write, a new folder (daniel: one set a language)"
    )
    parser.add_argument(
        "--comments", action="store_true", help="dragnet: the comments are gold text too"
    )
    args = parser.parse_args(argv)
    if args.comments and args.format != "dragnet":
        parser.error("--comments is for the dragnet format")
    if args.target.exists() and any(args.target.iterdir()):
        print(f"gold_sets: {args.target} is not empty: give a new folder", file=sys.stderr)
        return 2
    if args.format == "daniel":
        return _daniel(args.source, args.target)
    if args.format == "scrapinghub":
        _report(convert_scrapinghub(args.source, args.target), args.target)
        return 0
    gold_of: Callable[[str], str]
    layout = MIRROR_LAYOUT
    if args.format == "cleaneval":
        gold_of = cleaneval_gold
    elif args.format == "dragnet":
        gold_of = lambda text: dragnet_gold(text, args.comments)  # noqa: E731
    elif args.format == "chinese-web":
        gold_of, layout = plain_gold, CHINESE_WEB_LAYOUT
    else:
        gold_of = l3s_gold
    done = convert(
        args.source, args.target, gold_of, keep_marked=args.format == "cleaneval", layout=layout
    )
    _report(done, args.target)
    return 0


def _daniel(source: Path, target: Path) -> int:
    """DAnIEL's pages, one gold set per language (`daniel-en`, `daniel-zh`, ...)."""
    languages = json.loads((source / "doc_lg.json").read_text(encoding="utf-8"))
    for language, code in DANIEL_LANGUAGES.items():
        ids = {page for page, named in languages.items() if named == language}
        if not any((source / DANIEL_LAYOUT.gold / page).is_file() for page in ids):
            print(f"no {language} pages in {source}")
            continue
        record = (("language", code),)
        if code == "zh":
            record += (("tokens", "characters"),)
        layout = replace(DANIEL_LAYOUT, record=record)
        folder = target / f"daniel-{code}"
        _report(convert(source, folder, daniel_gold, layout=layout, only=ids), folder)
    return 0


def _report(done: Converted, target: Path) -> None:
    print(f"{done.pages} pages written to {target}")
    for label, ids in (
        ("gold without its HTML, left out", done.without_html),
        ("gold not (all) UTF-8", done.not_utf8),
        ("empty gold (pages that ought to yield nothing)", done.empty_gold),
    ):
        if ids:
            print(f"  {len(ids)} {label}: {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}")


if __name__ == "__main__":
    sys.exit(main())

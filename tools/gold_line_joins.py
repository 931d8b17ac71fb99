"""Which gold pages join words at the HTML's line breaks, and what that costs (issue 13).

Some CleanEval golds were made from a rendering that dropped the source's line
breaks instead of turning them into spaces: "and\\nhotly" in the HTML is
"andhotly" in the gold. An extractor that renders the line break as a space, as
a browser does and as a corpus wants, loses most 4-token shingles of such a page
although it keeps exactly the right blocks.

For each page this extracts the text twice, from the HTML as served and from the
HTML with every line break inside running text removed (the gold's form), and
names the pages whose F1 rises by more than `--margin` in the gold's form. The
set's F1 with those pages scored in the gold's form says how much of the gap to a
target is the gold's artefact, not a block decision. It is a diagnostic: the
extractor keeps rendering line breaks as spaces, and the shipped figures are the
ones `benchmarks/extractor_table.py` prints.

    PYTHONPATH=$PWD python tools/gold_line_joins.py ../shared/data/gold/cleaneval-dev
    PYTHONPATH=$PWD python tools/gold_line_joins.py GOLD_SET --preset article
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import lxml.html

from corpus_crawler import ExtractConfig, Preset
from corpus_crawler.evaluate import PageScore, Summary, iter_gold_pages, page_scores
from corpus_crawler.extract import extract

# A line break between two non-blank characters, with the blanks around it.
_LINE_BREAK_IN_TEXT = re.compile(r"(?<=\S)[ \t]*\r?\n[ \t]*(?=\S)")
# Whitespace is content there, or the text is not rendered at all.
_KEEP_AS_IS = frozenset({"pre", "textarea", "script", "style"})


def join_line_breaks(html: bytes) -> bytes:
    """The page with the line breaks inside running text removed, as those golds have it."""
    root = lxml.html.document_fromstring(html)
    for element in root.iter():
        # comments and processing instructions: their own text is not rendered, their
        # tails are
        if isinstance(element.tag, str) and element.tag not in _KEEP_AS_IS and element.text:
            element.text = _joined(element.text)
        if element.tail:
            element.tail = _joined(element.tail)
    return bytes(lxml.html.tostring(root, encoding="utf-8"))


# What lxml parses but refuses to set again (a page of CleanEval's final set has them)
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _joined(text: str) -> str:
    return _LINE_BREAK_IN_TEXT.sub("", _NOT_XML.sub("", text))


@dataclass(frozen=True, slots=True)
class PageJoin:
    page_id: str
    as_served: PageScore
    joined: PageScore

    def gain(self) -> float:
        return self.joined.shingles.f1 - self.as_served.shingles.f1


def _corpus_text(html: bytes, url: str | None, config: ExtractConfig) -> str:
    """What the corpus gets, as `evaluate` scores it: nothing for a dropped document."""
    document = extract(html, url, config)
    return document.text if document.drop_reason is None else ""


def score_pages(set_dir: str, config: ExtractConfig) -> list[PageJoin]:
    rows = []
    for page in iter_gold_pages(set_dir):
        served = _corpus_text(page.html, page.url, config)
        joined = _corpus_text(join_line_breaks(page.html), page.url, config)
        rows.append(
            PageJoin(page.id, page_scores(served, page.gold), page_scores(joined, page.gold))
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gold_set", help="a gold set folder (html/, gold/, manifest.jsonl)")
    parser.add_argument("--preset", default="corpus", choices=[p.value for p in Preset])
    parser.add_argument("--lang", default="auto")
    parser.add_argument(
        "--margin", type=float, default=0.2, help="F1 rise that marks a joined gold (0.2)"
    )
    args = parser.parse_args(argv)
    config = ExtractConfig(preset=Preset(args.preset), language=args.lang).checked()
    rows = score_pages(args.gold_set, config)
    joined = [row for row in rows if row.gain() > args.margin]
    print(f"{len(rows)} pages, preset {args.preset}, --lang {args.lang}")
    for row in joined:
        print(
            f"  page {row.page_id}: F1 {row.as_served.shingles.f1:.3f} as served, "
            f"{row.joined.shingles.f1:.3f} with the words joined as the gold has them"
        )
    served = Summary.of(row.as_served for row in rows)
    mixed = Summary.of(row.joined if row in joined else row.as_served for row in rows)
    print(f"set F1 as served: {served.f1:.4f}")
    print(f"set F1 with the {len(joined)} joined golds scored in their form: {mixed.f1:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Language identification for ``--lang auto``: stop-word density against CLD2 on the gold pages.

For every page of the gold sets (tests/data/gold.tar.xz, or --gold DIR):

1. a reference label: CLD2 on the page's GOLD text, overridden by HAND_LABELS
   below for the pages whose gold text is empty or too short to tell (checked by
   hand). The script also lists where the stop-word method on the gold text
   disagrees with the reference, so the table can be re-checked.
2. the page's blocks: all paragraphs `extract()` segments (good or not), which is
   what `identify()` sees inside `extract()` with ``language="auto"``.
3. each method runs on those blocks: accuracy against the reference (pages whose
   reference is "no language" are left out); CPU time per page, best of
   --rounds, the stoplist index built beforehand, also as a multiple of the bare
   ``lxml.html.fromstring`` time of the same pages (``x parse``); and the
   shingle F1 of the jusText extractor (seed preset) when each page uses the
   language the method chose. A language without a stoplist (ja, zh...) or none
   runs language-independent (jusText's ``-s None``).

Rows ``en (fixed)`` (the English stoplist everywhere, jusText's default) and
``reference labels`` (the oracle) bound the F1 columns. Other identifiers are
added when importable (py3langid, gcld3 from cld3-py, lingua, langdetect):
install them in a scratch environment and pass its site-packages with
--extra-site to compare them without adding them to the project.

    python benchmarks/langid_compare.py [--gold DIR] [--rounds 3] [--errors] [--no-f1]
        [--sample-chars 3000] [--block-chars 300] [--extra-site DIR]
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import lxml.etree
import lxml.html

from corpus_crawler import ExtractConfig, extract, langid
from corpus_crawler.evaluate import PageScore, Summary, find_gold_sets, load_gold_set, page_scores
from corpus_crawler.stoplists import available_languages

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"

#: (set, page id) -> language, for pages whose gold text cannot tell (checked by hand on
#: the page itself); None: the page has no language at all.
HAND_LABELS: dict[tuple[str, str], str | None] = {
    # gold empty; the page is an English parenting portal (menus, teasers)
    ("cleaneval-dev", "32"): "en",
    # gold is "<!-- this page contains no article -->"; an English BBC index page
    ("cleanportaleval", "bbc.co.uk_news_04"): "en",
    # gold empty; an English BBC index page
    ("cleanportaleval", "bbc.co.uk_news_05"): "en",
    # the whole page is "abc", "def", "ghi"
    ("readability", "js-link-replacement"): None,
    # the whole page is "Test Case 1", "Test Case 2"
    ("readability", "lazy-image-3"): "en",
}

Identifier = Callable[[Sequence[str]], "str | None"]


@dataclass(frozen=True, slots=True)
class Page:
    set_name: str
    id: str
    html: bytes
    gold: str
    blocks: tuple[str, ...]
    reference: str | None


# --------------------------------------------------------------------------- pages


@contextmanager
def gold_root(gold: Path | None) -> Iterator[Path]:
    if gold is not None:
        yield gold
        return
    with tempfile.TemporaryDirectory(prefix="gold-") as tmp:
        with tarfile.open(DEFAULT_TARBALL) as archive:
            archive.extractall(tmp, filter="data")
        yield Path(tmp) / "gold"


def load_pages(root: Path) -> list[Page]:
    blocks_config = ExtractConfig(language=None)
    pages = []
    for set_dir in find_gold_sets(root):
        for page in load_gold_set(set_dir).pages:
            document = extract(page.html, page.url, blocks_config)
            key = (set_dir.name, page.id)
            reference = (
                HAND_LABELS[key] if key in HAND_LABELS else langid.identify_by_model(page.gold).code
            )
            blocks = tuple(p.text for p in document.paragraphs)
            pages.append(Page(set_dir.name, page.id, page.html, page.gold, blocks, reference))
    return pages


# --------------------------------------------------------------------------- identifiers


def ours(method: langid.IdMethod) -> Identifier:
    def run(blocks: Sequence[str]) -> str | None:
        return langid.identify(blocks, method).code

    return run


#: Other libraries' codes that differ from configs/languages codes.
_OTHER_CODES = {"iw": "he", "jw": "jv", "no": "nb", "fil": "tl", "in": "id", "sh": "hbs"}
_NO_LANGUAGE = {"un", "und", "zxx", "xxx", ""}


def _normalise(code: str | None) -> str | None:
    if code is None:
        return None
    base = code.lower().replace("_", "-").split("-")[0]
    if base in _NO_LANGUAGE:
        return None
    return _OTHER_CODES.get(base, base)


def other_libraries() -> dict[str, Identifier]:
    """Adapters for the language identifiers that happen to be importable."""
    found: dict[str, Identifier] = {}
    sample = langid._sample
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        py3 = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        found["py3langid"] = lambda b: _normalise(py3.classify(sample(b))[0])
    except ImportError:
        pass
    try:
        import gcld3

        cld3 = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=10000)
        found["cld3 (cld3-py)"] = lambda b: _normalise(cld3.FindLanguage(text=sample(b)).language)
    except ImportError:
        pass
    try:
        from lingua import LanguageDetectorBuilder

        lingua = LanguageDetectorBuilder.from_all_languages().build()

        def run_lingua(blocks: Sequence[str]) -> str | None:
            language = lingua.detect_language_of(sample(blocks))
            return None if language is None else language.iso_code_639_1.name.lower()

        found["lingua"] = run_lingua
    except ImportError:
        pass
    try:
        import langdetect
        from langdetect import DetectorFactory

        DetectorFactory.seed = 0

        def run_langdetect(blocks: Sequence[str]) -> str | None:
            try:
                return _normalise(langdetect.detect(sample(blocks)))
            except langdetect.LangDetectException:
                return None

        found["langdetect"] = run_langdetect
    except ImportError:
        pass
    return found


# --------------------------------------------------------------------------- measures


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    choices: tuple[str | None, ...]
    us_per_page: float | None


def run_identifier(name: str, identify: Identifier, pages: Sequence[Page], rounds: int) -> Row:
    choices = tuple(identify(page.blocks) for page in pages)  # also warms caches up
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        # CPU time of this process: the machine may be shared, and wall time counts
        # the other processes' turns too
        start = time.process_time()
        for page in pages:
            identify(page.blocks)
        best = min(best, time.process_time() - start)
    return Row(name, choices, best / len(pages) * 1e6)


def parse_time(pages: Sequence[Page], rounds: int) -> float:
    """CPU microseconds per page of `lxml.html.fromstring` alone: the baseline."""
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        start = time.process_time()
        for page in pages:
            with suppress(lxml.etree.ParserError, ValueError):
                lxml.html.fromstring(page.html)
        best = min(best, time.process_time() - start)
    return best / len(pages) * 1e6


def accuracy(row: Row, pages: Sequence[Page]) -> tuple[int, int, list[str]]:
    right = total = 0
    wrong = []
    for page, choice in zip(pages, row.choices, strict=True):
        if page.reference is None:
            continue
        total += 1
        if choice == page.reference:
            right += 1
        else:
            wrong.append(f"{page.set_name}/{page.id}: {page.reference} -> {choice}")
    return right, total, wrong


class F1Scorer:
    """Shingle F1 per gold set with per-page languages; each (page, language) extracted once."""

    def __init__(self, pages: Sequence[Page]) -> None:
        self.pages = pages
        self.stoplists = set(available_languages())
        self.texts: dict[tuple[int, str | None], str] = {}

    def config(self, code: str | None) -> ExtractConfig:
        # No stoplist for the language (or no language): language-independent classification.
        return ExtractConfig(language=code if code in self.stoplists else None)

    def text(self, index: int, code: str | None) -> str:
        key = (index, code if code in self.stoplists else None)
        if key not in self.texts:
            page = self.pages[index]
            document = extract(page.html, None, self.config(code))
            self.texts[key] = document.text if document.drop_reason is None else ""
        return self.texts[key]

    def f1(self, choices: Sequence[str | None]) -> dict[str, float]:
        scores: dict[str, list[PageScore]] = {}
        for index, (page, code) in enumerate(zip(self.pages, choices, strict=True)):
            score = page_scores(self.text(index, code), page.gold)
            scores.setdefault(page.set_name, []).append(score)
        return {name: Summary.of(values).f1 for name, values in scores.items()}


# --------------------------------------------------------------------------- report


def gold_disagreements(pages: Sequence[Page]) -> list[str]:
    """Pages where the stop-word method on the gold text disagrees with the reference."""
    out = []
    for page in pages:
        by_stopwords = langid.identify_by_stopwords(page.gold).code
        if by_stopwords != page.reference:
            hand = " (hand label)" if (page.set_name, page.id) in HAND_LABELS else ""
            out.append(
                f"{page.set_name}/{page.id}: reference {page.reference}{hand},"
                f" stopwords on gold {by_stopwords}"
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, help="a gold set or a folder of sets")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds (best kept)")
    parser.add_argument(
        "--sample-chars",
        type=int,
        default=langid.MAX_SAMPLE_CHARS,
        help="characters of the longest blocks each method looks at",
    )
    parser.add_argument(
        "--block-chars",
        type=int,
        default=langid.MAX_BLOCK_CHARS,
        help="characters one block may give to the sample",
    )
    parser.add_argument("--extra-site", type=Path, help="site-packages with other identifiers")
    parser.add_argument("--no-f1", action="store_true", help="skip the extraction F1 columns")
    parser.add_argument("--errors", action="store_true", help="list every misidentified page")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    if args.extra_site:
        sys.path.append(str(args.extra_site))  # after ours: cannot shadow the project's deps
    langid.MAX_SAMPLE_CHARS = args.sample_chars
    langid.MAX_BLOCK_CHARS = args.block_chars

    with gold_root(args.gold) as root:
        pages = load_pages(root)
    langid.identify(["warm the stoplist index up"], langid.IdMethod.STOPWORDS)

    identifiers: dict[str, Identifier] = {m.value: ours(m) for m in langid.IdMethod}
    identifiers.update(other_libraries())
    rows = [run_identifier(name, fn, pages, args.rounds) for name, fn in identifiers.items()]
    rows.append(Row("en (fixed)", tuple("en" for _ in pages), None))
    rows.append(Row("reference labels", tuple(p.reference for p in pages), None))

    parse = parse_time(pages, args.rounds)
    sets = sorted({p.set_name for p in pages})
    scorer = None if args.no_f1 else F1Scorer(pages)
    print(
        f"{len(pages)} pages, {sum(p.reference is not None for p in pages)} with a language;"
        f" sample: longest blocks, up to {args.block_chars} characters each and"
        f" {args.sample_chars} in all"
    )
    print(f"lxml.html.fromstring alone: {parse:.0f} us/page (CPU time, best of {args.rounds})")
    header = f"{'method':<18} {'accuracy':>14} {'us/page':>8} {'x parse':>7}"
    if scorer:
        header += "".join(f" {name[:15]:>15}" for name in sets) + f" {'mean F1':>8}"
    print(header)
    for row in rows:
        right, total, _ = accuracy(row, pages)
        line = f"{row.name:<18} {right:>4}/{total} {right / total:6.3f}"
        if row.us_per_page is not None:
            line += f" {row.us_per_page:8.0f} {row.us_per_page / parse:7.2f}"
        else:
            line += f" {'-':>8} {'-':>7}"
        if scorer:
            f1 = scorer.f1(row.choices)
            line += "".join(f" {f1[name]:15.3f}" for name in sets)
            line += f" {sum(f1.values()) / len(f1):8.3f}"
        print(line)
    if args.errors:
        for row in rows:
            wrong = accuracy(row, pages)[2]
            if wrong:
                print(f"\n{row.name} misses {len(wrong)}:\n  " + "\n  ".join(wrong))
    disagreements = gold_disagreements(pages)
    print(f"\nstop words on the gold text vs reference: {len(disagreements)} differ")
    for line in disagreements:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Score extracted text against hand-made gold text.

The main metric is token-shingle F1 as the scrapinghub article-extraction
benchmark defines it (its ``evaluate.py``), so our figures compare with the
reference scores in ``tests/data/README.md``:

* a text is split into tokens, the runs of ``\\w`` characters (case kept); on a page
  whose manifest record says ``"tokens": "characters"`` (a Chinese or Japanese set,
  whose words are not spaced) each Han or kana character is a token of its own, as
  the vertical's tokenizer has it, and 4-character shingles are compared (the
  benchmark's runs would be whole clauses there);
* its shingles are the multiset of its 4-token windows; a text of 1 to 3 tokens
  has one shorter shingle (all its tokens), an empty text has none;
* per page, true positives are the multiset overlap of predicted and gold
  shingles, false positives the predicted surplus, false negatives the gold
  surplus;
* precision is averaged over the pages whose prediction has a shingle, recall
  over the pages whose gold has one, and F1 is the harmonic mean of those two
  averages (not the mean of per-page F1s).

The secondary metric is bag-of-words F1: the same overlap on the multiset of
lower-cased tokens (case is folded so that a heading in capitals still counts),
computed per page and averaged over all pages. A page whose gold and prediction
are both empty scores 1 (nothing was to be kept and nothing was); one empty and
the other not scores 0.

A gold set is a folder with ``html/<id>.html`` (bytes as served),
``gold/<id>.txt`` (UTF-8, one paragraph per line) and optionally
``manifest.jsonl`` (one JSON object per page with at least ``id``; ``url`` is
passed to the extractor when present).
"""

from __future__ import annotations

import json
import multiprocessing
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import ExtractConfig
from .extract import extract
from .invisible import without_soft_hyphens
from .model import DropReason
from .tokenize import CJK_CHARACTERS

#: Shingle length of the scrapinghub benchmark.
SHINGLE_SIZE = 4

_TOKEN_RE = re.compile(r"\w+")
_CHARACTER_TOKEN_RE = re.compile(f"[{CJK_CHARACTERS}]|[^\\W{CJK_CHARACTERS}]+")
#: A manifest record's ``tokens``: how its page's texts are split.
TOKEN_MODES = ("words", "characters")

#: `(html bytes, url) -> extracted text`: what `evaluate_set` scores.
ExtractFn = Callable[[bytes, str | None], str]
#: `(pages done, pages in the set)`, called after each page.
ProgressFn = Callable[[int, int], None]


class GoldSetError(ValueError):
    """A folder is not laid out like a gold set; the message says what is missing."""


# --------------------------------------------------------------------------- metrics


def tokens(text: str, *, characters: bool = False) -> list[str]:
    """The ``\\w+`` runs of `text`, case kept (the benchmark's tokenizer); with
    `characters`, each Han or kana character is a token of its own.

    Soft hyphens are taken out first. They are hyphenation hints that show nothing,
    and ``\\w+`` would read each as a word break. A gold copied from a rendered
    page keeps them ("infor&shy;mation": 31 of 12,624 gold pages here), and an
    extractor that takes them out (corpus_crawler.invisible) then lost the word."""
    return (_CHARACTER_TOKEN_RE if characters else _TOKEN_RE).findall(without_soft_hyphens(text))


def shingles(
    text: str, size: int = SHINGLE_SIZE, *, characters: bool = False
) -> Counter[tuple[str, ...]]:
    """The multiset of `size`-token shingles of `text`.

    Matches the benchmark: a text shorter than `size` tokens (but not empty)
    yields one shingle made of all its tokens; an empty text yields none.
    """
    if size < 1:
        raise ValueError(f"shingle size must be at least 1, got {size}")
    words = tokens(text, characters=characters)
    if len(words) <= size:
        return Counter([tuple(words)]) if words else Counter()
    return Counter(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


def bag_of_words(text: str, *, characters: bool = False) -> Counter[str]:
    """The multiset of lower-cased tokens of `text` (see `tokens`)."""
    return Counter(word.lower() for word in tokens(text, characters=characters))


@dataclass(frozen=True, slots=True)
class Overlap:
    """Multiset overlap of a prediction with its gold: true/false positives, false negatives."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @classmethod
    def of(cls, predicted: Mapping[Any, int], gold: Mapping[Any, int]) -> Overlap:
        tp = sum(min(count, gold.get(key, 0)) for key, count in predicted.items())
        return cls(
            true_positives=tp,
            false_positives=sum(predicted.values()) - tp,
            false_negatives=sum(gold.values()) - tp,
        )

    @property
    def predicted(self) -> int:
        return self.true_positives + self.false_positives

    @property
    def gold(self) -> int:
        return self.true_positives + self.false_negatives

    @property
    def precision(self) -> float | None:
        """None when nothing was predicted (such a page is left out of the mean precision)."""
        return self.true_positives / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        """None when the gold is empty (such a page is left out of the mean recall)."""
        return self.true_positives / self.gold if self.gold else None

    @property
    def f1(self) -> float:
        """Per-page F1; 1.0 when gold and prediction are both empty."""
        if not self.predicted and not self.gold:
            return 1.0
        return 2 * self.true_positives / (self.predicted + self.gold)


@dataclass(frozen=True, slots=True)
class PageScore:
    """How one predicted text compares with its gold text."""

    shingles: Overlap
    words: Overlap

    @property
    def precision(self) -> float | None:
        return self.shingles.precision

    @property
    def recall(self) -> float | None:
        return self.shingles.recall

    @property
    def f1(self) -> float:
        return self.shingles.f1

    @property
    def bow_f1(self) -> float:
        return self.words.f1


def page_scores(predicted: str, gold: str, *, characters: bool = False) -> PageScore:
    """Shingle and bag-of-words overlap of one page's predicted text with its gold text
    (`characters`: Han and kana split into characters, see `tokens`)."""
    return PageScore(
        shingles=Overlap.of(
            shingles(predicted, characters=characters), shingles(gold, characters=characters)
        ),
        words=Overlap.of(
            bag_of_words(predicted, characters=characters),
            bag_of_words(gold, characters=characters),
        ),
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """Set-level scores, aggregated as the benchmark does (see the module docstring)."""

    pages: int
    precision: float
    recall: float
    f1: float
    bow_precision: float
    bow_recall: float
    bow_f1: float

    @classmethod
    def of(cls, scores: Iterable[PageScore]) -> Summary:
        scores = list(scores)
        precision = _mean(s.shingles.precision for s in scores)
        recall = _mean(s.shingles.recall for s in scores)
        return cls(
            pages=len(scores),
            precision=precision,
            recall=recall,
            f1=_harmonic(precision, recall),
            bow_precision=_mean(s.words.precision for s in scores),
            bow_recall=_mean(s.words.recall for s in scores),
            bow_f1=_mean(s.words.f1 for s in scores),
        )


def _mean(values: Iterable[float | None]) -> float:
    """Mean of the defined values; 0.0 when none is defined."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else 0.0


def _harmonic(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b else 0.0


# --------------------------------------------------------------------------- gold sets


@dataclass(frozen=True, slots=True)
class GoldPage:
    """One annotated page: the HTML bytes as served and the hand-made text."""

    id: str
    html: bytes
    gold: str
    url: str | None = None
    #: The page's manifest.jsonl record (just ``{"id": ...}`` without a manifest).
    record: Mapping[str, Any] = field(default_factory=dict)

    @property
    def characters(self) -> bool:
        """Whether the page is scored by characters (``"tokens": "characters"``)."""
        return scored_by_characters(self.record)


def scored_by_characters(record: Mapping[str, Any]) -> bool:
    """Whether a manifest record asks for character tokens (``"tokens": "characters"``)."""
    return record.get("tokens") == "characters"


@dataclass(frozen=True, slots=True)
class GoldSet:
    name: str
    path: Path
    pages: tuple[GoldPage, ...]


def is_gold_set(path: Path) -> bool:
    return (path / "html").is_dir() and (path / "gold").is_dir()


def find_gold_sets(path: str | Path) -> list[Path]:
    """`path` itself if it is a gold set, else its subfolders that are (sorted).

    Raises GoldSetError naming what a gold set must contain.
    """
    path = Path(path)
    if not path.is_dir():
        raise GoldSetError(f"{path}: no such folder; pass a gold set folder (with html/ and gold/)")
    if is_gold_set(path):
        return [path]
    children = sorted(p for p in path.iterdir() if p.is_dir() and is_gold_set(p))
    if children:
        return children
    missing = [name for name in ("html", "gold") if not (path / name).is_dir()]
    raise GoldSetError(
        f"{path} is not a gold set: it has no {' and no '.join(m + '/' for m in missing)}"
        " folder. A gold set holds html/<id>.html (page bytes), gold/<id>.txt"
        ' (UTF-8 main text) and optionally manifest.jsonl (one {"id": ..., "url": ...}'
        " object per line)"
    )


def read_manifest(set_dir: Path) -> list[dict[str, Any]]:
    """The manifest records of a gold set; without manifest.jsonl, one ``{"id"}`` per html file."""
    manifest = set_dir / "manifest.jsonl"
    if not manifest.exists():
        return [{"id": p.stem} for p in sorted((set_dir / "html").glob("*.html"))]
    records: list[dict[str, Any]] = []
    with manifest.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise GoldSetError(f"{manifest}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise GoldSetError(
                    f"{manifest}:{number}: each line must be a JSON object with a string"
                    ' "id", e.g. {"id": "page1", "url": "https://..."}'
                )
            if record.get("tokens", "words") not in TOKEN_MODES:
                raise GoldSetError(
                    f'{manifest}:{number}: "tokens" must be one of'
                    f" {', '.join(map(repr, TOKEN_MODES))}, got {record['tokens']!r}"
                )
            records.append(record)
    return records


def iter_gold_pages(set_dir: str | Path) -> Iterable[GoldPage]:
    """The pages of one gold set in manifest order, read lazily."""
    set_dir = Path(set_dir)
    if not is_gold_set(set_dir):
        find_gold_sets(set_dir)  # raises the explanatory error
        raise GoldSetError(f"{set_dir} holds several gold sets; pass one of its subfolders")
    for record in read_manifest(set_dir):
        page_id = record["id"]
        html_path = set_dir / "html" / f"{page_id}.html"
        gold_path = set_dir / "gold" / f"{page_id}.txt"
        for needed in (html_path, gold_path):
            if not needed.is_file():
                raise GoldSetError(
                    f"{set_dir}: page {page_id!r} has no {needed.relative_to(set_dir)};"
                    " add the file or remove the page from manifest.jsonl"
                )
        url = record.get("url")
        yield GoldPage(
            id=page_id,
            html=html_path.read_bytes(),
            gold=gold_path.read_text(encoding="utf-8"),
            url=url if isinstance(url, str) else None,
            record=record,
        )


def load_gold_set(set_dir: str | Path) -> GoldSet:
    """Read every page of a gold set into memory."""
    set_dir = Path(set_dir)
    pages = tuple(iter_gold_pages(set_dir))
    if not pages:
        raise GoldSetError(f"{set_dir} has no pages: put <id>.html files in its html/ folder")
    return GoldSet(name=set_dir.name, path=set_dir, pages=pages)


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True, slots=True)
class PageResult:
    """One row of a set report."""

    id: str
    url: str | None
    html_bytes: int
    predicted_chars: int
    gold_chars: int
    score: PageScore
    #: Extraction time of this page alone.
    seconds: float
    #: The exception an extractor raised, or extract()'s EXTRACTOR_ERROR detail ("" if none).
    error: str = ""
    #: extract()'s DropReason value for the page ("" when kept, or for a plain function).
    drop_reason: str = ""


@dataclass(frozen=True, slots=True)
class SetReport:
    name: str
    path: str
    rows: tuple[PageResult, ...]
    summary: Summary
    #: Wall-clock extraction time: the sum of per-page times with one worker, the
    #: pool's elapsed time with several (reading files and scoring are excluded).
    seconds: float
    workers: int = 1

    @property
    def pages(self) -> int:
        return len(self.rows)

    @property
    def html_bytes(self) -> int:
        return sum(r.html_bytes for r in self.rows)

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else float("inf")

    @property
    def mb_per_second(self) -> float:
        return self.html_bytes / 1e6 / self.seconds if self.seconds > 0 else float("inf")

    @property
    def errors(self) -> int:
        return sum(1 for r in self.rows if r.error)

    def worst_first(self) -> list[PageResult]:
        return sorted(self.rows, key=lambda r: (r.score.f1, r.score.bow_f1, r.id))


@dataclass(frozen=True, slots=True)
class _Output:
    text: str
    seconds: float
    error: str = ""
    drop_reason: str = ""


def _timed(extractor: ExtractFn | ExtractConfig, html: bytes, url: str | None) -> _Output:
    start = time.perf_counter()
    error = drop = ""
    try:
        if isinstance(extractor, ExtractConfig):
            document = extract(html, url, extractor)
            # score what the corpus would get: a dropped document writes nothing
            text = document.text if document.drop_reason is None else ""
            if document.drop_reason is not None:
                drop = document.drop_reason.value
            # extract() never raises: its failures come back as this drop reason
            if document.drop_reason is DropReason.EXTRACTOR_ERROR:
                error = document.drop_detail or drop
        else:
            text = extractor(html, url)
    except Exception as exc:  # a failing page is a scored row, not a crashed run
        text, error = "", f"{type(exc).__name__}: {exc}"
    return _Output(text, time.perf_counter() - start, error, drop)


def _ready() -> bool:
    return True


def _pool_context() -> multiprocessing.context.BaseContext:
    # Forking a process that holds threads or lxml state is unsafe; forkserver
    # is cheap where it exists, spawn everywhere else.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def evaluate_set(
    gold_set: str | Path | GoldSet,
    extractor: ExtractFn | ExtractConfig | None = None,
    *,
    workers: int = 1,
    progress: ProgressFn | None = None,
) -> SetReport:
    """Extract every page of a gold set and score it.

    `extractor` is an ExtractConfig (pages go through `extract()`; the default
    is `ExtractConfig()`) or a function `(html_bytes, url) -> text`, which must
    be picklable (defined at module level) when `workers` > 1.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if extractor is None:
        extractor = ExtractConfig()
    gold = gold_set if isinstance(gold_set, GoldSet) else load_gold_set(gold_set)
    total = len(gold.pages)
    outputs: list[_Output] = []
    if workers == 1:
        for done, page in enumerate(gold.pages, 1):
            outputs.append(_timed(extractor, page.html, page.url))
            if progress:
                progress(done, total)
        seconds = sum(output.seconds for output in outputs)
    else:
        slots: list[_Output | None] = [None] * total
        with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
            # start every worker (and its imports) before the clock, so pages/s is extraction
            for warm in [pool.submit(_ready) for _ in range(workers)]:
                warm.result()
            start = time.perf_counter()
            futures = {
                pool.submit(_timed, extractor, page.html, page.url): index
                for index, page in enumerate(gold.pages)
            }
            for done, future in enumerate(as_completed(futures), 1):
                slots[futures[future]] = future.result()
                if progress:
                    progress(done, total)
        seconds = time.perf_counter() - start
        outputs = [slot for slot in slots if slot is not None]
    rows = tuple(
        PageResult(
            id=page.id,
            url=page.url,
            html_bytes=len(page.html),
            predicted_chars=len(output.text),
            gold_chars=len(page.gold),
            score=page_scores(output.text, page.gold, characters=page.characters),
            seconds=output.seconds,
            error=output.error,
            drop_reason=output.drop_reason,
        )
        for page, output in zip(gold.pages, outputs, strict=True)
    )
    return SetReport(
        name=gold.name,
        path=str(gold.path),
        rows=rows,
        summary=Summary.of(r.score for r in rows),
        seconds=seconds,
        workers=workers,
    )


# --------------------------------------------------------------------------- output


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def format_table(reports: Sequence[SetReport]) -> str:
    """One line per set: pages, shingle precision/recall/F1, bag-of-words F1, speed."""
    header = ["set", "pages", "P", "R", "F1", "BOW F1", "pages/s", "errors"]
    rows = [
        [
            r.name,
            str(r.pages),
            _fmt(r.summary.precision),
            _fmt(r.summary.recall),
            _fmt(r.summary.f1),
            _fmt(r.summary.bow_f1),
            f"{r.pages_per_second:.1f}",
            str(r.errors),
        ]
        for r in reports
    ]
    return _table(header, rows)


def format_pages(report: SetReport, limit: int | None = None) -> str:
    """Per-page rows, worst shingle F1 first, for finding what a setting breaks."""
    header = ["page", "P", "R", "F1", "BOW F1", "out chars", "gold chars", "ms", "drop", "error"]
    rows = [
        [
            r.id,
            _fmt(r.score.precision),
            _fmt(r.score.recall),
            _fmt(r.score.f1),
            _fmt(r.score.bow_f1),
            str(r.predicted_chars),
            str(r.gold_chars),
            f"{r.seconds * 1000:.1f}",
            r.drop_reason or "-",
            r.error,
        ]
        for r in report.worst_first()[:limit]
    ]
    return _table(header, rows)


def report_to_dict(report: SetReport) -> dict[str, Any]:
    """A JSON-ready form of a report (per-page rows in manifest order)."""
    s = report.summary
    return {
        "set": report.name,
        "path": report.path,
        "pages": report.pages,
        "html_bytes": report.html_bytes,
        "precision": s.precision,
        "recall": s.recall,
        "f1": s.f1,
        "bow_precision": s.bow_precision,
        "bow_recall": s.bow_recall,
        "bow_f1": s.bow_f1,
        "seconds": report.seconds,
        "workers": report.workers,
        "pages_per_second": report.pages_per_second,
        "mb_per_second": report.mb_per_second,
        "errors": report.errors,
        "rows": [
            {
                "id": r.id,
                "url": r.url,
                "html_bytes": r.html_bytes,
                "predicted_chars": r.predicted_chars,
                "gold_chars": r.gold_chars,
                "precision": r.score.precision,
                "recall": r.score.recall,
                "f1": r.score.f1,
                "bow_f1": r.score.bow_f1,
                "shingles_tp_fp_fn": [
                    r.score.shingles.true_positives,
                    r.score.shingles.false_positives,
                    r.score.shingles.false_negatives,
                ],
                "seconds": r.seconds,
                "drop_reason": r.drop_reason,
                "error": r.error,
            }
            for r in report.rows
        ],
    }

"""How far a classifier learned over a preset's block features gets, against the
preset's own rules: is there signal left in the features the rules do not use?

Each block of the preset's output (its paragraphs, good or not) becomes a row of
features: its final and context-free classes, length and words (logarithmic), link
and stop-word density, heading / headline / list item / <select> flags, the final
classes of two neighbours on either side, its place on the page, its depth, whether a
<table>, <li> or <form> holds it, and the share of the page's characters the preset
keeps. Its label is the gold's: more than half of its shingles in the gold text
(tools/article_losses.py's block oracle). Each row weighs its share of its page's
shingles, so that every page counts once, as in the set's F1 (a mean over pages).

A logistic regression (L2, fitted by Newton's method in numpy) is trained on the
--train sets and scored on the --test set at each threshold, beside the preset's
rules and the block oracle on the same pages, with the benchmark's shingle F1:

    python tools/learned_ceiling.py --gold ../shared/data/gold --gold /tmp/held \
        --train cleaneval-final --test cleaneval-dev

(2026-11-30: 0.9117 / 0.9023 / 0.8955 at 0.4 / 0.5 / 0.6, and 0.9224 at 0.5 with
--l2 10000, against the rules' 0.9226 and the oracle's 0.9359; docs/presets-steps.md
has the table.)
With --folds K and no --train, the test set is split into K folds by page and each
fold is scored by a model trained on the others.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.evaluate import (
    GoldPage,
    Overlap,
    Summary,
    find_gold_sets,
    load_gold_set,
    page_scores,
)
from corpus_crawler.evaluate import shingles as shingles_of
from corpus_crawler.model import Paragraph, ParagraphClass

_CLASSES = tuple(ParagraphClass)
_NEIGHBOURS = (-2, -1, 1, 2)


class Block(NamedTuple):
    text: str
    kept: bool  # the preset's decision
    in_gold: float  # share of its shingles in the gold
    weight: float  # share of its page's shingles


class Page(NamedTuple):
    id: str
    gold: str
    characters: bool
    blocks: tuple[Block, ...]
    features: np.ndarray  # one row a block


def _one_hot(value: ParagraphClass) -> list[float]:
    return [float(value is c) for c in _CLASSES]


def block_features(paragraphs: Sequence[Paragraph]) -> np.ndarray:
    """One row of features per block (see the module docstring)."""
    n = len(paragraphs)
    total = sum(p.length for p in paragraphs) or 1
    kept_share = sum(p.length for p in paragraphs if p.is_good) / total
    rows = []
    for i, p in enumerate(paragraphs):
        tags = [step.split("[")[0] for step in p.xpath.split("/") if step]
        row = _one_hot(p.final_class) + _one_hot(p.cf_class)
        row += [
            math.log1p(p.length),
            math.log1p(p.word_count),
            p.link_density,
            p.stopword_density,
            float(p.heading),
            float(p.headline),
            float(p.in_select),
            float(p.kind == "l"),
        ]
        for step in _NEIGHBOURS:
            j = i + step
            row += _one_hot(paragraphs[j].final_class) if 0 <= j < n else [0.0] * len(_CLASSES)
        row += [
            i / n,
            kept_share,
            len(tags) / 30,
            float("table" in tags),
            float("li" in tags),
            float("form" in tags),
        ]
        rows.append(row)
    return np.array(rows, dtype=float).reshape(n, -1)


def _page(job: tuple[GoldPage, Preset]) -> Page:
    gold_page, preset = job
    chars = gold_page.characters
    paragraphs = extract(gold_page.html, gold_page.url, ExtractConfig(preset=preset)).paragraphs
    gold = shingles_of(gold_page.gold, characters=chars)
    counted = []
    for p in paragraphs:
        own = shingles_of(p.text, characters=chars)
        size = sum(own.values())
        share = Overlap.of(own, gold).precision or 0.0  # its shingles' share in the gold
        counted.append((p, share, max(size, 0.5)))
    page_total = sum(size for _, _, size in counted) or 1.0
    blocks = tuple(Block(p.text, p.is_good, share, size / page_total) for p, share, size in counted)
    return Page(gold_page.id, gold_page.gold, chars, blocks, block_features(paragraphs))


def load_pages(gold_dirs: Sequence[Path], name: str, preset: Preset, workers: int) -> list[Page]:
    """The set `name`'s pages (from the first of `gold_dirs` that has it), extracted."""
    for gold in gold_dirs:
        for path in find_gold_sets(gold):
            if path.name == name:
                jobs = [(page, preset) for page in load_gold_set(path).pages]
                if workers <= 1:
                    return [_page(job) for job in jobs]
                with ProcessPoolExecutor(workers) as pool:
                    return list(pool.map(_page, jobs, chunksize=4))
    raise SystemExit(f"no gold set {name!r} under {', '.join(map(str, gold_dirs))}")


class Model(NamedTuple):
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # the intercept last

    def probability(self, features: np.ndarray) -> np.ndarray:
        x = (features - self.mean) / self.scale
        z = x @ self.coef[:-1] + self.coef[-1]
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def fit(features: np.ndarray, labels: np.ndarray, weights: np.ndarray, l2: float = 1.0) -> Model:
    """Weighted L2-regularised logistic regression, by Newton's method (standardised
    features; the intercept is not penalised)."""
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale == 0] = 1.0
    x = np.hstack([(features - mean) / scale, np.ones((len(features), 1))])
    w = weights / weights.sum() * len(weights)
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    coef = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ coef, -30, 30)))
        gradient = x.T @ (w * (p - labels)) + penalty * coef
        hessian = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        coef -= step
        if np.abs(step).max() < 1e-8:
            break
    return Model(mean, scale, coef)


def train(pages: Sequence[Page], l2: float = 1.0) -> Model:
    rows = [p for p in pages if p.blocks]
    return fit(
        np.vstack([p.features for p in rows]),
        np.array([b.in_gold > 0.5 for p in rows for b in p.blocks], dtype=float),
        np.array([b.weight for p in rows for b in p.blocks]),
        l2,
    )


def score(pages: Sequence[Page], keep: Sequence[Sequence[bool]]) -> Summary:
    """The benchmark's shingle scores of the pages with these blocks kept."""
    return Summary.of(
        page_scores(
            "\n".join(b.text for b, k in zip(page.blocks, kept, strict=True) if k),
            page.gold,
            characters=page.characters,
        )
        for page, kept in zip(pages, keep, strict=True)
    )


def _line(label: str, summary: Summary) -> str:
    return f"  {label:24} F1 {summary.f1:.4f} P {summary.precision:.4f} R {summary.recall:.4f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--gold",
        type=Path,
        action="append",
        required=True,
        help="a folder of gold sets (repeatable)",
    )
    parser.add_argument(
        "--train", action="append", default=[], help="a set to train on (repeatable)"
    )
    parser.add_argument("--test", required=True, help="the set to score")
    parser.add_argument("--folds", type=int, default=5, help="without --train: folds of --test")
    parser.add_argument("--preset", default="corpus", choices=[p.value for p in Preset])
    parser.add_argument(
        "--threshold", type=float, action="append", help="keep above (0.4, 0.5, 0.6)"
    )
    parser.add_argument(
        "--l2", type=float, default=1.0, help="the L2 penalty (rows weigh 1 on average)"
    )
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    preset = Preset(args.preset)
    thresholds = args.threshold or [0.4, 0.5, 0.6]
    test = load_pages(args.gold, args.test, preset, args.workers)
    if args.train:
        train_pages = [
            p for name in args.train for p in load_pages(args.gold, name, preset, args.workers)
        ]
        models = [train(train_pages, args.l2)] * len(test)
        how = f"trained on {', '.join(args.train)}"
    else:
        if args.folds < 2 or args.folds > len(test):
            raise SystemExit(f"--folds must be 2..{len(test)} (the pages of {args.test})")
        order = np.random.default_rng(0).permutation(len(test))
        models = [None] * len(test)  # type: ignore[list-item]
        for fold in np.array_split(order, args.folds):
            held = set(fold.tolist())
            model = train([p for i, p in enumerate(test) if i not in held], args.l2)
            for i in held:
                models[i] = model
        how = f"{args.folds}-fold by page"
    print(f"{args.test}: {len(test)} pages, preset {preset.value}, logistic regression {how}")
    print(_line("the preset's rules", score(test, [[b.kept for b in p.blocks] for p in test])))
    print(_line("block oracle", score(test, [[b.in_gold > 0.5 for b in p.blocks] for p in test])))
    for threshold in thresholds:
        keep = [
            list(model.probability(page.features) > threshold) if page.blocks else []
            for page, model in zip(test, models, strict=True)
        ]
        print(_line(f"learned, keep above {threshold:g}", score(test, keep)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

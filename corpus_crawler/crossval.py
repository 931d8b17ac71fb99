"""k-fold cross-validation of tuned constants on gold sets (issue 13).

A constant chosen on the pages it is then scored on looks better than it is.
Here each set's pages are split into k folds; for each fold the grid point
with the best objective on the other folds is chosen and scored on the fold
it never saw. The held-out scores of all folds together are the
cross-validated figure, reported beside the in-sample one. Folds come from a
hash of the page id, so they are the same on every run and every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .evaluate import PageScore, Summary

Point = TypeVar("Point", bound=Hashable)

#: set name -> that set's Summary; an objective maps it to one number to maximise.
Objective = Callable[[Mapping[str, Summary]], float]


def fold_of(page_id: str, folds: int) -> int:
    """The fold of a page: stable across runs, independent of the order of pages."""
    digest = hashlib.sha256(page_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % folds


@dataclass(frozen=True, slots=True)
class CrossValidation:
    """What k-fold selection gives: held-out scores and the point each fold chose."""

    held_out: Mapping[str, Summary]
    chosen: tuple[Hashable, ...]
    folds: int


def cross_validate(
    scores: Mapping[Point, Mapping[str, Sequence[PageScore]]],
    page_ids: Mapping[str, Sequence[str]],
    objective: Objective,
    folds: int = 5,
) -> CrossValidation:
    """Choose a grid point per fold on the other folds; score it on the held-out fold.

    scores: grid point -> set name -> per-page scores, in the order of
    `page_ids[set name]`. Ties go to the first point in `scores`' order, so
    list the shipped or simplest point first.
    """
    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    if not scores:
        raise ValueError("no grid points to choose from")
    assignment = {
        name: [fold_of(page_id, folds) for page_id in ids] for name, ids in page_ids.items()
    }
    held_out: dict[str, list[PageScore]] = {name: [] for name in page_ids}
    chosen = []
    for fold in range(folds):
        best_point = None
        best_value = float("-inf")
        for point, by_set in scores.items():
            training = {
                name: Summary.of(
                    s for s, f in zip(by_set[name], assignment[name], strict=True) if f != fold
                )
                for name in page_ids
            }
            value = objective(training)
            if value > best_value:
                best_point, best_value = point, value
        assert best_point is not None
        chosen.append(best_point)
        for name in page_ids:
            held_out[name].extend(
                s
                for s, f in zip(scores[best_point][name], assignment[name], strict=True)
                if f == fold
            )
    return CrossValidation(
        {name: Summary.of(pages) for name, pages in held_out.items()}, tuple(chosen), folds
    )


def in_sample(scores: Mapping[str, Sequence[PageScore]]) -> dict[str, Summary]:
    return {name: Summary.of(pages) for name, pages in scores.items()}

"""Quality floors: shingle F1 of the default extractor on the bundled gold sets.

The floors sit at jusText 3.0.2's own scores on the English sets
(0.851 / 0.821, tests/data/README.md); on readability, which is multilingual,
choosing the stoplist per page must lift the score well above jusText's 0.649.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_crawler import ExtractConfig
from corpus_crawler.evaluate import evaluate_set, format_pages

FLOORS = {
    "cleaneval-dev": 0.85,
    "cleanportaleval": 0.82,
    "readability": 0.84,
}


@pytest.mark.parametrize("set_name", sorted(FLOORS))
def test_default_config_shingle_f1_floor(gold_dir: Path, set_name: str) -> None:
    report = evaluate_set(gold_dir / set_name, ExtractConfig())
    assert report.errors == 0, format_pages(report, limit=10)
    assert report.summary.f1 >= FLOORS[set_name], (
        f"{set_name}: shingle F1 {report.summary.f1:.3f} < {FLOORS[set_name]}"
        f" (P {report.summary.precision:.3f}, R {report.summary.recall:.3f});"
        f" worst pages:\n{format_pages(report, limit=10)}"
    )

"""Shared fixtures. Keep this small and generic: anything one test file needs stays there."""

from __future__ import annotations

import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The loopback test sites (tests/site/*.py) are plain modules the tests import by name
# (`import dup_site`); the folder is not a package, as `site` is a standard module.
sys.path.insert(0, str(Path(__file__).parent / "site"))

DATA_DIR = Path(__file__).parent / "data"
GOLD_TARBALL = DATA_DIR / "gold.tar.xz"
CHINESE_TARBALL = DATA_DIR / "gold-chinese.tar.xz"
SCRAPINGHUB_TARBALL = DATA_DIR / "gold-scrapinghub.tar.xz"

#: (page id, html bytes as served, gold text, manifest record)
GoldPageTuple = tuple[str, bytes, str, dict[str, Any]]


@pytest.fixture(scope="session")
def gold_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/data/gold.tar.xz unpacked once per session: a folder of gold sets.

    Laid out as <set>/{html,gold}/ + <set>/manifest.jsonl for the sets
    cleaneval-dev (also gold-marked/), cleanportaleval and readability.
    """
    return _unpacked(GOLD_TARBALL, tmp_path_factory) / "gold"


@pytest.fixture(scope="session")
def chinese_gold_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/data/gold-chinese.tar.xz unpacked once per session: the gold set
    chinese-web (69 pages, scored by character; a separate archive, so the tools
    that tune on every set in `gold_dir` do not see it)."""
    return _unpacked(CHINESE_TARBALL, tmp_path_factory) / "gold-chinese" / "chinese-web"


@pytest.fixture(scope="session")
def scrapinghub_gold_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/data/gold-scrapinghub.tar.xz unpacked once per session: the gold set
    scrapinghub (181 news and blog pages of 2019-2020; a separate archive, so the
    tools that tune on every set in `gold_dir` do not see it)."""
    return _unpacked(SCRAPINGHUB_TARBALL, tmp_path_factory) / "gold-scrapinghub" / "scrapinghub"


def _unpacked(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundled archive of gold sets unpacked into a session folder of its own."""
    target = tmp_path_factory.mktemp(tarball.name.split(".")[0])
    with tarfile.open(tarball) as archive:
        archive.extractall(target, filter="data")
    return target


@pytest.fixture(scope="session")
def gold_pages(gold_dir: Path) -> Callable[[str], Iterator[GoldPageTuple]]:
    """`gold_pages("cleaneval-dev")` yields (id, html bytes, gold text, record), manifest order."""
    from corpus_crawler.evaluate import iter_gold_pages

    def pages(set_name: str) -> Iterator[GoldPageTuple]:
        for page in iter_gold_pages(gold_dir / set_name):
            yield page.id, page.html, page.gold, dict(page.record)

    return pages


@pytest.fixture(scope="session")
def gold_report(gold_dir: Path) -> Callable[[str, Any], Any]:
    """`gold_report("readability", config)`: `evaluate_set` of that gold set, once a session.

    Several files hold floors for the same extractor on the same set (test_quality,
    test_quality_corpus, test_presets_article, test_combined, test_kimatu): each asserts
    its own floor on one shared scoring. Keyed by the config's repr (its options are a
    dict: not hashable); extraction is deterministic, so the report is the same."""
    from corpus_crawler.evaluate import evaluate_set

    reports: dict[tuple[str, str], Any] = {}

    def report(set_name: str, config: Any) -> Any:
        key = (set_name, repr(config))
        if key not in reports:
            reports[key] = evaluate_set(gold_dir / set_name, config)
        return reports[key]

    return report

"""The library side never imports Scrapy (STYLE.md: `corpus_crawler/` is a plain library)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import corpus_crawler


def test_corpus_crawler_modules_do_not_import_scrapy() -> None:
    modules = [
        f"corpus_crawler.{info.name}"
        for info in pkgutil.walk_packages(corpus_crawler.__path__)
        if not info.name.startswith("_configs")
    ]
    assert "corpus_crawler.extract" in modules and "corpus_crawler.warc" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted'))\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""


def _loaded_after(code: str, packages: tuple[str, ...]) -> list[str]:
    probe = (
        f"{code}\nimport sys\n"
        f"print(','.join(sorted({{m.split('.')[0] for m in sys.modules}} & {set(packages)!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return [name for name in result.stdout.strip().split(",") if name]


def test_the_crawl_modules_load_dedup_only_for_dedup() -> None:
    """Every crawl process and fork server imports `pipelines.worker` (the task types), and
    Scrapy the dedup pipeline's module; numpy and rensa (~90 ms of CPU each time) are for
    dedup only: they load when its pipeline opens, or in a worker that fingerprints."""
    crawl_modules = "import pipelines.worker, pipelines.pool, pipelines.dedup, pipelines.extract"
    assert _loaded_after(crawl_modules, ("numpy", "rensa")) == []
    # with dedup on, a worker loads them before its first page, not under its time cap
    warmed = (
        "from corpus_crawler.dedup import DedupConfig\n"
        "from pipelines.worker import WorkerConfig, init_worker\n"
        "init_worker(WorkerConfig(extract=None, dedup=DedupConfig()))"
    )
    assert _loaded_after(warmed, ("numpy", "rensa")) == ["numpy", "rensa"]

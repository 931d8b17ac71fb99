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

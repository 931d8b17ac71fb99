"""`scrapy crawl corpus -o items.jsonl`: Scrapy's own feed exports must serialise every item.

On the `outputs` branch alone this FAILS: the items carry bytes
(`FetchedPage.body`) and futures, so every item fails with `bytes is not JSON
serializable`. The crawl-layer reshaping (items as plain data, `campaign`
branch) makes it pass; this test proves it at merge time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from corpus_crawler.testserver import SiteServer

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "corpus_crawler" / "demo_site"


def test_scrapy_feed_export_writes_every_item(tmp_path: Path) -> None:
    feed = tmp_path / "items.jsonl"
    with SiteServer(SITE) as server:
        result = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "corpus", "-o", str(feed),
             "-s", f"CORPUS_SEEDS_URLS={server.url('/')}",
             "-s", "CORPUS_NETWORK_ALLOWED_NETWORKS=127.0.0.1/32",
             "-s", f"CORPUS_OUTPUT_DIR={tmp_path / 'out'}",
             "-s", "CORPUS_SCOPE_MAX_DEPTH=1", "-s", "LOG_LEVEL=INFO",
             # politeness waits (1 s a page by default) are not what this test checks
             "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False"],
            cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "is not JSON serializable" not in result.stderr, result.stderr[-3000:]
    # every kept document is one line, and every line is JSON
    items = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines()]
    summary = json.loads(next((tmp_path / "out").glob("*-summary.json")).read_text())
    assert len(items) == summary["pages"]["kept"] > 5

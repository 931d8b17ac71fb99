"""A recrawl pass under a scope narrowed since the first crawl: the due URLs the new
scope refuses are counted by reason (``corpus/recrawl/refused/<reason>``), named in
one log line, never fetched, and left in the campaign store, so that a recrawl with
the scope widened again revisits them. Real crawls of the demo site on 127.0.0.1."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import SiteServer

ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = ROOT / "corpus_crawler" / "demo_site"
#: A guard against a hung process, not a speed assertion.
TIMEOUT = 120

PROFILE = """\
name: narrowed
seeds:
  urls: ["{base}/"]
scope:
  max_depth: 3
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  workers: 1
schedule:
  min_interval: 1s
  initial_interval: 1s
output:
  progress_interval: 0
  report: false
"""
NARROWED = PROFILE.replace("scope:\n", 'scope:\n  deny_patterns: ["/articles/"]\n')


def _crawl(profile: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out), *extra],
        cwd=profile.parent, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip


def _fetched(warcs: list[Path]) -> set[str]:
    """Target URIs of the response and revisit records in `warcs`."""
    found = set()
    for path in warcs:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type in ("response", "revisit"):
                    found.add(record.rec_headers.get_header("WARC-Target-URI"))
    return found


def _latest_stats(out: Path) -> dict[str, int]:
    summaries = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("*-summary.json")]
    latest = max(summaries, key=lambda s: str(s["finished"]))
    stats = latest["stats"]
    assert isinstance(stats, dict)
    return stats


def _tracked(out: Path) -> set[str]:
    db = sqlite3.connect(f"{(out / 'campaign.sqlite').resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {str(url) for (url,) in db.execute("SELECT url FROM urls")}
    finally:
        db.close()


def test_recrawl_counts_names_and_keeps_due_urls_a_narrowed_scope_refuses(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "narrowed.yaml"
    out = tmp_path / "out"
    with SiteServer(DEMO_SITE) as site:
        profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
        first = _crawl(profile, out)
        assert first.returncode == 0, first.stderr[-3000:]
        articles = {url for url in _tracked(out) if "/articles/" in url}
        assert articles, "the first crawl found no article: nothing to narrow"

        profile.write_text(NARROWED.format(base=site.base_url), encoding="utf-8")
        before = set(out.glob("*.warc.gz"))
        time.sleep(1.2)  # every page's revisit interval (initial_interval: 1s) passes
        narrowed = _crawl(profile, out, "--recrawl")
        assert narrowed.returncode == 0, narrowed.stderr[-3000:]
        stats = _latest_stats(out)
        assert stats["corpus/recrawl/refused/denied"] == len(articles), stats
        assert stats["corpus/recrawl/due"] > 0  # the rest of the site was revisited
        lines = [line for line in narrowed.stderr.splitlines() if "out of this profile's" in line]
        assert len(lines) == 1, narrowed.stderr[-3000:]
        assert f"recrawl: {len(articles)} due URL(s) are out of this profile's scope" in lines[0]
        assert f"(denied {len(articles)})" in lines[0] and "/articles/" in lines[0]
        revisited = _fetched(sorted(set(out.glob("*.warc.gz")) - before))
        assert revisited and not revisited & articles, sorted(revisited & articles)
        assert articles <= _tracked(out)  # left in the campaign, not deleted

        profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
        before = set(out.glob("*.warc.gz"))
        time.sleep(1.2)
        widened = _crawl(profile, out, "--recrawl")
        assert widened.returncode == 0, widened.stderr[-3000:]
        assert articles <= _fetched(sorted(set(out.glob("*.warc.gz")) - before))
        assert not any(k.startswith("corpus/recrawl/refused/") for k in _latest_stats(out))

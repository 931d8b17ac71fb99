"""Domain yield pruning: the decision (corpus_crawler.yieldrate) and a real crawl of good
hosts beside a link farm and an image gallery (tests/site/dup_site.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_crawler.config import ConfigError
from corpus_crawler.yieldrate import (
    HostYield,
    YieldConfig,
    YieldPreset,
    YieldTracker,
    registered_domain,
    should_prune,
    yield_line,
)

ROOT = Path(__file__).resolve().parent.parent
CRAWL_TIMEOUT = 240  # a guard against a hung crawl, not a speed assertion


def test_spiderling_line() -> None:
    # SpiderLing: k * (log10(docs) - 1); nothing below 10 documents
    assert yield_line(0.002, 10) == 0.0
    assert yield_line(0.002, 100) == pytest.approx(0.002)
    assert yield_line(0.01, 1000) == pytest.approx(0.02)
    assert [p.k for p in YieldPreset] == [0.0, 0.002, 0.005, 0.01]


def test_should_prune_waits_for_both_thresholds() -> None:
    config = YieldConfig(preset=YieldPreset.NORMAL, min_docs=20, min_bytes=100_000)
    poor = HostYield(raw=1_000_000, clean=100, docs=19)
    assert not should_prune(poor, config)  # too few documents yet
    assert should_prune(HostYield(raw=1_000_000, clean=100, docs=20), config)
    assert not should_prune(HostYield(raw=99_999, clean=0, docs=50), config)  # too few bytes
    # 100 docs: the line is 0.005; a yield just above it survives, just below does not
    assert not should_prune(HostYield(raw=1_000_000, clean=5_001, docs=100), config)
    assert should_prune(HostYield(raw=1_000_000, clean=4_999, docs=100), config)
    off = YieldConfig(preset="off", min_docs=20, min_bytes=0)  # type: ignore[arg-type]
    assert not should_prune(HostYield(raw=10**9, clean=0, docs=10**6), off)


def test_bad_settings_name_the_key() -> None:
    with pytest.raises(ConfigError, match=re.escape("yield.preset: unknown preset 'lax'")):
        YieldConfig(preset="lax")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=re.escape("yield.min_docs: must be >= 10")):
        YieldConfig(min_docs=5)


def test_registered_domain_offline() -> None:
    assert registered_domain("news.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("WWW.Example.com.") == "example.com"
    assert registered_domain("127.0.0.5") == "127.0.0.5"


def test_tracker_prunes_host_and_domain_and_persists(tmp_path: Path) -> None:
    config = YieldConfig(preset=YieldPreset.NORMAL, min_docs=10, min_bytes=0)
    path = tmp_path / "yield.sqlite"
    tracker = YieldTracker(config, path)
    newly = [tracker.record("farm.example.com", 10_000, 0) for _ in range(12)]
    # at 10 documents the line is 0, which a yield of 0 does not fall below: the 11th prunes
    assert newly.count(True) == 1 and newly.index(True) == 10
    for _ in range(30):
        assert not tracker.record("good.example.org", 10_000, 3_000)
    assert tracker.is_pruned("farm.example.com")
    # the whole registered domain went below the line with it
    assert tracker.is_pruned("other.example.com")
    assert not tracker.is_pruned("good.example.org")
    tracker.close()
    reopened = YieldTracker(config, path)
    assert reopened.pruned_hosts() == ["farm.example.com"]
    assert reopened.is_pruned("other.example.com")
    assert reopened.hosts["good.example.org"].docs == 30
    reopened.close()


PROFILE = """\
name: yield-test
seeds:
  urls: {seeds}
scope:
  max_depth: 3
politeness:
  obey_robots_txt: false
  concurrent_requests: 4
  concurrent_requests_per_domain: 1
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    enabled: false
dedup:
  paragraph_filter_mib: 8
yield:
  preset: "{preset}"
  min_docs: 10
  min_bytes: 50000
settings:
  # the crawl budget: responses, so refused requests to pruned hosts do not spend it
  CLOSESPIDER_PAGECOUNT: {budget}
  # one host after another, not one host's whole queue first
  SCHEDULER_PRIORITY_QUEUE: scrapy.pqueues.DownloaderAwarePriorityQueue
"""

BUDGET = 300


def crawl(workdir: Path, preset: str) -> tuple[dict[str, int], dict[str, object]]:
    import dup_site as site

    # more pages per host than the budget can fetch: the budget decides who gets what
    hosts = site.build_yield_site(pages_per_host=150)
    out = workdir / preset
    with site.MultiHostServer(hosts) as server:
        seeds = [server.base_url(address) + "/" for address in hosts]
        profile = workdir / f"{preset}.yaml"
        profile.write_text(
            PROFILE.format(seeds=json.dumps(seeds), preset=preset, budget=BUDGET), encoding="utf-8"
        )
        command = [
            sys.executable,
            "-m",
            "corpus_crawler.cli",
            "crawl",
            str(profile),
            "-o",
            str(out),
        ]
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=CRAWL_TIMEOUT, check=False
        )
        assert result.returncode == 0, f"crawl failed:\n{result.stdout}\n{result.stderr[-5000:]}"
        fetched = {address: len(log) for address, log in server.logs.items()}
    summary = json.loads(next(out.glob("*summary*.json")).read_text(encoding="utf-8"))
    return fetched, summary["stats"]


def test_low_yield_hosts_are_pruned_and_the_budget_goes_to_good_hosts(tmp_path: Path) -> None:
    off, off_stats = crawl(tmp_path, "off")
    on, on_stats = crawl(tmp_path, "normal")
    good = ("127.0.0.2", "127.0.0.3")
    poor = ("127.0.0.5", "127.0.0.6")
    print("pages fetched per host, off:", off, "normal:", on)
    print({k: v for k, v in on_stats.items() if k.startswith("corpus/yield")})
    assert on_stats["corpus/yield/hosts_pruned"] == 2
    assert "corpus/yield/hosts_pruned" not in off_stats
    for host in poor:
        # not before min_docs, and well before the budget ran out
        assert on[host] >= 10
        assert off[host] > on[host] + 10
    assert sum(on[h] for h in good) > sum(off[h] for h in good) + 20
    assert on_stats["corpus/yield/refused"] > 0
    assert on_stats["corpus/yield/bytes_saved"] > 0

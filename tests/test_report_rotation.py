"""A crawl whose crawl log rotates gets one report of all its files.

A crawl log goes on in a new file at `output.crawl_log_max_file_bytes` (1 GB by
default: a TenTen-sized crawl writes several). The report used to read only the
current file (refreshes) or the last one (the final report and `report --latest`),
and was named after it, so a rotated crawl's report showed its last file's pages
under a name that changed at each rotation. Here a real crawl of a loopback site
rotates its log at every flush (a 1-byte limit) while the report is refreshed every
0.4 s; the report must count every line of every file, under the first file's name,
and be the report a full read of the files gives.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from corpus_crawler.crawllog import crawl_log_runs, read_crawl_log
from corpus_crawler.report import write_report
from corpus_crawler.testserver import Reply, SiteServer

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
#: One page at a time, 0.12 s each: the crawl spans several of the log's 1 s flushes.
PAGES = 50

PROFILE = """\
name: rotation
seeds:
  urls: ["{base}/p0.html"]
  sitemaps_from_robots: false
politeness:
  obey_robots_txt: false
  concurrent_requests: 1
  concurrent_requests_per_domain: 1
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  retry_times: 0
extraction:
  workers: 1
dedup:
  enabled: false
output:
  progress_interval: 0
  crawl_log_max_file_bytes: 1
  report_interval: 0.4
"""


def _site() -> dict[str, Reply]:
    text = (
        "<p>This page of the rotation test has a paragraph long enough to be kept by the"
        " extractor as good text, with words that make up a sentence of some length.</p>"
    )
    pages = {}
    for number in range(PAGES):
        children = range(1, PAGES) if number == 0 else (0,)  # every page at depth 1
        links = "".join(f"<a href='/p{c}.html'>{c}</a> " for c in children)
        body = f"<html><body><h1>Page {number}</h1>{text * 3}<nav>{links}</nav></body></html>"
        pages[f"/p{number}.html"] = Reply(
            headers=(("Content-Type", "text/html; charset=utf-8"),),
            body=body.encode(),
            delay=0.12,
        )
    return pages


def _urls_logged(html: str) -> int:
    match = re.search(r"<b>([\d,]+)</b>URLs logged", html)
    assert match is not None
    return int(match.group(1).replace(",", ""))


def test_a_rotated_crawl_log_has_one_report_of_all_its_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with SiteServer(pages=_site()) as server:
        profile = tmp_path / "p.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        crawl = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
    assert crawl.returncode == 0, crawl.stderr[-4000:]

    logs = sorted(out.glob("*.crawl.log"))
    assert len(logs) >= 4, [p.name for p in logs]  # rotated 3 times or more
    assert not list(out.glob("*.open"))
    assert crawl_log_runs(logs) == [logs]
    lines = sum(1 for path in logs for _ in read_crawl_log(path))
    assert lines >= PAGES
    (summary_path,) = out.glob("*-summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["stats"].get("corpus/report_refreshes", 0) >= 2

    # one report for the run, named after its first file, counting every file's lines
    (report,) = out.glob("*.report.html")
    assert report.name == logs[0].name.removesuffix(".crawl.log") + ".report.html"
    html = report.read_text(encoding="utf-8")
    assert _urls_logged(html) == lines
    # the render process read on from refresh to refresh: the same as a full read
    generated = re.search(r"report generated (\S+?)[;<]", html)
    assert generated is not None
    again = write_report(
        logs,
        tmp_path / "full.html",
        summary=summary,
        title="Crawl report: rotation",
        generated=datetime.fromisoformat(generated.group(1)),
    )
    assert again.read_text(encoding="utf-8") == html

    # `report --latest` counts every file of the run too
    latest = tmp_path / "latest.html"
    command = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "report", str(out), "--latest",
         "-o", str(latest)],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert command.returncode == 0, command.stderr[-3000:]
    assert _urls_logged(latest.read_text(encoding="utf-8")) == lines

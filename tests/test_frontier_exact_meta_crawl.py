"""A real crawl whose links carry meta plain JSON cannot give back (`inf`, `nan`, lone
surrogates, tuples, bytes, number keys, ints beyond 64 bits) is killed with SIGKILL while
such requests sit in its campaign frontier, and resumed: every request comes back to the
downloader with its meta equal, no page is lost, and links whose meta is not plain data
are refused at enqueue and counted, the crawl going on.

A spider middleware (an add-on given with ``-s ADDONS=...``, from a module written to
the test's folder) adds the meta to each link; a downloader middleware compares what
each request brings to the downloader and writes one line per request."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from corpus_crawler.state import DATABASE_NAME
from corpus_crawler.testserver import Reply, SiteServer, html_reply

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
PAGES = 200
#: Every tenth page links to a /drop/ page whose meta holds an object.
DROP_EVERY = 10

ODD_META_MODULE = """
from __future__ import annotations

import math
import os

from scrapy import Request


def odd_meta(url: str) -> dict:
    number = len(url)
    return {
        "odd_inf": [math.inf, -math.inf, math.nan][number % 3],
        "odd_text": url + "\\udcff\\ud800",
        "odd_shape": (number, {number: (None, b"\\x00\\xff")}, [-0.0]),
        "odd_big": 2**70 + number,
    }


def same(back, sent) -> bool:
    if type(back) is not type(sent):
        return False
    if isinstance(sent, float):
        return (math.isnan(back) and math.isnan(sent)) or repr(back) == repr(sent)
    if isinstance(sent, (list, tuple)):
        return len(back) == len(sent) and all(map(same, back, sent))
    if isinstance(sent, dict):
        return list(back) == list(sent) and all(same(back[k], sent[k]) for k in sent)
    return back == sent


def _marked(result):
    for item in result:
        if isinstance(item, Request):
            item.meta.update(odd_meta(item.url))
            if "/drop/" in item.url:
                item.meta["bad"] = object()
        yield item


class OddMeta:
    def process_spider_output(self, response, result, spider):
        return _marked(result)

    async def process_spider_output_async(self, response, result, spider):
        async for item in result:
            for marked in _marked([item]):
                yield marked


class CheckMeta:
    def process_request(self, request, spider=None):
        if "/p/" not in request.url or request.url.endswith("/p/0"):
            return None
        sent = odd_meta(request.url)
        back = {key: request.meta.get(key) for key in sent}
        verdict = "ok" if same(back, sent) else "bad"
        with open(os.environ["ODD_META_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{verdict} {request.url} {back!r}\\n")  # (repr escapes surrogates)
        return None


class OddMetaAddon:
    def update_settings(self, settings):
        settings.set_in_component_priority_dict("SPIDER_MIDDLEWARES", OddMeta, 20)
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", CheckMeta, 950)
"""

PROFILE = """\
name: odd-meta
seeds:
  urls: ["{base}/p/0"]
scope:
  max_depth: 30
politeness:
  concurrent_requests: 4
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  download_timeout: 30
  retry_times: 1
extraction:
  workers: 1
dedup:
  enabled: false
output:
  progress_interval: 0
"""


def _page(number: int) -> Reply:
    links = [f"/p/{child}" for child in (2 * number + 1, 2 * number + 2) if child < PAGES]
    if number % DROP_EVERY == 0:
        links.append(f"/drop/{number}")
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    body = f"<html><body><p>Page {number}.</p>{anchors}</body></html>".encode()
    # answered slowly enough that the kill finds a frontier full of queued links
    return dataclasses.replace(html_reply(body), delay=0.01)


def test_odd_meta_survives_kill_9_and_the_resume(tmp_path: Path) -> None:
    (tmp_path / "odd_meta.py").write_text(ODD_META_MODULE, encoding="utf-8")
    check_log = tmp_path / "checked.log"
    env = dict(os.environ, ODD_META_LOG=str(check_log))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    pages = {f"/p/{number}": _page(number) for number in range(PAGES)}
    with SiteServer(pages=pages) as server:
        profile = tmp_path / "odd.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        out = tmp_path / "out"
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
            "-s", 'ADDONS={"odd_meta.OddMetaAddon": 0}',
        ]  # fmt: skip
        killed_log = tmp_path / "killed.log"
        with open(killed_log, "wb") as handle:
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + TIMEOUT
        while len(server.requests) < PAGES // 3:
            assert process.poll() is None, killed_log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the crawl made no progress"
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=TIMEOUT)

        # what sits in the frontier for the next run: queued rows in the typed form
        with sqlite3.connect(out / DATABASE_NAME) as db:
            waiting = [text for (text,) in db.execute("SELECT request FROM frontier")]
        typed = [text for text in waiting if text.startswith('{"t":')]
        assert len(typed) >= 10, waiting[:3]
        assert not any("Infinity" in text or "NaN" in text for text in waiting)

        result = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
        counts = server.counts()

    # every page fetched, no /drop/ page ever asked for
    assert {f"/p/{number}" for number in range(PAGES)} <= set(counts)
    assert not [path for path in counts if path.startswith("/drop/")]
    # every request brought its meta to the downloader equal, in both runs
    lines = check_log.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if not line.startswith("ok ")]
    checked = {line.split()[1] for line in lines}
    assert checked == {f"{server.base_url}/p/{number}" for number in range(1, PAGES)}
    # the refused links are named and counted (the killed run's stats died with it)
    refused = [line for line in result.stderr.splitlines() if "not queued: " in line]
    assert refused and all("/drop/" in line for line in refused)
    assert all("meta['bad'] is builtins.object, not plain data" in line for line in refused)
    (summary_path,) = out.glob("*-summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["finish_reason"] == "finished", summary
    assert summary["stats"]["corpus/links/unserialisable"] == len(refused)

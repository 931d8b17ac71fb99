"""A seed that redirects to another host brings that host into a scope made of the seeds'
hosts (`CorpusSpider.admit_seed_redirect`), in this run and in the runs that resume it.

Three loopback hosts: the seed on 127.0.0.1 redirects to 127.0.0.2 (a site that moved,
or www. -> the bare domain), whose index links to its own pages, to a page on 127.0.0.3
and to a path that redirects to 127.0.0.3. Only a seed's redirect widens the scope: the
third host is never asked for anything, robots.txt included. The first run is killed
(`kill -9`) while the second host's pages hang; the resumed run fetches them (they were
queued under the widened scope) and each page is in the WARC files exactly once.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_distributed import redis_server
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, html_reply, redirect

__all__ = ["redis_server"]  # the fixture (test_distributed), used by name

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # a guard against a hang, not a speed assertion

PROFILE = """\
name: seed-redirect
seeds:
  urls: ["{seed}/"]
scope:
  max_depth: 3
{scope}
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
"""

TEXT = "<p>" + "A paragraph of running text about the rivers of the region. " * 12 + "</p>"


class Sites:
    def __init__(self) -> None:
        #: While set, the second host's pages hang (the first run is killed meanwhile).
        self.hang = True
        self.third = SiteServer(pages={"/c1.html": html_reply(TEXT.encode())}, host="127.0.0.3")
        third = self.third.base_url  # the port is bound when the server is made
        index = (
            f'<html><body>{TEXT}<a href="/b1.html">one</a> <a href="/b2.html">two</a>'
            f' <a href="{third}/c1.html">elsewhere</a> <a href="/go-c">away</a></body></html>'
        )
        self.second = SiteServer(
            host="127.0.0.2",
            routes={
                "/": lambda request: html_reply(index.encode()),
                "/b1.html": self._page,
                "/b2.html": self._page,
                "/go-c": redirect(f"{third}/c1.html"),
            },
        )
        self.first = SiteServer(
            host="127.0.0.1", routes={"/": redirect(f"{self.second.base_url}/")}
        )

    def __enter__(self) -> Sites:
        for server in (self.third, self.second, self.first):
            server.__enter__()
        return self

    def _page(self, request: RequestRecord) -> Reply:
        reply = html_reply(f"<html><body><h1>{request.path}</h1>{TEXT}</body></html>".encode())
        if self.hang:
            return Reply(status=reply.status, headers=reply.headers, body=reply.body, delay=60)
        return reply

    def __exit__(self, *exc: object) -> None:
        for server in (self.first, self.second, self.third):
            server.__exit__(None, None, None)


@pytest.fixture
def sites() -> Iterator[Sites]:
    with Sites() as served:
        yield served


def crawl_command(profile: Path, out: Path, redis_url: str | None = None) -> list[str]:
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    return command + (["--redis", redis_url] if redis_url else [])


def responses(out: Path) -> list[str]:
    """Every response archived in `out` (and in the worker folders of a Redis crawl)."""
    uris = []
    for path in sorted([*out.glob("*.warc.gz"), *out.glob("*/*.warc.gz")]):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type == "response":
                    uris.append(record.rec_headers.get_header("WARC-Target-URI"))
    return uris


def last_summary(out: Path) -> dict:  # type: ignore[type-arg]
    path = sorted([*out.glob("*-summary.json"), *out.glob("*/*-summary.json")])[-1]
    data: dict = json.loads(path.read_text(encoding="utf-8"))  # type: ignore[type-arg]
    return data


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_a_seeds_redirect_host_is_crawled_and_stays_in_scope_after_a_kill(
    sites: Sites, tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    # redis: the campaign in a real redis-server, the same command run again as the
    # restarted worker (it takes back the killed worker's leases)
    redis_url = request.getfixturevalue("redis_server").url if store == "redis" else None
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.format(seed=sites.first.base_url, scope=""), encoding="utf-8")
    out = tmp_path / "out"
    command = crawl_command(profile, out, redis_url)
    log = open(tmp_path / "run1.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    deadline = time.monotonic() + TIMEOUT
    while not {"/b1.html", "/b2.html"} <= {r.path for r in sites.second.requests}:
        assert process.poll() is None, (tmp_path / "run1.log").read_text()
        assert time.monotonic() < deadline, "the second host's pages were never asked for"
        time.sleep(0.01)
    time.sleep(1.5)  # the index's links and the widened scope are committed (every 0.5 s)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=TIMEOUT)
    log.close()
    sites.hang = False
    resumed = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    second = sites.second.base_url
    # each run reads robots.txt again; every page is archived once over both runs
    pages = [uri for uri in responses(out) if not uri.endswith("/robots.txt")]
    assert len(pages) == len(set(pages)), pages
    assert {f"{second}/", f"{second}/b1.html", f"{second}/b2.html"} <= set(pages), pages
    # a link or a link's redirect does not widen the scope: the third host saw nothing
    assert sites.third.requests == []
    assert f"{second}/go-c" in pages
    # the resumed run took the hanging pages' requests back from the frontier, in scope
    stats = last_summary(out)["stats"]
    assert "corpus/frontier/refused/host" not in stats, stats


def test_a_profile_naming_its_domains_keeps_them(sites: Sites, tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    scope = "  allowed_domains: [127.0.0.1]"
    profile.write_text(PROFILE.format(seed=sites.first.base_url, scope=scope), encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run(
        crawl_command(profile, out), cwd=ROOT, capture_output=True, text=True,
        timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert sites.second.requests == [] and sites.third.requests == []
    stats = last_summary(out)["stats"]
    assert stats["corpus/redirects/refused/host"] == 1
    assert "corpus/scope/seed_redirect_hosts" not in stats

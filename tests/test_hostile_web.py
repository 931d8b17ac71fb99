"""Crawls of hostile loopback sites: one test per attack of issue 11.

Each crawl is a real `corpus-crawler crawl` subprocess against real HTTP servers
on 127.0.0.1 (allowed) and 127.0.0.2 (refused: Linux routes all of 127/8 to lo),
with test host names (`*.test`) answered by a real DNS server on 127.0.0.1
whose answers the test scripts (`tests/site/hostile_site.py`). What the servers
saw, the WARC files and the crawl summary are then checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hostile_site
import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, RequestRecord, SiteServer

ROOT = Path(__file__).resolve().parent.parent
CRAWL_TIMEOUT = 180  # seconds: a guard against a hung crawl, not a speed assertion


ScriptedDns = hostile_site.ScriptedDns
FAIL = hostile_site.FAIL

BASE_PROFILE = """\
name: hostile
politeness:
  concurrent_requests: 8
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
  dns_servers: ["{dns}"]
limits:
  max_page_bytes: 2000000
  download_timeout: 20
  retry_times: 1
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  prevertical:
    enabled: false
"""


def _profile(dns: ScriptedDns, extra: str) -> str:
    """BASE_PROFILE with `extra` merged in (sections of `extra` extend or replace its own)."""
    import yaml

    data = yaml.safe_load(BASE_PROFILE.format(dns=dns.address))
    for section, values in yaml.safe_load(extra).items():
        if isinstance(values, dict):
            data.setdefault(section, {}).update(values)
        else:
            data[section] = values
    return yaml.safe_dump(data)


def run_crawl(
    profile_text: str, workdir: Path, name: str, *, prefix: list[str] | None = None
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    profile = workdir / f"{name}.yaml"
    profile.write_text(profile_text, encoding="utf-8")
    out = workdir / name
    command = [sys.executable, *(prefix or ["-m", "corpus_crawler.cli"])]
    command += ["crawl", str(profile), "-o", str(out)]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=CRAWL_TIMEOUT, check=False
    )
    assert result.returncode == 0, f"crawl failed:\n{result.stdout}\n{result.stderr[-5000:]}"
    (summary_path,) = out.glob("*-summary.json")
    return json.loads(summary_path.read_text(encoding="utf-8")), result


def warc_records(out: Path) -> list[tuple[str, dict[str, str], bytes]]:
    records = []
    for path in sorted(out.glob("*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                headers = dict(record.rec_headers.headers)
                records.append((record.rec_type, headers, record.content_stream().read()))
    return records


def _paired_servers(
    pages_allowed: dict[str, Reply], pages_refused: dict[str, Reply]
) -> Iterator[tuple[SiteServer, SiteServer]]:
    """A server on 127.0.0.1 and one on 127.0.0.2, on the same port (a name can answer
    either address and the URL keeps its port)."""
    for _attempt in range(20):
        allowed = SiteServer(pages=pages_allowed)
        try:
            refused = SiteServer(pages=pages_refused, host="127.0.0.2", port=allowed.port)
        except OSError:  # the port is taken on 127.0.0.2: try another
            allowed.stop()
            continue
        with allowed, refused:
            yield allowed, refused
        return
    pytest.fail("no port free on both 127.0.0.1 and 127.0.0.2")


# -- 1. DNS rebinding, fail-then-private, IPv6 forms -------------------------------------------

DNS_SCRIPT: dict[str, list[tuple[str, ...]]] = {
    # public (here: the allowed address) first, then private, and again
    "rebind.test": [("127.0.0.1",), ("127.0.0.2",)] * 30,
    # fails first, then answers a private address
    "flaky.test": [FAIL, ("127.0.0.2",)],
    "private.test": [("127.0.0.2",)],
    # IPv6 forms of the refused address
    "mapped.test": [("::ffff:127.0.0.2",)],
    "compat.test": [("::127.0.0.2",)],
    "sixtofour.test": [("2002:7f00:2::1",)],
    "nat64.test": [("64:ff9b::7f00:2",)],
    "sitelocal.test": [("fec0::1",)],
    # both: only the allowed address may be used
    "both.test": [("127.0.0.2", "127.0.0.1", "::ffff:127.0.0.2")],
}


def test_dns_answers_are_filtered_before_connecting(tmp_path: Path) -> None:
    marker = "SECRET-ON-THE-REFUSED-ADDRESS"
    servers = _paired_servers(hostile_site.public_site(), hostile_site.secret_site(marker))
    allowed, refused = next(servers)
    try:
        with ScriptedDns(DNS_SCRIPT) as dns:
            port = allowed.port
            seeds = [f"http://{name}:{port}/" for name in DNS_SCRIPT]
            seeds += [f"http://[::ffff:127.0.0.2]:{port}/", f"http://127.0.0.2:{port}/"]
            profile = _profile(
                dns,
                f"""
                seeds: {{urls: {json.dumps(seeds)}}}
                network: {{dns_cache_seconds: 0, dns_failure_cache_seconds: 0}}
                """,
            )
            summary, _ = run_crawl(textwrap.dedent(profile), tmp_path, "dns")
    finally:
        next(servers, None)
    # not one request reached the refused address, under any name or form
    assert refused.requests == []
    stats = summary["stats"]
    # the names that answered the allowed address were crawled through it
    fetched_hosts = {r.headers.get("host", "").split(":")[0] for r in allowed.requests}
    assert {"rebind.test", "both.test"} <= fetched_hosts
    assert not fetched_hosts & {"private.test", "mapped.test", "compat.test", "flaky.test"}
    # with its answer flipping on every lookup, rebind.test got some pages and lost others
    assert dns.lookups["rebind.test"] >= 2
    assert stats["corpus/refused/private-address"] >= 3  # private, flaky, rebind, 127.0.0.2
    assert stats["corpus/refused/embedded-private-address"] >= 3  # mapped, 6to4, literal
    assert stats["corpus/refused/deprecated-ipv6"] >= 2  # compat, site-local
    assert stats["corpus/refused/nat64"] >= 1
    assert dns.lookups["flaky.test"] >= 2  # it failed, was asked again, and was refused
    # and nothing from it is in the WARC files
    records = warc_records(tmp_path / "dns")
    assert any(kind == "response" for kind, _, _ in records)
    for _kind, headers, content in records:
        assert headers.get("WARC-IP-Address", "127.0.0.1") == "127.0.0.1", headers
        assert marker.encode() not in content


# -- 2. no outbound request but to the crawled hosts -----------------------------------------

#: Runs a command with every non-loopback connection and DNS lookup refused and logged.
NETWORK_CLOSED = r"""
import ipaddress, os, runpy, socket, sys

LOG = os.environ["OUTBOUND_LOG"]

def refuse(what):
    with open(LOG, "a") as log:
        log.write(f"{what}\n")
    raise OSError(101, f"outbound network closed by the test: {what}")

def loopback(host):
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False

def check(address):
    if isinstance(address, tuple) and not loopback(address[0]):
        refuse(address)

connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
socket.socket.connect = lambda self, address: (check(address), connect(self, address))[1]
socket.socket.connect_ex = lambda self, address: (check(address), connect_ex(self, address))[1]
getaddrinfo = socket.getaddrinfo

def guarded_getaddrinfo(host, *args, **kwargs):
    if host is not None and not loopback(host) and host != "localhost":
        refuse(f"getaddrinfo {host}")
    return getaddrinfo(host, *args, **kwargs)

socket.getaddrinfo = guarded_getaddrinfo
if sys.argv[1] == "-c":
    exec(sys.argv[2])
else:
    sys.argv = sys.argv[1:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def test_cookies_need_no_public_suffix_download(tmp_path: Path, monkeypatch: Any) -> None:
    log = tmp_path / "outbound.log"
    monkeypatch.setenv("OUTBOUND_LOG", str(log))
    # no suffix list cached by an earlier run (tldextract caches even the snapshot it
    # falls back to): the probe and the crawl each get an empty cache folder
    monkeypatch.setenv("TLDEXTRACT_CACHE", str(tmp_path / "probe-cache"))
    wrapper = tmp_path / "network_closed.py"
    wrapper.write_text(NETWORK_CLOSED, encoding="utf-8")
    # the guard works: tldextract's default extractor, as Scrapy's CookiesMiddleware
    # uses it, tries to download the list and is caught
    probe = (
        "from scrapy.downloadermiddlewares.cookies import _split_domain\n"
        "_split_domain('www.example.co.uk')\n"
    )
    subprocess.run(
        [sys.executable, str(wrapper), "-c", probe], cwd=ROOT, capture_output=True, timeout=120
    )
    assert "publicsuffix" in log.read_text(encoding="utf-8")
    log.unlink()
    monkeypatch.setenv("TLDEXTRACT_CACHE", str(tmp_path / "crawl-cache"))
    seen_cookies: list[str] = []
    with (
        SiteServer(routes=hostile_site.cookie_routes(seen_cookies)) as server,
        ScriptedDns({"cookie.test": [("127.0.0.1",)], "www.cookie.test": [("127.0.0.1",)]}) as dns,
    ):
        profile = _profile(dns, f"seeds: {{urls: ['http://www.cookie.test:{server.port}/']}}")
        summary, result = run_crawl(
            profile, tmp_path, "cookies", prefix=[str(wrapper), "corpus_crawler.cli"]
        )
    assert not log.exists(), log.read_text(encoding="utf-8")
    assert "Traceback" not in result.stderr
    assert summary["pages"]["responses"] >= 3  # robots.txt, /, /next
    assert seen_cookies == ["visit=1"]  # the cookie for the registered domain was kept


# -- 3. a huge robots.txt does not stall the other hosts --------------------------------------

TREE_PAGES = 150


def _timed(pages: dict[str, Reply], times: list[float]) -> dict[str, Any]:
    def route_for(reply: Reply) -> Any:
        def route(request: RequestRecord) -> Reply:
            times.append(time.monotonic())
            return reply

        return route

    return {path: route_for(reply) for path, reply in pages.items()}


def test_a_huge_robots_txt_does_not_stall_other_hosts(tmp_path: Path) -> None:
    robots = hostile_site.huge_robots_txt()
    huge = {
        "/robots.txt": Reply(headers=(("Content-Type", "text/plain"),), body=robots),
        "/": Reply(headers=(("Content-Type", "text/html"),), body=hostile_site.page("big robots")),
    }
    durations: list[float] = []
    for with_huge in (False, True):
        times: list[float] = []
        tree = hostile_site.tree_site(TREE_PAGES)
        with (
            SiteServer(routes=_timed(tree, times)) as normal,
            SiteServer(pages=huge) as hostile,
            ScriptedDns({"normal.test": [("127.0.0.1",)], "huge.test": [("127.0.0.1",)]}) as dns,
        ):
            seeds = [f"http://normal.test:{normal.port}/"]
            if with_huge:
                seeds.insert(0, f"http://huge.test:{hostile.port}/")
            profile = _profile(
                dns,
                f"""
                seeds: {{urls: {json.dumps(seeds)}}}
                scope: {{max_depth: null}}
                limits: {{max_page_bytes: 20000000}}
                politeness:
                  concurrent_requests_per_domain: 1
                  download_delay: 0.01
                  randomize_delay: false
                """,
            )
            name = f"robots-{len(durations)}"
            summary, _ = run_crawl(textwrap.dedent(profile), tmp_path, name)
            robots_fetched = hostile.count("/robots.txt")
        assert len(times) == TREE_PAGES  # every page: / (= /p0) and /p1 ... /p149
        durations.append(times[-1] - times[0])
        if with_huge:
            assert robots_fetched == 1
            assert summary["stats"]["corpus/robots/truncated"] == 1
    alone, together = durations
    print(f"normal host alone {alone:.2f} s, next to a 10 MB robots.txt {together:.2f} s")
    assert together <= 1.5 * alone, durations


# -- 3b. a big sitemap does not stall the other hosts ------------------------------------------

BIG_SITEMAP_BYTES = 30_000_000
#: A guard: the other host's chain of pages ends here if the sitemap is never read.
MAX_CHAIN_PAGES = 3000


def test_a_big_sitemap_does_not_stall_other_hosts(tmp_path: Path) -> None:
    """While a 30 MB sitemap is parsed (seconds of CPU), the other host's pages keep being
    requested; parsed on the reactor thread, not one request would go out meanwhile.

    The sitemap is above the profile's page cap (max_page_bytes: 2 MB) and below the
    sitemap cap (50 MB): it is read whole."""
    times: list[float] = []
    with (
        hostile_site.SitemapHost(listed=3) as big,
        SiteServer(
            fallback=hostile_site.chain_until(big.listed_requested, times, MAX_CHAIN_PAGES)
        ) as normal,
        ScriptedDns({"normal.test": [("127.0.0.1",)], "big.test": [("127.0.0.1",)]}) as dns,
    ):
        base = f"http://big.test:{big.server_address[1]}"
        big.body = hostile_site.big_sitemap(
            BIG_SITEMAP_BYTES, [base + path for path in big.listed_paths]
        )
        profile = _profile(
            dns,
            f"""
            seeds:
              urls: ["http://normal.test:{normal.port}/p0"]
              sitemaps: ["{base}/sitemap.xml"]
            scope: {{max_depth: null, max_domain_depth: null}}
            politeness:
              concurrent_requests_per_domain: 1
              download_delay: 0.01
              randomize_delay: false
              obey_robots_txt: false
            """,
        )
        summary, _ = run_crawl(textwrap.dedent(profile), tmp_path, "big-sitemap")
        events = list(big.events)
    (sent,) = [at for at, what in events if what == "sitemap sent"]
    listed = sorted(at for at, what in events if what.startswith("GET /listed/"))
    # the sitemap was read to its end: the URLs at its end were crawled
    assert len(listed) == 3
    assert summary["stats"]["corpus/sitemaps/read"] == 1
    assert len(times) < MAX_CHAIN_PAGES
    during = [at for at in times if sent < at < listed[0]]
    print(
        f"sitemap parsed in ~{listed[0] - sent:.2f} s; {len(during)} pages of the other host"
        f" requested meanwhile, {len(times)} in all"
    )
    # the other host's pages kept flowing while the sitemap was parsed
    assert len(during) >= 10


# -- 4. traps, sitemap recursion, decompression bombs -----------------------------------------


def test_traps_are_bounded(tmp_path: Path) -> None:
    with SiteServer() as probe:  # a free port, for URLs the routes need before serving
        port = probe.port
    base = f"http://trap.test:{port}"
    wild = f"http://w{{}}.wild.test:{port}"
    routes = {**hostile_site.trap_routes(base, wild), **hostile_site.sitemap_routes(base)}
    script = {"trap.test": [("127.0.0.1",)], "*.wild.test": [("127.0.0.1",)]}
    with (
        SiteServer(routes=routes, port=port, fallback=hostile_site.grow_fallback(wild)) as site,
        ScriptedDns(script) as dns,
    ):
        profile = _profile(
            dns,
            f"""
            seeds:
              urls: ["{base}/"]
              sitemaps: ["{base}/sm/index?d=0", "{base}/sm/dtd.xml"]
            scope:
              allowed_domains: [trap.test, wild.test]
              max_depth: null
              max_domain_depth: 12
              max_pages_per_domain: 40
            politeness: {{obey_robots_txt: false}}
            limits: {{max_sitemap_depth: 2}}
            """,
        )
        summary, _ = run_crawl(textwrap.dedent(profile), tmp_path, "traps")
        requests = site.requests
    stats = summary["stats"]
    # URL growth: /grow/, /grow/a/, /grow/a/a/, /grow/a/a/a/; then `a` would repeat 4 times
    grown = sorted(r.path for r in requests if r.path.startswith("/grow/"))
    assert grown == ["/grow/", "/grow/a/", "/grow/a/a/", "/grow/a/a/a/"]
    assert stats["corpus/links/refused/repeated-path-segments"] >= 1
    # the 8,000-character link and the 20-parameter link were never requested
    assert not any(r.path == "/long" or r.path == "/params" for r in requests)
    assert stats["corpus/links/refused/url-too-long"] >= 1
    assert stats["corpus/links/refused/too-many-query-parameters"] >= 1
    # session ids: each page once, whatever its sid
    session = [r for r in requests if r.path == "/session"]
    assert len(session) == 2  # sid=0, then sid=1&page=2 (sid=1 alone is the same page)
    # the endless calendar and the wildcard subdomains stop at the domain limits
    calendar = sorted(int(r.query.split("=")[1]) for r in requests if r.path == "/calendar")
    assert calendar == list(range(12))  # months 0-11 at domain depths 1-12
    assert stats["corpus/links/refused/domain-too-deep"] >= 1
    wildcard = {
        r.headers.get("host", "") for r in requests if ".wild.test" in r.headers.get("host", "")
    }
    assert len(wildcard) == 40  # 40 subdomains, one page each: the registered domain's budget
    # counted by the campaign scheduler, which keeps the budgets on disk
    assert stats["corpus/links/over-max-pages-per-domain"] >= 1
    # sitemap indexes nest at depth 0, 1 and 2; the index at depth 3 is never fetched
    indexes = sorted(r.query for r in requests if r.path == "/sm/index")
    assert indexes == ["d=0", "d=1", "d=2"]
    assert stats["corpus/sitemaps/refused/too-deep"] >= 1
    leaves = sorted(r.query for r in requests if r.path == "/from-sitemap")
    assert leaves == sorted(f"d={d}&k={k}" for d in (0, 1) for k in range(5))
    # the sitemap with an internal DTD kept both its URLs
    assert site.count("/from-dtd/1") == 1 and site.count("/from-dtd/2") == 1
    # the decompression bomb was fetched once and counted as too-large
    assert site.count("/bomb.html") == 1
    assert summary["dropped"]["too-large"] >= 1
    assert stats["corpus/too-large/decompression"] == 1


# -- the system resolver's answers are filtered too -------------------------------------------


def test_system_resolver_answers_are_filtered_and_the_guard_can_be_switched_off(
    tmp_path: Path,
) -> None:
    pages = hostile_site.public_site()
    with SiteServer(pages=pages) as server:
        seeds = json.dumps([f"http://localhost:{server.port}/"])
        base = textwrap.dedent(
            f"""
            seeds: {{urls: {seeds}}}
            politeness: {{download_delay: 0, autothrottle: false}}
            output: {{progress_interval: 0, report: false}}
            """
        )
        # localhost's 127.0.0.1 (getaddrinfo, not a DNS server) is refused by default
        summary, _ = run_crawl(base, tmp_path, "refused")
        assert server.requests == []
        assert summary["stats"]["corpus/refused/private-address"] >= 1
        # allowed by network, and with the guard off
        allowed = base + "network: {allowed_networks: [127.0.0.1/32]}\n"
        run_crawl(allowed, tmp_path, "allowed")
        assert server.count("/") == 1
        profile = tmp_path / "off.yaml"
        profile.write_text(base, encoding="utf-8")
        command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile)]
        command += ["-o", str(tmp_path / "off"), "-s", "CORPUS_NETWORK_ENABLED=False"]
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=CRAWL_TIMEOUT
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert server.count("/") == 2


# -- the sitemap worker process --------------------------------------------------------------

SITEMAP_WORKER_KILLED = r"""
import asyncio, os, signal
from twisted.internet import asyncioreactor
asyncioreactor.install()
from twisted.internet import reactor
from scrapy.utils.defer import deferred_from_coro
from corpus_crawler.sitemaps import SitemapLimits
from pipelines.sitemap_reader import SitemapReader

NS = b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
SMALL = b"<urlset " + NS + b"><url><loc>http://a.test/1</loc></url></urlset>"
# seconds of parsing: time to kill the worker in the middle of it
ENTRY = b"<url><lastmod>2024-01-01</lastmod></url>"
BIG = b"<urlset " + NS + b">" + ENTRY * 1_000_000 + b"</urlset>"

def cpu_ticks(pid):
    # utime + stime of /proc/PID/stat (after the command's closing parenthesis)
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])

async def main():
    reader = SitemapReader(SitemapLimits())
    try:
        first = await reader.read(SMALL, "http://a.test/sitemap.xml")
        (pid,) = list(reader._executor._processes)
        idle = cpu_ticks(pid)
        pending = asyncio.ensure_future(reader.read(BIG, "http://a.test/big.xml"))
        # killed once it has worked on the big sitemap for 5 ticks (50 ms at 100 Hz),
        # not after a fixed sleep, which a fast machine could outlast
        while cpu_ticks(pid) < idle + 5:
            assert not pending.done(), "the big sitemap was read before the kill"
            await asyncio.sleep(0.002)
        assert not pending.done(), "the big sitemap was read before the kill"
        os.kill(pid, signal.SIGKILL)
        killed = await pending
        again = await reader.read(SMALL, "http://a.test/sitemap.xml")
        (new_pid,) = list(reader._executor._processes)
        print(first.urls, killed, again.urls, new_pid != pid)
    finally:
        reader.close()

def stop(result):
    if result is not None:
        print(result)  # a failure
    reactor.stop()

deferred_from_coro(main()).addBoth(stop)
reactor.run()
"""


def test_a_killed_sitemap_worker_loses_one_sitemap_and_is_replaced() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SITEMAP_WORKER_KILLED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CRAWL_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[0] == "('http://a.test/1',) None ('http://a.test/1',) True"


SITEMAP_WORKER_ORPHANED = r"""
import asyncio, os, signal
from twisted.internet import asyncioreactor
asyncioreactor.install()
from twisted.internet import reactor
from scrapy.utils.defer import deferred_from_coro
from corpus_crawler.sitemaps import SitemapLimits
from pipelines.sitemap_reader import SitemapReader

NS = b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'

async def main():
    reader = SitemapReader(SitemapLimits())
    await reader.read(b"<urlset " + NS + b"></urlset>", "http://a.test/sitemap.xml")
    print(*reader._executor._processes, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # the crawl dies without closing anything

deferred_from_coro(main())
reactor.run()
"""


def test_the_sitemap_worker_exits_when_the_crawl_is_killed(tmp_path: Path) -> None:
    # to a file, not a pipe: the fork server holds the pipe open a while longer
    output = tmp_path / "out.txt"
    with open(output, "wb") as handle:
        returncode = subprocess.run(
            [sys.executable, "-c", SITEMAP_WORKER_ORPHANED],
            cwd=ROOT,
            stdout=handle,
            stderr=subprocess.STDOUT,
            timeout=CRAWL_TIMEOUT,
            check=False,
        ).returncode
    text = output.read_text(encoding="utf-8")
    assert returncode == -9, text[-3000:]
    worker = Path("/proc") / text.split()[0]
    deadline = time.monotonic() + 30  # the watchdog looks every 0.5 s; a guard, not a bound
    while worker.exists() and b"Z" not in _state(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not worker.exists() or b"Z" in _state(worker), "the sitemap worker outlived the crawl"


def _state(proc: Path) -> bytes:
    try:
        return (proc / "stat").read_bytes().rpartition(b")")[2].split()[0]
    except OSError:
        return b"Z"  # gone between the two looks

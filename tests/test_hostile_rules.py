"""The hostile-web rules as pure functions: address policy, registered domains, trap limits,
sitemaps, setting types, and the pinned resolver against an answer source we control.

The crawls that put these together against loopback servers are in test_hostile_web.py.
"""

from __future__ import annotations

import gzip
import ipaddress
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from twisted.internet import address as twisted_address
from twisted.internet.interfaces import IHostnameResolver, IResolutionReceiver
from twisted.internet.task import Clock
from twisted.internet.testing import MemoryReactorClock
from zope.interface import implementer, provider

from corpus_crawler.addresses import (
    AddressPolicy,
    AddressRefusal,
    literal_address,
    parse_allowed_network,
    parse_dns_server,
)
from corpus_crawler.config import ConfigError
from corpus_crawler.domains import is_public_suffix, registered_domain, suffix_extractor
from corpus_crawler.profile import ProfileError, parse_profile
from corpus_crawler.sitemaps import (
    ROBOTS_TXT_MAX_BYTES,
    SitemapBudget,
    SitemapKind,
    SitemapLimits,
    SitemapRefusal,
    bounded_gunzip,
    read_sitemap,
)
from corpus_crawler.traps import (
    DomainLedger,
    TrapLimits,
    TrapReason,
    cap_links,
    check_url,
    seen_key,
)
from pipelines.resolver import PinnedResolver, ResolverConfig
from pipelines.settingtypes import check_setting_types
from spiders.scope import UrlScope

ROOT = Path(__file__).resolve().parent.parent

# -- addresses -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "refusal"),
    [
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
        ("::ffff:93.184.216.34", None),  # mapped public IPv4: the public host
        ("2002:5db8:d822::1", None),  # 6to4 of a public IPv4
        ("127.0.0.1", AddressRefusal.PRIVATE),
        ("10.1.2.3", AddressRefusal.PRIVATE),
        ("169.254.169.254", AddressRefusal.PRIVATE),
        ("100.64.0.1", AddressRefusal.PRIVATE),
        ("0.0.0.0", AddressRefusal.PRIVATE),
        ("224.0.0.1", AddressRefusal.MULTICAST),
        ("::1", AddressRefusal.PRIVATE),
        ("::", AddressRefusal.PRIVATE),
        ("fe80::1", AddressRefusal.PRIVATE),
        ("fd00::1", AddressRefusal.PRIVATE),
        ("ff02::1", AddressRefusal.MULTICAST),
        # IPv4-compatible (::/96), deprecated: refused whatever it embeds
        ("::127.0.0.1", AddressRefusal.DEPRECATED_IPV6),
        ("::93.184.216.34", AddressRefusal.DEPRECATED_IPV6),
        # IPv4-mapped forms of a refused IPv4
        ("::ffff:127.0.0.1", AddressRefusal.EMBEDDED_PRIVATE),
        ("::ffff:10.0.0.1", AddressRefusal.EMBEDDED_PRIVATE),
        ("::ffff:169.254.169.254", AddressRefusal.EMBEDDED_PRIVATE),
        # 6to4 of loopback and of a private address
        ("2002:7f00:1::", AddressRefusal.EMBEDDED_PRIVATE),
        ("2002:a00:1::1", AddressRefusal.EMBEDDED_PRIVATE),
        # NAT64, well-known and local-use prefixes
        ("64:ff9b::7f00:1", AddressRefusal.NAT64),
        ("64:ff9b::5db8:d822", AddressRefusal.NAT64),
        ("64:ff9b:1::a00:1", AddressRefusal.NAT64),
        # site-local, deprecated
        ("fec0::1", AddressRefusal.DEPRECATED_IPV6),
        # Teredo: 2001::/32 is not global to ipaddress, whatever it embeds
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", AddressRefusal.EMBEDDED_PRIVATE),
        ("2001:0:7f00:1::", AddressRefusal.EMBEDDED_PRIVATE),
    ],
)
def test_address_policy_refuses_every_form(address: str, refusal: AddressRefusal | None) -> None:
    assert AddressPolicy().refusal(ipaddress.ip_address(address)) is refusal


@pytest.mark.parametrize("six_to_four_global", [True, False])
def test_six_to_four_is_judged_by_its_ipv4_on_every_python(
    six_to_four_global: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.13's ipaddress (and 3.12.4's) calls all of 2002::/16 private, 3.11's
    calls it global: the policy reads the IPv4 address inside instead, so a crawl
    fetches the same hosts on every interpreter."""
    six_to_four = ipaddress.ip_network("2002::/16")
    real = ipaddress.IPv6Address.is_global

    def is_global(self: ipaddress.IPv6Address) -> bool:
        if self in six_to_four:
            return six_to_four_global
        return bool(real.fget(self))  # type: ignore[attr-defined]

    monkeypatch.setattr(ipaddress.IPv6Address, "is_global", property(is_global))
    policy = AddressPolicy()
    assert policy.refusal(ipaddress.ip_address("2002:5db8:d822::1")) is None
    assert policy.refusal(ipaddress.ip_address("2002:7f00:1::")) is AddressRefusal.EMBEDDED_PRIVATE


def test_allowed_networks_can_name_a_port() -> None:
    policy = AddressPolicy.build(False, ["127.0.0.1/32:8080", "[::1]:8443", "10.0.0.0/8"])
    loopback, v6 = ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")
    assert policy.allows(loopback, 8080)
    assert not policy.allows(loopback, 8081)
    assert not policy.allows(loopback)  # no port known: the port rule cannot match
    assert policy.allows(v6, 8443) and not policy.allows(v6, 80)
    assert policy.allows(ipaddress.ip_address("10.9.8.7"), 1)
    assert not policy.allows(ipaddress.ip_address("127.0.0.2"), 8080)
    # the mapped form of an allowed IPv4 address is the same host
    assert policy.allows(ipaddress.ip_address("::ffff:127.0.0.1"), 8080)
    # everything, with allow_private
    assert AddressPolicy(allow_private=True).allows(ipaddress.ip_address("::127.0.0.1"))


@pytest.mark.parametrize("text", ["localhost", "127.0.0.1:0", "127.0.0.1/33", "[::1", "::1]:80"])
def test_a_bad_allowed_network_names_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"10\.0\.0\.0/8:8080"):
        parse_allowed_network(text)


def test_network_section_errors_name_the_key() -> None:
    with pytest.raises(ProfileError, match=r"p\.yaml: network\.allowed_networks: 'lan'"):
        parse_profile({"network": {"allowed_networks": ["lan"]}}, "p.yaml")
    with pytest.raises(ProfileError, match=r"network\.dns_servers: 'dns\.google'"):
        parse_profile({"network": {"dns_servers": ["dns.google"]}}, "p.yaml")
    assert parse_dns_server("[2001:db8::53]:5353") == ("2001:db8::53", 5353)
    assert parse_dns_server("192.0.2.1") == ("192.0.2.1", 53)


def test_literal_addresses() -> None:
    assert literal_address("[::1]") == ipaddress.ip_address("::1")
    assert literal_address("example.org") is None


# -- registered domains ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("WWW.Example.COM.", "example.com"),
        ("alice.blogspot.com", "alice.blogspot.com"),  # the PSL's private section
        ("a.b.c.s3.amazonaws.com", "c.s3.amazonaws.com"),
        ("x.y.hostile.test", "hostile.test"),  # no listed suffix: the default rule `*`
        ("co.uk", "co.uk"),
        ("localhost", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
    ],
)
def test_registered_domain(host: str, domain: str) -> None:
    assert registered_domain(host) == domain


def test_the_suffix_list_is_the_bundled_snapshot_never_fetched() -> None:
    extractor = suffix_extractor()
    assert extractor.suffix_list_urls == ()
    assert extractor.fallback_to_snapshot and not extractor._cache.enabled  # no cache files
    assert is_public_suffix("co.uk") and is_public_suffix("blogspot.com")
    assert not is_public_suffix("example.co.uk") and not is_public_suffix("10.0.0.1")


# -- trap limits -----------------------------------------------------------------------------


def test_url_checks() -> None:
    limits = TrapLimits()
    assert check_url("http://a.test/" + "x" * 2060, limits) is None
    assert check_url("http://a.test/" + "x" * 2070, limits) is TrapReason.URL_TOO_LONG
    assert check_url("http://a.test/a/b/a/b/a/b/", limits) is None
    assert check_url("http://a.test/a/b/a/b/a/b/a/", limits) is TrapReason.REPEATED_SEGMENTS
    assert check_url("http://a.test/p/p/p/p?q=1", limits) is TrapReason.REPEATED_SEGMENTS
    query = "&".join(f"k{i}=v" for i in range(16))
    assert check_url(f"http://a.test/?{query}", limits) is None
    assert check_url(f"http://a.test/?{query}&x=1", limits) is TrapReason.TOO_MANY_PARAMETERS
    # the host is not a path segment; switched off, nothing is refused
    assert check_url("http://a.a.a.a.a.test/", limits) is None
    off = TrapLimits(None, None, None, None, None, None)
    assert check_url("http://a.test/a/a/a/a/a/?" + query + "&x=1" + "y" * 9000, off) is None


def test_scope_checks_traps_before_anything_else() -> None:
    scope = UrlScope.build(["a.test"])
    assert scope.check("http://a.test/" + "x" * 9000) is TrapReason.URL_TOO_LONG
    assert str(scope.check("http://a.test/x/x/x/x/x")) == "repeated-path-segments"
    assert scope.check("http://a.test/fine") is None


def test_session_ids_do_not_make_a_page_new() -> None:
    assert seen_key("http://a.test/p?sid=1&page=2#top") == "http://a.test/p?page=2"
    assert seen_key("http://a.test/p;jsessionid=ABC?PHPSESSID=x") == "http://a.test/p"
    assert seen_key("http://a.test/search?s=word") == "http://a.test/search?s=word"
    assert seen_key("http://a.test/p") == "http://a.test/p"


def test_click_and_campaign_trackers_do_not_make_a_page_new() -> None:
    shared = "http://a.test/story?id=7&utm_source=twitter&utm_medium=social&fbclid=IwAR0x"
    assert seen_key(shared) == "http://a.test/story?id=7"
    assert seen_key("http://a.test/?gclid=Cj0K&UTM_Campaign=x") == "http://a.test/"
    # a parameter that only looks like one is kept
    assert seen_key("http://a.test/p?utm=1&clid=2") == "http://a.test/p?utm=1&clid=2"


def test_domain_ledger_counts_registered_domains_and_depth_inside_them() -> None:
    ledger = DomainLedger(TrapLimits(max_pages_per_domain=3, max_domain_depth=2))
    hosts = [f"http://h{i}.wild.test/" for i in range(5)]
    assert [ledger.admit(url, 1) for url in hosts] == [None, None, None] + [
        TrapReason.OVER_DOMAIN_PAGES
    ] * 2
    assert ledger.pages("h0.wild.test") == 3
    assert ledger.admit("http://other.test/", 5) is None  # entered at depth 5
    assert ledger.admit("http://other.test/a", 7) is None
    assert ledger.admit("http://other.test/b", 8) is TrapReason.DOMAIN_TOO_DEEP


def test_links_per_page_are_capped() -> None:
    links = tuple(f"http://a.test/{i}" for i in range(1500))
    kept, cut = cap_links(links, TrapLimits())
    assert len(kept) == 1000 and cut == 500 and kept[0] == links[0]


# -- sitemaps --------------------------------------------------------------------------------

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def _urlset(count: int, base: str = "http://a.test/p") -> bytes:
    urls = "".join(f"<url><loc>{base}{i}</loc></url>" for i in range(count))
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS}>{urls}</urlset>'.encode()


def test_a_sitemap_with_an_internal_dtd_keeps_its_urls() -> None:
    # long enough that the XML root comes after the first 512 bytes, no XML declaration,
    # and an entity used in a URL
    dtd = (
        "<!DOCTYPE urlset [\n"
        + "".join(f"<!-- a comment to make the subset long {i} -->\n" for i in range(20))
        + '<!ELEMENT urlset (url*)>\n<!ENTITY section "articles">\n]>\n'
    )
    body = (
        dtd + f"<urlset {NS}><url><loc>http://a.test/&section;/1</loc></url>"
        "<url><loc>http://a.test/2</loc></url></urlset>"
    ).encode()
    content = read_sitemap(body, "http://a.test/sitemap.xml")
    assert content.kind is SitemapKind.URLSET
    assert content.urls == ("http://a.test/articles/1", "http://a.test/2")


def test_entity_expansion_bombs_are_stopped_by_the_parser() -> None:
    entities = (
        '<!ENTITY a0 "'
        + "x" * 50
        + '">'
        + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10))
    )
    body = (
        f"<!DOCTYPE urlset [{entities}]><urlset><url><loc>http://a.test/&a9;</loc></url></urlset>"
    )
    content = read_sitemap(body.encode(), "http://a.test/s.xml")
    assert all(len(url) < 10_000 for url in content.urls)


def test_sitemap_limits() -> None:
    limits = SitemapLimits(max_bytes=200_000, max_urls=100)
    content = read_sitemap(_urlset(150), "http://a.test/s.xml", limits)
    assert len(content.urls) == 100 and content.truncated
    content = read_sitemap(_urlset(100), "http://a.test/s.xml", limits)
    assert len(content.urls) == 100 and not content.truncated
    # a gzip bomb: 1 GB of spaces after a small urlset head, read to max_bytes only
    bomb = gzip.compress(_urlset(3)[:-9] + b" " * 200_000_000, compresslevel=9)
    assert len(bomb) < 1_000_000
    data, cut = bounded_gunzip(bomb, limits.max_bytes)
    assert cut and len(data) == limits.max_bytes
    content = read_sitemap(bomb, "http://a.test/s.xml.gz", limits)
    assert content.urls == tuple(f"http://a.test/p{i}" for i in range(3)) and content.truncated
    # uncompressed and over the cap: the prefix is read
    content = read_sitemap(_urlset(5000), "http://a.test/s.xml", SitemapLimits(max_bytes=1000))
    assert 0 < len(content.urls) < 50 and content.truncated


def test_sitemap_kinds() -> None:
    index = f"<sitemapindex {NS}><sitemap><loc>/s2.xml</loc></sitemap></sitemapindex>".encode()
    content = read_sitemap(index, "http://a.test/s.xml")
    assert content.kind is SitemapKind.INDEX and content.urls == ("http://a.test/s2.xml",)
    text = read_sitemap(b"http://a.test/1\n\nhttp://a.test/2\n", "http://a.test/s.txt")
    assert text.kind is SitemapKind.TEXT and len(text.urls) == 2
    for junk in (b"<html><body>hi</body></html>", b"hello world", b"", b"\x00\x01"):
        assert read_sitemap(junk, "http://a.test/s").kind is SitemapKind.INVALID
    robots = b"User-agent: *\nSitemap: /s.xml\nsitemap: http://a.test/t.xml # c\n"
    content = read_sitemap(robots, "http://a.test/robots.txt")
    assert content.kind is SitemapKind.ROBOTS
    assert content.urls == ("http://a.test/s.xml", "http://a.test/t.xml")
    # only the first 500 KiB of a robots.txt is read
    padded = b"#" * (ROBOTS_TXT_MAX_BYTES + 10) + b"\nSitemap: /late.xml\n"
    assert read_sitemap(padded, "http://a.test/robots.txt").urls == ()


def test_sitemap_budget() -> None:
    budget = SitemapBudget(SitemapLimits(max_depth=2, max_per_host=3))
    assert budget.admit("http://a.test/s0.xml", 0) is None
    assert budget.admit("http://a.test/s3.xml", 3) is SitemapRefusal.TOO_DEEP
    assert budget.admit("http://a.test/s1.xml", 1) is None
    assert budget.admit("http://a.test/s2.xml", 2) is None
    assert budget.admit("http://a.test/s4.xml", 1) is SitemapRefusal.OVER_PER_HOST
    assert budget.admit("http://b.test/s.xml", 1) is None


# -- setting types ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"DOWNLOAD_DELAY": "fast"}, "DOWNLOAD_DELAY: must be a number, got 'fast'"),
        ({"CONCURRENT_REQUESTS": 2.5}, "CONCURRENT_REQUESTS: must be a whole number"),
        ({"ROBOTSTXT_OBEY": "yes"}, "ROBOTSTXT_OBEY: must be true or false"),
        ({"CORPUS_SCOPE_MAX_DEPTH": "deep"}, "CORPUS_SCOPE_MAX_DEPTH: must be a whole number"),
        ({"ITEM_PIPELINES": ["a"]}, "ITEM_PIPELINES: must be a mapping"),
        ({"CORPUS_SEEDS_URLS": 5}, "CORPUS_SEEDS_URLS: must be a list"),
        ({"USER_AGENT": ["x"]}, "USER_AGENT: must be a string"),
    ],
)
def test_setting_types_name_the_key(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="^p.yaml: settings." + message):
        check_setting_types(values, "p.yaml: settings.")


def test_good_setting_values_pass() -> None:
    check_setting_types(
        {
            "DOWNLOAD_DELAY": "0.5",
            "CONCURRENT_REQUESTS": "8",
            "ROBOTSTXT_OBEY": "False",
            "LOG_LEVEL": 20,
            "ITEM_PIPELINES": '{"a.B": 1}',
            "CORPUS_SEEDS_URLS": "http://a.test/,http://b.test/",
            "SOME_SETTING_OF_A_PLUGIN": object(),
        },
        "-s ",
    )


@pytest.mark.parametrize("scrapy", [False, True], ids=["corpus-crawler", "scrapy-crawl"])
def test_bad_input_is_one_line_from_both_commands(scrapy: bool, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("seeds:\n  urls: [http://127.0.0.1:9/]\nsettings:\n  RETRY_TIMES: often\n")
    cases = [
        (str(tmp_path / "missing.yaml"), [], "cannot read crawl profile"),
        (str(bad), [], "bad.yaml: settings.RETRY_TIMES: must be a whole number, got 'often'"),
    ]
    for profile, extra, expected in cases:
        if scrapy:
            command = ["-m", "scrapy", "crawl", "corpus", "-a", f"profile={profile}", *extra]
        else:
            command = ["-m", "corpus_crawler.cli", "crawl", profile, *extra]
        result = subprocess.run(
            [sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 2, result.stderr
        lines = [
            line
            for line in result.stderr.splitlines()
            if line.strip()
            and "[scrapy.utils.log]" not in line
            and not line.startswith(("{", " '"))
        ]
        assert len(lines) == 1 and expected in lines[0], result.stderr
        assert "Traceback" not in result.stderr


# -- the pinned resolver, against an answer source this test controls -----------------------


@implementer(IHostnameResolver)
class _Answers:
    """An upstream IHostnameResolver answering from a script: name -> list of answer lists
    (one per lookup; the last one repeats), an empty list meaning "lookup failed"."""

    def __init__(self, script: dict[str, list[list[str]]]) -> None:
        self.script = script
        self.asked: list[str] = []

    def resolveHostName(self, receiver: Any, name: str, port: int = 0, *args: Any) -> Any:
        self.asked.append(name)
        answers = self.script[name]
        answer = answers[min(self.asked.count(name) - 1, len(answers) - 1)]
        receiver.resolutionBegan(None)
        for host in answer:
            kind = twisted_address.IPv6Address if ":" in host else twisted_address.IPv4Address
            receiver.addressResolved(kind("TCP", host, port))
        receiver.resolutionComplete()
        return None


class _Receiver:
    def __init__(self) -> None:
        self.addresses: list[str] = []
        self.done = False

    def resolutionBegan(self, resolution: Any) -> None:
        pass

    def addressResolved(self, address: Any) -> None:
        self.addresses.append(f"{address.host}:{address.port}")

    def resolutionComplete(self) -> None:
        self.done = True


def _resolver(
    script: dict[str, list[list[str]]], **config: Any
) -> tuple[PinnedResolver, _Answers, Clock]:
    reactor = MemoryReactorClock()
    answers = _Answers(script)
    reactor.installNameResolver(answers)
    clock = Clock()
    policy = AddressPolicy.build(False, ["127.0.0.1/32"])
    resolver = PinnedResolver(reactor, clock=clock.seconds)
    resolver.configure(ResolverConfig(policy=policy, **config))
    return resolver, answers, clock


def _resolve(resolver: PinnedResolver, name: str, port: int = 80) -> list[str]:
    receiver = _Receiver()
    resolver.resolveHostName(provider(IResolutionReceiver)(receiver), name, port)
    assert receiver.done
    return receiver.addresses


def test_resolver_delivers_only_allowed_addresses_and_pins_the_first_answer() -> None:
    resolver, answers, clock = _resolver(
        {
            # rebinding: an allowed address first, a refused one from then on
            "rebind.test": [["127.0.0.1"], ["127.0.0.2"]],
            "mixed.test": [["127.0.0.2", "::ffff:127.0.0.2", "127.0.0.1", "2002:7f00:2::"]],
        }
    )
    assert _resolve(resolver, "rebind.test") == ["127.0.0.1:80"]
    assert _resolve(resolver, "rebind.test", 8080) == ["127.0.0.1:8080"]  # cached
    assert answers.asked == ["rebind.test"]
    clock.advance(3601)  # expired: asked again, and the new answer is filtered
    assert _resolve(resolver, "REBIND.test.") == []
    assert resolver.refusal("rebind.test") is AddressRefusal.PRIVATE
    assert _resolve(resolver, "mixed.test") == ["127.0.0.1:80"]
    assert resolver.refusal("mixed.test") is None
    # literal addresses are judged without a lookup
    assert _resolve(resolver, "127.0.0.2") == [] and _resolve(resolver, "::1") == []
    assert _resolve(resolver, "127.0.0.1", 81) == ["127.0.0.1:81"]
    assert "127.0.0.2" not in answers.asked


def test_resolver_remembers_failures_and_bounds_its_cache() -> None:
    resolver, answers, clock = _resolver(
        {"flaky.test": [[], ["127.0.0.2"]], **{f"h{i}.test": [["127.0.0.1"]] for i in range(5)}},
        cache_size=3,
        failure_seconds=60.0,
    )
    assert _resolve(resolver, "flaky.test") == []
    assert _resolve(resolver, "flaky.test") == []  # the failure is cached: not asked again
    assert answers.asked.count("flaky.test") == 1
    clock.advance(61)
    assert _resolve(resolver, "flaky.test") == []  # asked again: a refused address
    assert resolver.refusal("flaky.test") is AddressRefusal.PRIVATE
    for i in range(5):
        assert _resolve(resolver, f"h{i}.test") == ["127.0.0.1:80"]
    assert _resolve(resolver, "h0.test") == ["127.0.0.1:80"]  # evicted, asked again
    assert answers.asked.count("h0.test") == 2
    assert answers.asked.count("h4.test") == 1

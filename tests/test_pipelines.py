"""The Scrapy side piece by piece: typed drops, the extraction worker, scope rules,
address refusal, WARC header handling, items, components switched off, and one
small crawl for a drop reason the end-to-end crawl does not produce."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import crawl_site
import pytest
from scrapy import Request
from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.model import DropReason, ParagraphClass
from corpus_crawler.testserver import SiteServer, add_links, html_reply, isolate_links
from corpus_crawler.warc import Exchange, WarcConfig, WarcWriter
from pipelines.drops import DROPS, CorpusDrop, NoGoodParagraph, WrongLanguage, drop_for
from pipelines.extensions import ProgressExtension, SummaryExtension, progress_line
from pipelines.extract import ExtractSettings
from pipelines.items import document_id
from pipelines.middlewares import (
    AddressGuardMiddleware,
    AddressPolicy,
    WarcCaptureMiddleware,
)
from pipelines.outputs import VerticalPipeline, WarcDocumentPipeline
from pipelines.worker import PageTask, WorkerConfig, extract_links, process_page
from pipelines.writer import OutputSettings, OutputWriter, _Lock
from spiders.corpus import fetched_page
from spiders.scope import Refusal, UrlScope

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def article(gold_dir: Path) -> bytes:
    return (gold_dir / "cleaneval-dev" / "html" / "4.html").read_bytes()


# -- typed drops -------------------------------------------------------------------------------


def test_every_drop_reason_has_its_own_drop_item_class() -> None:
    assert set(DROPS) == set(DropReason)
    assert len(set(DROPS.values())) == len(DropReason)
    for reason, cls in DROPS.items():
        assert issubclass(cls, CorpusDrop) and issubclass(cls, DropItem)
        assert cls.reason is reason
    assert DROPS[DropReason.WRONG_LANGUAGE] is WrongLanguage


def test_drops_name_the_reason_the_detail_and_the_page_and_log_quietly() -> None:
    drop = drop_for(DropReason.NO_GOOD_PARAGRAPH, "0 of 12", "http://a.example/")
    assert isinstance(drop, NoGoodParagraph)
    assert str(drop) == "no-good-paragraph (0 of 12): http://a.example/"
    assert drop.log_level == "DEBUG"


# -- the extraction worker ---------------------------------------------------------------------


def test_worker_document_equals_extract_and_carries_only_good_paragraphs(article: bytes) -> None:
    config = ExtractConfig(language="en")
    result = process_page(PageTask("http://a.example/x.html", article), WorkerConfig(config))
    expected = extract(article, "http://a.example/x.html", config)
    assert result.document is not None
    assert result.document.text == expected.text
    assert result.document.paragraphs == expected.good_paragraphs
    assert result.paragraph_count == len(expected.paragraphs) > len(expected.good_paragraphs)
    assert not result.timed_out


def test_worker_keeps_every_paragraph_when_asked(article: bytes) -> None:
    config = ExtractConfig(language="en")
    result = process_page(
        PageTask("http://a.example/x.html", article, links=False),
        WorkerConfig(config, all_paragraphs=True),
    )
    assert result.document == extract(article, "http://a.example/x.html", config)
    assert result.links == ()
    assert {p.final_class for p in result.document.paragraphs} > {ParagraphClass.GOOD}


def test_worker_reports_extract_drop_reasons(article: bytes) -> None:
    wrong = process_page(
        PageTask("http://a.example/", article),
        WorkerConfig(ExtractConfig(language="en", accept_languages=frozenset({"de"}))),
    )
    assert wrong.document is not None
    assert wrong.document.drop_reason is DropReason.WRONG_LANGUAGE
    empty = process_page(PageTask("http://a.example/", b""), WorkerConfig(ExtractConfig()))
    assert empty.document is not None and empty.document.drop_reason is DropReason.EMPTY


# After other tests, hypothesis's gc callback can be what the alarm interrupts.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_page_over_the_time_cap_is_a_timeout_drop_not_a_lost_page(gold_dir: Path) -> None:
    big = crawl_site.big_page(gold_dir)  # 5 MB: seconds of work, far over the cap
    result = process_page(
        PageTask("http://a.example/big.html", big), WorkerConfig(ExtractConfig(), page_timeout=0.05)
    )
    assert result.timed_out
    assert result.document is not None
    assert result.document.drop_reason is DropReason.TIMEOUT
    assert result.document.raw_size == len(big)
    assert result.links == ()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_time_cap_whose_exception_is_swallowed_still_drops_the_page(
    article: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The alarm's exception is lost when it fires inside a finaliser or a gc callback
    (Python only prints those); the page is still a timeout drop, not kept."""
    import time

    import pipelines.worker as worker

    class SlowFinaliser:
        def __del__(self) -> None:
            time.sleep(0.3)  # the 0.05 s alarm goes off in here; Python ignores its exception

    def extract_with_a_finaliser(*args: object, **kwargs: object) -> object:
        finaliser = SlowFinaliser()
        del finaliser
        return extract(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(worker, "extract", extract_with_a_finaliser)
    result = process_page(
        PageTask("http://a.example/x.html", article),
        WorkerConfig(ExtractConfig(), page_timeout=0.05),
    )
    assert result.timed_out
    assert result.document is not None and result.document.drop_reason is DropReason.TIMEOUT
    quick = process_page(
        PageTask("http://a.example/x.html", article),
        WorkerConfig(ExtractConfig(), page_timeout=30),
    )
    assert not quick.timed_out, "the fired flag must not leak into the next page"


def test_links_only_mode_finds_links_without_extracting(article: bytes) -> None:
    result = process_page(PageTask("http://a.example/x.html", article), WorkerConfig(None))
    assert result.document is None
    assert result.links


LINK_PAGE = """<html><head>
<base href="http://a.example/dir/">
<meta http-equiv="refresh" content="5; url=later.html">
<title>Links</title></head><body>
<a href="page.html#part">relative, with a fragment</a>
<a href="/root.html">root-relative</a>
<a href="//cdn.example/x.js">protocol-relative</a>
<a href="https://b.example/">absolute</a>
<a href="page.html">the same page again</a>
<a href="skip.html" rel="external NoFollow">nofollow</a>
<a href="mailto:x@a.example">mail</a> <a href="javascript:void(0)">script</a>
<a href="ftp://a.example/f">ftp</a> <a href="#top">fragment only</a> <a>no href</a>
<a href="search?q=řeka a">Czech query</a>
<map><area href="area.html"></map>
</body></html>"""


def test_extract_links_resolves_dedupes_and_skips_what_is_not_followable() -> None:
    links, nofollow = extract_links(LINK_PAGE.encode("cp1250"), "http://a.example/p", "cp1250")
    assert not nofollow
    assert links == (
        "http://a.example/dir/later.html",
        "http://a.example/dir/page.html",
        "http://a.example/root.html",
        "http://cdn.example/x.js",
        "https://b.example/",
        "http://a.example/dir/search?q=%F8eka%20a",
        "http://a.example/dir/area.html",
    )


def test_extract_links_decodes_like_extract_without_an_encoding() -> None:
    links, _ = extract_links(LINK_PAGE.encode("utf-8"), "http://a.example/p")
    assert "http://a.example/dir/search?q=%C5%99eka%20a" in links


def test_robots_meta_nofollow_empties_the_links() -> None:
    page = b"<html><head><meta name='ROBOTS' content='noindex,nofollow'></head>"
    page += b"<body><a href='/a'>a</a></body></html>"
    assert extract_links(page, "http://a.example/", None, "utf-8") == ((), True)
    none = page.replace(b"noindex,nofollow", b"none")
    assert extract_links(none, "http://a.example/", None, "utf-8") == ((), True)


# -- scope -------------------------------------------------------------------------------------


def test_scope_rules() -> None:
    scope = UrlScope.build(["example.org"], ["cz", "*.co.uk"], [r"/private/", r"[?&]sid="])
    assert scope.check("http://example.org/a") is None
    assert scope.check("https://www.Example.ORG:8443/a") is None
    assert scope.check("http://news.bbc.co.uk/") is None
    assert scope.check("http://seznam.cz/") is None
    assert scope.check("http://example.com/") is Refusal.HOST
    assert scope.check("http://notexample.org/") is Refusal.HOST
    assert scope.check("ftp://example.org/") is Refusal.SCHEME
    assert scope.check("http://example.org/private/x") is Refusal.DENIED
    assert scope.check("http://example.org/a?x=1&sid=2") is Refusal.DENIED
    assert scope.check("http://example.org/report.PDF") is Refusal.BINARY
    assert scope.check("http://example.org/photo.jpg?size=2") is Refusal.BINARY
    assert scope.check("http://example.org/sitemap.xml.gz", page=False) is None
    assert UrlScope().check("http://anything.example/") is None


# -- addresses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
    ],
)
def test_only_public_addresses_are_allowed_by_default(address: str, allowed: bool) -> None:
    assert AddressPolicy().allows(ipaddress.ip_address(address)) is allowed


def test_allowed_networks_and_allow_private() -> None:
    policy = AddressPolicy(allowed_networks=(ipaddress.ip_network("127.0.0.1/32"),))
    assert policy.allows(ipaddress.ip_address("127.0.0.1"))
    assert not policy.allows(ipaddress.ip_address("127.0.0.2"))
    assert AddressPolicy(allow_private=True).allows(ipaddress.ip_address("10.0.0.1"))


def test_address_guard_refuses_and_counts() -> None:
    crawler = get_crawler(settings_dict={"CORPUS_NETWORK_ALLOWED_NETWORKS": ["127.0.0.1/32"]})
    guard = AddressGuardMiddleware.from_crawler(crawler)
    assert asyncio.run(guard.process_request(Request("http://127.0.0.1:8080/"))) is None
    assert asyncio.run(guard.process_request(Request("http://93.184.216.34/"))) is None
    for url in ("http://10.0.0.7/", "http://[::1]:80/", "http://169.254.169.254/latest"):
        with pytest.raises(IgnoreRequest, match="private-address"):
            asyncio.run(guard.process_request(Request(url)))
    with pytest.raises(IgnoreRequest, match="scheme"):
        asyncio.run(guard.process_request(Request("file:///etc/passwd")))
    # the address a response really came from is checked too
    response = Response("http://example.org/", ip_address=ipaddress.ip_address("192.168.0.1"))
    with pytest.raises(IgnoreRequest):
        guard.process_response(Request("http://example.org/"), response)
    stats = crawler.stats.get_stats()
    assert stats["corpus/refused/private-address"] == 4
    assert stats["corpus/refused/scheme"] == 1


def test_a_bad_allowed_network_setting_names_the_fix() -> None:
    crawler = get_crawler(settings_dict={"CORPUS_NETWORK_ALLOWED_NETWORKS": ["localhost"]})
    with pytest.raises(ValueError, match=re.escape("127.0.0.1/32")):
        AddressGuardMiddleware.from_crawler(crawler)


# -- WARC headers and items --------------------------------------------------------------------


def test_fetched_page_reads_the_response_and_nothing_more() -> None:
    request = Request(
        "http://a.example/final.html",
        meta={"depth": 3, "redirect_urls": ["http://a.example/first"]},
    )
    response = HtmlResponse(
        "http://a.example/final.html",
        body=b"<html><body>x</body></html>",
        headers={
            "Content-Type": 'text/html; Charset="windows-1250"',
            "Last-Modified": "Tue, 15 Oct 2019 08:30:00 GMT",
        },
        request=request,
        ip_address=ipaddress.ip_address("93.184.216.34"),
    )
    page = fetched_page(response)
    assert page.url == "http://a.example/final.html"
    assert page.request_url == "http://a.example/first"
    assert page.depth == 3
    assert page.content_type == "text/html" and page.http_charset == "windows-1250"
    assert page.last_modified == "Tue, 15 Oct 2019 08:30:00 GMT"
    assert page.ip_address == "93.184.216.34" and page.is_html
    assert "body" not in repr(page)  # items are logged: never dump the page


@pytest.mark.parametrize(
    ("content_type", "body", "is_html"),
    [
        ("application/pdf", b"%PDF-1.4", False),
        ("text/plain", b"<html>not really</html>", False),
        ("application/xhtml+xml", b"<html/>", True),
        ("", b"  <!DOCTYPE html><html></html>", True),
        ("", b"GIF89a", False),
    ],
)
def test_only_html_is_sent_to_extraction(content_type: str, body: bytes, is_html: bool) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    request = Request("http://a.example/f")
    response = Response("http://a.example/f", body=body, headers=headers, request=request)
    assert fetched_page(response).is_html is is_html


def test_document_ids_are_stable() -> None:
    assert document_id("http://a.example/") == document_id("http://a.example/")
    assert document_id("http://a.example/") != document_id("http://a.example/x")
    assert len(document_id("http://a.example/")) == 40


def test_progress_line() -> None:
    line = progress_line(
        {
            "downloader/response_count": 200,
            "corpus/docs_kept": 150,
            "corpus/paragraphs_good": 2000,
            "corpus/words": 123456,
            "corpus/bytes_raw": 20 * 1024 * 1024,
            "corpus/bytes_clean": 2 * 1024 * 1024,
        },
        elapsed=100.0,
    )
    assert line == (
        "01:40 | pages 200 (2.0/s) | kept 150 | good paragraphs 2,000 | words 123,456"
        " | 20.0 MB -> 2.00 MB (yield 10.0%)"
    )


# -- components switched off -------------------------------------------------------------------


def _extract_settings(crawler: Any) -> Any:
    return ExtractSettings.from_settings(crawler.settings)


SWITCHED_OFF = [
    (_extract_settings, "CORPUS_EXTRACT_ENABLED", False, "CORPUS_EXTRACT_ENABLED=True"),
    (WarcCaptureMiddleware.from_crawler, "CORPUS_WARC_ENABLED", False, "output.warc.enabled"),
    (WarcDocumentPipeline.from_crawler, "CORPUS_WARC_CONVERSION", False, "conversion_records"),
    (VerticalPipeline.from_crawler, "CORPUS_PREVERTICAL_ENABLED", False, "prevertical.enabled"),
    (ProgressExtension.from_crawler, "CORPUS_PROGRESS_INTERVAL", 0, "output.progress_interval"),
    (SummaryExtension.from_crawler, "CORPUS_SUMMARY_ENABLED", False, "CORPUS_SUMMARY_ENABLED"),
    (AddressGuardMiddleware.from_crawler, "CORPUS_NETWORK_ENABLED", False, "NETWORK_ENABLED=True"),
]


@pytest.mark.parametrize(
    ("build", "key", "value", "fix"),
    SWITCHED_OFF,
    ids=[f"{key}={value}" for _, key, value, _ in SWITCHED_OFF],
)
def test_switched_off_components_say_how_to_switch_them_on(
    build: Any, key: str, value: Any, fix: str
) -> None:
    crawler = get_crawler(settings_dict={key: value})
    with pytest.raises(NotConfigured, match=re.escape(fix)):
        build(crawler)


# -- a crawl for the language filter -----------------------------------------------------------

LANGUAGE_PROFILE = """\
name: languages
seeds:
  urls: ["{base}/"]
scope:
  max_depth: 1
politeness: {{download_delay: 0, autothrottle: false}}
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  language: auto
  accept_languages: [de]
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
"""


def test_pages_in_other_languages_are_dropped_as_wrong_language(
    article: bytes, tmp_path: Path
) -> None:
    page = isolate_links(article)
    links = "".join(f"<a href='/page{i}.html'>page {i}</a>" for i in range(3)).encode()
    pages = {
        "/": html_reply(add_links(page, links), charset=None),
        **{f"/page{i}.html": html_reply(page, charset=None) for i in range(3)},
    }
    with SiteServer(pages=pages) as server:
        profile = tmp_path / "languages.yaml"
        profile.write_text(LANGUAGE_PROFILE.format(base=server.base_url), encoding="utf-8")
        out = tmp_path / "out"
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        served = server.counts()
    assert result.returncode == 0, result.stderr[-3000:]
    assert served == {"/robots.txt": 1, "/": 1, **{f"/page{i}.html": 1 for i in range(3)}}
    (summary_path,) = (tmp_path / "out").glob("*-summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["dropped"]["wrong-language"] == 4
    assert summary["stats"]["item_dropped_reasons_count/WrongLanguage"] == 4
    assert summary["pages"]["kept"] == 0
    assert summary["files"]["prevertical"] == []


# -- the writer thread's folder ------------------------------------------------------------------


def test_an_output_folder_is_written_by_one_crawl_at_a_time(tmp_path: Path) -> None:
    first = _Lock(tmp_path)
    first.acquire()
    with pytest.raises(RuntimeError, match="give this one its own output folder"):
        _Lock(tmp_path).acquire()
    first.release()
    second = _Lock(tmp_path)
    second.acquire()
    second.release()


def test_files_left_open_by_a_crash_are_finished_before_a_new_crawl_writes(
    tmp_path: Path,
) -> None:
    crashed = WarcWriter(WarcConfig(tmp_path, prefix="old"))
    crashed.write_exchange(Exchange(url="http://a.example/", status=200, body=b"<p>hi</p>"))
    (left_open,) = tmp_path.glob("*.warc.gz.open")  # the crawl died before close()
    writer = OutputWriter(OutputSettings.from_settings(Settings({"CORPUS_OUTPUT_DIR": tmp_path})))
    writer.start()
    try:
        assert not left_open.exists()
        assert (tmp_path / left_open.name.removesuffix(".open")).is_file()
    finally:
        writer.close()
        writer._thread.join(timeout=30)
    assert not (tmp_path / ".corpus-crawler.lock").exists()

"""End-to-end crawls against a real HTTP server on 127.0.0.1 (tests/site/crawl_site.py).

Each crawl runs in its own process (`corpus-crawler crawl` or `scrapy crawl`: a
Twisted reactor cannot restart) while the server runs here and logs every
request. The main crawl is run once per module; the tests then check what the
server saw, the WARC files (warcio check, warcio reading, cdxj-indexer), the
prevertical and vertical files, and the JSON summary, and that every kept
document's text is exactly what `extract()` gives for the archived bytes.
"""

from __future__ import annotations

import collections
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import crawl_site
import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.crawllog import read_crawl_log
from corpus_crawler.profile import parse_profile
from corpus_crawler.testserver import RequestRecord, SiteServer
from corpus_crawler.vertical import DOC_ATTRIBUTES, read_vertical

ROOT = Path(__file__).resolve().parent.parent
CRAWL_TIMEOUT = 180  # seconds: a guard against a hung crawl, not a speed assertion


MAIN_PROFILE = """\
name: e2e
seeds:
  urls: ["{base}/"]
  sitemaps_from_robots: true
scope:
  max_depth: {max_depth}
politeness:
  concurrent_requests: 8
  concurrent_requests_per_domain: 8
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  max_page_bytes: 2000000
  download_timeout: 30
  retry_times: 2
extraction:
  language: auto
  min_words: 60
  workers: 2
  page_timeout: 60
output:
  progress_interval: 1
  warc:
    prefix: e2e
    metadata_records: true
  prevertical:
    enabled: true
  vertical:
    enabled: true
    sentences: true
# these tests compare the corpus files with extract(); dedup has its own (test_dedup_crawl.py)
dedup:
  enabled: false
"""


def run_crawl(
    profile_text: str, workdir: Path, name: str, *, scrapy: bool = False
) -> subprocess.CompletedProcess[str]:
    profile = workdir / f"{name}.yaml"
    profile.write_text(profile_text, encoding="utf-8")
    out = workdir / name
    if scrapy:
        command = [
            sys.executable, "-m", "scrapy", "crawl", "corpus",
            "-a", f"profile={profile}", "-s", f"CORPUS_OUTPUT_DIR={out}",
        ]  # fmt: skip
    else:
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
    return result


@dataclass
class WarcRecord:
    type: str
    headers: dict[str, str]
    http_headers: dict[str, str]
    status: int | None
    content: bytes
    offset: int
    path: Path


def read_warcs(paths: list[Path]) -> list[WarcRecord]:
    records: list[WarcRecord] = []
    for path in paths:
        with open(path, "rb") as handle:
            iterator = ArchiveIterator(handle, check_digests=True)
            for record in iterator:
                http = record.http_headers
                content = record.content_stream().read()
                assert record.digest_checker.passed is not False, (path, record.rec_headers)
                records.append(
                    WarcRecord(
                        type=record.rec_type,
                        headers=dict(record.rec_headers.headers),
                        http_headers=dict(http.headers) if http else {},
                        status=int(http.get_statuscode())
                        if http and record.rec_type == "response"
                        else None,
                        content=content,
                        offset=iterator.get_record_offset(),
                        path=path,
                    )
                )
    return records


def target(url: str) -> str:
    rest = url.split("://", 1)[1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


@dataclass
class Crawl:
    out: Path
    stdout: str
    stderr: str
    requests: list[RequestRecord]
    summary: dict[str, Any]
    warcs: list[Path]
    records: list[WarcRecord]
    prevertical: list[tuple[dict[str, str], list[tuple[dict[str, str], str]]]]
    vertical: list[tuple[dict[str, str], list[tuple[dict[str, str], str]]]]
    config: ExtractConfig
    counts: collections.Counter[str] = field(default_factory=collections.Counter)


def collect(
    out: Path,
    result: subprocess.CompletedProcess[str],
    requests: list[RequestRecord],
    profile_text: str,
    base: str,
) -> Crawl:
    summaries = list(out.glob("*-summary.json"))
    assert len(summaries) == 1, list(out.iterdir())
    warcs = sorted(out.glob("*.warc.gz"))
    # conversion and paragraph metadata records live in the text (WET) files
    texts = sorted(out.glob("*.warc.wet.gz"))
    profile = parse_profile(__import__("yaml").safe_load(profile_text))
    return Crawl(
        out=out,
        stdout=result.stdout,
        stderr=result.stderr,
        requests=requests,
        summary=json.loads(summaries[0].read_text(encoding="utf-8")),
        warcs=warcs,
        records=read_warcs(warcs + texts),
        prevertical=[d for p in sorted(out.glob("*.prevert")) for d in read_vertical(p)],
        vertical=[d for p in sorted(out.glob("*.vert")) for d in read_vertical(p)],
        config=profile.extraction.extract_config(profile.limits.max_page_bytes),
        counts=collections.Counter(r.target for r in requests),
    )


@pytest.fixture(scope="module")
def site(gold_dir: Path) -> Any:
    return crawl_site.build_site(gold_dir)


@pytest.fixture(scope="module")
def main_crawl(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    workdir = tmp_path_factory.mktemp("e2e")
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile_text = MAIN_PROFILE.format(base=server.base_url, max_depth=crawl_site.MAX_DEPTH)
        result = run_crawl(profile_text, workdir, "main")
        requests = server.requests
        base = server.base_url
    return collect(workdir / "main", result, requests, profile_text, base)


# -- what the server saw -----------------------------------------------------------------


def test_every_allowed_page_is_fetched_exactly_once(main_crawl: Crawl, site: Any) -> None:
    counts = main_crawl.counts
    wrong = {t: counts[t] for t in site.once if counts[t] != 1}
    assert not wrong, f"fetched other than once: {wrong}"
    assert all(counts[t] == 2 for t in site.twice), {t: counts[t] for t in site.twice}
    # robots.txt: fetched once, for the rules and for its Sitemap: line
    assert counts["/robots.txt"] == 1
    unexpected = set(counts) - site.once - site.twice - {"/robots.txt"}
    assert not unexpected, f"requests nobody expected: {sorted(unexpected)}"


def test_disallowed_nofollow_and_binary_links_are_never_fetched(
    main_crawl: Crawl, site: Any
) -> None:
    assert {t: main_crawl.counts[t] for t in site.never if main_crawl.counts[t]} == {}


def test_calendar_trap_stops_at_the_depth_limit(main_crawl: Crawl, site: Any) -> None:
    months = {t for t in main_crawl.counts if t.startswith("/calendar")}
    assert months == set(site.calendar)
    assert main_crawl.summary["stats"]["corpus/depth_max"] == crawl_site.MAX_DEPTH
    assert main_crawl.summary["stats"]["corpus/links/too-deep"] >= 1


def test_requests_carry_the_profile_user_agent(main_crawl: Crawl) -> None:
    agents = {r.headers.get("user-agent", "") for r in main_crawl.requests}
    assert len(agents) == 1 and next(iter(agents)).startswith("corpus-crawler/")


# -- WARC files ------------------------------------------------------------------------------


def test_warc_files_pass_warcio_check(main_crawl: Crawl) -> None:
    assert main_crawl.warcs
    for path in main_crawl.warcs:
        result = subprocess.run(
            [sys.executable, "-m", "warcio.cli", "check", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
    assert not list(main_crawl.out.glob("*.open")), "a file was left unfinished"


def test_every_exchange_is_archived_as_a_linked_request_and_response(
    main_crawl: Crawl,
) -> None:
    records = main_crawl.records
    by_id = {r.headers["WARC-Record-ID"]: r for r in records}
    responses = [r for r in records if r.type == "response"]
    requests = [r for r in records if r.type == "request"]
    assert len(responses) == len(requests)
    for response in responses:
        request = by_id[response.headers["WARC-Concurrent-To"]]
        assert request.type == "request"
        assert request.headers["WARC-Concurrent-To"] == response.headers["WARC-Record-ID"]
        assert request.headers["WARC-Target-URI"] == response.headers["WARC-Target-URI"]
    # everything the server answered is archived, the 5 MB page cut at the cap included
    served = collections.Counter(r.target for r in main_crawl.requests)
    archived = collections.Counter(target(r.headers["WARC-Target-URI"]) for r in responses)
    assert archived == +served
    statuses = {target(r.headers["WARC-Target-URI"]): r.status for r in responses}
    assert statuses["/old-location"] == 301 and statuses["/moved/step"] == 302
    assert statuses["/away"] == 302  # to another host: archived, not followed
    assert main_crawl.summary["stats"]["corpus/redirects/refused/host"] == 1
    assert statuses["/missing.html"] == 404
    flaky = sorted(
        r.status or 0 for r in responses if r.headers["WARC-Target-URI"].endswith("/flaky.html")
    )
    assert flaky == [200, 500]


def test_bodies_are_stored_as_received(main_crawl: Crawl, site: Any) -> None:
    (a1,) = [
        r for r in main_crawl.records
        if r.type == "response" and r.headers["WARC-Target-URI"].endswith("/articles/a1.html")
    ]  # fmt: skip
    headers = {k.lower(): v for k, v in a1.http_headers.items()}
    # sent gzipped and chunked: stored gzipped (as sent) and de-chunked, the transfer
    # coding renamed and no invented length
    assert headers["content-encoding"] == "gzip"
    assert "transfer-encoding" not in headers and "content-length" not in headers
    assert headers["x-crawler-transfer-encoding"] == "chunked"
    with open(a1.path, "rb") as handle:
        for record in ArchiveIterator(handle):
            if record.rec_headers.get_header("WARC-Record-ID") == a1.headers["WARC-Record-ID"]:
                raw = record.raw_stream.read()
    assert raw[:2] == b"\x1f\x8b"
    # warcio undoes the gzip content coding: the page exactly as the site has it
    assert a1.content == site.pages["/articles/a1.html"].body
    (pdf,) = [
        r
        for r in main_crawl.records
        if r.type == "response" and r.headers["WARC-Target-URI"].endswith("/files/report")
    ]
    assert pdf.content == crawl_site.PDF


def test_cdxj_indexer_indexes_every_record(main_crawl: Crawl) -> None:
    result = subprocess.run(
        ["cdxj-indexer", "--records", "all", *map(str, main_crawl.warcs)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    indexed = {
        (
            json.loads(line.split(" ", 2)[2])["filename"],
            int(json.loads(line.split(" ", 2)[2])["offset"]),
        )
        for line in lines
    }
    in_warcs = [r for r in main_crawl.records if r.path in main_crawl.warcs]
    records = {(r.path.name, r.offset) for r in in_warcs}
    assert len(lines) == len(in_warcs)
    assert indexed == records


def _kept_expectation(crawl: Crawl) -> dict[str, str]:
    """final URL -> clean text, by running extract() here on every archived 200 HTML response."""
    expected: dict[str, str] = {}
    for record in crawl.records:
        if record.type != "response" or record.status != 200:
            continue
        if "WARC-Truncated" in record.headers:  # cut at the size cap: archived, not a document
            continue
        content_type = {k.lower(): v for k, v in record.http_headers.items()}.get(
            "content-type", ""
        )
        if not content_type.startswith("text/html"):
            continue
        url = record.headers["WARC-Target-URI"]
        charset = None
        if "charset=" in content_type:
            charset = content_type.split("charset=", 1)[1].strip()
        document = extract(record.content, url, crawl.config, http_charset=charset)
        words = sum(p.word_count for p in document.good_paragraphs)
        if document.kept and words >= 60:
            expected[url] = document.text
    return expected


def test_kept_documents_are_exactly_what_extract_gives_for_the_archived_bytes(
    main_crawl: Crawl,
) -> None:
    conversions = {
        r.headers["WARC-Target-URI"]: r.content.decode("utf-8")
        for r in main_crawl.records
        if r.type == "conversion"
    }
    expected = _kept_expectation(main_crawl)
    assert len(expected) >= 8
    assert conversions.keys() == expected.keys()
    for url, text in expected.items():
        assert conversions[url] == text, url


def test_conversion_and_metadata_records_refer_to_their_response(main_crawl: Crawl) -> None:
    by_id = {r.headers["WARC-Record-ID"]: r for r in main_crawl.records}
    conversions = [r for r in main_crawl.records if r.type == "conversion"]
    # (the per-exchange fetchTimeMs metadata records refer to nothing: they are concurrent)
    metadata = [
        r for r in main_crawl.records if r.type == "metadata" and "WARC-Refers-To" in r.headers
    ]
    assert conversions and len(metadata) == len(conversions)
    for record in conversions + metadata:
        response = by_id[record.headers["WARC-Refers-To"]]
        assert response.type == "response" and response.status == 200
        assert response.headers["WARC-Target-URI"] == record.headers["WARC-Target-URI"]
    for record in conversions:
        assert record.headers["WARC-Identified-Content-Language"]


# -- corpus files ----------------------------------------------------------------------------


def test_prevertical_parses_back_into_the_same_documents(main_crawl: Crawl) -> None:
    conversions = {
        r.headers["WARC-Target-URI"]: r.content.decode("utf-8")
        for r in main_crawl.records
        if r.type == "conversion"
    }
    docs = {attrs["final_url"]: (attrs, paragraphs) for attrs, paragraphs in main_crawl.prevertical}
    assert docs.keys() == conversions.keys()
    for url, (attrs, paragraphs) in docs.items():
        assert list(attrs) == list(DOC_ATTRIBUTES)
        assert attrs["id"] == hashlib.sha1(url.encode()).hexdigest()
        assert all(p_attrs["class"] == "good" for p_attrs, _ in paragraphs)
        assert "\n".join(text for _, text in paragraphs) == conversions[url]


def test_vertical_tokens_rebuild_the_same_text(main_crawl: Crawl) -> None:
    conversions = {
        r.headers["WARC-Target-URI"]: r.content.decode("utf-8")
        for r in main_crawl.records
        if r.type == "conversion"
    }
    docs = {attrs["final_url"]: paragraphs for attrs, paragraphs in main_crawl.vertical}
    assert docs.keys() == conversions.keys()
    for url, paragraphs in docs.items():
        rebuilt = "".join("".join(text.split()) for _, text in paragraphs)
        assert rebuilt == "".join(conversions[url].split()), url


def test_http_only_charset_redirects_and_last_modified_reach_the_documents(
    main_crawl: Crawl, site: Any
) -> None:
    docs = {attrs["final_url"].split("/", 3)[3]: attrs for attrs, _ in main_crawl.prevertical}
    czech = docs["cz/zprava.html"]
    assert czech["enc_meta"].lower() == "windows-1250"
    assert czech["lang"] == "cs"
    (text,) = [
        "\n".join(t for _, t in paragraphs)
        for attrs, paragraphs in main_crawl.prevertical
        if attrs["final_url"].endswith("/cz/zprava.html")
    ]
    assert crawl_site.CZECH_PARAGRAPHS[0] in text
    moved = docs["articles/moved-target.html"]
    assert moved["url"].endswith("/old-location")
    assert docs["articles/a2.html"]["last_modified"] == "2019-10-15 08:30"


# -- summary and stats -------------------------------------------------------------------------


def test_summary_is_consistent_with_the_stats_and_the_files(main_crawl: Crawl, site: Any) -> None:
    summary = main_crawl.summary
    stats = summary["stats"]
    assert summary["finish_reason"] == "finished"
    conversions = [r for r in main_crawl.records if r.type == "conversion"]
    assert summary["pages"]["kept"] == stats["corpus/docs_kept"] == len(conversions)
    assert summary["pages"]["kept"] == len(main_crawl.prevertical) == len(main_crawl.vertical)
    for reason, count in summary["dropped"].items():
        assert stats.get(f"corpus/dropped/{reason}", 0) == count
    dropped = summary["dropped"]
    assert dropped["not-html"] == 1  # the PDF
    assert dropped["too-large"] == 1  # the 5 MB page, over the 2 MB cap
    # The `corpus` preset (the crawl default) keeps the few words of the stub pages, too
    # few for a document: /short.html (under min_words), the index, /meta-nofollow.html
    # and the calendar months.
    assert dropped["too-short"] == 3 + len(site.calendar)
    assert dropped["no-good-paragraph"] == 1
    items = stats["corpus/pages"]
    assert items == summary["pages"]["kept"] + sum(dropped.values()) - dropped["too-large"]
    kinds = ("warc", "warc_text", "warc_index", "prevertical", "vertical")
    listed = {name for kind in kinds for name in summary["files"][kind]}
    on_disk = {
        p.name
        for p in main_crawl.out.iterdir()
        if p.name.endswith((".warc.gz", ".warc.wet.gz", ".cdxj", ".prevert", ".vert"))
    }
    assert listed == on_disk
    assert summary["writer"]["errors"] == []
    assert "yield" in main_crawl.stderr and "pages" in main_crawl.stderr  # progress lines


# -- other crawls ------------------------------------------------------------------------------


BIG_PROFILE = """\
name: big-page
seeds:
  urls: ["{base}/big.html"]
scope:
  follow_links: false
politeness: {{download_delay: 0, autothrottle: false}}
network:
  allowed_networks: [127.0.0.1/32]
limits:
  max_page_bytes: 8000000
extraction:
  language: auto
  max_bytes: 262144
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  vertical: {{enabled: false}}
# compared with extract(): the repeated paragraphs of the big page must stay
dedup: {{enabled: false}}
"""


def test_a_page_under_the_size_cap_is_archived_whole_and_extracted(
    site: Any, tmp_path: Path
) -> None:
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile_text = BIG_PROFILE.format(base=server.base_url)
        result = run_crawl(profile_text, tmp_path, "big")
        requests = server.requests
        base = server.base_url
    crawl = collect(tmp_path / "big", result, requests, profile_text, base)
    assert crawl.counts["/big.html"] == 1
    (response,) = [
        r
        for r in crawl.records
        if r.type == "response"
        and r.status == 200
        and r.headers["WARC-Target-URI"].endswith("/big.html")
    ]
    assert response.content == site.big_page
    (conversion,) = [r for r in crawl.records if r.type == "conversion"]
    expected = extract(site.big_page, f"{base}/big.html", crawl.config)
    assert crawl.config.max_bytes == 262144
    assert conversion.content.decode("utf-8") == expected.text
    assert crawl.summary["dropped"]["too-large"] == 0


PRIVATE_PROFILE = """\
name: private
seeds:
  urls: ["{base}/", "http://localhost:{port}/articles/a0.html"]
politeness: {{download_delay: 0, autothrottle: false}}
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
"""


def test_loopback_addresses_are_refused_unless_allowed(site: Any, tmp_path: Path) -> None:
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile_text = PRIVATE_PROFILE.format(base=server.base_url, port=server.port)
        # `scrapy crawl corpus -a profile=...` from the checkout, too
        run_crawl(profile_text, tmp_path, "private", scrapy=True)
        requests = server.requests
    assert requests == []
    (summary_path,) = (tmp_path / "private").glob("*-summary.json")
    stats = json.loads(summary_path.read_text(encoding="utf-8"))["stats"]
    assert stats["corpus/refused/private-address"] == 2


def test_demo_crawls_the_bundled_site(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "demo", "-o", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=CRAWL_TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    (warc,) = out.glob("*.warc.gz")
    (prevert,) = out.glob("*.prevert")
    assert str(warc) in result.stdout and str(prevert) in result.stdout
    docs = list(read_vertical(prevert))
    assert len(docs) >= 5
    # the dates the pages declare (microdata, Open Graph), the same in the JSONL
    published = {attrs["url"].rsplit("/", 1)[1]: attrs["published"] for attrs, _ in docs}
    assert published["code-coverage.html"] == "2013-09-29"
    assert published["literally.html"] == "2015-02-24"
    assert published["developer-edition.html"] == ""
    (jsonl,) = out.glob("*.jsonl")
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert {row["url"]: row["published"] for row in rows} == {
        attrs["url"]: attrs["published"] or None for attrs, _ in docs
    }
    (log,) = out.glob("*.crawl.log")
    logged = {e.url: e.annotations.get("published") for e in read_crawl_log(log) if e.kept}
    assert logged == {attrs["url"]: attrs["published"] or None for attrs, _ in docs}
    check = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", str(warc)], capture_output=True, check=False
    )
    assert check.returncode == 0


def test_without_the_extraction_pipeline_the_spider_follows_the_same_links(
    main_crawl: Crawl, site: Any, tmp_path: Path
) -> None:
    # CORPUS_EXTRACT_ENABLED=False: no workers; the spider finds links itself with
    # Scrapy's LinkExtractor (the benchmark's baseline), under the same rules
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile_text = MAIN_PROFILE.format(base=server.base_url, max_depth=crawl_site.MAX_DEPTH)
        profile = tmp_path / "links.yaml"
        profile.write_text(profile_text, encoding="utf-8")
        out = tmp_path / "links"
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
             "-s", "CORPUS_EXTRACT_ENABLED=False"],
            cwd=ROOT, capture_output=True, text=True, timeout=CRAWL_TIMEOUT, check=False,
        )  # fmt: skip
        counts = server.counts()
    assert result.returncode == 0, result.stderr[-3000:]
    assert counts == dict(main_crawl.counts)
    (summary_path,) = out.glob("*-summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["pages"]["kept"] == 0 and summary["files"]["prevertical"] == []

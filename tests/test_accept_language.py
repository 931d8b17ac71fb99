"""Accept-Language names the crawl's languages (`corpus_crawler.request_headers`).

A real crawl of a loopback site that negotiates its language from one URL, as many
multilingual sites do (`Vary: Accept-Language`): a Czech crawl must be served, and
keep, the Czech pages. With Scrapy's `en` on every request it was served English and
dropped it all as wrong-language.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.profile import ProfileError, parse_profile
from corpus_crawler.request_headers import accept_language, request_headers
from corpus_crawler.testserver import Reply, RequestRecord, SiteServer, html_reply
from corpus_crawler.vertical import read_vertical
from pipelines.bridge import profile_settings

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180  # a guard against a hang, not a speed assertion

CZECH = (
    "Praha je hlavní a zároveň největší město České republiky. Leží ve středu Čech na"
    " řece Vltavě a je také sídlem většiny důležitých institucí státu. Historické"
    " centrum města bylo v roce 1992 zapsáno na seznam světového dědictví, protože"
    " se v něm zachovalo mnoho památek z různých období, které jsou dnes velmi"
    " oblíbené u návštěvníků z celého světa."
)
ENGLISH = (
    "Prague is the capital and the largest city of the Czech Republic. It lies in the"
    " centre of Bohemia on the Vltava river and is also the seat of most of the"
    " important institutions of the state. The historic centre of the city was added"
    " to the list of world heritage sites in 1992, because many monuments from"
    " different periods have been kept in it, which are very popular with visitors."
)
PAGES = ("/", "/a.html", "/b.html")

PROFILE = """\
name: accept-language
seeds:
  urls: ["{base}/"]
scope:
  max_depth: 1
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: auto
  accept_languages: {accept}
  workers: 1
output:
  progress_interval: 0
  report: false
dedup:
  enabled: false  # the pages of a language share their text
"""


def _negotiated(path: str) -> object:
    links = "".join(f'<a href="{p}">{p}</a> ' for p in PAGES if p != path)

    def route(request: RequestRecord) -> Reply:
        wanted = request.headers.get("accept-language", "")
        text = CZECH if wanted.split(",")[0].split(";")[0].strip() == "cs" else ENGLISH
        body = f"<html><body><p>{text}</p><p>{text}</p><nav>{links}</nav></body></html>"
        reply = html_reply(body.encode("utf-8"))
        return Reply(
            status=reply.status,
            headers=(*reply.headers, ("Vary", "Accept-Language")),
            body=reply.body,
        )

    return route


def _crawl(tmp_path: Path, accept: str) -> tuple[SiteServer, Path, dict[str, object]]:
    routes = {path: _negotiated(path) for path in PAGES}
    routes["/robots.txt"] = lambda _: Reply(
        body=b"User-agent: *\nAllow: /\n", headers=(("Content-Type", "text/plain"),)
    )
    server = SiteServer(routes=routes, keep_log=True)  # type: ignore[arg-type]
    with server:
        profile = tmp_path / "profile.yaml"
        profile.write_text(PROFILE.format(base=server.base_url, accept=accept))
        out = tmp_path / "out"
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    (summary,) = out.glob("*-summary.json")
    return server, out, json.loads(summary.read_text(encoding="utf-8"))


def _documents(out: Path) -> list[str]:
    texts = []
    for path in sorted(out.glob("*.prevert")):
        for _, paragraphs in read_vertical(path):
            texts.append(" ".join(text for _, text in paragraphs))
    return texts


def test_a_czech_crawl_asks_for_czech_and_keeps_the_czech_pages(tmp_path: Path) -> None:
    server, out, _ = _crawl(tmp_path, "[Czech, sk]")
    seen = {record.target: record.headers.get("accept-language") for record in server.requests}
    # every request, robots.txt included, asked for Czech first, then Slovak
    assert set(seen) == {"/robots.txt", *PAGES}
    assert set(seen.values()) == {"cs, sk;q=0.9"}
    documents = _documents(out)
    assert len(documents) == len(PAGES)
    assert all("Vltavě" in text and "Vltava river" not in text for text in documents)
    # the archived requests carry the header that was sent
    sent = []
    for warc in out.glob("*.warc.gz"):
        with warc.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "request":
                    sent.append(record.http_headers.get_header("Accept-Language"))
    assert len(sent) == len(PAGES) + 1 and set(sent) == {"cs, sk;q=0.9"}


def test_an_english_crawl_of_the_same_site_keeps_the_english_pages(tmp_path: Path) -> None:
    server, out, _ = _crawl(tmp_path, "[en]")
    assert {r.headers.get("accept-language") for r in server.requests} == {"en"}
    documents = _documents(out)
    assert len(documents) == len(PAGES)
    assert all("Vltava river" in text for text in documents)


def test_crawl_urls_with_lang_keeps_and_asks_for_those_languages(tmp_path: Path) -> None:
    # the newcomer's command: no profile, `--lang` by name
    routes = {path: _negotiated(path) for path in PAGES}
    server = SiteServer(routes=routes, keep_log=True)  # type: ignore[arg-type]
    with server:
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", server.base_url + "/",
             "--lang", "Czech", "-o", str(tmp_path / "out"),
             "-s", "CORPUS_NETWORK_ALLOWED_NETWORKS=127.0.0.1/32", "-s", "DOWNLOAD_DELAY=0",
             "-s", "CORPUS_DEDUP_ENABLED=False"],
            cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert {r.headers.get("accept-language") for r in server.requests} == {"cs"}
    documents = _documents(tmp_path / "out")
    assert len(documents) == len(PAGES) and all("Vltavě" in text for text in documents)
    # a name that is no language: one line, exit 2, nothing fetched
    bad = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "crawl", "https://example.org/",
         "--lang", "Czeck", "-o", str(tmp_path / "bad")],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--lang: unknown language 'Czeck' (did you mean 'Czech'" in bad.stderr
    assert not (tmp_path / "bad").exists()


def test_the_header_follows_the_profile() -> None:
    def header(data: dict[str, object]) -> str | None:
        settings = profile_settings(parse_profile(data))
        return settings["DEFAULT_REQUEST_HEADERS"].get("Accept-Language")

    # no language named: Scrapy's `en`, as before
    assert header({}) == "en"
    assert header({"extraction": {"language": "auto"}}) == "en"
    # a fixed language, by name or by code
    assert header({"extraction": {"language": "German"}}) == "de"
    # the accept-list wins over the extraction language, in its order
    data = {"extraction": {"language": "de", "accept_languages": ["ces", "sk-SK", "cs"]}}
    assert header(data) == "cs, sk;q=0.9"
    # the profile's own value, or none at all
    assert header({"politeness": {"accept_language": "fr-CH, fr;q=0.9"}}) == "fr-CH, fr;q=0.9"
    assert header({"politeness": {"accept_language": ""}}) is None
    # From still goes with them
    headers = request_headers(parse_profile({"output": {"warc": {"http_header_from": "a@b.c"}}}))
    assert headers["From"] == "a@b.c" and headers["Accept-Language"] == "en"


def test_q_values_fall_and_private_use_tags_are_cut() -> None:
    assert accept_language([]) == ""
    assert accept_language(["en-x-simple", "en", "be-tarask"]) == "en, be-tarask;q=0.9"
    many = accept_language([f"l{n}" for n in range(12)]).split(", ")
    assert many[1] == "l1;q=0.9" and many[9] == "l9;q=0.1" and many[11] == "l11;q=0.1"


def test_an_accept_list_naming_no_language_is_an_error() -> None:
    # before, `Czeck` was taken as is: every document was dropped as wrong-language
    with pytest.raises(ProfileError, match=r"accept_languages: unknown language 'Czeck'.*'cs'"):
        parse_profile({"extraction": {"accept_languages": ["Czeck"]}})
    # languages without a stoplist that identification can still name are codes
    assert parse_profile(
        {"extraction": {"accept_languages": ["ja"]}}
    ).extraction.accept_codes() == ("ja",)
    with pytest.raises(ProfileError, match=r"accept_language: .* printable ASCII on one line"):
        parse_profile({"politeness": {"accept_language": "cs\r\nX-Injected: 1"}})


def test_a_raw_accept_list_setting_is_resolved_too() -> None:
    # `-s CORPUS_EXTRACT_ACCEPT_LANGUAGES=...` bypasses the profile: resolved the same way
    from scrapy.settings import Settings

    from corpus_crawler.config import ConfigError
    from pipelines.extract import ExtractSettings

    def accepted(value: str) -> frozenset[str] | None:
        settings = Settings({"CORPUS_EXTRACT_ACCEPT_LANGUAGES": value})
        return ExtractSettings.from_settings(settings).extract.accept_languages

    assert accepted("Czech,sk-SK") == {"cs", "sk"}
    with pytest.raises(ConfigError, match="unknown language 'Czeck'"):
        accepted("Czeck")

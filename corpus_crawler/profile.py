"""Crawl profiles: the YAML files in configs/crawls/, loaded strictly into frozen dataclasses.

A profile says what to fetch (seeds, scope), how politely (robots.txt, delays,
concurrency), what to keep (extraction settings) and where to write it. Loading
is strict: an unknown key, a wrong type or an out-of-range value is a
`ProfileError` naming the file, the key and the fix, e.g.

    configs/crawls/x.yaml: scope.max_depht: unknown key; did you mean `max_depth`?

This module is library code: it never imports Scrapy. `pipelines/bridge.py`
turns a `Profile` into Scrapy settings.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ._configfiles import expansion_problem, safe_load
from .addresses import parse_allowed_network, parse_dns_server
from .config import ConfigError, ExtractConfig, JustextParams, Preset
from .dedup import DedupConfig, MarkAction
from .recrawl import Schedule as RecrawlSchedule
from .recrawl import parse_interval
from .seeds import looks_like_url, read_seed_file
from .yieldrate import YieldConfig

__all__ = [
    "Dedup",
    "Extraction",
    "Limits",
    "Network",
    "Output",
    "Politeness",
    "PreverticalOutput",
    "Profile",
    "ProfileError",
    "Scope",
    "Seeds",
    "VerticalOutput",
    "WarcOutput",
    "YieldPruning",
    "load_profile",
    "parse_profile",
    "profile_for_urls",
]


class ProfileError(ConfigError):
    """A crawl profile is wrong; the message names the file, the key and the fix."""


class _FieldError(Exception):
    """Raised by a section's checks; the loader adds the file and the key path."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def _require(condition: bool, key: str, message: str) -> None:
    if not condition:
        raise _FieldError(key, message)


def _did_you_mean(value: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean `{close[0]}`?"
    return "known keys: " + ", ".join(f"`{c}`" for c in choices)


_HOST_LABEL = re.compile(r"^[a-z0-9*]([a-z0-9-]*[a-z0-9])?$")
#: What an HTTP header value may hold here (RFC 9110 field-value, ASCII only).
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")


def _check_domains(key: str, domains: tuple[str, ...]) -> None:
    for domain in domains:
        labels = domain.split(".")
        _require(
            domain == domain.lower() and all(_HOST_LABEL.match(label) for label in labels),
            key,
            f"{domain!r} is not a host name: write it lower-case without scheme, port or path"
            " (e.g. `example.org`)",
        )


@dataclass(frozen=True, slots=True)
class Seeds:
    """Where the crawl starts. At least one of the lists must be non-empty."""

    #: Start URLs.
    urls: tuple[str, ...] = ()
    #: Files with one URL per line (`#` starts a comment); relative to the profile file.
    files: tuple[str, ...] = ()
    #: Sitemap or sitemap-index URLs (gzipped ones too), or robots.txt URLs whose
    #: `Sitemap:` lines are followed.
    sitemaps: tuple[str, ...] = ()
    #: Also read the `Sitemap:` lines of each start URL's robots.txt.
    sitemaps_from_robots: bool = False

    def __post_init__(self) -> None:
        for key in ("urls", "sitemaps"):
            for url in getattr(self, key):
                _require(
                    url.startswith(("http://", "https://")),
                    key,
                    f"{url!r} is not an http(s) URL: write it with its scheme, e.g. https://{url}",
                )


@dataclass(frozen=True, slots=True)
class Scope:
    """Which URLs the crawl may fetch."""

    #: Hosts allowed (each with its subdomains). Empty: the seeds' hosts, unless
    #: `allowed_tlds` is set.
    allowed_domains: tuple[str, ...] = ()
    #: Public suffixes allowed, e.g. `cz` or `co.uk`; a host matches if it ends with one.
    allowed_tlds: tuple[str, ...] = ()
    #: Regular expressions; a URL matching any of them is never fetched.
    deny_patterns: tuple[str, ...] = ()
    #: Link hops from a seed; 0 fetches the seeds only. None: no limit.
    max_depth: int | None = 5
    #: Pages scheduled per registered domain (`a.example.co.uk` and `b.example.co.uk`
    #: count together; public-suffix aware). None: no limit.
    max_pages_per_domain: int | None = None
    #: Pages scheduled in total. None: no limit.
    max_pages: int | None = None
    #: Follow links at all (false: fetch seeds and sitemap URLs only).
    follow_links: bool = True
    # Trap limits (corpus_crawler/traps.py); null switches one off.
    #: Characters of a URL (2,083: the longest URL Internet Explorer took).
    max_url_length: int | None = 2083
    #: Times one path segment may occur in a URL's path (`/a/b/a/b/a/b/a/b`: 4).
    max_segment_repeats: int | None = 3
    #: Parameters in a URL's query string.
    max_query_parameters: int | None = 16
    #: Link hops inside one registered domain, counted from where the crawl entered it
    #: (bounds calendars and session ids even with `max_depth: null`).
    max_domain_depth: int | None = 50
    #: Links of one page considered for the crawl; the rest are counted and ignored.
    max_links_per_page: int | None = 1000

    def __post_init__(self) -> None:
        _check_domains("allowed_domains", self.allowed_domains)
        _check_domains("allowed_tlds", tuple(t.lstrip(".") for t in self.allowed_tlds))
        for pattern in self.deny_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise _FieldError(
                    "deny_patterns",
                    f"{pattern!r} is not a valid regular expression ({exc}); quote it in"
                    " single quotes and escape special characters with a backslash",
                ) from None
        for key in ("max_depth", "max_pages_per_domain", "max_pages"):
            value = getattr(self, key)
            _require(value is None or value >= 0, key, f"must be >= 0 or null, got {value}")
        for key in (
            "max_url_length",
            "max_segment_repeats",
            "max_query_parameters",
            "max_domain_depth",
            "max_links_per_page",
        ):
            value = getattr(self, key)
            _require(value is None or value >= 1, key, f"must be >= 1 or null, got {value}")


@dataclass(frozen=True, slots=True)
class Politeness:
    """How hard the crawler may hit each site."""

    obey_robots_txt: bool = True
    #: A robots.txt that answers 5xx or 429, or not at all (after the in-run retries):
    #: ``defer`` its host's pages to a later attempt (RFC 9309 2.3.1.4: assume complete
    #: disallow; corpus_crawler.retries), or ``allow`` them as if there were no rules.
    robots_unreachable: str = "defer"
    user_agent: str = "corpus-crawler/0.1 (+https://github.com/corpus-crawler)"
    #: Requests in flight over all sites.
    concurrent_requests: int = 16
    #: Requests in flight per host.
    concurrent_requests_per_domain: int = 2
    #: Seconds between two requests to one host (AutoThrottle's minimum when it is on).
    download_delay: float = 1.0
    #: Wait 0.5-1.5 x download_delay instead of exactly download_delay.
    randomize_delay: bool = True
    #: Adapt the delay to the server's latency (Scrapy's AutoThrottle).
    autothrottle: bool = True
    autothrottle_target_concurrency: float = 1.0
    autothrottle_max_delay: float = 60.0
    #: Honour robots.txt's Crawl-delay up to this many seconds between two requests to a
    #: host (a floor of its delay, AutoThrottle included); 0: ignore Crawl-delay.
    max_crawl_delay: float = 30.0
    #: A 429 or 503 answer slows its host down to the Retry-After it names (5 s doubling
    #: without one) until it answers otherwise, up to this many seconds; 0: no backoff.
    max_retry_after: float = 120.0
    #: The Accept-Language header of every request. null: the crawl's languages
    #: (extraction.accept_languages, else a fixed extraction.language), `en` when they
    #: name none (Scrapy's default); "": no header.
    accept_language: str | None = None

    def __post_init__(self) -> None:
        _require(self.user_agent.strip() != "", "user_agent", "must not be empty")
        for key in ("user_agent", "accept_language"):
            value = getattr(self, key)
            _require(
                value is None or _HEADER_VALUE.fullmatch(value) is not None,
                key,
                f"{value!r} cannot be sent in an HTTP header: printable ASCII on one line only",
            )
        _require(
            self.robots_unreachable in ("defer", "allow"),
            "robots_unreachable",
            f"must be defer or allow, got {self.robots_unreachable!r}",
        )
        for key in ("concurrent_requests", "concurrent_requests_per_domain"):
            value = getattr(self, key)
            _require(value >= 1, key, f"must be >= 1, got {value}")
        for key in ("download_delay", "autothrottle_max_delay", "max_crawl_delay",
                    "max_retry_after"):  # fmt: skip
            value = getattr(self, key)
            _require(value >= 0, key, f"must be >= 0 seconds, got {value}")
        _require(
            self.autothrottle_target_concurrency > 0,
            "autothrottle_target_concurrency",
            f"must be > 0, got {self.autothrottle_target_concurrency}",
        )


@dataclass(frozen=True, slots=True)
class Network:
    """Which addresses may be contacted."""

    #: Allow private, loopback, link-local and other non-public addresses.
    allow_private_addresses: bool = False
    #: Networks allowed even though not public, e.g. `127.0.0.1/32` for local tests;
    #: `10.0.0.0/8:8080` or `[fd00::/8]:8080` allows one port only.
    allowed_networks: tuple[str, ...] = ()
    #: DNS servers to ask instead of the system resolver (`192.0.2.53`, `127.0.0.1:5353`).
    dns_servers: tuple[str, ...] = ()
    #: Host names whose answers are cached (least recently used go first).
    dns_cache_size: int = 100_000
    #: Seconds a DNS answer is reused.
    dns_cache_seconds: float = 3600.0
    #: Seconds a failed lookup is remembered (and not retried).
    dns_failure_cache_seconds: float = 300.0

    def __post_init__(self) -> None:
        for network in self.allowed_networks:
            try:
                parse_allowed_network(network)
            except ValueError as exc:
                raise _FieldError("allowed_networks", str(exc)) from None
        for server in self.dns_servers:
            try:
                parse_dns_server(server)
            except ValueError as exc:
                raise _FieldError("dns_servers", str(exc)) from None
        _require(self.dns_cache_size >= 0, "dns_cache_size", "must be >= 0")
        for key in ("dns_cache_seconds", "dns_failure_cache_seconds"):
            _require(getattr(self, key) >= 0, key, "must be >= 0 seconds")


@dataclass(frozen=True, slots=True)
class Limits:
    """Hard limits of a crawl."""

    #: Seconds after which the crawl stops. None: no limit.
    max_run_time: float | None = None
    #: Responses larger than this are aborted (and counted, not extracted).
    max_page_bytes: int = 10 * 1024 * 1024
    #: Responses larger than this are logged.
    warn_page_bytes: int = 2 * 1024 * 1024
    #: Seconds to wait for a response.
    download_timeout: float = 30.0
    #: Retries of a failed request (5xx, timeouts, connection errors).
    retry_times: int = 2
    #: Later attempts at a request that got no response at all (a network error, after
    #: the retry_times above), each retry_delay x 2^n seconds after the last failure,
    #: in the same run if it is still going or in the next run of the campaign
    #: (corpus_crawler.retries). 0: such a request is finished as failed at once.
    deferred_retries: int = 3
    #: Seconds before the first deferred attempt (10 minutes); each next one waits twice as long.
    retry_delay: float = 600.0
    #: Bytes of a robots.txt that are read (Google reads 500 KiB and ignores the rest).
    max_robots_txt_bytes: int = 500 * 1024
    #: Bytes of one sitemap after decompression (sitemaps.org: 50 MB).
    max_sitemap_bytes: int = 50 * 1024 * 1024
    #: URLs taken from one sitemap (sitemaps.org: 50,000).
    max_sitemap_urls: int = 50_000
    #: Sitemap-index nesting followed: 0 reads only the sitemaps the crawl starts from.
    max_sitemap_depth: int = 2
    #: Sitemaps fetched per host.
    max_sitemaps_per_host: int = 1000

    def __post_init__(self) -> None:
        _require(
            self.max_run_time is None or self.max_run_time > 0,
            "max_run_time",
            f"must be > 0 seconds or null, got {self.max_run_time}",
        )
        _require(self.max_page_bytes > 0, "max_page_bytes", "must be > 0")
        _require(self.warn_page_bytes > 0, "warn_page_bytes", "must be > 0")
        _require(self.download_timeout > 0, "download_timeout", "must be > 0 seconds")
        _require(self.retry_times >= 0, "retry_times", f"must be >= 0, got {self.retry_times}")
        _require(
            self.deferred_retries >= 0,
            "deferred_retries",
            f"must be >= 0 (0: no deferred retries), got {self.deferred_retries}",
        )
        _require(
            self.retry_delay >= 0, "retry_delay", f"must be >= 0 seconds, got {self.retry_delay}"
        )
        for key in (
            "max_robots_txt_bytes",
            "max_sitemap_bytes",
            "max_sitemap_urls",
            "max_sitemaps_per_host",
        ):
            _require(getattr(self, key) > 0, key, f"must be > 0, got {getattr(self, key)}")
        _require(self.max_sitemap_depth >= 0, "max_sitemap_depth", "must be >= 0")


@dataclass(frozen=True, slots=True)
class Extraction:
    """How pages become corpus text: the `extract()` settings plus the crawl-side filters."""

    #: false: archive pages and follow links, but extract no text.
    enabled: bool = True
    extractor: str = "justext"
    #: seed, reference, language-independent, corpus, article or article-comments
    #: (corpus_crawler.config.Preset).
    preset: str = "corpus"
    #: A language code or name, `auto` to detect it per page, or null for no stoplist.
    language: str | None = "auto"
    #: Languages to keep; documents in others are dropped as wrong-language. Empty: all.
    accept_languages: tuple[str, ...] = ()
    #: jusText thresholds overriding the defaults (keys of JustextParams).
    parameters: Mapping[str, Any] = field(default_factory=dict)
    #: Options of the declutter / kimatu / combined extractors.
    extractor_options: Mapping[str, Any] = field(default_factory=dict)
    #: Bytes of a page given to the extractor (the rest is not parsed); 0: all of it
    #: (pages are never larger than limits.max_page_bytes anyway).
    max_bytes: int = 0
    #: Documents with fewer words of good text are dropped as too-short.
    min_words: int = 0
    #: Extraction processes; 0 means one per CPU core.
    workers: int = 0
    #: Pages sent to the workers and not yet finished; 0 means 4 per worker.
    max_in_flight: int = 0
    #: Seconds one page may take in a worker before it is dropped as a timeout.
    page_timeout: float = 30.0

    def __post_init__(self) -> None:
        try:
            Preset.parse(self.preset)
        except ConfigError as exc:
            raise _FieldError("preset", str(exc)) from None
        try:
            JustextParams().merged(self.parameters, source="the jusText parameters")
        except ConfigError as exc:
            raise _FieldError("parameters", str(exc)) from None
        try:
            ExtractConfig(extractor=self.extractor)
        except ConfigError as exc:
            raise _FieldError("extractor", str(exc)) from None
        # checked here, so that the message names the profile key (the crawl's own check
        # named only "CORPUS_EXTRACT_* settings"); reads a file only when not the default
        if self.language not in (None, "auto"):
            try:
                ExtractConfig(language=self.language).checked()
            except ConfigError as exc:
                raise _FieldError("language", str(exc)) from None
        if self.extractor_options:
            if self.extractor == "justext":
                raise _FieldError(
                    "extractor_options",
                    "the justext extractor takes no options (they are for declutter, kimatu"
                    " and combined): put jusText thresholds in extraction.parameters",
                )
            try:
                ExtractConfig(
                    extractor=self.extractor, extractor_options=dict(self.extractor_options)
                ).checked()
            except ConfigError as exc:
                raise _FieldError("extractor_options", str(exc)) from None
        if self.accept_languages:
            try:
                self.accept_codes()
            except ConfigError as exc:
                raise _FieldError("accept_languages", str(exc)) from None
        for key in ("max_bytes", "min_words", "workers", "max_in_flight"):
            value = getattr(self, key)
            _require(value >= 0, key, f"must be >= 0, got {value}")
        _require(self.page_timeout > 0, "page_timeout", "must be > 0 seconds")

    def accept_codes(self) -> tuple[str, ...]:
        """`accept_languages` as the codes language identification names (`Czech`,
        `ces` and `cs-CZ` are all `cs`), in the profile's order, without repeats.
        Reads the language index (only when the list is not empty)."""
        if not self.accept_languages:
            return ()
        from .stoplists import accept_code

        return tuple(dict.fromkeys(accept_code(name) for name in self.accept_languages))

    def target_languages(self) -> tuple[str, ...]:
        """The languages the crawl wants, most wanted first: the accept-list, else a
        fixed `language`; () for `auto` or no stoplist."""
        if self.accept_languages:
            return self.accept_codes()
        if self.language in (None, "auto"):
            return ()
        from .stoplists import resolve_language

        return (resolve_language(self.language),)

    def extract_config(self, max_page_bytes: int | None = None) -> ExtractConfig:
        """The `ExtractConfig` the workers pass to `extract()` (`max_page_bytes`: the
        crawl's size cap, used when `max_bytes` is 0)."""
        params = JustextParams().merged(self.parameters) if self.parameters else None
        kwargs: dict[str, Any] = {}
        if self.max_bytes or max_page_bytes:
            kwargs["max_bytes"] = self.max_bytes or max_page_bytes
        return ExtractConfig(
            extractor=self.extractor,
            preset=Preset.parse(self.preset),
            language=self.language,
            params=params,
            accept_languages=frozenset(self.accept_codes()) or None,
            extractor_options=dict(self.extractor_options),
            **kwargs,
        ).checked()  # the language and option files are read here, once


@dataclass(frozen=True, slots=True)
class WarcOutput:
    """WARC files: every request and response, plus a conversion record per kept document."""

    enabled: bool = True
    #: First part of the IIPC-style file names (prefix-timestamp-serial-host.warc.gz).
    prefix: str = "corpus"
    #: A file is closed and a new one started past this size.
    max_file_bytes: int = 1_000_000_000
    #: A `conversion` record with the clean text of each kept document.
    conversion_records: bool = True
    #: A `metadata` record with the class of each paragraph of each kept document.
    metadata_records: bool = False
    #: `warcinfo` fields: who runs the crawl (name and contact), as Heritrix's `operator`.
    operator: str = ""
    #: `warcinfo` field: the institution that publishes the archive.
    publisher: str = ""
    #: A contact e-mail sent as the `From` request header and named in `warcinfo`.
    http_header_from: str = ""
    #: Write a CDXJ index (pywb, py-wacz) beside each finished WARC file.
    cdxj: bool = True

    def __post_init__(self) -> None:
        _require(self.max_file_bytes > 0, "max_file_bytes", "must be > 0")
        _require(
            re.fullmatch(r"[A-Za-z0-9._-]+", self.prefix) is not None,
            "prefix",
            f"{self.prefix!r} must be letters, digits, `.`, `_` or `-` (it starts file names)",
        )


@dataclass(frozen=True, slots=True)
class PreverticalOutput:
    """SpiderLing-compatible prevertical: `<doc>`/`<p>` structure with running text."""

    enabled: bool = True
    max_file_bytes: int = 1_000_000_000

    def __post_init__(self) -> None:
        _require(self.max_file_bytes > 0, "max_file_bytes", "must be > 0")


@dataclass(frozen=True, slots=True)
class VerticalOutput:
    """Tokenised vertical: one token per line, `<g/>` glue, optional `<s>` sentences."""

    enabled: bool = False
    sentences: bool = False
    max_file_bytes: int = 1_000_000_000
    #: A Manatee registry (NAME.manatee) and a CWB script (NAME.cwb.sh) beside each file.
    corpus_tools: bool = True

    def __post_init__(self) -> None:
        _require(self.max_file_bytes > 0, "max_file_bytes", "must be > 0")


@dataclass(frozen=True, slots=True)
class DocumentsOutput:
    """Kept documents for NLP tools (`corpus_crawler.documents`): JSON Lines and/or Parquet."""

    jsonl: bool = False
    #: Needs pyarrow (`pip install 'corpus-crawler[parquet]'`).
    parquet: bool = False
    max_file_bytes: int = 1_000_000_000
    #: Parquet: documents per row group.
    row_group_rows: int = 1000
    #: JSONL as *.jsonl.gz (a gzip member per document; every gzip reader reads it whole).
    gzip: bool = False

    def __post_init__(self) -> None:
        _require(self.max_file_bytes > 0, "max_file_bytes", "must be > 0")
        _require(self.row_group_rows > 0, "row_group_rows", "must be > 0")


@dataclass(frozen=True, slots=True)
class Output:
    """Where and what to write."""

    #: Output folder (relative to the working directory); `-o` overrides it.
    directory: str = "output"
    warc: WarcOutput = field(default_factory=WarcOutput)
    prevertical: PreverticalOutput = field(default_factory=PreverticalOutput)
    vertical: VerticalOutput = field(default_factory=VerticalOutput)
    #: Write every paragraph with its class, not only the good ones.
    keep_all_paragraphs: bool = False
    #: Seconds between two progress lines; 0 turns them off.
    progress_interval: float = 5.0
    documents: DocumentsOutput = field(default_factory=DocumentsOutput)
    #: A line per URL fetched or refused (`corpus_crawler.crawllog`).
    crawl_log: bool = True
    #: The crawl log goes on in a new file once one holds this many bytes.
    crawl_log_max_file_bytes: int = 1_000_000_000
    #: An HTML report (`corpus_crawler.report`) at the end of the crawl.
    report: bool = True
    #: Seconds between two refreshes of the report during the crawl; 0: only at the end.
    report_interval: float = 300.0

    def __post_init__(self) -> None:
        _require(self.directory.strip() != "", "directory", "must not be empty")
        _require(self.report_interval >= 0, "report_interval", "must be >= 0 seconds")
        _require(
            self.crawl_log_max_file_bytes > 0,
            "crawl_log_max_file_bytes",
            f"must be > 0 bytes, got {self.crawl_log_max_file_bytes}",
        )
        _require(self.progress_interval >= 0, "progress_interval", "must be >= 0 seconds")


@dataclass(frozen=True, slots=True)
class Dedup:
    """Duplicates out of the corpus (corpus_crawler.dedup); the stores persist in
    OUT/state/dedup/ across runs into the same output folder."""

    #: false: no dedup stage and no yield pruning (to compare a run with and without).
    enabled: bool = True
    #: Drop documents whose normalised text was kept before (`duplicate`).
    exact: bool = True
    #: Drop documents mostly the same as one kept before (`near-duplicate`, MinHash + LSH).
    near_documents: bool = True
    #: Estimated Jaccard similarity of word 5-grams from which a document is a near-duplicate.
    near_threshold: float = 0.8
    #: Share of a document's 7-grams seen in kept documents from which it is a
    #: near-duplicate too (containment: the full text after a shortened copy).
    near_seen_share: float = 0.9
    #: Paragraphs whose word n-grams were mostly seen before: remove, mark or off.
    paragraphs: str = "remove"
    #: Share of a paragraph's n-grams seen before from which it is a duplicate.
    paragraph_threshold: float = 0.5
    #: Words per n-gram of the paragraph stage.
    paragraph_ngram: int = 7
    #: Fixed size of the paragraph n-gram filter (a power of two, MiB); see the README.
    paragraph_filter_mib: int = 256
    #: Paragraphs in another language than their document: remove, mark or off.
    paragraph_language: str = "remove"
    #: Words a paragraph needs before its language is judged.
    paragraph_language_min_words: int = 12

    def __post_init__(self) -> None:
        try:
            self.config()
        except ConfigError as exc:
            key, _, message = str(exc).partition(": ")
            raise _FieldError(key.removeprefix("dedup."), message) from None

    def config(self) -> DedupConfig:
        return DedupConfig(
            exact=self.exact,
            near_documents=self.near_documents,
            near_threshold=self.near_threshold,
            near_seen_share=self.near_seen_share,
            paragraphs=MarkAction.parse(self.paragraphs, "dedup.paragraphs"),
            paragraph_threshold=self.paragraph_threshold,
            paragraph_ngram=self.paragraph_ngram,
            paragraph_filter_mib=self.paragraph_filter_mib,
            paragraph_language=MarkAction.parse(
                self.paragraph_language, "dedup.paragraph_language"
            ),
            paragraph_language_min_words=self.paragraph_language_min_words,
        )


@dataclass(frozen=True, slots=True)
class YieldPruning:
    """SpiderLing's domain yield pruning (corpus_crawler.yieldrate); the profile key is `yield`."""

    #: off, permissive (k = 0.002), normal (0.005) or strict (0.01).
    preset: str = "permissive"
    #: Documents a host must have given before it can be pruned (>= 10).
    min_docs: int = 20
    #: Raw bytes a host must have given before it can be pruned.
    min_bytes: int = 512 * 1024

    def __post_init__(self) -> None:
        try:
            YieldConfig(preset=self.preset, min_docs=self.min_docs, min_bytes=self.min_bytes)  # type: ignore[arg-type]
        except ConfigError as exc:
            key, _, message = str(exc).partition(": ")
            raise _FieldError(key.removeprefix("yield."), message) from None


@dataclass(frozen=True, slots=True)
class Schedule:
    """Revisit intervals of `crawl --recrawl` passes (corpus_crawler.recrawl): durations
    such as "45s", "30m", "12h", "2d", "1w"."""

    #: The shortest interval a URL that keeps changing is revisited at.
    min_interval: str = "1h"
    #: The longest interval a URL that never changes is left alone for.
    max_interval: str = "30d"
    #: The interval of a newly found URL.
    initial_interval: str = "1d"

    def __post_init__(self) -> None:
        seconds = {}
        for key in ("min_interval", "max_interval", "initial_interval"):
            try:
                seconds[key] = parse_interval(getattr(self, key), key)
            except ValueError as exc:
                raise _FieldError(key, str(exc).partition(": ")[2]) from None
        _require(
            seconds["min_interval"] <= seconds["max_interval"],
            "min_interval",
            f"{self.min_interval!r} is longer than max_interval {self.max_interval!r}",
        )

    def seconds(self) -> RecrawlSchedule:
        return RecrawlSchedule(
            min_interval=parse_interval(self.min_interval, "min_interval"),
            max_interval=parse_interval(self.max_interval, "max_interval"),
            initial_interval=parse_interval(self.initial_interval, "initial_interval"),
        )


@dataclass(frozen=True, slots=True)
class Distributed:
    """A campaign shared by many crawler processes through Redis (`crawl --redis URL`)."""

    #: redis://HOST:PORT/DB; empty: a single-process campaign (SQLite in the output folder).
    redis_url: str = ""
    #: Key prefix of the campaign in Redis (empty: the profile's name).
    namespace: str = ""
    #: Seconds without a heartbeat after which a process's leased requests go to others.
    lease_timeout: float = 30.0
    #: Seconds a process waits for an unreachable Redis (the crawl pauses) before it stops.
    retry_timeout: float = 600.0
    #: Seconds a host's robots.txt, fetched once for the campaign, is kept in Redis
    #: before it is fetched again (Google caches it for 24 h).
    robots_txt_ttl: float = 86400.0

    def __post_init__(self) -> None:
        _require(
            self.redis_url == "" or self.redis_url.startswith(("redis://", "rediss://", "unix://")),
            "redis_url",
            f"{self.redis_url!r} is not a Redis URL: write redis://HOST:PORT/DB",
        )
        for key, low in (("lease_timeout", 0.0), ("retry_timeout", -1.0), ("robots_txt_ttl", 0.0)):
            value = getattr(self, key)
            _require(value > low, key, f"must be > {max(low, 0):g} seconds, got {value}")


@dataclass(frozen=True, slots=True)
class Profile:
    """One crawl: everything `corpus-crawler crawl` and `scrapy crawl corpus` need."""

    #: A short name for logs and the summary.
    name: str = "crawl"
    seeds: Seeds = field(default_factory=Seeds)
    scope: Scope = field(default_factory=Scope)
    politeness: Politeness = field(default_factory=Politeness)
    network: Network = field(default_factory=Network)
    limits: Limits = field(default_factory=Limits)
    extraction: Extraction = field(default_factory=Extraction)
    output: Output = field(default_factory=Output)
    dedup: Dedup = field(default_factory=Dedup)
    #: `yield:` in the YAML (a Python keyword, hence the underscore).
    yield_: YieldPruning = field(default_factory=YieldPruning)
    schedule: Schedule = field(default_factory=Schedule)
    distributed: Distributed = field(default_factory=Distributed)
    #: Raw Scrapy settings (UPPER_CASE keys) for anything the sections above do not cover.
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: Where the profile was read from ("" when built in code).
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for key in self.settings:
            _require(
                isinstance(key, str) and key.isupper(),
                "settings",
                f"{key!r} is not a Scrapy setting name: Scrapy settings are UPPER_CASE",
            )

    def with_languages(self, languages: Sequence[str]) -> Profile:
        """This profile keeping (and asking sites for) `languages` only: ``crawl --lang``."""
        wanted = tuple(name.strip() for name in languages if name.strip())
        try:
            extraction = dataclasses.replace(self.extraction, accept_languages=wanted)
        except _FieldError as exc:
            raise ProfileError(exc.message) from None
        return dataclasses.replace(self, extraction=extraction)

    def with_values(self, values: Mapping[str, Any]) -> Profile:
        """This profile with `values` in place: dotted keys (``extraction.workers``,
        ``output.warc.prefix``) to values as YAML would give them, each converted and
        checked by the rules a profile file meets. ProfileError names the first bad key."""
        nested: dict[str, Any] = {}
        for key, value in values.items():
            *sections, name = key.split(".")
            level = nested
            for section in sections:
                level = level.setdefault(section, {})
            level[name] = value
        try:
            return _replaced(self, nested, "")
        except _FieldError as exc:
            raise ProfileError(f"{exc.key}: {exc.message}") from None

    @property
    def base_dir(self) -> Path:
        """The folder relative seed files are resolved against."""
        return Path(self.source).parent if self.source else Path.cwd()

    def seed_urls(self) -> tuple[str, ...]:
        """Start URLs from the profile and from its seed files, in order, without duplicates.

        Strict: a bad line raises, with every bad line named (the crawl itself skips
        them and goes on: `spiders.corpus`).
        """
        urls: list[str] = list(self.seeds.urls)
        for name in self.seeds.files:
            path = Path(name) if Path(name).is_absolute() else self.base_dir / name
            try:
                found = read_seed_file(path, max_length=self.scope.max_url_length)
            except OSError as exc:
                raise ProfileError(
                    f"{self.source or 'profile'}: seeds.files: cannot read {path}"
                    f" ({exc.strerror}); paths are relative to the profile's folder"
                ) from None
            if found.problems:
                shown = "; ".join(str(problem) for problem in found.problems[:20])
                more = len(found.problems) - 20
                raise ProfileError(shown + (f"; and {more:,} more bad lines" if more > 0 else ""))
            urls.extend(url for url, _ in found.urls)
        return tuple(dict.fromkeys(urls))


# -- strict loading -------------------------------------------------------------------------

_TYPE_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}
_TYPE_PLURALS = {int: "whole numbers", float: "numbers", str: "strings"}


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        parts = [_describe(a) for a in typing.get_args(tp) if a is not type(None)]
        return " or ".join(parts) + " or null"
    if origin is tuple:
        item = typing.get_args(tp)[0]
        return "a list of " + _TYPE_PLURALS.get(item, _describe(item))
    if origin is Mapping or tp is Mapping:
        return "a mapping of keys to values"
    if dataclasses.is_dataclass(tp):
        return "a mapping (a section with keys)"
    return _TYPE_WORDS.get(tp, str(tp))


def _convert(tp: Any, value: Any, key: str) -> Any:
    """Check `value` against the annotation `tp`; return it in the dataclass's own shape."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, key)
    if origin is tuple:
        if not isinstance(value, list):
            raise _FieldError(key, f"must be {_describe(tp)}, got {_show(value)}")
        (item_type, _ellipsis) = typing.get_args(tp)
        return tuple(_convert(item_type, item, key) for item in value)
    if origin is Mapping or tp is Mapping:
        if not isinstance(value, dict):
            raise _FieldError(key, f"must be {_describe(tp)}, got {_show(value)}")
        return dict(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise _FieldError(key, f"must be {_describe(tp)}, got {_show(value)}")
        return _build(tp, value, key + ".")
    if tp is bool:
        if not isinstance(value, bool):
            raise _FieldError(key, f"must be true or false, got {_show(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _FieldError(key, f"must be a whole number, got {_show(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _FieldError(key, f"must be a number, got {_show(value)}")
        if not math.isfinite(value):
            # .inf and .nan in YAML; nan would pass every `>= 0` check below it
            raise _FieldError(key, f"must be a finite number, got {value}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _FieldError(key, f"must be a string, got {_show(value)}: put the value in quotes")
        return value
    raise TypeError(f"profile field {key} has an unsupported annotation {tp!r}")  # pragma: no cover


def _show(value: Any) -> str:
    if value is None:
        return "null (an empty value)"
    kind = {bool: "boolean", int: "number", float: "number", str: "string", list: "list"}.get(
        type(value), "mapping" if isinstance(value, dict) else type(value).__name__
    )
    return f"{kind} {value!r}"


#: YAML keys that are Python keywords -> their field names.
_KEY_FIELDS = {"yield": "yield_"}


def _build(cls: type[Any], data: Mapping[str, Any], prefix: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init and f.name != "source"]
    field_keys = {field_name: key for key, field_name in _KEY_FIELDS.items()}
    keys = [field_keys.get(name, name) for name in names]
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str) or key not in keys:
            raise _FieldError(prefix + str(key), "unknown key; " + _did_you_mean(str(key), keys))
        name = _KEY_FIELDS.get(key, key)
        kwargs[name] = _convert(hints[name], value, prefix + key)
    try:
        return cls(**kwargs)
    except _FieldError as exc:
        # section checks name their own key; nested sections were built (and named) above
        raise _FieldError(prefix + exc.key, exc.message) from None


def _replaced(obj: Any, changes: Mapping[str, Any], prefix: str) -> Any:
    """`obj` (a profile or a section) with `changes` (nested by section) converted like
    the YAML's and put in; the sections' own checks run again."""
    hints = typing.get_type_hints(type(obj))
    kwargs: dict[str, Any] = {}
    for key, value in changes.items():
        name = _KEY_FIELDS.get(key, key)
        if name not in hints or name == "source":
            raise _FieldError(prefix + key, "unknown key")
        if isinstance(value, dict) and dataclasses.is_dataclass(hints[name]):
            kwargs[name] = _replaced(getattr(obj, name), value, prefix + key + ".")
        else:
            kwargs[name] = _convert(hints[name], value, prefix + key)
    try:
        return dataclasses.replace(obj, **kwargs)
    except _FieldError as exc:
        raise _FieldError(prefix + exc.key, exc.message) from None


def parse_profile(data: Any, source: str = "<profile>") -> Profile:
    """Validate an already-parsed YAML document; `source` names it in errors."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileError(
            f"{source}: a crawl profile is a YAML mapping of sections"
            f" (seeds:, scope:, ...), got {_show(data)}"
        )
    try:
        profile: Profile = _build(Profile, data, "")
    except _FieldError as exc:
        raise ProfileError(f"{source}: {exc.key}: {exc.message}") from None
    # No seeds is legal here: the demo and `-s CORPUS_SEEDS_URLS=...` supply them later,
    # and the spider refuses to start without any.
    return dataclasses.replace(profile, source=source)


def profile_for_urls(urls: Sequence[str]) -> Profile:
    """The profile of ``corpus-crawler crawl URL [URL ...]``: every default, these seeds.

    Named after the first URL's host (and port), which also names its output folder,
    ``output/<name>``, so two sites crawled this way are two campaigns, each resumable
    by running the same command again. Scope stays the default: the seeds' hosts.
    """
    source = "the start URLs on the command line"
    try:
        first = urlsplit(urls[0]) if urls else None
        port = first.port if first is not None else None
    except ValueError as exc:  # a port out of range, an unbalanced IPv6 bracket
        raise ProfileError(f"{source}: {urls[0]!r}: {exc}") from None
    host = (first.hostname or "") if first is not None else ""
    name = re.sub(r"[^A-Za-z0-9.\-]+", "_", host + (f"-{port}" if port else "")).strip("._")
    name = name or "crawl"
    data = {"name": name, "seeds": {"urls": list(urls)}, "output": {"directory": f"output/{name}"}}
    return parse_profile(data, source)


def load_profile(path: str | Path) -> Profile:
    """Read and validate a crawl profile file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        hint = ""
        if path.suffix.lower() not in (".yaml", ".yml") and "." in path.name and not path.exists():
            hint = f" (to crawl a site without a profile, give its URL: https://{path}/)"
        raise ProfileError(f"cannot read crawl profile {path}: {exc.strerror}{hint}") from None
    try:
        data = safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ProfileError(
            f"{path}{where}: not valid YAML ({problem}); check the indentation and quote"
            " values containing `:` or `#`"
        ) from None
    problem = expansion_problem(data)
    if problem is not None:
        raise ProfileError(f"{path}: {problem}")
    lines = [line.partition("#")[0].strip() for line in text.splitlines()]
    urls = [line for line in lines if line]
    if not isinstance(data, dict) and urls and all(map(looks_like_url, urls)):
        raise ProfileError(
            f"{path} is a list of URLs, not a crawl profile: give the URLs themselves"
            f" (corpus-crawler crawl URL ...), or name the file in a profile's"
            f" seeds.files (see configs/crawls/example.yaml)"
        )
    return parse_profile(data, str(path))

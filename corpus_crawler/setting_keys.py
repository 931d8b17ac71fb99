"""Which raw setting carries which crawl-profile key, and raw values put back in a profile.

A crawl is driven by Scrapy settings that `pipelines.bridge` fills from a profile;
most `CORPUS_*` ones (and a few of Scrapy's own) carry one profile key's value as
it is. A raw value of one of them (a profile's `settings:` section, `-s`) must
meet that key's rules, and must reach every tool that reads the profile: the
crawl checks them in its preflight, and `corpus-crawler process --profile` applies
them so that reprocessing a crawl's WARCs gives the documents the crawl gave.

No Scrapy import: the crawl passes Scrapy's `Settings`, `process` a
`PlainSettings` over the profile's `settings:` section. Both convert a value the
same way (`getint`, `getbool`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from .profile import Profile, ProfileError

__all__ = [
    "FIELD_SETTINGS",
    "LIMIT_SETTINGS",
    "NO_LIMIT",
    "TYPE_WORDS",
    "PlainSettings",
    "SettingsReader",
    "limit_setting",
    "profile_value",
    "profile_with_settings",
    "value_problem",
]

#: The value of a CORPUS_SCOPE_MAX_* setting that means "no limit".
NO_LIMIT = -1


def limit_setting(value: int | None) -> int:
    """A scope limit's setting value: NO_LIMIT for null."""
    return NO_LIMIT if value is None else value


#: Settings that carry one profile key's value as it is (a list for a tuple), by name.
#: `profile_settings` fills them from here, and `profile_with_settings` checks a raw
#: value of one (a profile's `settings:` or `-s`) by that key's rules.
FIELD_SETTINGS: dict[str, str] = {
    "CORPUS_SEEDS_URLS": "seeds.urls",
    "CORPUS_SEEDS_SITEMAPS": "seeds.sitemaps",
    "CORPUS_SEEDS_SITEMAPS_FROM_ROBOTS": "seeds.sitemaps_from_robots",
    "CORPUS_SCOPE_ALLOWED_DOMAINS": "scope.allowed_domains",
    "CORPUS_SCOPE_ALLOWED_TLDS": "scope.allowed_tlds",
    "CORPUS_SCOPE_DENY_PATTERNS": "scope.deny_patterns",
    "CORPUS_SCOPE_FOLLOW_LINKS": "scope.follow_links",
    # politeness: Scrapy's own settings
    "ROBOTSTXT_OBEY": "politeness.obey_robots_txt",
    "CORPUS_ROBOTS_UNREACHABLE": "politeness.robots_unreachable",
    "USER_AGENT": "politeness.user_agent",
    "CONCURRENT_REQUESTS": "politeness.concurrent_requests",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "politeness.concurrent_requests_per_domain",
    "DOWNLOAD_DELAY": "politeness.download_delay",
    "AUTOTHROTTLE_ENABLED": "politeness.autothrottle",
    "AUTOTHROTTLE_TARGET_CONCURRENCY": "politeness.autothrottle_target_concurrency",
    "AUTOTHROTTLE_MAX_DELAY": "politeness.autothrottle_max_delay",
    "CORPUS_ROBOTS_MAX_CRAWL_DELAY": "politeness.max_crawl_delay",
    "CORPUS_RETRY_AFTER_MAX": "politeness.max_retry_after",
    # network: AddressGuardMiddleware
    "CORPUS_NETWORK_ALLOW_PRIVATE": "network.allow_private_addresses",
    "CORPUS_NETWORK_ALLOWED_NETWORKS": "network.allowed_networks",
    "CORPUS_NETWORK_DNS_SERVERS": "network.dns_servers",
    "CORPUS_NETWORK_DNS_CACHE_SIZE": "network.dns_cache_size",
    "CORPUS_NETWORK_DNS_CACHE_SECONDS": "network.dns_cache_seconds",
    "CORPUS_NETWORK_DNS_FAILURE_SECONDS": "network.dns_failure_cache_seconds",
    # limits
    "DOWNLOAD_MAXSIZE": "limits.max_page_bytes",
    "DOWNLOAD_TIMEOUT": "limits.download_timeout",
    "RETRY_TIMES": "limits.retry_times",
    "CORPUS_CAMPAIGN_DEFERRED_RETRIES": "limits.deferred_retries",
    "CORPUS_CAMPAIGN_RETRY_DELAY": "limits.retry_delay",
    # robots.txt and sitemap bounds: BoundedRobotsTxtMiddleware, the spider's sitemaps
    "CORPUS_ROBOTS_MAX_BYTES": "limits.max_robots_txt_bytes",
    "CORPUS_SITEMAPS_MAX_BYTES": "limits.max_sitemap_bytes",
    "CORPUS_SITEMAPS_MAX_URLS": "limits.max_sitemap_urls",
    "CORPUS_SITEMAPS_MAX_DEPTH": "limits.max_sitemap_depth",
    "CORPUS_SITEMAPS_MAX_PER_HOST": "limits.max_sitemaps_per_host",
    # extraction: ExtractPipeline
    "CORPUS_EXTRACT_TEXT": "extraction.enabled",
    "CORPUS_EXTRACT_EXTRACTOR": "extraction.extractor",
    "CORPUS_EXTRACT_PRESET": "extraction.preset",
    "CORPUS_EXTRACT_LANGUAGE": "extraction.language",
    "CORPUS_EXTRACT_PARAMETERS": "extraction.parameters",
    "CORPUS_EXTRACT_OPTIONS": "extraction.extractor_options",
    "CORPUS_EXTRACT_MAX_BYTES": "extraction.max_bytes",
    "CORPUS_EXTRACT_MIN_WORDS": "extraction.min_words",
    "CORPUS_EXTRACT_WORKERS": "extraction.workers",
    "CORPUS_EXTRACT_MAX_IN_FLIGHT": "extraction.max_in_flight",
    "CORPUS_EXTRACT_PAGE_TIMEOUT": "extraction.page_timeout",
    # outputs: the writer thread and the pipelines feeding it
    "CORPUS_OUTPUT_DIR": "output.directory",
    "CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS": "output.keep_all_paragraphs",
    "CORPUS_WARC_ENABLED": "output.warc.enabled",
    "CORPUS_WARC_PREFIX": "output.warc.prefix",
    "CORPUS_WARC_MAX_FILE_BYTES": "output.warc.max_file_bytes",
    "CORPUS_WARC_CONVERSION": "output.warc.conversion_records",
    "CORPUS_WARC_METADATA": "output.warc.metadata_records",
    "CORPUS_WARC_OPERATOR": "output.warc.operator",
    "CORPUS_WARC_PUBLISHER": "output.warc.publisher",
    "CORPUS_WARC_HTTP_HEADER_FROM": "output.warc.http_header_from",
    "CORPUS_WARC_CDXJ": "output.warc.cdxj",
    "CORPUS_PREVERTICAL_ENABLED": "output.prevertical.enabled",
    "CORPUS_PREVERTICAL_MAX_FILE_BYTES": "output.prevertical.max_file_bytes",
    "CORPUS_VERTICAL_ENABLED": "output.vertical.enabled",
    "CORPUS_VERTICAL_SENTENCES": "output.vertical.sentences",
    "CORPUS_VERTICAL_MAX_FILE_BYTES": "output.vertical.max_file_bytes",
    "CORPUS_VERTICAL_CORPUS_TOOLS": "output.vertical.corpus_tools",
    "CORPUS_PROGRESS_INTERVAL": "output.progress_interval",
    # documents, crawl log, report (outputs)
    "CORPUS_DOCUMENTS_JSONL": "output.documents.jsonl",
    "CORPUS_DOCUMENTS_PARQUET": "output.documents.parquet",
    "CORPUS_DOCUMENTS_MAX_FILE_BYTES": "output.documents.max_file_bytes",
    "CORPUS_DOCUMENTS_ROW_GROUP_ROWS": "output.documents.row_group_rows",
    "CORPUS_DOCUMENTS_GZIP": "output.documents.gzip",
    "CORPUS_CRAWL_LOG_ENABLED": "output.crawl_log",
    "CORPUS_CRAWL_LOG_MAX_FILE_BYTES": "output.crawl_log_max_file_bytes",
    "CORPUS_REPORT_ENABLED": "output.report",
    "CORPUS_REPORT_INTERVAL": "output.report_interval",
    # dedup: DedupPipeline
    "CORPUS_DEDUP_ENABLED": "dedup.enabled",
    "CORPUS_DEDUP_EXACT": "dedup.exact",
    "CORPUS_DEDUP_NEAR_DOCUMENTS": "dedup.near_documents",
    "CORPUS_DEDUP_NEAR_THRESHOLD": "dedup.near_threshold",
    "CORPUS_DEDUP_NEAR_SEEN_SHARE": "dedup.near_seen_share",
    "CORPUS_DEDUP_PARAGRAPHS": "dedup.paragraphs",
    "CORPUS_DEDUP_PARAGRAPH_THRESHOLD": "dedup.paragraph_threshold",
    "CORPUS_DEDUP_PARAGRAPH_NGRAM": "dedup.paragraph_ngram",
    "CORPUS_DEDUP_PARAGRAPH_FILTER_MIB": "dedup.paragraph_filter_mib",
    "CORPUS_DEDUP_PARAGRAPH_LANGUAGE": "dedup.paragraph_language",
    "CORPUS_DEDUP_PARAGRAPH_LANGUAGE_MIN_WORDS": "dedup.paragraph_language_min_words",
    # yield: YieldGuardMiddleware (CORPUS_YIELD_PRESET is "off" too when dedup is)
    "CORPUS_YIELD_MIN_DOCS": "yield.min_docs",
    "CORPUS_YIELD_MIN_BYTES": "yield.min_bytes",
    # distributed: (the worker slot and the Redis URL of --redis are set by the CLI)
    "CORPUS_DISTRIBUTED_LEASE_TIMEOUT": "distributed.lease_timeout",
    "CORPUS_DISTRIBUTED_RETRY_TIMEOUT": "distributed.retry_timeout",
    "CORPUS_ROBOTS_TTL": "distributed.robots_txt_ttl",
}

#: Settings of a profile key where null (no limit) is NO_LIMIT: the scope's limits.
LIMIT_SETTINGS: dict[str, str] = {
    "CORPUS_SCOPE_MAX_DEPTH": "scope.max_depth",
    "CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN": "scope.max_pages_per_domain",
    "CORPUS_SCOPE_MAX_PAGES": "scope.max_pages",
    # trap limits: UrlScope and the spider's domain ledger (corpus_crawler/traps.py)
    "CORPUS_SCOPE_MAX_URL_LENGTH": "scope.max_url_length",
    "CORPUS_SCOPE_MAX_SEGMENT_REPEATS": "scope.max_segment_repeats",
    "CORPUS_SCOPE_MAX_QUERY_PARAMETERS": "scope.max_query_parameters",
    "CORPUS_SCOPE_MAX_DOMAIN_DEPTH": "scope.max_domain_depth",
    "CORPUS_SCOPE_MAX_LINKS_PER_PAGE": "scope.max_links_per_page",
}


def profile_value(profile: Profile, key: str) -> Any:
    """The value of the dotted profile `key` as a setting holds it (a list for a tuple)."""
    value: Any = profile
    for name in key.split("."):
        value = getattr(value, "yield_" if name == "yield" else name)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


class SettingsReader(Protocol):
    """What `profile_with_settings` reads: Scrapy's `Settings` or a `PlainSettings`."""

    def get(self, name: str, default: Any = None) -> Any: ...
    def getbool(self, name: str, default: bool = False) -> bool: ...
    def getint(self, name: str, default: int = 0) -> int: ...
    def getfloat(self, name: str, default: float = 0.0) -> float: ...
    def getlist(self, name: str, default: list[Any] | None = None) -> list[Any]: ...
    def getdict(self, name: str, default: dict[Any, Any] | None = None) -> dict[Any, Any]: ...


class PlainSettings:
    """Raw setting values (a profile's `settings:` section) read as a crawl reads them:
    converted by the rules of Scrapy's `BaseSettings` getters (a bool is 0/1,
    True/False or their strings; a list may be a comma-separated string, a mapping a
    JSON object string), and refused with a ValueError where the crawl's type check
    refuses them (`value_problem`: a fraction for a count, 2 for a bool)."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def _checked(self, name: str, kind: type, default: Any) -> Any:
        value = self._values.get(name, default)
        if value_problem(kind, value):
            raise ValueError(f"must be {TYPE_WORDS[kind]}, got {value!r}")
        return value.strip() if isinstance(value, str) and kind is not str else value

    def getbool(self, name: str, default: bool = False) -> bool:
        value = self._checked(name, bool, default)
        return value in ("1", "true", "True") if isinstance(value, str) else bool(value)

    def getint(self, name: str, default: int = 0) -> int:
        return int(self._checked(name, int, default))

    def getfloat(self, name: str, default: float = 0.0) -> float:
        return float(self._checked(name, float, default))

    def getlist(self, name: str, default: list[Any] | None = None) -> list[Any]:
        value = self._checked(name, list, default or [])
        if not value:
            return []
        return value.split(",") if isinstance(value, str) else list(value)

    def getdict(self, name: str, default: dict[Any, Any] | None = None) -> dict[Any, Any]:
        value = self._checked(name, dict, default or {})
        return dict(json.loads(value) if isinstance(value, str) else value)


#: What a value of each kind may be, for messages.
TYPE_WORDS = {
    bool: "true or false (or 1 / 0)",
    int: "a whole number",
    float: "a number",
    list: "a list (or a comma-separated string)",
    dict: "a mapping (or a JSON object string)",
    str: "a string",
}

_BOOL_WORDS = frozenset({"0", "1", "true", "false", "True", "False"})


def value_problem(kind: type, value: Any) -> bool:
    """True if Scrapy's getter for `kind` would fail on `value` (or silently mangle it:
    `getint(2.5)` is 2, `getbool(2)` is True)."""
    if value is None:
        return kind is not str and kind is not list
    if kind is bool:
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return value not in (0, 1)
        return not (isinstance(value, str) and value.strip() in _BOOL_WORDS)
    if kind is int:
        if isinstance(value, bool):
            return True
        if isinstance(value, int):
            return False
        if isinstance(value, float):
            return not value.is_integer()
        return not (isinstance(value, str) and _parses(int, value))
    if kind is float:
        if isinstance(value, bool):
            return True
        if isinstance(value, (int, float)):
            return False
        return not (isinstance(value, str) and _parses(float, value))
    if kind is list:
        return not isinstance(value, (list, tuple, str))
    if kind is dict:
        if isinstance(value, Mapping) or hasattr(value, "copy_to_dict"):
            # a dict, or Scrapy's own BaseSettings (what `-o FILE` puts in FEEDS)
            return False
        if isinstance(value, str):
            try:
                return not isinstance(json.loads(value), dict)
            except ValueError:
                return True
        return True
    # str settings: only containers are surely wrong (LOG_LEVEL may be a number)
    return isinstance(value, (list, tuple, dict))


def _parses(convert: Any, text: str) -> bool:
    try:
        convert(text.strip())
    except ValueError:
        return False
    return True


def profile_with_settings(
    profile: Profile, settings: SettingsReader, names: Iterable[str]
) -> Profile:
    """`profile` with the values `settings` hold for `names` (raw settings: a
    profile's `settings:` section, `-s`) put back into the profile keys they carry, so
    that each meets that key's rules (`-s CORPUS_EXTRACT_WORKERS=-5` is refused as
    extraction.workers would be). Names no key carries as it is are left out.

    Raises ProfileError naming the setting and the key."""
    values: dict[str, Any] = {}
    for name in names:
        key = FIELD_SETTINGS.get(name) or LIMIT_SETTINGS.get(name)
        if key is None:
            continue
        try:
            raw = _raw_value(settings, name, key)
        except (ValueError, TypeError) as exc:
            raise ProfileError(f"{name} ({key}): {exc}") from None
        try:
            profile.with_values({key: raw})
        except ProfileError as exc:
            message = str(exc)
            hint = "; -1: no limit" if name in LIMIT_SETTINGS else ""
            if message.startswith(key + ": "):
                raise ProfileError(f"{name} ({key}): {message[len(key) + 2 :]}{hint}") from None
            raise ProfileError(f"{name}: {message}{hint}") from None
        values[key] = raw
    return profile.with_values(values) if values else profile


def _raw_value(settings: SettingsReader, name: str, key: str) -> Any:
    """The value of setting `name` as profile `key` takes it (None: no limit, no language)."""
    kind = type(profile_value(Profile(), key))
    if name in LIMIT_SETTINGS:
        value = settings.getint(name)
        return None if value == NO_LIMIT else value
    if kind is bool:
        return settings.getbool(name)
    if kind is int:
        return settings.getint(name)
    if kind is float:
        return settings.getfloat(name)
    if kind is list:
        return settings.getlist(name)
    if kind is dict:
        return settings.getdict(name)
    # a string, or null (extraction.language)
    raw = settings.get(name)
    if raw in (None, "") and key == "extraction.language":
        return None
    return raw if raw is None else str(raw)

"""A crawl profile as Scrapy settings.

Every component reads its own `CORPUS_<COMPONENT>_*` settings (STYLE.md rule 9);
this module is the one place that knows which profile key feeds which setting.
The spider applies the result at "spider" priority, so `-s KEY=VALUE` on the
command line ("cmdline" priority) still wins over the profile.

No Scrapy import: the mapping is plain data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from corpus_crawler.profile import Profile, ProfileError
from corpus_crawler.request_headers import request_headers

__all__ = [
    "FIELD_SETTINGS",
    "LIMIT_SETTINGS",
    "NO_LIMIT",
    "profile_settings",
    "profile_summary",
    "profile_with_settings",
]

#: The value of a CORPUS_SCOPE_MAX_* setting that means "no limit".
NO_LIMIT = -1


def _limit(value: int | None) -> int:
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


def _value(profile: Profile, key: str) -> Any:
    value: Any = profile
    for name in key.split("."):
        value = getattr(value, "yield_" if name == "yield" else name)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def profile_with_settings(profile: Profile, settings: Any, names: Iterable[str]) -> Profile:
    """`profile` with the values Scrapy's `settings` hold for `names` (raw settings: a
    profile's `settings:` section, `-s`) put back into the profile keys they carry, so
    that each meets that key's rules (`-s CORPUS_EXTRACT_WORKERS=-5` is refused as
    extraction.workers would be). Names no key carries as it is are left out.

    Raises ProfileError naming the setting and the key."""
    values: dict[str, Any] = {}
    for name in names:
        key = FIELD_SETTINGS.get(name) or LIMIT_SETTINGS.get(name)
        if key is None:
            continue
        kind = type(_value(Profile(), key))
        if name in LIMIT_SETTINGS:
            value = settings.getint(name)
            raw: Any = None if value == NO_LIMIT else value
        elif kind is bool:
            raw = settings.getbool(name)
        elif kind is int:
            raw = settings.getint(name)
        elif kind is float:
            raw = settings.getfloat(name)
        elif kind is list:
            raw = settings.getlist(name)
        elif kind is dict:
            raw = settings.getdict(name)
        else:  # a string, or null (extraction.language)
            raw = settings.get(name)
            raw = None if raw in (None, "") and key == "extraction.language" else raw
            raw = raw if raw is None else str(raw)
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


def profile_summary(profile: Profile) -> dict[str, Any]:
    """The profile as a JSON-serialisable mapping (for warcinfo records and summaries)."""
    data = dataclasses.asdict(profile)
    data.pop("source", None)

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return dict(plain(data))


def profile_settings(profile: Profile) -> dict[str, Any]:
    """The Scrapy settings (standard and `CORPUS_*`) that make a crawl follow `profile`."""
    polite, limits, output = profile.politeness, profile.limits, profile.output
    seed_files = [
        str(Path(name) if Path(name).is_absolute() else profile.base_dir / name)
        for name in profile.seeds.files
    ]
    settings: dict[str, Any] = {
        "CORPUS_PROFILE_NAME": profile.name,
        "CORPUS_PROFILE_PATH": profile.source,
        "CORPUS_PROFILE_DATA": profile_summary(profile),
        "CORPUS_SEEDS_FILES": seed_files,
    }
    settings.update((name, _value(profile, key)) for name, key in FIELD_SETTINGS.items())
    settings.update((name, _limit(_value(profile, key))) for name, key in LIMIT_SETTINGS.items())
    settings.update(
        {
            # politeness: Scrapy's own settings
            "DOWNLOAD_DELAY_JITTER": 0.5 if polite.randomize_delay else 0.0,
            "AUTOTHROTTLE_START_DELAY": max(polite.download_delay, 1.0),
            # limits
            "CLOSESPIDER_TIMEOUT": limits.max_run_time or 0,
            "DOWNLOAD_WARNSIZE": min(limits.warn_page_bytes, limits.max_page_bytes),
            # Scrapy stops sending requests while the responses its scraper holds exceed
            # this (default 5 MB): one big page or sitemap in a callback would halt every
            # host. Room for the largest allowed response plus Scrapy's default for the others.
            "SCRAPER_SLOT_MAX_ACTIVE_SIZE": max(limits.max_page_bytes, limits.max_sitemap_bytes)
            + 5_000_000,
            # extraction: the accept-list as language identification's codes
            "CORPUS_EXTRACT_ACCEPT_LANGUAGES": list(profile.extraction.accept_codes()),
            "CORPUS_PROGRESS_ENABLED": output.progress_interval > 0,
        }
    )
    # Accept and Accept-Language (the crawl's languages), and the contact the
    # warcinfo records name (From) when there is one
    settings["DEFAULT_REQUEST_HEADERS"] = request_headers(profile)
    # dedup.enabled: false turns all of issue 9 off, yield pruning included
    settings["CORPUS_YIELD_PRESET"] = profile.yield_.preset if profile.dedup.enabled else "off"
    # schedule: the revisit intervals of recrawl passes, in seconds
    schedule = profile.schedule.seconds()
    settings["CORPUS_SCHEDULE_MIN_INTERVAL"] = schedule.min_interval
    settings["CORPUS_SCHEDULE_MAX_INTERVAL"] = schedule.max_interval
    settings["CORPUS_SCHEDULE_INITIAL_INTERVAL"] = schedule.initial_interval
    settings["CORPUS_RECRAWL_ENABLED"] = False
    # distributed: (the worker slot and the Redis URL of --redis are set by the CLI)
    settings["CORPUS_DISTRIBUTED_NAMESPACE"] = profile.distributed.namespace or profile.name
    settings.update(profile.settings)
    return settings

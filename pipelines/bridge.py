"""A crawl profile as Scrapy settings.

Every component reads its own `CORPUS_<COMPONENT>_*` settings (STYLE.md rule 9);
this module is the one place that knows which profile key feeds which setting.
The spider applies the result at "spider" priority, so `-s KEY=VALUE` on the
command line ("cmdline" priority) still wins over the profile.

No Scrapy import: the mapping is plain data.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from corpus_crawler.profile import Profile
from corpus_crawler.request_headers import request_headers

__all__ = ["NO_LIMIT", "profile_settings", "profile_summary"]

#: The value of a CORPUS_SCOPE_MAX_* setting that means "no limit".
NO_LIMIT = -1


def _limit(value: int | None) -> int:
    return NO_LIMIT if value is None else value


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
    seeds, scope, polite = profile.seeds, profile.scope, profile.politeness
    limits, extraction, output = profile.limits, profile.extraction, profile.output
    seed_files = [
        str(Path(name) if Path(name).is_absolute() else profile.base_dir / name)
        for name in seeds.files
    ]
    settings: dict[str, Any] = {
        "CORPUS_PROFILE_NAME": profile.name,
        "CORPUS_PROFILE_PATH": profile.source,
        "CORPUS_PROFILE_DATA": profile_summary(profile),
        # seeds and scope: the spider
        "CORPUS_SEEDS_URLS": list(seeds.urls),
        "CORPUS_SEEDS_FILES": seed_files,
        "CORPUS_SEEDS_SITEMAPS": list(seeds.sitemaps),
        "CORPUS_SEEDS_SITEMAPS_FROM_ROBOTS": seeds.sitemaps_from_robots,
        "CORPUS_SCOPE_ALLOWED_DOMAINS": list(scope.allowed_domains),
        "CORPUS_SCOPE_ALLOWED_TLDS": list(scope.allowed_tlds),
        "CORPUS_SCOPE_DENY_PATTERNS": list(scope.deny_patterns),
        "CORPUS_SCOPE_MAX_DEPTH": _limit(scope.max_depth),
        "CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN": _limit(scope.max_pages_per_domain),
        "CORPUS_SCOPE_MAX_PAGES": _limit(scope.max_pages),
        "CORPUS_SCOPE_FOLLOW_LINKS": scope.follow_links,
        # trap limits: UrlScope and the spider's domain ledger (corpus_crawler/traps.py)
        "CORPUS_SCOPE_MAX_URL_LENGTH": _limit(scope.max_url_length),
        "CORPUS_SCOPE_MAX_SEGMENT_REPEATS": _limit(scope.max_segment_repeats),
        "CORPUS_SCOPE_MAX_QUERY_PARAMETERS": _limit(scope.max_query_parameters),
        "CORPUS_SCOPE_MAX_DOMAIN_DEPTH": _limit(scope.max_domain_depth),
        "CORPUS_SCOPE_MAX_LINKS_PER_PAGE": _limit(scope.max_links_per_page),
        # politeness: Scrapy's own settings
        "ROBOTSTXT_OBEY": polite.obey_robots_txt,
        "CORPUS_ROBOTS_UNREACHABLE": polite.robots_unreachable,
        "USER_AGENT": polite.user_agent,
        "CONCURRENT_REQUESTS": polite.concurrent_requests,
        "CONCURRENT_REQUESTS_PER_DOMAIN": polite.concurrent_requests_per_domain,
        "DOWNLOAD_DELAY": polite.download_delay,
        "DOWNLOAD_DELAY_JITTER": 0.5 if polite.randomize_delay else 0.0,
        "AUTOTHROTTLE_ENABLED": polite.autothrottle,
        "AUTOTHROTTLE_START_DELAY": max(polite.download_delay, 1.0),
        "AUTOTHROTTLE_TARGET_CONCURRENCY": polite.autothrottle_target_concurrency,
        "AUTOTHROTTLE_MAX_DELAY": polite.autothrottle_max_delay,
        # network: AddressGuardMiddleware
        "CORPUS_NETWORK_ALLOW_PRIVATE": profile.network.allow_private_addresses,
        "CORPUS_NETWORK_ALLOWED_NETWORKS": list(profile.network.allowed_networks),
        "CORPUS_NETWORK_DNS_SERVERS": list(profile.network.dns_servers),
        "CORPUS_NETWORK_DNS_CACHE_SIZE": profile.network.dns_cache_size,
        "CORPUS_NETWORK_DNS_CACHE_SECONDS": profile.network.dns_cache_seconds,
        "CORPUS_NETWORK_DNS_FAILURE_SECONDS": profile.network.dns_failure_cache_seconds,
        # limits
        "CLOSESPIDER_TIMEOUT": limits.max_run_time or 0,
        "DOWNLOAD_MAXSIZE": limits.max_page_bytes,
        "DOWNLOAD_WARNSIZE": min(limits.warn_page_bytes, limits.max_page_bytes),
        "DOWNLOAD_TIMEOUT": limits.download_timeout,
        "RETRY_TIMES": limits.retry_times,
        "CORPUS_CAMPAIGN_DEFERRED_RETRIES": limits.deferred_retries,
        "CORPUS_CAMPAIGN_RETRY_DELAY": float(limits.retry_delay),
        # robots.txt and sitemap bounds: BoundedRobotsTxtMiddleware, the spider's sitemaps
        "CORPUS_ROBOTS_MAX_BYTES": limits.max_robots_txt_bytes,
        "CORPUS_ROBOTS_MAX_CRAWL_DELAY": polite.max_crawl_delay,
        "CORPUS_RETRY_AFTER_MAX": polite.max_retry_after,
        "CORPUS_SITEMAPS_MAX_BYTES": limits.max_sitemap_bytes,
        "CORPUS_SITEMAPS_MAX_URLS": limits.max_sitemap_urls,
        "CORPUS_SITEMAPS_MAX_DEPTH": limits.max_sitemap_depth,
        "CORPUS_SITEMAPS_MAX_PER_HOST": limits.max_sitemaps_per_host,
        # Scrapy stops sending requests while the responses its scraper holds exceed this
        # (default 5 MB): one big page or sitemap in a callback would halt every host.
        # Room for the largest allowed response plus Scrapy's default for the others.
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": max(limits.max_page_bytes, limits.max_sitemap_bytes)
        + 5_000_000,
        # extraction: ExtractPipeline
        "CORPUS_EXTRACT_TEXT": extraction.enabled,
        "CORPUS_EXTRACT_EXTRACTOR": extraction.extractor,
        "CORPUS_EXTRACT_PRESET": extraction.preset,
        "CORPUS_EXTRACT_LANGUAGE": extraction.language,
        "CORPUS_EXTRACT_ACCEPT_LANGUAGES": list(extraction.accept_codes()),
        "CORPUS_EXTRACT_PARAMETERS": dict(extraction.parameters),
        "CORPUS_EXTRACT_OPTIONS": dict(extraction.extractor_options),
        "CORPUS_EXTRACT_MAX_BYTES": extraction.max_bytes,
        "CORPUS_EXTRACT_MIN_WORDS": extraction.min_words,
        "CORPUS_EXTRACT_WORKERS": extraction.workers,
        "CORPUS_EXTRACT_MAX_IN_FLIGHT": extraction.max_in_flight,
        "CORPUS_EXTRACT_PAGE_TIMEOUT": extraction.page_timeout,
        # outputs: the writer thread and the pipelines feeding it
        "CORPUS_OUTPUT_DIR": output.directory,
        "CORPUS_OUTPUT_KEEP_ALL_PARAGRAPHS": output.keep_all_paragraphs,
        "CORPUS_WARC_ENABLED": output.warc.enabled,
        "CORPUS_WARC_PREFIX": output.warc.prefix,
        "CORPUS_WARC_MAX_FILE_BYTES": output.warc.max_file_bytes,
        "CORPUS_WARC_CONVERSION": output.warc.conversion_records,
        "CORPUS_WARC_METADATA": output.warc.metadata_records,
        "CORPUS_WARC_OPERATOR": output.warc.operator,
        "CORPUS_WARC_PUBLISHER": output.warc.publisher,
        "CORPUS_WARC_HTTP_HEADER_FROM": output.warc.http_header_from,
        "CORPUS_WARC_CDXJ": output.warc.cdxj,
        "CORPUS_PREVERTICAL_ENABLED": output.prevertical.enabled,
        "CORPUS_PREVERTICAL_MAX_FILE_BYTES": output.prevertical.max_file_bytes,
        "CORPUS_VERTICAL_ENABLED": output.vertical.enabled,
        "CORPUS_VERTICAL_SENTENCES": output.vertical.sentences,
        "CORPUS_VERTICAL_MAX_FILE_BYTES": output.vertical.max_file_bytes,
        "CORPUS_VERTICAL_CORPUS_TOOLS": output.vertical.corpus_tools,
        "CORPUS_PROGRESS_ENABLED": output.progress_interval > 0,
        "CORPUS_PROGRESS_INTERVAL": output.progress_interval,
        # documents, crawl log, report (outputs)
        "CORPUS_DOCUMENTS_JSONL": output.documents.jsonl,
        "CORPUS_DOCUMENTS_PARQUET": output.documents.parquet,
        "CORPUS_DOCUMENTS_MAX_FILE_BYTES": output.documents.max_file_bytes,
        "CORPUS_DOCUMENTS_ROW_GROUP_ROWS": output.documents.row_group_rows,
        "CORPUS_DOCUMENTS_GZIP": output.documents.gzip,
        "CORPUS_CRAWL_LOG_ENABLED": output.crawl_log,
        "CORPUS_CRAWL_LOG_MAX_FILE_BYTES": output.crawl_log_max_file_bytes,
        "CORPUS_REPORT_ENABLED": output.report,
        "CORPUS_REPORT_INTERVAL": output.report_interval,
    }
    # Accept and Accept-Language (the crawl's languages), and the contact the
    # warcinfo records name (From) when there is one
    settings["DEFAULT_REQUEST_HEADERS"] = request_headers(profile)
    settings.update(_dedup_settings(profile))
    # schedule: the revisit intervals of recrawl passes, in seconds
    schedule = profile.schedule.seconds()
    settings["CORPUS_SCHEDULE_MIN_INTERVAL"] = schedule.min_interval
    settings["CORPUS_SCHEDULE_MAX_INTERVAL"] = schedule.max_interval
    settings["CORPUS_SCHEDULE_INITIAL_INTERVAL"] = schedule.initial_interval
    settings["CORPUS_RECRAWL_ENABLED"] = False
    # distributed: (the worker slot and the Redis URL of --redis are set by the CLI)
    settings["CORPUS_DISTRIBUTED_NAMESPACE"] = profile.distributed.namespace or profile.name
    settings["CORPUS_DISTRIBUTED_LEASE_TIMEOUT"] = profile.distributed.lease_timeout
    settings["CORPUS_DISTRIBUTED_RETRY_TIMEOUT"] = profile.distributed.retry_timeout
    settings["CORPUS_ROBOTS_TTL"] = profile.distributed.robots_txt_ttl
    settings.update(profile.settings)
    return settings


def _dedup_settings(profile: Profile) -> dict[str, Any]:
    """`dedup:` and `yield:` -> DedupPipeline's and YieldGuardMiddleware's settings."""
    dedup, pruning = profile.dedup, profile.yield_
    return {
        "CORPUS_DEDUP_ENABLED": dedup.enabled,
        "CORPUS_DEDUP_EXACT": dedup.exact,
        "CORPUS_DEDUP_NEAR_DOCUMENTS": dedup.near_documents,
        "CORPUS_DEDUP_NEAR_THRESHOLD": dedup.near_threshold,
        "CORPUS_DEDUP_NEAR_SEEN_SHARE": dedup.near_seen_share,
        "CORPUS_DEDUP_PARAGRAPHS": dedup.paragraphs,
        "CORPUS_DEDUP_PARAGRAPH_THRESHOLD": dedup.paragraph_threshold,
        "CORPUS_DEDUP_PARAGRAPH_NGRAM": dedup.paragraph_ngram,
        "CORPUS_DEDUP_PARAGRAPH_FILTER_MIB": dedup.paragraph_filter_mib,
        "CORPUS_DEDUP_PARAGRAPH_LANGUAGE": dedup.paragraph_language,
        "CORPUS_DEDUP_PARAGRAPH_LANGUAGE_MIN_WORDS": dedup.paragraph_language_min_words,
        # dedup.enabled: false turns all of issue 9 off, yield pruning included
        "CORPUS_YIELD_PRESET": pruning.preset if dedup.enabled else "off",
        "CORPUS_YIELD_MIN_DOCS": pruning.min_docs,
        "CORPUS_YIELD_MIN_BYTES": pruning.min_bytes,
    }

"""A crawl profile as Scrapy settings.

Every component reads its own `CORPUS_<COMPONENT>_*` settings (STYLE.md rule 9);
this module is the one place that knows which profile key feeds which setting
(the settings that carry one key as it is are listed in
`corpus_crawler.setting_keys`, which `process --profile` shares).
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
from corpus_crawler.setting_keys import (
    FIELD_SETTINGS,
    LIMIT_SETTINGS,
    limit_setting,
    profile_value,
)

__all__ = ["profile_settings", "profile_summary"]


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
    settings.update((name, profile_value(profile, key)) for name, key in FIELD_SETTINGS.items())
    settings.update(
        (name, limit_setting(profile_value(profile, key))) for name, key in LIMIT_SETTINGS.items()
    )
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

"""Names of the `CORPUS_*` settings, so that a misspelt one is an error, not ignored.

Scrapy reads settings by name and never complains about a name nobody reads:
`-s CORPUS_DOCUMENTS_JSON=True` (for `CORPUS_DOCUMENTS_JSONL`) ran a whole crawl
without the documents file it asked for. The `CORPUS_` prefix is ours, so every
name in it is known: those a crawl profile produces (`pipelines.bridge`) and the
few read only from the command line (below). Other names (Scrapy's, plugins')
are not checked: any of them may be right.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable

from corpus_crawler.config import ConfigError

__all__ = ["COMMAND_LINE_ONLY", "check_setting_names", "known_setting_names"]

#: `CORPUS_*` settings no profile key produces: set with `-s` (or by the code itself).
#: tests/test_cli_newcomer.py checks that every `"CORPUS_..."` name the code reads is
#: here or produced by a profile: a new setting belongs in one of the two.
COMMAND_LINE_ONLY = frozenset(
    {
        "CORPUS_CAMPAIGN_COMMIT_INTERVAL",
        "CORPUS_CAMPAIGN_FSYNC",
        "CORPUS_CAMPAIGN_LEASE_BATCH",
        "CORPUS_CAMPAIGN_RETRY_WAIT",
        "CORPUS_DEDUP_STATE_DIR",
        "CORPUS_DISTRIBUTED_REDIS_URL",
        "CORPUS_DISTRIBUTED_WORKER",
        "CORPUS_EXTRACT_ENABLED",
        "CORPUS_EXTRACT_MAX_WAITING",
        "CORPUS_EXTRACT_START_METHOD",
        "CORPUS_NETWORK_DNS_TIMEOUT",
        "CORPUS_NETWORK_ENABLED",
        "CORPUS_OUTPUT_FAULT_ENOSPC_AFTER",
        "CORPUS_OUTPUT_QUEUE_SIZE",
        "CORPUS_PROGRESS_STREAM",
        "CORPUS_ROBOTS_CLAIM_TIMEOUT",
        "CORPUS_ROBOTS_ERROR_TTL",
        "CORPUS_SUMMARY_ENABLED",
    }
)


@functools.cache
def known_setting_names() -> frozenset[str]:
    from corpus_crawler.profile import Profile
    from pipelines.bridge import profile_settings

    produced = {name for name in profile_settings(Profile()) if name.startswith("CORPUS_")}
    return frozenset(produced | COMMAND_LINE_ONLY)


def check_setting_names(names: Iterable[str], where: str) -> None:
    """Raise ConfigError for the first `CORPUS_*` name no part of the crawler reads.

    `where` prefixes the name in the message (`"profile.yaml: settings."`, `"-s "`).
    """
    known = known_setting_names()
    for name in names:
        if not name.startswith("CORPUS_") or name in known:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        hint = (
            f"did you mean {close[0]}?"
            if close
            else "the profile keys and the settings they feed are in"
            " configs/crawls/example.yaml and pipelines/bridge.py"
        )
        raise ConfigError(f"{where}{name}: no such corpus-crawler setting; {hint}")

"""Domain yield pruning, after SpiderLing: stop crawling hosts that give almost no text.

Per host and per registered domain the crawl counts raw bytes fetched, clean
bytes kept (after extraction and dedup) and documents fetched. Once a host
(or its domain) has at least `min_docs` documents and `min_bytes` raw bytes,
it is pruned when its yield rate (clean / raw) falls below

    k * (log10(docs) - 1)

(SpiderLing's line: the more documents a host has given, the more it must
yield; below 10 documents the line is negative and nothing is pruned).
Presets: ``off``; ``permissive`` (k = 0.002, SpiderLing's default),
``normal`` (0.005), ``strict`` (0.01).

`should_prune` is the pure decision; `YieldTracker` keeps the counts (in
memory, written to an SQLite file when given one, so a resumed crawl keeps its
pruned hosts) and answers `is_pruned` for the scheduler side.
"""

from __future__ import annotations

import enum
import functools
import ipaddress
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import ConfigError
from .redis_state import FORGET_YIELD_LUA

__all__ = [
    "HostYield",
    "YieldConfig",
    "YieldPreset",
    "YieldTracker",
    "registered_domain",
    "should_prune",
    "yield_line",
]


class YieldPreset(str, enum.Enum):
    OFF = "off"
    PERMISSIVE = "permissive"
    NORMAL = "normal"
    STRICT = "strict"

    def __str__(self) -> str:
        return self.value

    @property
    def k(self) -> float:
        return _K[self]


_K = {
    YieldPreset.OFF: 0.0,
    YieldPreset.PERMISSIVE: 0.002,
    YieldPreset.NORMAL: 0.005,
    YieldPreset.STRICT: 0.01,
}


@dataclass(frozen=True, slots=True)
class YieldConfig:
    preset: YieldPreset = YieldPreset.PERMISSIVE
    #: Documents a host must have given before it can be pruned.
    min_docs: int = 20
    #: Raw bytes a host must have given before it can be pruned.
    min_bytes: int = 512 * 1024

    def __post_init__(self) -> None:
        if not isinstance(self.preset, YieldPreset):
            try:
                object.__setattr__(self, "preset", YieldPreset(self.preset))
            except ValueError:
                names = ", ".join(p.value for p in YieldPreset)
                raise ConfigError(
                    f"yield.preset: unknown preset {self.preset!r}: use one of {names}"
                ) from None
        if self.min_docs < 10:
            raise ConfigError(
                f"yield.min_docs: must be >= 10 (below 10 documents the pruning line is"
                f" negative), got {self.min_docs}"
            )
        if self.min_bytes < 0:
            raise ConfigError(f"yield.min_bytes: must be >= 0, got {self.min_bytes}")

    @property
    def enabled(self) -> bool:
        return self.preset is not YieldPreset.OFF


@dataclass(slots=True)
class HostYield:
    raw: int = 0
    clean: int = 0
    docs: int = 0
    pruned: bool = False

    @property
    def rate(self) -> float:
        return self.clean / self.raw if self.raw else 0.0


def yield_line(k: float, docs: int) -> float:
    """The yield rate below which a host with `docs` documents is pruned."""
    return k * (math.log10(docs) - 1.0) if docs > 0 else 0.0


def should_prune(stats: HostYield, config: YieldConfig) -> bool:
    """Whether a host (or domain) with these counts stops being crawled."""
    if not config.enabled or stats.docs < config.min_docs or stats.raw < config.min_bytes:
        return False
    return stats.rate < yield_line(config.preset.k, stats.docs)


@functools.lru_cache(maxsize=1)
def _extractor() -> Any:
    import tldextract

    # the bundled public-suffix snapshot only: the crawler contacts nothing but crawled hosts
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@functools.lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The registrable domain of `host` (``news.bbc.co.uk`` -> ``bbc.co.uk``); an IP
    address or a bare public suffix is its own domain."""
    host = host.lower().rstrip(".")
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    parts = _extractor()(host)
    if parts.domain and parts.suffix:
        return f"{parts.domain}.{parts.suffix}"
    return host


class YieldTracker:
    """Counts per host and domain; decides pruning as counts change. One thread."""

    def __init__(self, config: YieldConfig, path: Path | None = None) -> None:
        self.config = config
        self.hosts: dict[str, HostYield] = {}
        self.domains: dict[str, HostYield] = {}
        #: Hosts pruned because of their domain's yield (the domain's other hosts too).
        self._db: sqlite3.Connection | None = None
        self._dirty: set[tuple[str, str]] = set()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS yield (kind TEXT NOT NULL, name TEXT NOT NULL,"
                " raw INTEGER, clean INTEGER, docs INTEGER, pruned INTEGER,"
                " PRIMARY KEY (kind, name))"
            )
            for kind, name, raw, clean, docs, pruned in self._db.execute("SELECT * FROM yield"):
                table = self.hosts if kind == "host" else self.domains
                table[name] = HostYield(raw, clean, docs, bool(pruned))

    def _entries(self, host: str) -> tuple[HostYield, HostYield]:
        host = host.lower()
        domain = registered_domain(host)
        return (
            self.hosts.setdefault(host, HostYield()),
            self.domains.setdefault(domain, HostYield()),
        )

    def record(
        self, host: str, raw_bytes: int, clean_bytes: int, request: int | None = None
    ) -> bool:
        """Count one processed document of `host`; True if this pruned the host now.
        (`request`, the frontier row, matters to `RedisYieldTracker` only.)"""
        host = host.lower()
        host_stats, domain_stats = self._entries(host)
        was_pruned = self.is_pruned(host)
        for stats in (host_stats, domain_stats):
            stats.raw += raw_bytes
            stats.clean += clean_bytes
            stats.docs += 1
            if not stats.pruned and should_prune(stats, self.config):
                stats.pruned = True
        self._dirty.add(("host", host))
        self._dirty.add(("domain", registered_domain(host)))
        return not was_pruned and self.is_pruned(host)

    def is_pruned(self, host: str) -> bool:
        host = host.lower()
        stats = self.hosts.get(host)
        if stats is not None and stats.pruned:
            return True
        domain = self.domains.get(registered_domain(host))
        return domain is not None and domain.pruned

    def pruned_hosts(self) -> list[str]:
        return sorted(host for host in self.hosts if self.is_pruned(host))

    def save(self) -> None:
        if self._db is None or not self._dirty:
            return
        rows = []
        for kind, name in self._dirty:
            stats = (self.hosts if kind == "host" else self.domains)[name]
            rows.append((kind, name, stats.raw, stats.clean, stats.docs, int(stats.pruned)))
        self._db.executemany("INSERT OR REPLACE INTO yield VALUES (?, ?, ?, ?, ?, ?)", rows)
        self._db.commit()
        self._dirty.clear()

    def close(self) -> None:
        self.save()
        if self._db is not None:
            self._db.close()
            self._db = None


# -- a distributed crawl: the counts in the campaign's Redis ----------------------------------

# ARGV: prefix, host, domain, raw bytes, clean bytes, request id or '' -> host raw, clean,
# docs, domain raw, clean, docs, host pruned (0/1), domain pruned (0/1). With a request id
# the counts are kept under it until the campaign's commit marks the request done (the
# campaign store's FORGET_YIELD_LUA): a second record of the same request (a retried call
# whose answer was lost) replaces the first instead of adding to it.
_RECORD = (
    """
local ns = ARGV[1]
"""
    + FORGET_YIELD_LUA
    + """
local host, domain, request = ARGV[2], ARGV[3], ARGV[6]
if request ~= '' then
  forget_yield(request)
  redis.call('HSET', ns .. 'yield:req', request,
    ARGV[4] .. ' ' .. ARGV[5] .. ' ' .. host .. ' ' .. domain)
end
local out = {}
for _, key in ipairs({'h:' .. host, 'd:' .. domain}) do
  local hash = ns .. 'yield:' .. key
  table.insert(out, redis.call('HINCRBY', hash, 'raw', ARGV[4]))
  table.insert(out, redis.call('HINCRBY', hash, 'clean', ARGV[5]))
  table.insert(out, redis.call('HINCRBY', hash, 'docs', 1))
end
table.insert(out, redis.call('SISMEMBER', ns .. 'yield:pruned', 'h:' .. host))
table.insert(out, redis.call('SISMEMBER', ns .. 'yield:pruned', 'd:' .. domain))
return out
"""
)

# ARGV: prefix, member ('h:host' or 'd:domain'), its document count. The log lets every
# process read only what was pruned since it last looked; ``yield:pruned_at`` keeps the
# global document count at which each was pruned (for the operator, and the tests).
_PRUNE = """
local ns = ARGV[1]
local added = 0
for i = 2, #ARGV, 2 do
  if redis.call('SADD', ns .. 'yield:pruned', ARGV[i]) == 1 then
    redis.call('RPUSH', ns .. 'yield:log', ARGV[i])
    redis.call('HSET', ns .. 'yield:pruned_at', ARGV[i], ARGV[i + 1])
    added = added + 1
  end
end
return added
"""

#: Seconds a process goes on with its view of the pruned hosts before it asks Redis
#: for hosts pruned by the others (a few pages at most get through meanwhile).
PRUNED_REFRESH = 0.25


class RedisYieldTracker:
    """`YieldTracker`'s interface on the campaign's Redis (a distributed crawl): the
    counts are global (HINCRBY in one script per document, over all processes), and a
    host or domain pruned by one process is pruned for all.

    `link` is the campaign store (`corpus_crawler.redis_state.RedisCampaignStore`:
    ``client``, ``key_prefix``, ``retrying``). `hosts` and `domains` hold the global
    counts as last seen by this process (for its log lines and estimates). Counts are
    added when a page has been through the pipelines, before its output commit, and
    kept under the page's request (frontier row) until that commit: if the worker is
    killed first, the campaign store takes them back out when it returns the request
    to the frontier, so the refetch counts the page once (as an uninterrupted crawl).
    """

    def __init__(self, config: YieldConfig, link: Any) -> None:
        import time

        self.config = config
        self.hosts: dict[str, HostYield] = {}
        self.domains: dict[str, HostYield] = {}
        self._link = link
        self._ns: str = link.key_prefix
        self._record = link.client.register_script(_RECORD)
        self._prune = link.client.register_script(_PRUNE)
        self._clock = time.monotonic
        self._pruned_hosts: set[str] = set()
        self._pruned_domains: set[str] = set()
        #: Entries of the shared prune log read so far.
        self._log_read = 0
        self._refreshed_at = -math.inf
        #: Redis calls made (the cost per page).
        self.round_trips = 0
        self._refresh()

    def _call(self, call: Any) -> Any:
        self.round_trips += 1
        return self._link.retrying(call)

    def _refresh(self) -> None:
        start = self._log_read
        entries = self._call(lambda: self._link.client.lrange(self._ns + "yield:log", start, -1))
        for entry in entries:
            kind, _, name = entry.decode("utf-8").partition(":")
            (self._pruned_hosts if kind == "h" else self._pruned_domains).add(name)
        self._log_read = start + len(entries)
        self._refreshed_at = self._clock()

    def record(
        self, host: str, raw_bytes: int, clean_bytes: int, request: int | None = None
    ) -> bool:
        """Count one processed document of `host` fetched for frontier row `request` (None:
        no row, counted for good at once); True if this call pruned the host (or its
        domain): the process whose count crossed the line, not the others."""
        host = host.lower()
        domain = registered_domain(host)
        was_pruned = self.is_pruned(host)
        row = "" if request is None else str(request)
        args = [self._ns, host, domain, raw_bytes, clean_bytes, row]
        reply = self._call(lambda: self._record(args=args))
        values = [int(value) for value in reply]
        to_prune: list[str | int] = []
        for table, name, offset, flag in (
            (self.hosts, host, 0, values[6]),
            (self.domains, domain, 3, values[7]),
        ):
            stats = table.setdefault(name, HostYield())
            stats.raw, stats.clean, stats.docs = values[offset : offset + 3]
            stats.pruned = stats.pruned or bool(flag)
            if not stats.pruned and should_prune(stats, self.config):
                stats.pruned = True
                to_prune += [f"{'h' if table is self.hosts else 'd'}:{name}", stats.docs]
            if stats.pruned:
                (self._pruned_hosts if table is self.hosts else self._pruned_domains).add(name)
        pruned_here = False
        if to_prune:
            # of two processes crossing the line at once, the one whose script added the
            # members: the host and its domain in one script, so that one process cannot
            # add the host while the other adds the domain and both count a pruning
            args = [self._ns, *to_prune]
            pruned_here = bool(self._call(functools.partial(self._prune, args=args)))
        return pruned_here and not was_pruned

    def is_pruned(self, host: str) -> bool:
        if self._clock() - self._refreshed_at >= PRUNED_REFRESH:
            self._refresh()
        host = host.lower()
        return host in self._pruned_hosts or registered_domain(host) in self._pruned_domains

    def pruned_hosts(self) -> list[str]:
        """Hosts pruned in the campaign, as this process knows them."""
        self._refresh()
        by_domain = {host for host in self.hosts if self.is_pruned(host)}
        return sorted(self._pruned_hosts | by_domain)

    def save(self) -> None:
        """Nothing to do: every count is in Redis once recorded."""

    def close(self) -> None:
        """Nothing to do: the campaign store owns the connection."""

"""robots.txt fetched once per host for a whole distributed campaign, kept in Redis.

In a campaign of N processes each one would otherwise fetch every host's robots.txt
itself: N hits on the site for one file, and processes obeying different versions
of it. Here the first process that needs a host's rules *claims* the fetch (``SET NX``
with an expiry, renewed while the fetch runs, so a claimer killed with ``kill -9``
blocks nobody for longer than the claim timeout), fetches it, and stores what the
parser needs with a TTL; every other process waits for that entry and parses it.

What is stored is the body prefix (the 500 KiB a parser reads, as Google does), not
decisions per URL: one entry and one round trip per host and process, where decisions
would cost a round trip per request, and each process keeps Scrapy's parser choice
(``ROBOTSTXT_PARSER``). Parsing 500 KiB at most per host and process is cheap.

Status rules (RFC 9309 section 2.3.1; Scrapy's middleware parses whatever body came):

* 2xx: the body prefix is the rules.
* 4xx (and a final 3xx: too many redirects): "allow all", as RFC 9309 and Google say.
* 5xx, 429, and no response at all (status 0: connection refused, DNS, timeout):
  *unreachable*. RFC 9309 (2.3.1.4) says the crawler MUST then assume complete
  disallow, and Google stops crawling the site and retries. With
  ``politeness.robots_unreachable: defer`` (the default) every process that reads
  such an entry defers the host's pages (`pipelines.robots`): they stay in the
  campaign with an attempt count and a due time (`corpus_crawler.retries`) and are
  fetched by a later run once the file answers, so a server that hiccuped once loses
  no page, and one that is down is not crawled blind. (Scrapy's middleware, and
  ``robots_unreachable: allow``, crawl on as if there were no rules.) Such an entry
  lives `error_ttl` (10 minutes by default), not the full TTL, so the file is fetched
  again soon rather than the failure being obeyed for a day.
* A fetch this crawler refused itself (an address or scope rule: the pages meet the
  same refusal) or that failed with a bug is stored as `REFUSED` (-1): "allow all".

**Published with the capture's commit.** The fetching process archives the exchange
(WARC), and its entry must not outlive a capture that a `kill -9` cut back: so the
crawl publishes the entry in the same commit script that records the file lengths
holding the capture (`RedisCampaignStore.publish_robots_with_commit`), keeping its
claim alive until then. A process killed between the fetch and that commit published
nothing; its claim expires and another process fetches and archives the file: every
host's robots.txt is in exactly one committed WARC record. The others wait the
commit interval (0.5 s) longer for the entry.

The entry expires after `ttl` (24 h by default, Google's cache time); processes keep
their parsed copy only as long as the entry lives, so all of them switch to a new
version within one lookup of each other. No Scrapy import.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .redis_state import PUBLISH_ROBOTS_LUA, RedisCampaignStore, RobotsPublication

__all__ = [
    "Claimed",
    "RobotsEntry",
    "SharedRobotsConfig",
    "SharedRobotsTxt",
    "Wait",
    "rules_body",
    "unreachable",
]

#: Status stored for a robots.txt fetch that got no HTTP response.
NO_RESPONSE = 0
#: Status stored for a robots.txt fetch that this crawler refused (or a bug ended).
REFUSED = -1


@dataclass(frozen=True, slots=True)
class SharedRobotsConfig:
    """How long shared robots.txt entries and fetch claims live (seconds)."""

    #: An entry of a fetched robots.txt (2xx or 4xx): Google caches for 24 h.
    ttl: float = 86400.0
    #: An entry of a failed fetch (5xx, 429, no response, refused): fetched again this soon.
    error_ttl: float = 600.0
    #: A claim not renewed for this long is presumed dead and taken over.
    claim_timeout: float = 30.0
    #: Bytes of the body that are stored and parsed.
    max_bytes: int = 500 * 1024

    def __post_init__(self) -> None:
        for name in ("ttl", "error_ttl", "claim_timeout"):
            value = getattr(self, name)
            if value <= 0:
                raise ValueError(f"robots.txt {name.replace('_', ' ')} must be > 0 s, got {value}")
        if self.max_bytes < 1:
            raise ValueError(f"robots.txt max bytes must be >= 1, got {self.max_bytes}")


@dataclass(frozen=True, slots=True)
class RobotsEntry:
    """One host's robots.txt as the campaign knows it."""

    #: HTTP status of the final response; 0: no response; -1: refused by this crawler.
    status: int
    #: What the parser reads: the body prefix for a 2xx, else empty (allow all).
    body: bytes
    #: The body was longer than the prefix kept.
    truncated: bool
    #: When it was fetched (epoch seconds on Redis's clock).
    fetched_at: float
    #: The worker that fetched (and archived) it.
    worker: str
    #: Seconds the entry has left in Redis (how long a process may keep its parse).
    expires_in: float

    @property
    def failed(self) -> bool:
        return _failed(self.status)

    @property
    def unreachable(self) -> bool:
        return unreachable(self.status)


@dataclass(frozen=True, slots=True)
class Claimed:
    """This process holds the claim: it fetches, then `publish`es with `token`."""

    token: str


@dataclass(frozen=True, slots=True)
class Wait:
    """Another process is fetching: look again later (its claim expires in `claim_left` s)."""

    claim_left: float


def unreachable(status: int) -> bool:
    """Whether a robots.txt fetch that ended with `status` (0: no response) found the
    file unreachable (RFC 9309 2.3.1.4: server or network errors)."""
    # 429 is the server asking to slow down, not a verdict on the file: Google treats it
    # as a server error
    return status == NO_RESPONSE or status == 429 or status >= 500


def _failed(status: int) -> bool:
    # kept only for the error TTL: fetched again soon
    return unreachable(status) or status == REFUSED


def rules_body(status: int, body: bytes, max_bytes: int) -> tuple[bytes, bool]:
    """What the parser reads of a robots.txt response, and whether it was cut.

    Only a 2xx body holds rules; anything else is "allow all" (the module docstring
    says why for each status class)."""
    if not 200 <= status < 300:
        return b"", False
    return body[:max_bytes], len(body) > max_bytes


# ARGV: ns, netloc, token, claim ms
# -> {1, status, body, truncated, fetched, worker, pttl} | {2} claimed | {0, claim pttl}
_LOOK_UP_OR_CLAIM = """
local ns, netloc = ARGV[1], ARGV[2]
local key = ns .. 'robots:' .. netloc
local entry = redis.call('HMGET', key, 'status', 'body', 'truncated', 'fetched', 'worker')
if entry[1] then
  return {1, entry[1], entry[2], entry[3], entry[4], entry[5], redis.call('PTTL', key)}
end
local claim = ns .. 'robotsclaim:' .. netloc
if redis.call('SET', claim, ARGV[3], 'NX', 'PX', ARGV[4]) then return {2} end
-- a retry of this very call whose answer was lost: the claim is already ours
if redis.call('GET', claim) == ARGV[3] then return {2} end
return {0, redis.call('PTTL', claim)}
"""

# ARGV: ns, netloc, token, claim ms -> 1 still ours (renewed), 0 lost
_RENEW = """
local claim = ARGV[1] .. 'robotsclaim:' .. ARGV[2]
if redis.call('GET', claim) ~= ARGV[3] then return 0 end
redis.call('PEXPIRE', claim, ARGV[4])
return 1
"""

# ARGV: ns, netloc, token, status, body, truncated, worker, ttl ms -> fetched (Redis clock)
_PUBLISH = (
    """
local ns = ARGV[1]
"""
    + PUBLISH_ROBOTS_LUA
    + """
return publish_robots(ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
"""
)


def _registrar(source: str) -> Callable[[Any], Any]:
    def register(client: Any) -> Any:
        return client.register_script(source)

    return register


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class SharedRobotsTxt:
    """The campaign's robots.txt entries, for one worker; blocking calls (run them off
    the reactor). Keyed as Scrapy's middleware keys its parsers: by the URL's netloc."""

    def __init__(self, store: RedisCampaignStore, config: SharedRobotsConfig) -> None:
        self.store = store
        self.config = config
        self._prefix = store.key_prefix
        self._worker = store.config.worker
        # registering only hashes the source; the scripts are loaded at their first call
        self._scripts: dict[str, Any] = {
            name: store.redis_call(_registrar(source))
            for name, source in (
                ("look_up", _LOOK_UP_OR_CLAIM),
                ("renew", _RENEW),
                ("publish", _PUBLISH),
            )
        }

    def look_up_or_claim(self, netloc: str) -> RobotsEntry | Claimed | Wait:
        """The stored entry; else the claim to fetch it, if nobody holds it; else `Wait`."""
        token = f"{self._worker}:{uuid.uuid4().hex}"
        script = self._scripts["look_up"]
        args = [self._prefix, netloc, token, _ms(self.config.claim_timeout)]
        reply = self.store.redis_call(lambda client: script(args=args, client=client))
        kind = int(reply[0])
        if kind == 1:
            return RobotsEntry(
                status=int(reply[1]),
                body=bytes(reply[2] or b""),
                truncated=reply[3] == b"1",
                fetched_at=float(reply[4]),
                worker=(reply[5] or b"").decode("utf-8", "replace"),
                expires_in=max(0.0, int(reply[6]) / 1000),
            )
        if kind == 2:
            return Claimed(token)
        return Wait(max(0.0, int(reply[1]) / 1000))

    def renew(self, netloc: str, claim: Claimed) -> bool:
        """Keep the claim alive while the fetch runs; False if it was lost."""
        script = self._scripts["renew"]
        args = [self._prefix, netloc, claim.token, _ms(self.config.claim_timeout)]
        return bool(self.store.redis_call(lambda client: script(args=args, client=client)))

    def publication(
        self, netloc: str, claim: Claimed, status: int, body: bytes
    ) -> RobotsPublication:
        """The entry the fetch's outcome (`status` 0: no response) makes, as stored."""
        rules, truncated = rules_body(status, body, self.config.max_bytes)
        ttl = min(self.config.error_ttl, self.config.ttl) if _failed(status) else self.config.ttl
        return RobotsPublication(netloc, claim.token, status, rules, truncated, _ms(ttl))

    def entry_of(self, publication: RobotsPublication, fetched_at: float) -> RobotsEntry:
        """The entry as the other processes will read it once published."""
        return RobotsEntry(
            status=publication.status,
            body=publication.body,
            truncated=publication.truncated,
            fetched_at=fetched_at,
            worker=self._worker,
            expires_in=publication.ttl_ms / 1000,
        )

    def publish(self, netloc: str, claim: Claimed, status: int, body: bytes) -> RobotsEntry:
        """Store the fetch's outcome (`status` 0: no response) for every process at once,
        free the claim, and return the entry as the others will read it. (A crawl that
        archives the fetch publishes with the commit of its capture instead:
        `RedisCampaignStore.publish_robots_with_commit`.)"""
        publication = self.publication(netloc, claim, status, body)
        script = self._scripts["publish"]
        netloc, token, status, rules, truncated, ttl_ms = publication.arguments()
        args = [self._prefix, netloc, token, status, rules, truncated, self._worker, ttl_ms]
        fetched = self.store.redis_call(lambda client: script(args=args, client=client))
        return self.entry_of(publication, float(fetched))

"""A campaign shared by many crawler processes through one Redis: `RedisCampaignStore`.

The same contract as the SQLite store (`corpus_crawler.state`): the writer appends a
request's records, marks it done, and every ~0.5 s commits the lengths its files
have reached together with the requests done since; a restart cuts the files back
to the committed lengths. What changes is where the state lives and who shares it:

* **Frontier by host.** Each host (the URL's host name, as Scrapy's download slots)
  has its own queue (a sorted set: depth priority first, then FIFO), and one
  schedule (a sorted set of hosts scored by the time, in Redis's clock, at which
  they may be fetched next) says which host is ready. A lease takes at most one
  request per ready host; the host stays held until the request is finished and
  then rests for the profile's delay, so two requests to one host from any
  processes are always at least the delay apart (start to start). With no delay,
  up to the per-host concurrency requests of a host are out at once.
* **Leases, not pops.** A leased request stays recorded under its worker until
  that worker's commit marks it done, in the same Lua script that records the
  worker's file lengths: "in the files" and "done" never disagree. Each process
  keeps a heartbeat key with a TTL (the lease timeout); any process returns the
  leases of a worker whose heartbeat expired to the frontier and bumps that
  worker's incarnation, so a process that was only presumed dead is fenced: its
  next commit is refused and it stops with an error instead of writing pages that
  others now fetch. A worker restarting under the same identity bumps its
  incarnation, returns its own leases and cuts its files back.
* **Seen set and budgets** are updated in the same script that queues a request.
* **Redis restarts** (with its append-only file, `appendfsync always`: with `everysec`
  a busy disk lets Redis answer writes up to 2 s before it writes them, and a kill
  then loses them; README "Crawling on several machines") lose nothing: every call is
  retried with backoff while Redis is down (the crawl pauses), the scripts are
  idempotent or carry a token for replays, and reaping waits one lease timeout
  after an outage so that live workers can heartbeat again first.

One Redis server (or a primary), not a cluster: the scripts touch keys they are
not given. No Scrapy import.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .recrawl import Decision, PreviousCapture
from .retries import RetryPolicy
from .state import Admission, BudgetLimits, QueueEntry

__all__ = [
    "FORGET_DOCUMENT_LUA",
    "FORGET_YIELD_LUA",
    "PUBLISH_ROBOTS_LUA",
    "RedisCampaignStore",
    "RedisConfig",
    "RedisUnavailable",
    "RobotsPublication",
    "WorkerFenced",
    "check_redis",
    "host_key",
    "shown_url",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RedisUnavailable(RuntimeError):
    """Redis could not be reached (at start, or for longer than the retry timeout)."""


class WorkerFenced(RuntimeError):
    """This process was presumed dead by the others and its leases were handed out."""


@dataclass(frozen=True, slots=True)
class RedisConfig:
    """Where the shared campaign lives and how this process takes part in it."""

    url: str
    #: Key prefix of the campaign: campaigns in one Redis database stay apart.
    namespace: str
    #: This process's identity in the campaign (host name + slot).
    worker: str
    #: Seconds without a heartbeat after which a worker's leases return to the frontier.
    lease_timeout: float = 30.0
    #: Seconds a call keeps being retried while Redis is unreachable (the crawl pauses).
    retry_timeout: float = 600.0
    #: Seconds between two requests to one host (the profile's download_delay).
    delay: float = 0.0
    #: Requests to one host in flight over all processes (when there is no delay).
    per_host: int = 1

    def __post_init__(self) -> None:
        if self.lease_timeout <= 0:
            raise ValueError(f"lease timeout must be > 0 seconds, got {self.lease_timeout}")
        if self.per_host < 1:
            raise ValueError(f"per-host concurrency must be >= 1, got {self.per_host}")

    @property
    def host_capacity(self) -> int:
        # With a delay the host is held from lease to finish and then rests: one at a
        # time is what makes the start-to-start gap a guarantee, not an average.
        return 1 if self.delay > 0 else self.per_host


@dataclass(frozen=True, slots=True)
class RobotsPublication:
    """A host's robots.txt entry as the commit script stores it (`PUBLISH_ROBOTS_LUA`)."""

    netloc: str
    #: The fetch claim's token (freed if still held by it).
    token: str
    status: int
    #: What the parser reads (`corpus_crawler.redis_robots.rules_body`).
    body: bytes
    truncated: bool
    ttl_ms: int

    def arguments(self) -> list[Any]:
        truncated = "1" if self.truncated else "0"
        return [self.netloc, self.token, self.status, self.body, truncated, self.ttl_ms]


def host_key(url: str) -> str:
    """What politeness is counted by: the host name, as Scrapy's download slots."""
    return (urlsplit(url).hostname or "").lower()


def _connect(url: str) -> Any:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # our own retry loop (`_retrying`) knows which calls are safe to repeat
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=5,
        socket_timeout=30,
        retry=Retry(NoBackoff(), 0),
        decode_responses=False,
    )


def shown_url(url: str) -> str:
    """`url` as it may be printed: a password (`redis://:SECRET@host`, or redis-py's
    `?password=SECRET`) is masked, since messages go to terminals, logs and CI output."""
    # text substitution, not urlunsplit: that would rewrite unix:///path as unix:/path
    url = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/?#@:]*):[^/?#]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def check_redis(url: str) -> None:
    """Raise `RedisUnavailable` with one line unless Redis answers at `url`."""
    import redis

    try:
        client = _connect(url)
        client.ping()
        client.close()
    except (redis.RedisError, ValueError) as exc:
        raise RedisUnavailable(
            f"cannot reach Redis at {shown_url(url)}: {exc} (start redis-server, or fix --redis /"
            " distributed.redis_url)"
        ) from None


# -- Lua ------------------------------------------------------------------------------------
# ARGV[1] is always the key prefix. Members of host queues are zero-padded ids, so
# requests of one priority come out in the order they were queued.

#: Lua: the yield counts of one request's fetch, kept under its id (``yield:req``: id ->
#: "raw clean host domain") from `corpus_crawler.yieldrate.RedisYieldTracker`'s record to
#: the commit that marks the request done. A fetch whose output never reached a commit
#: (its worker was killed, its lease returned) takes its counts back out here, so a
#: refetch counts the page once, as an uninterrupted crawl does. Needs `ns` defined.
FORGET_YIELD_LUA = """
local function forget_yield(id)
  local entry = redis.call('HGET', ns .. 'yield:req', id)
  if not entry then return end
  redis.call('HDEL', ns .. 'yield:req', id)
  local raw, clean, host, domain = string.match(entry, '^(%d+) (%d+) (%S+) (%S+)$')
  for _, key in ipairs({'h:' .. host, 'd:' .. domain}) do
    local hash = ns .. 'yield:' .. key
    -- 0 - x, not -x: Lua's -0 reaches Redis as "-0", which HINCRBY refuses
    redis.call('HINCRBY', hash, 'raw', 0 - tonumber(raw))
    redis.call('HINCRBY', hash, 'clean', 0 - tonumber(clean))
    redis.call('HINCRBY', hash, 'docs', -1)
  end
end
"""

#: Lua: store a host's robots.txt entry for every process (`corpus_crawler.redis_robots`
#: owns the entry; it is here because the commit script publishes it too) and free the
#: fetch claim if it is still `token`'s; returns the fetch time on Redis's clock. Stored
#: even when the claim was lost meanwhile (two fetches of one file: either is true).
#: Needs `ns` defined.
PUBLISH_ROBOTS_LUA = """
local function publish_robots(netloc, token, status, body, truncated, worker, ttl_ms)
  local key = ns .. 'robots:' .. netloc
  local t = redis.call('TIME')
  local fetched = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
  redis.call('DEL', key)
  redis.call('HSET', key, 'status', status, 'body', body, 'truncated', truncated,
    'fetched', fetched, 'worker', worker)
  redis.call('PEXPIRE', key, ttl_ms)
  local claim = ns .. 'robotsclaim:' .. netloc
  if redis.call('GET', claim) == token then redis.call('DEL', claim) end
  return fetched
end
"""

#: Lua: take a kept document whose fetch never reached a commit back out of the dedup
#: stores (`corpus_crawler.dedup._redis` owns them; its add script keeps what to undo in
#: ``dd:pend:<request>`` until the commit that marks the request done): its exact digest,
#: name, signature and bands, and the n-gram filter bits that it was the first to set. So
#: a refetch is judged as if the killed fetch never happened, whether its text changed or
#: not, and a later copy of the old text is not dropped as a duplicate of a document that
#: no committed file holds. ``dd:seq`` moves, so adds judged before this redo their
#: lookup. Needs `ns` defined.
FORGET_DOCUMENT_LUA = """
local function forget_document(id)
  local pending = ns .. 'dd:pend:' .. id
  local entry = redis.call('HMGET', pending, 'doc', 'digest', 'bands', 'bits')
  redis.call('HDEL', ns .. 'dd:replay', id)
  local doc = entry[1]
  if not doc then return end
  redis.call('DEL', pending)
  local digest, bands, bits = entry[2] or '', entry[3] or '', entry[4] or ''
  if digest ~= '' and redis.call('HGET', ns .. 'dd:exact', digest) == doc then
    redis.call('HDEL', ns .. 'dd:exact', digest)
  end
  redis.call('HDEL', ns .. 'dd:name', doc)
  redis.call('HDEL', ns .. 'dd:owner', doc)
  redis.call('HDEL', ns .. 'dd:sig', doc)
  for band in string.gmatch(bands, '[^,]+') do
    local docs = redis.call('HGET', ns .. 'dd:band', band)
    if docs then
      local others = {}
      for other in string.gmatch(docs, '[^,]+') do
        if other ~= doc then table.insert(others, other) end
      end
      if #others == 0 then
        redis.call('HDEL', ns .. 'dd:band', band)
      else
        redis.call('HSET', ns .. 'dd:band', band, table.concat(others, ','))
      end
    end
  end
  for at = 1, #bits, 8 do
    local chunk, offset = struct.unpack('<I4I4', bits, at)
    redis.call('SETBIT', ns .. 'dd:ng:' .. chunk, offset, 0)
  end
  redis.call('INCR', ns .. 'dd:seq')
end
"""

_LIB = (
    """
local ns = ARGV[1]
"""
    + FORGET_YIELD_LUA
    + PUBLISH_ROBOTS_LUA
    + FORGET_DOCUMENT_LUA
    + """
-- Redis's clock, shared by all machines. Host times are whole milliseconds: now is
-- rounded down, a rest's end up, so a host is never handed out early.
local function now_exact()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function now_ms()
  return math.floor(now_exact())
end
local function busy_of(host)
  return tonumber(redis.call('HGET', ns .. 'busy', host) or '0')
end
local function make_ready(host, cap, now)
  if redis.call('ZSCORE', ns .. 'ready', host) then return end
  if busy_of(host) >= cap then return end
  if redis.call('ZCARD', ns .. 'q:' .. host) == 0 then return end
  local rest = tonumber(redis.call('HGET', ns .. 'rest', host) or '0')
  if rest > 0 then redis.call('HDEL', ns .. 'rest', host) end
  redis.call('ZADD', ns .. 'ready', math.max(now, rest), host)
end
local function unhold(host)
  local busy = redis.call('HINCRBY', ns .. 'busy', host, -1)
  if busy <= 0 then redis.call('HDEL', ns .. 'busy', host) end
end
local function return_leases(worker, cap, now)
  local leases = redis.call('HGETALL', ns .. 'lease:' .. worker)
  local count = 0
  local hosts = {}
  for i = 1, #leases, 2 do
    local id, value = leases[i], leases[i + 1]
    local space = string.find(value, ' ', 1, true)
    local host, score = string.sub(value, 1, space - 1), string.sub(value, space + 1)
    if redis.call('HDEL', ns .. 'held:' .. worker, id) == 1 then unhold(host) end
    redis.call('ZADD', ns .. 'q:' .. host, score, string.format('%015d', tonumber(id)))
    -- its output is not in any committed file: the refetch will count it again, and
    -- judge it again against what the committed files hold
    forget_yield(id)
    forget_document(id)
    hosts[host] = true
    count = count + 1
  end
  redis.call('DEL', ns .. 'lease:' .. worker, ns .. 'held:' .. worker)
  redis.call('INCRBY', ns .. 'nqueued', count)
  redis.call('DECRBY', ns .. 'nleased', count)
  for host, _ in pairs(hosts) do make_ready(host, cap, now) end
  return count
end
"""
)

# ARGV: ns, fingerprint, budget, max_pages, max_per_domain, host, score, text, cap
_ENQUEUE = (
    _LIB
    + """
local fingerprint, budget = ARGV[2], ARGV[3]
if fingerprint ~= '' and redis.call('SADD', ns .. 'seen', fingerprint) == 0 then
  return -1
end
if budget ~= '' then
  local max_pages, max_domain = tonumber(ARGV[4]), tonumber(ARGV[5])
  local total = tonumber(redis.call('HGET', ns .. 'budget', '') or '0')
  if max_pages >= 0 and total >= max_pages then return -2 end
  local used = tonumber(redis.call('HGET', ns .. 'budget', 'd:' .. budget) or '0')
  if max_domain >= 0 and used >= max_domain then return -3 end
  redis.call('HINCRBY', ns .. 'budget', '', 1)
  redis.call('HINCRBY', ns .. 'budget', 'd:' .. budget, 1)
end
local host = ARGV[6]
local id = redis.call('INCR', ns .. 'seq')
redis.call('HSET', ns .. 'req', id, ARGV[8])
redis.call('ZADD', ns .. 'q:' .. host, ARGV[7], string.format('%015d', id))
redis.call('INCR', ns .. 'nqueued')
make_ready(host, tonumber(ARGV[9]), now_ms())
return id
"""
)

# ARGV: ns, worker, incarnation, count, cap, token
# -> {1, id, text, id, text...} | {0, ms until a host is ready or -1} | {-1} (fenced)
_LEASE = (
    _LIB
    + """
local worker, incarnation = ARGV[2], ARGV[3]
if redis.call('HGET', ns .. 'workers', worker) ~= incarnation then return {-1} end
local call_key = ns .. 'leasecall:' .. worker
local token = ARGV[6]
local previous = redis.call('GET', call_key)
if previous then
  local bar = string.find(previous, '|', 1, true)
  if string.sub(previous, 1, bar - 1) == token then
    -- a retry of a call whose answer was lost: the same requests again
    local out = {1}
    for _, id in ipairs(cjson.decode(string.sub(previous, bar + 1))) do
      if redis.call('HEXISTS', ns .. 'lease:' .. worker, id) == 1 then
        table.insert(out, id)
        table.insert(out, redis.call('HGET', ns .. 'req', id))
      end
    end
    return out
  end
end
local cap = tonumber(ARGV[5])
local now = now_ms()
-- deferred requests whose time has come go back to their host's queue (`defer`)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', ns .. 'deferred', '-inf', now,
    'LIMIT', 0, 1000)) do
  local id = tostring(tonumber(member))
  local value = redis.call('HGET', ns .. 'dinfo', id)
  redis.call('ZREM', ns .. 'deferred', member)
  redis.call('HDEL', ns .. 'dinfo', id)
  if value then
    local space = string.find(value, ' ', 1, true)
    local host = string.sub(value, 1, space - 1)
    redis.call('ZADD', ns .. 'q:' .. host, string.sub(value, space + 1), member)
    redis.call('INCR', ns .. 'nqueued')
    make_ready(host, cap, now)
  end
end
local hosts = redis.call('ZRANGEBYSCORE', ns .. 'ready', '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
local out = {1}
local ids = {}
for _, host in ipairs(hosts) do
  local popped = redis.call('ZPOPMIN', ns .. 'q:' .. host)
  if #popped == 0 then
    redis.call('ZREM', ns .. 'ready', host)
  else
    local id = tostring(tonumber(popped[1]))
    local busy = redis.call('HINCRBY', ns .. 'busy', host, 1)
    if busy >= cap or redis.call('ZCARD', ns .. 'q:' .. host) == 0 then
      redis.call('ZREM', ns .. 'ready', host)
    end
    redis.call('HSET', ns .. 'lease:' .. worker, id, host .. ' ' .. popped[2])
    redis.call('HSET', ns .. 'held:' .. worker, id, host)
    table.insert(out, id)
    table.insert(out, redis.call('HGET', ns .. 'req', id))
    table.insert(ids, id)
  end
end
if #ids == 0 then
  local first = redis.call('ZRANGE', ns .. 'ready', 0, 0, 'WITHSCORES')
  if #first == 0 then return {0, -1} end
  return {0, math.max(0, tonumber(first[2]) - now)}
end
redis.call('DECRBY', ns .. 'nqueued', #ids)
redis.call('INCRBY', ns .. 'nleased', #ids)
redis.call('SET', call_key, token .. '|' .. cjson.encode(ids), 'EX', 3600)
return out
"""
)

# ARGV: ns, worker, id, delay_ms, cap  (idempotent)
_RELEASE = (
    _LIB
    + """
local worker, id = ARGV[2], ARGV[3]
local host = redis.call('HGET', ns .. 'held:' .. worker, id)
if not host then return 0 end
redis.call('HDEL', ns .. 'held:' .. worker, id)
unhold(host)
local next_time = math.ceil(now_exact() + tonumber(ARGV[4]))
if redis.call('ZCARD', ns .. 'q:' .. host) > 0 then
  if not redis.call('ZSCORE', ns .. 'ready', host) then
    redis.call('ZADD', ns .. 'ready', next_time, host)
  end
elseif tonumber(ARGV[4]) > 0 then
  redis.call('HSET', ns .. 'rest', host, next_time)
end
return 1
"""
)

# ARGV: ns, worker, incarnation, sequence, file count, name, length..., done count,
# id..., deferred count, (id, attempts, delay ms)..., robots.txt count, (netloc, token,
# status, body, truncated, ttl ms)..., then counter key, value pairs.
# -> 1 committed, 0 a replay, -1 fenced
_COMMIT = (
    _LIB
    + """
local worker, incarnation = ARGV[2], ARGV[3]
if redis.call('HGET', ns .. 'workers', worker) ~= incarnation then return -1 end
local seq_key = ns .. 'commitseq:' .. worker
if tonumber(redis.call('GET', seq_key) or '0') >= tonumber(ARGV[4]) then return 0 end
redis.call('SET', seq_key, ARGV[4])
local i = 5
local files = tonumber(ARGV[i]); i = i + 1
for _ = 1, files do
  redis.call('HSET', ns .. 'files:' .. worker, ARGV[i], ARGV[i + 1]); i = i + 2
end
local done = tonumber(ARGV[i]); i = i + 1
local finished = 0
for _ = 1, done do
  local id = ARGV[i]; i = i + 1
  if redis.call('HDEL', ns .. 'lease:' .. worker, id) == 1 then
    redis.call('HDEL', ns .. 'req', id)
    -- its dedup verdict is in the committed files now (corpus_crawler.dedup._redis)
    redis.call('HDEL', ns .. 'dd:replay', id)
    redis.call('DEL', ns .. 'dd:pend:' .. id)
    -- and its yield counts are final (corpus_crawler.yieldrate)
    redis.call('HDEL', ns .. 'yield:req', id)
    redis.call('HDEL', ns .. 'attempts', id)
    finished = finished + 1
  end
end
-- failed with a network error: out of the lease, into the deferred set until its time
-- (Redis's clock), its request and attempts kept; the lease's "host score" requeues it
local deferrals = tonumber(ARGV[i]); i = i + 1
local moment = now_exact()
for _ = 1, deferrals do
  local id, attempts, delay = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]); i = i + 3
  local value = redis.call('HGET', ns .. 'lease:' .. worker, id)
  if value then
    redis.call('HDEL', ns .. 'lease:' .. worker, id)
    redis.call('HDEL', ns .. 'dd:replay', id)
    redis.call('DEL', ns .. 'dd:pend:' .. id)
    redis.call('HDEL', ns .. 'yield:req', id)
    redis.call('HSET', ns .. 'dinfo', id, value)
    redis.call('HSET', ns .. 'attempts', id, attempts)
    redis.call('ZADD', ns .. 'deferred', math.ceil(moment + delay),
      string.format('%015d', tonumber(id)))
    finished = finished + 1
  end
end
redis.call('DECRBY', ns .. 'nleased', finished)
-- robots.txt entries whose capture is in the files committed here: published with them
local robots = tonumber(ARGV[i]); i = i + 1
for _ = 1, robots do
  publish_robots(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], worker,
    ARGV[i + 5])
  i = i + 6
end
while i < #ARGV do
  redis.call('HINCRBY', ns .. 'counters', ARGV[i], ARGV[i + 1]); i = i + 2
end
return 1
"""
)

# ARGV: ns, worker, lease timeout ms, cap -> {incarnation, leases returned}
_REGISTER = (
    _LIB
    + """
local worker = ARGV[2]
local incarnation = redis.call('HINCRBY', ns .. 'workers', worker, 1)
redis.call('SET', ns .. 'hb:' .. worker, incarnation, 'PX', ARGV[3])
redis.call('SET', ns .. 'commitseq:' .. worker, 0)
redis.call('DEL', ns .. 'leasecall:' .. worker)
local returned = return_leases(worker, tonumber(ARGV[4]), now_ms())
return {incarnation, returned}
"""
)

# ARGV: ns, worker, incarnation, lease timeout ms -> 1 alive, 0 fenced
_HEARTBEAT = """
local ns, worker, incarnation = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', ns .. 'workers', worker) ~= incarnation then return 0 end
redis.call('SET', ns .. 'hb:' .. worker, incarnation, 'PX', ARGV[4])
return 1
"""

# ARGV: ns, cap -> leases returned from workers whose heartbeat expired
_REAP = (
    _LIB
    + """
local cap = tonumber(ARGV[2])
local now = now_ms()
local returned = 0
for _, worker in ipairs(redis.call('HKEYS', ns .. 'workers')) do
  if redis.call('EXISTS', ns .. 'hb:' .. worker) == 0
      and redis.call('EXISTS', ns .. 'lease:' .. worker) == 1 then
    redis.call('HINCRBY', ns .. 'workers', worker, 1)
    returned = returned + return_leases(worker, cap, now)
  end
end
return returned
"""
)

# ARGV: ns, worker, incarnation, cap -> leases returned (-1: fenced, nothing done)
_LEAVE = (
    _LIB
    + """
local worker, incarnation = ARGV[2], ARGV[3]
if redis.call('HGET', ns .. 'workers', worker) ~= incarnation then return -1 end
local returned = return_leases(worker, tonumber(ARGV[4]), now_ms())
redis.call('DEL', ns .. 'hb:' .. worker)
return returned
"""
)

# ARGV: ns -> {deferred requests, ms until the first is due (-1: none)}
_RETRIES = """
local ns = ARGV[1]
local count = redis.call('ZCARD', ns .. 'deferred')
local first = redis.call('ZRANGE', ns .. 'deferred', 0, 0, 'WITHSCORES')
if #first == 0 then return {count, -1} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
return {count, math.max(0, math.ceil(tonumber(first[2]) - now))}
"""

_ADMISSIONS = {
    -1: Admission.DUPLICATE,
    -2: Admission.OVER_MAX_PAGES,
    -3: Admission.OVER_MAX_PAGES_PER_DOMAIN,
}

_NO_LIMITS = BudgetLimits()

#: Seconds the global queue counts are reused by `pending` (asked on every engine tick).
_PENDING_CACHE = 0.2


class RedisCampaignStore:
    """The campaign state in Redis, for one worker process; see the module docstring.

    Thread-safe: the reactor thread enqueues and leases, the writer thread finishes
    and commits, a daemon thread heartbeats and reaps dead workers.
    """

    def __init__(self, config: RedisConfig, *, retries: RetryPolicy | None = None) -> None:
        import redis

        self.config = config
        #: When a request that failed with a network error is tried again (`defer`).
        self.retries = retries or RetryPolicy()
        self._errors: tuple[type[BaseException], ...] = (
            redis.ConnectionError,
            redis.TimeoutError,
        )
        self._client = _connect(config.url)
        self._ns = f"cc:{config.namespace}:"
        client = self._client
        self._enqueue = client.register_script(_ENQUEUE)
        self._lease = client.register_script(_LEASE)
        self._release = client.register_script(_RELEASE)
        self._commit = client.register_script(_COMMIT)
        self._register = client.register_script(_REGISTER)
        self._heartbeat = client.register_script(_HEARTBEAT)
        self._reap = client.register_script(_REAP)
        self._leave = client.register_script(_LEAVE)
        self._retries_script = client.register_script(_RETRIES)
        self._lock = threading.Lock()
        self._pending_done: list[int] = []
        #: (row, attempt, delay in ms) of the requests deferred since the last commit.
        self._pending_deferred: list[tuple[int, int, float]] = []
        #: (monotonic time asked, deferred count, local epoch time the first is due).
        self._retries_cache: tuple[float, int, float | None] = (-1.0, 0, None)
        #: Rows whose host was released at their response (their finish need not again).
        self._released: set[int] = set()
        self._pending_counts: dict[str, int] = {}
        #: robots.txt entries to publish with the next commit, and what to call once they are.
        self._pending_robots: list[tuple[RobotsPublication, Callable[[], None]]] = []
        self._sequence = 0
        #: monotonic time of the last failed call: reaping waits a lease timeout after it
        self._outage_at = time.monotonic()
        self._pending_cache: tuple[float, int] = (0.0, 0)
        #: Milliseconds until a host is ready, from the last lease that got nothing.
        self.lease_wait: float | None = None
        self.fenced = False
        #: The host of the request being enqueued, when the caller knows it (the reactor
        #: thread's scheduler sets it around `enqueue`); else read from the request's JSON.
        self.enqueue_host: str | None = None
        self.commits = 0
        self._closed = False
        incarnation, returned = self._retrying(
            lambda: self._register(args=[self._ns, config.worker, self._ttl_ms, self._cap])
        )
        self._incarnation = int(incarnation)
        self._requeued = int(returned)
        self._committed = self.committed_files()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._keep_alive, name="corpus-redis-heartbeat", daemon=True
        )
        self._thread.start()

    # -- plumbing -------------------------------------------------------------------------

    @property
    def _ttl_ms(self) -> int:
        return max(1, int(self.config.lease_timeout * 1000))

    @property
    def _cap(self) -> int:
        return self.config.host_capacity

    def _retrying(self, call: Callable[[], T]) -> T:
        """`call` until Redis answers; raise `RedisUnavailable` after the retry timeout."""
        wait = 0.05
        deadline: float | None = None
        while True:
            try:
                return call()
            except self._errors as exc:
                now = time.monotonic()
                self._outage_at = now
                if deadline is None:
                    deadline = now + self.config.retry_timeout
                    logger.warning(
                        "Redis at %s is unreachable (%s): the crawl waits and retries for up"
                        " to %.0f s",
                        self.config.url,
                        exc,
                        self.config.retry_timeout,
                    )
                if now >= deadline:
                    raise RedisUnavailable(
                        f"Redis at {self.config.url} unreachable for"
                        f" {self.config.retry_timeout:.0f} s: {exc}"
                    ) from None
                time.sleep(wait)
                wait = min(wait * 2, 1.0)

    def _keep_alive(self) -> None:
        interval = self.config.lease_timeout / 3
        while not self._stop.wait(interval):
            try:
                alive = self._retrying(
                    lambda: self._heartbeat(
                        args=[self._ns, self.config.worker, self._incarnation, self._ttl_ms]
                    )
                )
                if not alive:
                    if not self.fenced:
                        logger.error("%s", self.fenced_message)
                    self.fenced = True
                    return
                # after an outage, give the other workers one lease timeout to heartbeat
                if time.monotonic() - self._outage_at >= self.config.lease_timeout:
                    self.reap_dead_workers()
            except RedisUnavailable as exc:
                logger.error("heartbeat stopped: %s", exc)
                return
            except Exception:  # a heartbeat must never take the crawl down by itself
                logger.exception("heartbeat failed")

    def reap_dead_workers(self) -> int:
        """Return the leases of every worker whose heartbeat expired to the frontier and
        fence those workers (their next commit is refused); how many requests came back."""
        returned = int(self._retrying(lambda: self._reap(args=[self._ns, self._cap])))
        if returned:
            logger.warning(
                "returned %d request(s) of worker(s) without a heartbeat to the frontier",
                returned,
            )
        return returned

    @property
    def fenced_message(self) -> str:
        """Why a fenced worker stops (one line)."""
        return (
            f"worker {self.config.worker} was presumed dead (no heartbeat for"
            f" {self.config.lease_timeout:g} s) and its requests were given to other workers:"
            " it stops without committing; run the same command again to rejoin"
        )

    # -- for the other shared stores (dedup, yield, robots.txt) ------------------------------

    @property
    def client(self) -> Any:
        """The Redis client (register scripts on it; call them through `retrying`)."""
        return self._client

    @property
    def key_prefix(self) -> str:
        """The campaign's key prefix (``cc:<namespace>:``): the shared stores' keys too."""
        return self._ns

    @property
    def worker(self) -> str:
        return self.config.worker

    def retrying(self, call: Callable[[], T]) -> T:
        """`call` until Redis answers, as the store's own calls (the crawl pauses while
        Redis is down); the call must be safe to repeat."""
        return self._retrying(call)

    def redis_call(self, call: Callable[[Any], T]) -> T:
        """`call(client)`, retried as `retrying` does (`corpus_crawler.redis_robots`)."""
        return self._retrying(lambda: call(self._client))

    # -- facts ----------------------------------------------------------------------------

    @property
    def resumed(self) -> bool:
        return self._incarnation > 1 or bool(self._committed)

    @property
    def run(self) -> int:
        """The incarnation of this worker (1 on its first start)."""
        return self._incarnation

    @property
    def requeued(self) -> int:
        """Requests this worker had leased before a restart, returned to the frontier."""
        return self._requeued

    @property
    def queued(self) -> int:
        raw = self._retrying(lambda: self._client.get(self._ns + "nqueued"))
        return int(raw or 0)

    def pending(self) -> int:
        """Requests queued or leased by any worker (they may still produce links); cached
        briefly, as the engine asks on every tick."""
        now = time.monotonic()
        at, value = self._pending_cache
        if now - at < _PENDING_CACHE:
            return value
        queued, leased = self._retrying(
            lambda: self._client.mget(self._ns + "nqueued", self._ns + "nleased")
        )
        value = int(queued or 0) + int(leased or 0)
        self._pending_cache = (now, value)
        return value

    @property
    def changed(self) -> bool:
        with self._lock:
            return bool(self._pending_done or self._pending_deferred or self._pending_robots)

    def in_frontier(self) -> int:
        """Requests queued, leased or deferred, by any worker."""
        self._pending_cache = (0.0, 0)
        self._retries_cache = (-1.0, 0, None)
        return self.pending() + self.retries_pending()[0]

    def committed_files(self) -> dict[str, int]:
        raw = self._retrying(lambda: self._client.hgetall(f"{self._ns}files:{self.config.worker}"))
        return {name.decode(): int(length) for name, length in raw.items()}

    def counters(self) -> dict[str, int]:
        raw = self._retrying(lambda: self._client.hgetall(self._ns + "counters"))
        return {key.decode(): int(value) for key, value in raw.items()}

    def get_meta(self, key: str) -> Any:
        raw = self._retrying(lambda: self._client.hget(self._ns + "meta", key))
        return json.loads(raw) if raw is not None else None

    def set_meta(self, key: str, value: Any) -> None:
        text = json.dumps(value)
        self._retrying(lambda: self._client.hset(self._ns + "meta", key, text))

    # -- the reactor thread: frontier -----------------------------------------------------

    def enqueue(
        self,
        request: str | Callable[[], str],
        priority: int,
        *,
        fingerprint: bytes | None,
        budget: str | None = None,
        limits: BudgetLimits = _NO_LIMITS,
        recrawl: str | None = None,
        site: str = "",
    ) -> Admission:
        # `site` is the SQLite store's turn key (sites take turns in its leases); here
        # the host queues and the host schedule already interleave hosts
        if recrawl is not None:
            # refused by the CLI already: recrawl passes run on the SQLite store only
            raise NotImplementedError("recrawl passes are not supported on a Redis campaign")
        text = request if isinstance(request, str) else request()
        # the scheduler names the host, so the request's JSON form stays its own business
        host = self.enqueue_host or host_key(json.loads(text)["url"])
        args = [
            self._ns,
            fingerprint.hex() if fingerprint is not None else "",
            budget if budget is not None else "",
            -1 if limits.max_pages is None else limits.max_pages,
            -1 if limits.max_pages_per_domain is None else limits.max_pages_per_domain,
            host,
            -priority,
            text,
            self._cap,
        ]
        # a replayed enqueue finds its own seen mark: counted a duplicate, queued once
        result = int(self._retrying(lambda: self._enqueue(args=args)))
        if result > 0:
            self._pending_cache = (0.0, 0)
            return Admission.QUEUED
        return _ADMISSIONS[result]

    def enqueue_many(
        self, entries: Sequence[QueueEntry], limits: BudgetLimits = _NO_LIMITS
    ) -> list[Admission]:
        """`enqueue` of each entry in turn (the protocol's batch call; one script call
        each, as the seen mark of each must be known before the next is admitted)."""
        admissions: list[Admission] = []
        for url, request, priority, fingerprint, budget, site in entries:
            self.enqueue_host = host_key(url)
            try:
                admission = self.enqueue(
                    request,
                    priority,
                    fingerprint=fingerprint,
                    budget=budget,
                    limits=limits,
                    site=site,
                )
                admissions.append(admission)
            except (TypeError, ValueError):
                admissions.append(Admission.UNSERIALISABLE)
            finally:
                self.enqueue_host = None
        return admissions

    def lease(self, count: int) -> list[tuple[int, str]]:
        """Up to `count` requests, at most one per host that is ready now."""
        if self.fenced:
            return []
        token = uuid.uuid4().hex
        args = [self._ns, self.config.worker, self._incarnation, count, self._cap, token]
        reply = self._retrying(lambda: self._lease(args=args))
        status = int(reply[0])
        if status < 0:
            if not self.fenced:
                logger.error("%s", self.fenced_message)
            self.fenced = True
            return []
        if status == 0:
            wait = float(reply[1])
            self.lease_wait = None if wait < 0 else wait
            return []
        self.lease_wait = None
        return [(int(reply[i]), reply[i + 1].decode("utf-8")) for i in range(1, len(reply), 2)]

    # -- the writer thread: done, totals, commits -----------------------------------------

    def release(self, row: int, rest: float = 0.0) -> None:
        """The response of request `row` is in (or it failed): its host rests for the delay
        (or `rest` seconds when longer: the host's robots.txt Crawl-delay), then is free
        for the next request from any process. Idempotent."""
        delay_ms = max(self.config.delay, rest) * 1000
        self._retrying(
            lambda: self._release(args=[self._ns, self.config.worker, row, delay_ms, self._cap])
        )
        with self._lock:
            self._released.add(row)

    def _release_once(self, row: int) -> None:
        """Releases the host of `row` unless its response already did, and forgets it."""
        with self._lock:
            released = row in self._released
            self._released.discard(row)
        if not released:
            self.release(row)
            with self._lock:
                self._released.discard(row)

    def finish(self, row: int, url: str, outcome: str) -> bool:
        """The request is done: its host is released (if the response did not already),
        and it is marked done at the next commit, with the files that hold its output."""
        self._release_once(row)
        with self._lock:
            self._pending_done.append(row)
        return False

    def defer(self, row: int, url: str, outcome: str, now: float | None = None) -> float | None:
        """The request failed with a network error (`corpus_crawler.retries`): unless its
        attempts are used up (None: `finish` it), its host is released and, at the next
        commit, with the files, it leaves the lease for the shared deferred set, due
        again after the retry delay (in Redis's clock); returns the (local) due time."""
        raw = self._retrying(lambda: self._client.hget(self._ns + "attempts", row))
        attempt = int(raw or 0) + 1
        if attempt > self.retries.retries:
            return None
        delay = self.retries.delay_for(attempt)
        self._release_once(row)
        with self._lock:
            self._pending_deferred.append((row, attempt, delay * 1000))
            self._retries_cache = (-1.0, 0, None)
        return (time.time() if now is None else now) + delay

    @property
    def next_retry(self) -> float | None:
        """When the first deferred request of the campaign is due (local epoch time, as
        last asked within `_PENDING_CACHE` seconds; None: none waits). The deferrals not
        committed yet count: they are deferred at the next commit."""
        with self._lock:
            uncommitted = [
                self.retries.delay_for(attempt) for _, attempt, _ in self._pending_deferred
            ]
        first = self._cached_retries()[1]
        if uncommitted:
            soonest = time.time() + min(uncommitted)
            first = soonest if first is None else min(first, soonest)
        return first

    def retries_pending(self) -> tuple[int, float | None]:
        """(requests deferred in the campaign, when the first is due), as committed."""
        self._retries_cache = (-1.0, 0, None)
        return self._cached_retries()

    def _cached_retries(self) -> tuple[int, float | None]:
        now = time.monotonic()
        at, count, first = self._retries_cache
        if at >= 0 and now - at < _PENDING_CACHE:
            return count, first
        count, wait = self._retrying(lambda: self._retries_script(args=[self._ns]))
        count, wait = int(count), int(wait)
        first = None if wait < 0 else time.time() + wait / 1000
        self._retries_cache = (now, count, first)
        return count, first

    def publish_robots_with_commit(
        self, publication: RobotsPublication, on_published: Callable[[], None]
    ) -> None:
        """Publish a host's robots.txt entry in the next commit's script, with the file
        lengths that hold its capture: call this from the writer thread after the
        capture is written. A process killed before that commit published nothing, and
        the claim it held expires: another process fetches (and archives) the file
        again. `on_published` is called on the writer thread once the commit is in."""
        with self._lock:
            self._pending_robots.append((publication, on_published))

    def count(self, counts: Mapping[str, int]) -> None:
        with self._lock:
            for key, value in counts.items():
                self._pending_counts[key] = self._pending_counts.get(key, 0) + value

    def commit(self, file_lengths: Mapping[str, int], *, fsync_files: Iterable[Path] = ()) -> None:
        """Record, in one Lua script, this worker's file lengths, the requests done since
        the last commit and the counts; refused (`WorkerFenced`) if others took over."""
        import os

        for path in fsync_files:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        with self._lock:
            done, self._pending_done = self._pending_done, []
            deferred, self._pending_deferred = self._pending_deferred, []
            counts, self._pending_counts = self._pending_counts, {}
            robots, self._pending_robots = self._pending_robots, []
            self._sequence += 1
            sequence = self._sequence
        args: list[Any] = [self._ns, self.config.worker, self._incarnation, sequence]
        args.append(len(file_lengths))
        for name, length in file_lengths.items():
            args += [name, length]
        args.append(len(done))
        args += done
        args.append(len(deferred))
        for row, attempt, delay_ms in deferred:
            args += [row, attempt, delay_ms]
        args.append(len(robots))
        for publication, _ in robots:
            args += publication.arguments()
        for key, value in counts.items():
            args += [key, value]
        try:
            # the sequence number makes a retried commit (its answer lost) a no-op
            result = int(self._retrying(lambda: self._commit(args=args)))
        except BaseException:
            with self._lock:
                self._pending_done[:0] = done
                self._pending_deferred[:0] = deferred
                self._pending_robots[:0] = robots
                for key, value in counts.items():
                    self._pending_counts[key] = self._pending_counts.get(key, 0) + value
            raise
        if result < 0:
            self.fenced = True
            raise WorkerFenced(self.fenced_message)
        self.commits += 1
        for _, on_published in robots:
            on_published()

    # -- recrawls: not on a shared campaign -----------------------------------------------

    def previous_capture(self, url: str) -> PreviousCapture | None:
        return None

    def payload_capture(self, digest: str) -> PreviousCapture | None:
        return None

    def record_capture(
        self,
        url: str,
        decision: Decision,
        *,
        status: int,
        record_id: str,
        date: datetime,
        etag: str | None,
        last_modified: str | None,
        depth: int,
    ) -> None:
        return None

    def due_urls(
        self, now: float | None = None, batch: int = 1000
    ) -> Iterator[tuple[str, str | None, str | None, int]]:
        return iter(())

    # -- the end --------------------------------------------------------------------------

    def _stop_heartbeat(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def close(self, reason: str | None = None) -> None:
        """Leave the campaign: requests leased but not committed go back to the frontier
        (the final commit came before). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop_heartbeat()
        try:
            returned = int(
                self._retrying(
                    lambda: self._leave(
                        args=[self._ns, self.config.worker, self._incarnation, self._cap]
                    )
                )
            )
            if returned > 0:
                logger.info("returned %d unfinished request(s) to the frontier", returned)
        finally:
            self._client.close()

    def abandon(self) -> None:
        """Leave without committing (after a write failure): the same as `close`, since
        the uncommitted requests return to the frontier and the next start of this
        worker cuts its files back."""
        self.close()

"""A Scrapy scheduler whose frontier, seen set and page budgets live in the campaign state.

Every request the engine schedules (seeds, links the spider yields after the
spider middlewares, sitemaps, redirects, retries) is written to the campaign's
SQLite frontier as JSON (`corpus_crawler.state`), never held in RAM beyond a
small batch: a crawl that discovers millions of URLs keeps a flat memory. Order:
priority (the spider gives -depth: breadth first), then the sites (budget keys)
in turn, then FIFO within a site (`corpus_crawler.state.CampaignStore.lease`).

* Seen set: the request fingerprint (Scrapy's `REQUEST_FINGERPRINTER`), a unique
  key on disk; `dont_filter` requests (retries) are never filtered.
* Page budgets: a request the spider marks ``meta["corpus_budget"]`` counts
  against CORPUS_SCOPE_MAX_PAGES and, per `corpus_crawler.state.budget_key`,
  CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN, over the whole campaign.
* Rows: a dequeued request carries its frontier row in ``meta["corpus_row"]``.
  A request scheduled with a row in its meta is a follow-up of that request (a
  redirect or a retry copies the meta): the new request gets its own row and the
  old one is finished, so its exchange is archived exactly once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from types import ModuleType
from typing import Any

import orjson
from scrapy import Request, Spider, signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.crawler import Crawler
from scrapy.utils.request import RequestFingerprinter, request_from_dict

from corpus_crawler.campaign_store import CampaignStoreProtocol
from corpus_crawler.exact_json import is_plain_json, tagged, untagged
from corpus_crawler.state import (
    Admission,
    CampaignStore,
    budget_key,
    fingerprint_key,
)
from corpus_crawler.traps import seen_key
from pipelines.campaign import CampaignExtension, CampaignSettings

__all__ = ["CampaignScheduler", "request_from_json", "request_to_json", "verbatim_fingerprint"]

logger = logging.getLogger(__name__)

#: Links held back by `CampaignScheduler.enqueue_request` before they are flushed anyway
#: (a page's links normally go at its end; this bounds a page of very many links).
_HELD_LINKS = 1024

#: Seconds between two looks at the frontier while a network failure is on its way to
#: the state (`OutputWriter.deferring`).
_DEFERRING_POLL = 0.05

#: A string as `json.dumps` writes it by default (ASCII, with escapes): the C encoder.
_json_string = json.encoder.encode_basestring_ascii

_fast: ModuleType | None
try:  # the compiled per-link work (pipelines/_frontier_fast.pyx), built by pip install
    from . import _frontier_fast as _fast
except ImportError:  # pragma: no cover - no compiler or no OpenSSL headers where installed
    _fast = None

ROW = "corpus_row"
ROW_URL = "corpus_row_url"
BUDGET = "corpus_budget"
#: The URL of a recrawl request (a known URL queued again when due).
RECRAWL = "corpus_recrawl"


def request_to_json(
    request: Request, spider: Spider | None, method_names: MethodNames | None = None
) -> str:
    """A request as JSON text, in the compact form when it is a plain GET whose callbacks
    are methods of `spider` (what a crawl's links are), else in Scrapy's full `to_dict`
    form (headers and body as ISO-8859-1 text: byte-exact). `request_from_json` reads
    both, so frontiers written before the compact form existed still load.
    `method_names`: a cache of the callback names found for `spider` (kept by the
    caller, for one spider)."""
    if method_names is not None:
        text = (
            _link_json(request, spider, method_names)
            if _fast is None
            else _fast.link_json(request, spider, method_names, _callback_pair_json)
        )
        if text is not None:
            return text
    return _request_json(request, spider, method_names)


def _request_json(request: Request, spider: Spider | None, method_names: MethodNames | None) -> str:
    """`request_to_json` of a request that is not a link of the commonest shape: the
    compact or the full form as plain JSON when that reads back equal, else in the typed
    form (`_TYPED`); TypeError if it holds anything but plain data."""
    compact = _compact_form(request, spider, method_names)
    data = compact if compact is not None else _full_form(request, spider)
    if is_plain_json(data):
        try:
            return orjson.dumps(data).decode()
        except TypeError:
            pass  # a lone surrogate, an int beyond 64 bits: the typed form keeps them
    try:
        fields = {key: tagged(value, _FIELD_NAMES.get(key, key)) for key, value in data.items()}
    except TypeError as exc:
        raise TypeError(
            f"{request.url}: {exc}; the campaign frontier stores requests as JSON:"
            " the spider and its middlewares must give requests plain data"
        ) from None
    return orjson.dumps({_TYPED: fields}).decode()


def request_from_json(text: str, spider: Spider | None) -> Request:
    try:
        data: dict[str, Any] = orjson.loads(text)
    except orjson.JSONDecodeError:
        # a row the standard encoder wrote before the typed form existed (NaN, Infinity)
        data = json.loads(text)
    if len(data) == 1 and _TYPED in data:
        data = {key: untagged(value) for key, value in data[_TYPED].items()}
    if _COMPACT_URL in data:
        return _from_compact_form(data, spider)
    data["body"] = data["body"].encode("latin-1")
    data["headers"] = _headers_from_text(data["headers"])
    return request_from_dict(data, spider=spider)


# The compact form: a JSON object with only what differs from `Request(url)` (a GET, no
# body, no cookies, UTF-8, priority 0), under one-letter keys. Scrapy's `to_dict` finds a
# callback's name by walking every member of the spider (`inspect.getmembers`): ~150 us
# a request with the crawl's spider, most of the cost of queuing a link
# (benchmarks/campaign_state.py). The full form keeps "url", the compact one never does.
_COMPACT_URL = "u"
_COMPACT_PRIORITY = "p"
_COMPACT_CALLBACK = "c"
_COMPACT_ERRBACK = "e"
_COMPACT_HEADERS = "h"
_COMPACT_META = "m"
_COMPACT_DONT_FILTER = "d"

#: The one member of a request's text whose compact or full form holds values plain JSON
#: would not give back equal (`corpus_crawler.exact_json`: `inf`, a lone surrogate, a
#: tuple...): the form's members, each `tagged`.
_TYPED = "t"
#: The members of the compact form as errors name them.
_FIELD_NAMES = {_COMPACT_META: "meta", _COMPACT_HEADERS: "headers"}


#: The name each function of a spider is its method by, or None if it is not one
#: (`_spider_method_name`), for one spider.
MethodNames = dict[Any, str | None]


def _compact_form(
    request: Request, spider: Spider | None, method_names: MethodNames | None = None
) -> dict[str, Any] | None:
    """The compact form of `request`, or None when only the full form can hold it."""
    if (
        type(request) is not Request  # a FormRequest, JsonRequest...: its class must be kept
        or request.method != "GET"
        or request.body
        or request.cookies
        or request.encoding != "utf-8"
        or request.flags
        or request.cb_kwargs
    ):
        return None
    data: dict[str, Any] = {_COMPACT_URL: request.url}
    if request.priority:
        data[_COMPACT_PRIORITY] = request.priority
    for key, function in (
        (_COMPACT_CALLBACK, request.callback),
        (_COMPACT_ERRBACK, request.errback),
    ):
        if function is not None:
            name = _spider_method_name(spider, function, method_names)
            if name is None:
                return None
            data[key] = name
    if request.headers:
        data[_COMPACT_HEADERS] = _headers_as_text(request)
    if request.meta:
        data[_COMPACT_META] = request.meta
    if request.dont_filter:
        data[_COMPACT_DONT_FILTER] = True
    return data


def _link_json(request: Request, spider: Spider | None, method_names: MethodNames) -> str | None:
    """The compact form of the commonest request, a link as the spider yields it (a GET
    naming the spider's callback and errback, one Referer header, meta of plain data),
    written as text around a part rendered once per callback pair; None for any other
    request (`_compact_form` then decides). `request_from_json` reads it as any compact
    form. ~1.5 us of CPU a link against ~2 us for the dict and its headers through
    orjson (timeit, one link of the crawl's shape)."""
    if (
        type(request) is not Request
        or request.method != "GET"
        or request.dont_filter
        or request.body
        or request.encoding != "utf-8"
        or request.cookies
        or request.flags
        or request.cb_kwargs
    ):
        return None
    headers = request.headers
    if len(headers) != 1:
        return None
    referers = dict.get(headers, b"Referer")
    if referers is None or len(referers) != 1:
        return None
    callbacks = _callback_pair_json(request.callback, request.errback, spider, method_names)
    if callbacks is None:
        return None
    meta = request.meta
    if meta and not is_plain_json(meta):
        return None  # (`inf`, a tuple...: the typed form)
    try:
        # no lone surrogates, numbers within 64 bits...: anything else goes the longer way
        meta_json = orjson.dumps(meta).decode() if meta else None
    except TypeError:
        return None
    url = request.url
    if not url.isascii():
        return None  # (a verbatim URL kept as given: orjson decides on its characters)
    referer = _json_string(referers[0].decode("latin-1"))
    priority = request.priority
    # (as _compact_form: no "p" for the default 0)
    text = f',"p":{int(priority)}{callbacks}' if priority else callbacks
    text = f'{{"u":{_json_string(url)}{text}'
    if meta_json is None:
        return f'{text},"h":{{"Referer":[{referer}]}}}}'
    return f'{text},"h":{{"Referer":[{referer}]}},"m":{meta_json}}}'


def _callback_pair_json(
    callback: Any, errback: Any, spider: Spider | None, method_names: MethodNames
) -> str | None:
    """The callback and errback members of a compact form (`_link_json`), or None if one
    of them is not a method of `spider`; cached in `method_names` by the pair."""
    pair = (getattr(callback, "__func__", callback), getattr(errback, "__func__", errback))
    try:
        return method_names[pair]
    except KeyError:
        pass
    except TypeError:  # an unhashable callable
        return None
    members = ""
    for key, function in ((_COMPACT_CALLBACK, callback), (_COMPACT_ERRBACK, errback)):
        if function is None:
            continue
        name = _spider_method_name(spider, function, method_names)
        if name is None:
            method_names[pair] = None
            return None
        members += f',"{key}":{_json_string(name)}'
    method_names[pair] = members
    return members


def _spider_method_name(
    spider: Spider | None, function: Any, method_names: MethodNames | None = None
) -> str | None:
    """The name `spider` knows a bound method of its own by (what `to_dict` would find),
    or None if it is anything else (the full form then decides)."""
    underlying = getattr(function, "__func__", None)
    if spider is None or underlying is None:
        return None
    if method_names is None:
        return _find_method_name(spider, function, underlying)
    try:
        return method_names[underlying]
    except KeyError:
        # every link names the same two methods: the lookup below once per spider
        name = method_names[underlying] = _find_method_name(spider, function, underlying)
        return name


def _find_method_name(spider: Spider, function: Any, underlying: Any) -> str | None:
    name = getattr(function, "__name__", "")
    if name.startswith("__"):
        return None  # name-mangled: only to_dict's search finds it
    if getattr(getattr(spider, name, None), "__func__", None) is not underlying:
        return None
    return str(name)


def _from_compact_form(data: dict[str, Any], spider: Spider | None) -> Request:
    callbacks: dict[str, Any] = {}
    for key, argument in ((_COMPACT_CALLBACK, "callback"), (_COMPACT_ERRBACK, "errback")):
        name = data.get(key)
        if name is None:
            continue
        if spider is None:
            raise ValueError(
                f"request {data[_COMPACT_URL]} names {argument} {name!r}: give the spider"
            )
        method = getattr(spider, name, None)
        if method is None:
            raise ValueError(f"Method {name!r} not found in: {spider}")
        callbacks[argument] = method
    return Request(
        data[_COMPACT_URL],
        priority=data.get(_COMPACT_PRIORITY, 0),
        headers=_headers_from_text(data[_COMPACT_HEADERS]) if _COMPACT_HEADERS in data else None,
        meta=data.get(_COMPACT_META),
        dont_filter=data.get(_COMPACT_DONT_FILTER, False),
        **callbacks,
    )


def _full_form(request: Request, spider: Spider | None) -> dict[str, Any]:
    data = request.to_dict(spider=spider)
    data["headers"] = _headers_as_text(request)
    data["body"] = request.body.decode("latin-1")
    return data


def _headers_as_text(request: Request) -> dict[str, list[str]]:
    # the stored lists (Headers.items() builds each list again through getlist); a loop,
    # not nested comprehensions: a link has one header of one value (its Referer)
    text: dict[str, list[str]] = {}
    for key, values in dict.items(request.headers):
        if len(values) == 1:
            text[key.decode("latin-1")] = [values[0].decode("latin-1")]
        else:
            text[key.decode("latin-1")] = [value.decode("latin-1") for value in values]
    return text


def _headers_from_text(headers: dict[str, list[str]]) -> dict[bytes, list[bytes]]:
    return {
        key.encode("latin-1"): [value.encode("latin-1") for value in values]
        for key, values in headers.items()
    }


def verbatim_fingerprint(method: str, url: str, body: bytes) -> bytes:
    """Scrapy's default request fingerprint (`scrapy.utils.request.fingerprint`, no
    headers) of a request whose meta has ``verbatim_url``, byte for byte, without
    building the Request: the seen sets of existing campaigns hold these. Scrapy's
    function costs ~20 us (a Request copy for the seen key, a weak-keyed cache, a JSON
    encoder with sort_keys); the crawl fingerprints every link of every page."""
    if method == "GET" and not body:
        # a link: only the URL varies
        return hashlib.sha1(f"{_PLAIN_GET}{_json_string(url)}}}".encode()).digest()
    text = (
        f'{{"body": {_json_string(body.hex())}, "headers": {{}},'
        f' "method": {_json_string(method)}, "url": {_json_string(url)}}}'
    )
    return hashlib.sha1(text.encode()).digest()


_PLAIN_GET = '{"body": "", "headers": {}, "method": "GET", "url": '


def _link_fingerprint(key: str) -> bytes:
    """`verbatim_fingerprint` of a GET without a body (what `RecentlySeen.key` admits)."""
    return hashlib.sha1(f"{_PLAIN_GET}{_json_string(key)}}}".encode()).digest()


def _link_key(key: str) -> int:
    """The seen set's key of `_link_fingerprint(key)` (`state.fingerprint_key`)."""
    return fingerprint_key(_link_fingerprint(key))


#: The held links of a page as the store's columns (`CampaignStore.enqueue_links`):
#: (seen keys, priorities, budget keys, sites).
LinkColumns = tuple[list[int], list[int], list[str | None], list[str]]


def _link_columns(
    held: list[tuple[Request, str | None, Any]],
    budget_key_of: Callable[[str], str],
    sites_by_origin: dict[str, str],
    fingerprint_key_of: Callable[[Request], int],
) -> LinkColumns:
    """The columns of the held links (request, recent-set key, counts against the
    budgets): the seen key is `_link_key` of the recent-set key, or
    `fingerprint_key_of` the request when it has none. `sites_by_origin`: a cache the
    compiled twin keeps (the budget key depends on the URL's scheme and host alone);
    here `budget_key`'s own cache serves."""
    keys: list[int] = []
    priorities: list[int] = []
    budgets: list[str | None] = []
    sites: list[str] = []
    for request, recent_key, budget in held:
        site = budget_key_of(request.url)
        keys.append(fingerprint_key_of(request) if recent_key is None else _link_key(recent_key))
        priorities.append(request.priority)
        budgets.append(site if budget else None)
        sites.append(site)
    return keys, priorities, budgets, sites


class RecentlySeen:
    """The seen keys of the last few thousand links scheduled, in RAM: a link whose key
    is here has its seen mark in the campaign state already (marks are never removed
    while the process lives), so it is a duplicate without a fingerprint or a query.
    Most links of a page are its site's menu, met on every page of the site.

    Two generations of at most `capacity` keys each (a key met again moves to the
    newer one), so memory is bounded and the menus in use stay. Only plain GETs with
    a verbatim URL and Scrapy's default fingerprinter take part: their fingerprint
    depends on the seen key alone (`verbatim_fingerprint`)."""

    __slots__ = ("_capacity", "_enabled", "_newer", "_older")

    def __init__(self, enabled: bool, capacity: int = 16384) -> None:
        self._enabled = enabled
        self._capacity = capacity
        self._newer: set[str] = set()
        self._older: set[str] = set()

    def key(self, request: Request) -> str | None:
        """The key `request` is remembered by, or None if it cannot take part."""
        if not self._enabled or request.method != "GET" or request.body:
            return None
        if not request.meta.get("verbatim_url"):
            return None
        return seen_key(request.url)

    def __contains__(self, key: str) -> bool:
        if key in self._newer:
            return True
        if key in self._older:
            self.add(key)
            return True
        return False

    def met(self, key: str) -> bool:
        """Whether `key` was met before (`in`); it is remembered from now on either way
        (one call per link instead of two)."""
        if key in self._newer:
            return True
        known = key in self._older
        self.add(key)
        return known

    def add(self, key: str) -> None:
        newer = self._newer
        newer.add(key)
        if len(newer) >= self._capacity:
            self._older = newer
            self._newer = set()


class CampaignScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler, campaign: CampaignExtension) -> None:
        self.crawler = crawler
        self.campaign = campaign
        self.store: CampaignStoreProtocol = campaign.store
        self.settings: CampaignSettings = campaign.settings
        self.fingerprinter = crawler.request_fingerprinter
        #: Scrapy's default fingerprints: a verbatim URL's can be computed without a Request.
        self._scrapy_fingerprints = type(self.fingerprinter) is RequestFingerprinter
        self.stats = crawler.stats
        self.spider: Spider | None = None
        self._leased: deque[tuple[int, str]] = deque()
        self._recent = (
            RecentlySeen(self._scrapy_fingerprints)
            if _fast is None
            else _fast.RecentlySeen(self._scrapy_fingerprints, seen_key=seen_key)
        )
        self._counts: Counter[str] = Counter()
        #: Links and seeds not given to the store yet: (request, its recent-set key,
        #: whether it counts against the page budgets); see `flush`.
        self._held: list[tuple[Request, str | None, Any]] = []
        # The Redis scheduler leases before this class's next_request could flush, and
        # its store takes one round trip per request anyway: it enqueues one at a time.
        self._holding = isinstance(self.store, CampaignStore)
        self._method_names: MethodNames = {}
        #: The budget key of each URL origin met (`_link_columns`).
        self._sites_by_origin: dict[str, str] = {}
        #: The extraction workers' backlog (`PageProcessor.backlog_full`), None without them.
        self._backlog_full: Callable[[], bool] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CampaignScheduler:
        campaign = crawler.get_extension(CampaignExtension)
        if campaign is None:
            raise RuntimeError(
                "pipelines.scheduler.CampaignScheduler needs pipelines.campaign."
                "CampaignExtension in EXTENSIONS (pipelines/settings.py has it)"
            )
        return cls(crawler, campaign)

    def open(self, spider: Spider) -> None:
        from pipelines.extract import PageProcessor

        self.spider = spider
        self._method_names = {}
        self.campaign.before_finish(self.flush)
        processor = self.crawler.get_extension(PageProcessor)
        self._backlog_full = processor.backlog_full if processor is not None else None

    def close(self, reason: str) -> None:
        # before the campaign closes its store (Scrapy closes the scheduler first): the
        # links held back go to the frontier of the next run
        self.flush()
        # Leased requests stay leased in the state: the next run queues them again.
        self._leased.clear()
        self._flush_counts()

    def has_pending_requests(self) -> bool:
        return (
            bool(self._leased)
            or bool(self._held)
            or self.store.queued > 0
            or self._retry_wait() is not None
        )

    def _retry_wait(self) -> float | None:
        """Seconds until the first deferred request is due, if the run waits for it (it is
        due within CORPUS_CAMPAIGN_RETRY_WAIT); None: the run need not wait for one."""
        if self.campaign.writer.deferring:
            # a network failure the writer thread has not deferred (or finished) yet
            return _DEFERRING_POLL
        due = self.store.next_retry
        if due is None:
            return None
        wait = due - time.time()
        return max(0.0, wait) if wait <= self.settings.retry_wait else None

    def _wake_engine_in(self, seconds: float) -> None:
        # Scrapy has no public "call me back" for a scheduler; its engine's own loop
        # (CallLaterOnce: a second schedule before the first fires is a no-op) is it.
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule(max(seconds, 0.005))

    def __len__(self) -> int:
        return len(self._leased) + len(self._held) + self.store.queued

    def enqueue_request(self, request: Request) -> bool:
        meta = request.meta
        if not self._holding or ROW in meta or RECRAWL in meta or request.dont_filter:
            # a follow-up (its parent is finished now), a recrawl, a retry: at once, after
            # the links held before it (the frontier keeps their order)
            self.flush()
            return self._enqueue_now(request)
        # A link or a seed: held until `flush`, so a page's links share one store call.
        # Accepted now; one found a duplicate or over budget there is dropped then (with
        # Scrapy's request_dropped signal, as the engine sends it for a refusal).
        meta.pop(ROW_URL, None)
        budget = meta.pop(BUDGET, None)
        recent_key = self._recent.key(request)
        # its seen mark is set at the flush, before any request is finished
        if recent_key is not None and self._recent.met(recent_key):
            # a link met moments ago (a site's menu on every page): held or marked seen
            self._counts["dupefilter/filtered"] += 1
            return False
        held = self._held
        held.append((request, recent_key, budget))
        if len(held) >= _HELD_LINKS:
            self.flush()
        return True

    def flush(self) -> None:
        """Give the store the links held back, in one call (`CampaignStore.enqueue_links`).
        Called before the frontier is read and before any request is finished (the
        campaign's `before_finish`): a page's links are in the same commit as its end,
        or the page is fetched again, so no link is ever lost."""
        held = self._held
        if not held:
            return
        self._held = []
        spider = self.spider
        method_names = self._method_names
        store = self.store
        assert isinstance(store, CampaignStore)  # (only its scheduler holds links)
        render: Callable[[Request], str]
        if _fast is None:
            keys, priorities, budgets, sites = _link_columns(
                held, budget_key, self._sites_by_origin, self._fingerprint_key
            )
            render = functools.partial(request_to_json, spider=spider, method_names=method_names)
        else:
            keys, priorities, budgets, sites = _fast.link_columns(
                held, budget_key, self._sites_by_origin, self._fingerprint_key
            )
            render = _fast.LinkText(spider, method_names, _callback_pair_json, _request_json)
        try:
            admissions = store.enqueue_links(
                keys,
                [request for request, _, _ in held],
                render,
                priorities,
                budgets,
                sites,
                self.settings.limits,
            )
        except Exception as exc:
            # The store refuses to commit from now on (its writer then stops the crawl
            # as a write failure): no page finished after this is committed without
            # its links, and the next run fetches them again.
            logger.error("cannot queue %d links: %s", len(held), exc)
            return
        counts = self._counts
        queued = admissions.count(Admission.QUEUED)
        if queued:
            counts["scheduler/enqueued/disk"] += queued
            counts["scheduler/enqueued"] += queued
        if queued == len(admissions):
            return
        for (request, _, _), admission in zip(held, admissions, strict=True):
            if admission is Admission.QUEUED:
                continue
            if admission is Admission.DUPLICATE:
                counts["dupefilter/filtered"] += 1
            else:
                counts[f"corpus/links/{admission.value}"] += 1
                if admission is Admission.UNSERIALISABLE:
                    self._log_unserialisable(request)
            self.crawler.signals.send_catch_log(
                signals.request_dropped, request=request, spider=spider
            )

    def _log_unserialisable(self, request: Request) -> None:
        try:
            request_to_json(request, self.spider)
        except (TypeError, ValueError) as exc:
            logger.error("not queued: %s", exc)

    def _enqueue_now(self, request: Request) -> bool:
        meta = request.meta
        parent = meta.pop(ROW, None)
        parent_url = meta.pop(ROW_URL, request.url)
        budget = meta.pop(BUDGET, None)
        # a recrawl of a known URL (spiders/corpus.py): not in the seen set's hands; the
        # mark stays in the meta, so its retries and redirects are known as such
        recrawl = meta.get(RECRAWL)
        if recrawl is not None and parent is not None:
            # a retry or redirect of a recrawl request (queued already, once)
            if recrawl != request.url:
                # redirected: the validators were the old URL's, not this one's
                for header in (b"If-None-Match", b"If-Modified-Since"):
                    request.headers.pop(header, None)
            recrawl = None
        recent_key = None
        if recrawl is not None:
            fingerprint, budget = None, None
        elif request.dont_filter:
            fingerprint = None
        else:
            recent_key = self._recent.key(request)
            if recent_key is not None and recent_key in self._recent:
                # a link seen moments ago (a site's menu on every page): it has its seen mark
                if parent is not None:
                    self._finish_parent(parent, parent_url, request.url)
                self._counts["dupefilter/filtered"] += 1
                return False
            fingerprint = (
                self._fingerprint(request)
                if recent_key is None
                else verbatim_fingerprint(request.method, recent_key, request.body)
            )
        site = budget_key(request.url)
        try:
            admission = self.store.enqueue(
                # serialised only if it is queued: most links of a page were seen before
                lambda: request_to_json(request, self.spider, self._method_names),
                request.priority,
                fingerprint=fingerprint,
                # a redirect or retry of a page does not count against the budget again
                budget=site if budget and parent is None else None,
                limits=self.settings.limits,
                recrawl=recrawl,
                # sites take turns in the leases (CampaignStore.lease)
                site=site,
            )
        except (TypeError, ValueError) as exc:
            # meta that is not plain data (a middleware's object): refused alone, counted
            # and logged as the links of a page are (its seen mark stays, as theirs)
            logger.error("not queued: %s", exc)
            admission = Admission.UNSERIALISABLE
        finally:
            if parent is not None:
                self._finish_parent(parent, parent_url, request.url)
        if recent_key is not None:
            # whatever the admission, the seen mark is set now (enqueue sets it first)
            self._recent.add(recent_key)
        counts = self._counts
        if admission is Admission.QUEUED:
            counts["scheduler/enqueued/disk"] += 1
            counts["scheduler/enqueued"] += 1
            return True
        if admission is Admission.DUPLICATE:
            counts["dupefilter/filtered"] += 1
        else:
            counts[f"corpus/links/{admission.value}"] += 1
        return False

    def _finish_parent(self, parent: Any, parent_url: Any, url: str) -> None:
        outcome = "retried" if parent_url == url else "redirected"
        self.campaign.writer.finish(int(parent), str(parent_url), outcome)

    def _flush_counts(self) -> None:
        # counted here and added to the stats once per lease batch: Scrapy's inc_value
        # costs more than the seen check of a link the recent-URL set knows
        stats = self.stats
        assert stats is not None
        for key, count in self._counts.items():
            stats.inc_value(key, count)
        self._counts.clear()

    def _fingerprint_key(self, request: Request) -> int:
        return fingerprint_key(self._fingerprint(request))

    def _fingerprint(self, request: Request) -> bytes:
        # Session ids do not make a page new (corpus_crawler.traps.seen_key): the
        # request keeps its URL, the seen set remembers it without them.
        key = seen_key(request.url)
        if self._scrapy_fingerprints and request.meta.get("verbatim_url"):
            return verbatim_fingerprint(request.method, key, request.body)
        if key != request.url:
            request = request.replace(url=key)
        return self.fingerprinter.fingerprint(request)

    def next_request(self) -> Request | None:
        # Downloads that outrun the extraction workers would wait in memory, not on disk;
        # the engine asks again as each page is done.
        if self._backlog_full is not None and self._backlog_full():
            return None
        if not self._leased:
            self.flush()
            self._flush_counts()
            self._leased.extend(self.store.lease(self.settings.lease_batch))
            if not self._leased:
                wait = self._retry_wait()
                if wait is not None:
                    # a deferred request falls due soon: lease it then (Scrapy's own
                    # heartbeat ticks every 5 s only)
                    self._wake_engine_in(wait)
                return None
        row, text = self._leased.popleft()
        request = request_from_json(text, self.spider)
        request.meta[ROW] = row
        request.meta[ROW_URL] = request.url
        counts = self._counts
        counts["scheduler/dequeued/disk"] += 1
        counts["scheduler/dequeued"] += 1
        return request

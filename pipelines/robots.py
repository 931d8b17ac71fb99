"""robots.txt within bounds (the first 500 KiB, parsed off the reactor thread), and
fetched once per host for a whole distributed campaign.

A hostile or broken host can serve a robots.txt of many megabytes. Parsed on
the reactor thread, one 10 MB file took ~7 s of CPU and 660 MB of memory, and
every other host of the crawl waited. Google reads the first 500 KiB and
ignores the rest (https://developers.google.com/search/docs/crawling-indexing/
robots/robots_txt#file-format); so does this middleware, and it parses that
prefix in the reactor's thread pool, so the reactor keeps serving other hosts.
Only a 2xx body holds rules: a 4xx means "allow all" (`corpus_crawler.redis_robots`
says why for each status).

A robots.txt that stays unreachable after Scrapy's retries (5xx, 429, or no response:
DNS, refused, timeout) means "complete disallow" for now, as RFC 9309 section 2.3.1.4
asks: with ``politeness.robots_unreachable: defer`` (the default) the page that needed
it is refused with `RobotsTxtUnreachable`, which the campaign *defers* like a page
that got no response (`corpus_crawler.retries`), and so is every other page of the
host until the robots.txt is fetched again, no sooner than `CORPUS_ROBOTS_ERROR_TTL`
(10 minutes). A later run that gets the file obeys it; a page whose deferred attempts
run out is dropped as ``robots-unreachable``. Scrapy's answer, "allow all", is
``robots_unreachable: allow``: a server that cannot serve its robots.txt is often
one in trouble, and crawling it on regardless is what the RFC forbids.

In a distributed crawl (`crawl --redis`) the robots.txt of a host is fetched by the
first process that needs it and shared through Redis (`corpus_crawler.redis_robots`):
the others wait for it and parse the stored copy, so the site sees one request for
it, and only the fetching process archives the exchange (WarcCaptureMiddleware sees
only downloads). The entry is published by the commit that covers the capture, so a
`kill -9` in between leaves no entry without its archived exchange. The fetch runs
while this process holds the lease of the page that needed it, and the Redis host
schedule holds the host for every process from that lease to the page's response: it
is inside the campaign's global politeness, and the host rests for the delay after
the robots.txt response before that page goes.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK
from scrapy.robotstxt import RobotParser
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall, deferLater
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from corpus_crawler.redis_robots import (
    NO_RESPONSE,
    REFUSED,
    Claimed,
    RobotsEntry,
    SharedRobotsConfig,
    SharedRobotsTxt,
    Wait,
    rules_body,
    unreachable,
)
from corpus_crawler.redis_state import RedisCampaignStore
from corpus_crawler.retries import TRANSIENT_ERRORS
from corpus_crawler.sitemaps import ROBOTS_TXT_MAX_BYTES
from pipelines.writer import OutputWriter

__all__ = [
    "ROBOTS_UNREACHABLE_POLICIES",
    "BoundedRobotsTxtMiddleware",
    "RobotsTxtUnreachable",
    "robots_unreachable_policy",
    "shared_robots_config",
]

logger = logging.getLogger(__name__)

#: Seconds between two looks at Redis while another process fetches a robots.txt
#: (first and longest): the wait is one download, usually well under a second.
_POLL_FIRST, _POLL_MAX = 0.05, 1.0
#: Redirect hops followed for a robots.txt: RFC 9309 (2.3.1.2) asks for at least five,
#: Google follows five. Scrapy's page limit (REDIRECT_MAX_TIMES, 20) let a robots.txt
#: that redirects to itself cost its host 21 requests before the first page.
ROBOTS_MAX_REDIRECTS = 5


def shared_robots_config(settings: BaseSettings) -> SharedRobotsConfig:
    """CORPUS_ROBOTS_TTL, _ERROR_TTL, _CLAIM_TIMEOUT (default: the lease timeout, the
    campaign's one notion of "silent for so long, presumed dead") and _MAX_BYTES."""
    lease_timeout = settings.getfloat("CORPUS_DISTRIBUTED_LEASE_TIMEOUT", 30.0)
    try:
        return SharedRobotsConfig(
            ttl=settings.getfloat("CORPUS_ROBOTS_TTL", 86400.0),
            error_ttl=settings.getfloat("CORPUS_ROBOTS_ERROR_TTL", 600.0),
            claim_timeout=settings.getfloat("CORPUS_ROBOTS_CLAIM_TIMEOUT", lease_timeout),
            max_bytes=settings.getint("CORPUS_ROBOTS_MAX_BYTES", ROBOTS_TXT_MAX_BYTES),
        )
    except ValueError as exc:
        raise ValueError(
            f"{exc}: fix CORPUS_ROBOTS_TTL / CORPUS_ROBOTS_ERROR_TTL / CORPUS_ROBOTS_CLAIM_TIMEOUT"
            " (or distributed.robots_txt_ttl in the profile)"
        ) from None


#: What `politeness.robots_unreachable` (CORPUS_ROBOTS_UNREACHABLE) may say.
ROBOTS_UNREACHABLE_POLICIES = ("defer", "allow")


def robots_unreachable_policy(settings: BaseSettings) -> str:
    """CORPUS_ROBOTS_UNREACHABLE: ``defer`` (default) or ``allow``."""
    policy = str(settings.get("CORPUS_ROBOTS_UNREACHABLE") or "defer").strip().lower()
    if policy not in ROBOTS_UNREACHABLE_POLICIES:
        raise ValueError(
            f"CORPUS_ROBOTS_UNREACHABLE (politeness.robots_unreachable) must be one of"
            f" {', '.join(ROBOTS_UNREACHABLE_POLICIES)}, got {policy!r}"
        )
    return policy


class RobotsTxtUnreachable(IgnoreRequest):
    """A page not fetched because its host's robots.txt answered 5xx or 429, or not at
    all: the campaign defers it (`corpus_crawler.retries.ROBOTS_UNREACHABLE`)."""


class _Unreachable(RobotParser):
    """The "rules" of a host whose robots.txt is unreachable: nothing is allowed
    (RFC 9309 2.3.1.4); `process_request_2` defers the page instead of refusing it."""

    def __init__(self, status: int) -> None:
        #: HTTP status of the last answer; 0: no response.
        self.status = status

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> _Unreachable:
        raise TypeError("made by BoundedRobotsTxtMiddleware, not from a body")

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return False


#: Failures to fetch a robots.txt that are the network's answer, not a bug: Scrapy's
#: middleware logs each with a traceback of ~60 lines (a seed list with a few dead
#: hosts filled the terminal); the one-line message says all there is.
_NETWORK_FAILURES = (
    DownloadConnectionRefusedError,
    CannotResolveHostError,
    DownloadTimeoutError,
    DownloadFailedError,
    ResponseDataLossError,
)


class _NetworkFailureWithoutTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], _NETWORK_FAILURES):
            record.exc_info = None
            record.exc_text = None
        return True


_ROBOTS_LOG_FILTER = _NetworkFailureWithoutTraceback()


@dataclass(slots=True)
class _Known:
    """A host's rules in this process: the parser (None: allow all) until `expires`."""

    parser: RobotParser | None
    #: time.monotonic() after which the shared entry is looked up again.
    expires: float


class BoundedRobotsTxtMiddleware(RobotsTxtMiddleware):
    """Scrapy's RobotsTxtMiddleware, reading at most `CORPUS_ROBOTS_MAX_BYTES` in a thread;
    in a distributed crawl, one fetch per host for the campaign (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # Scrapy's own logger (the filter is kept once, whatever the number of crawlers)
        logging.getLogger("scrapy.downloadermiddlewares.robotstxt").addFilter(_ROBOTS_LOG_FILTER)
        self.max_bytes = crawler.settings.getint("CORPUS_ROBOTS_MAX_BYTES", ROBOTS_TXT_MAX_BYTES)
        #: An unreachable robots.txt defers its host's pages (else: allow all).
        self._defer = robots_unreachable_policy(crawler.settings) == "defer"
        #: Seconds before an unreachable robots.txt is fetched again.
        self._error_ttl = shared_robots_config(crawler.settings).error_ttl
        #: netloc -> time.monotonic() until which its unreachable robots.txt is obeyed.
        self._unreachable_until: dict[str, float] = {}
        self._shared: SharedRobotsTxt | None = None
        #: Seconds a host rests after a response (the profile's delay).
        self._rest = max(0.0, crawler.settings.getfloat("DOWNLOAD_DELAY", 0.0))
        #: netloc -> rules known here, or the requests waiting for a lookup under way.
        self._known: dict[str, _Known | list[Deferred[RobotParser | None]]] = {}
        #: The writer whose commit publishes a fetched entry with its capture.
        self._writer: OutputWriter | None = None
        self._store: RedisCampaignStore | None = None
        from pipelines.campaign import CampaignExtension

        campaign = crawler.get_extension(CampaignExtension)
        store = campaign.store if campaign is not None else None
        if isinstance(store, RedisCampaignStore):
            assert campaign is not None
            self._shared = SharedRobotsTxt(store, shared_robots_config(crawler.settings))
            self._store = store
            self._writer = campaign.writer

    async def process_request(self, request: Request, spider: Any = None) -> None:
        if request.meta.get("dont_obey_robotstxt") and urlparse_cached(request).path == (
            "/robots.txt"
        ):
            # A redirected hop keeps the ttl its source had left (RedirectMiddleware).
            request.meta.setdefault("redirect_ttl", ROBOTS_MAX_REDIRECTS)
        await super().process_request(request)

    def process_request_2(self, rp: RobotParser | None, request: Request) -> None:
        if isinstance(rp, _Unreachable):
            self._stats.inc_value("corpus/robots/unreachable/deferred")
            if rp.status == NO_RESPONSE:  # a sign of a network down (cli's exit code 6)
                self._stats.inc_value("corpus/robots/unreachable/no_response")
            answer = f"HTTP {rp.status}" if rp.status != NO_RESPONSE else "no response"
            raise RobotsTxtUnreachable(
                f"robots.txt unreachable ({answer}), deferred: {request.url}"
            )
        super().process_request_2(rp, request)

    def _unreachable(self, netloc: str, status: int) -> _Unreachable:
        """The host's pages wait until its robots.txt answers (one warning a lookup)."""
        self._stats.inc_value("corpus/robots/unreachable/answers")
        answer = f"answered {status}" if status != NO_RESPONSE else "got no response"
        logger.warning(
            "robots.txt of %s %s: its pages are deferred (RFC 9309 2.3.1.4;"
            " politeness.robots_unreachable: allow crawls them regardless)",
            netloc,
            answer,
        )
        return _Unreachable(status)

    # -- one process (Scrapy's flow, with the bounded parse) -------------------------------

    async def _local_robot_parser(self, request: Request) -> RobotParser | None:
        """Scrapy's lookup, but every request that waits for a robots.txt being fetched
        gets the parser. Scrapy (2.13-2.19) has them all await the one Deferred through
        `Deferred.asFuture`, which leaves it firing None for the next: under the asyncio
        reactor only the first waiter had the rules and the others were let through as
        if the host had no robots.txt. A fresh crawl rarely has two waiters; a resume,
        or a seed list of many pages of one host, has dozens, and fetched disallowed
        pages (the demo site's /private/draft.html)."""
        netloc = urlparse_cached(request).netloc
        until = self._unreachable_until.get(netloc)
        if until is not None and time.monotonic() >= until:
            # the error TTL is over: the next page of the host fetches it again
            del self._unreachable_until[netloc]
            self._parsers.pop(netloc, None)
        pending = self._parsers.get(netloc)
        if not isinstance(pending, Deferred):
            return await super().robot_parser(request)
        waiter: Deferred[RobotParser | None] = Deferred()

        def relay(result: Any) -> Any:
            waiter.callback(None if isinstance(result, Failure) else result)
            return result  # the next waiter sees the parser too

        pending.addBoth(relay)
        return await maybe_deferred_to_future(waiter)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        parser: RobotParser
        if self._defer and unreachable(response.status):
            self._count_response(response.status)
            parser = self._unreachable_locally(netloc, response.status)
        else:
            parser = await self._parse_response(response, request)
        self._settle(netloc, parser)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        # a refusal of ours (IgnoreRequest: address, scope) or a bug: Scrapy's "allow all"
        # (the page meets the same refusal); the network's failure: unreachable
        if not self._defer or type(exc).__name__ not in TRANSIENT_ERRORS:
            super()._robots_error(exc, netloc)
            return
        self._stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
        self._settle(netloc, self._unreachable_locally(netloc, NO_RESPONSE))

    def _unreachable_locally(self, netloc: str, status: int) -> _Unreachable:
        self._unreachable_until[netloc] = time.monotonic() + self._error_ttl
        return self._unreachable(netloc, status)

    def _settle(self, netloc: str, parser: RobotParser) -> None:
        waiting = self._parsers[netloc]
        self._parsers[netloc] = parser
        if isinstance(waiting, Deferred):
            waiting.callback(parser)

    def _count_response(self, status: int) -> None:
        self._stats.inc_value("robotstxt/response_count")
        self._stats.inc_value(f"robotstxt/response_status_count/{status}")

    async def _parse_response(self, response: Response, request: Request) -> RobotParser:
        self._count_response(response.status)
        body, truncated = rules_body(response.status, response.body, self.max_bytes)
        if truncated:
            self._stats.inc_value("corpus/robots/truncated")
        return await self._parse(body, request)

    async def _parse(self, body: bytes, request: Request) -> RobotParser:
        parser = await maybe_deferred_to_future(
            deferToThread(build_from_crawler, self._parserimpl, self.crawler, body)
        )
        await self.crawler.signals.send_catch_log_async(
            signal=signals.robots_parsed, robotparser=parser, request=request
        )
        return parser

    # -- a distributed campaign ------------------------------------------------------------

    async def robot_parser(self, request: Request) -> RobotParser | None:
        if self._shared is None:
            return await self._local_robot_parser(request)
        netloc = urlparse_cached(request).netloc
        known = self._known.get(netloc)
        if isinstance(known, list):  # another request of this host is looking it up
            waiter: Deferred[RobotParser | None] = Deferred()
            known.append(waiter)
            return await maybe_deferred_to_future(waiter)
        if known is not None and time.monotonic() < known.expires:
            return known.parser
        waiters: list[Deferred[RobotParser | None]] = []
        self._known[netloc] = waiters
        parser: RobotParser | None = None
        expires = time.monotonic()  # on an error: looked up again by the next request
        try:
            entry = await self._shared_entry(self._shared, request, netloc)
            expires += entry.expires_in
            if self._defer and entry.unreachable:
                # obeyed for as long as the entry lives (the error TTL): every process
                # defers the host's pages until one fetches the file again
                parser = self._unreachable(netloc, entry.status)
            else:
                parser = await self._parse(entry.body, request)
        except Exception:
            # Redis gone for longer than the retry timeout, or a parser bug: Scrapy's own
            # answer to a robots.txt it could not get is "allow all"; say so loudly
            logger.exception("robots.txt of %s could not be shared: allowing all", netloc)
            self._stats.inc_value("corpus/robots/shared/errors")
        finally:
            # also when cancelled (the crawl stops): no request of this host waits for ever
            self._known[netloc] = _Known(parser, expires)
            for waiter in waiters:
                waiter.callback(parser)
        return parser

    async def _shared_entry(
        self, shared: SharedRobotsTxt, request: Request, netloc: str
    ) -> RobotsEntry:
        stats = self._stats
        poll = _POLL_FIRST
        waited = False
        while True:
            found = await maybe_deferred_to_future(deferToThread(shared.look_up_or_claim, netloc))
            if isinstance(found, RobotsEntry):
                stats.inc_value("corpus/robots/shared/read")
                return found
            if isinstance(found, Claimed):
                if waited:
                    # the entry is not there and the claim was free: its holder died
                    logger.warning(
                        "robots.txt of %s: the process fetching it went silent for the"
                        " claim timeout; fetching it here",
                        netloc,
                    )
                    stats.inc_value("corpus/robots/shared/claims_taken_over")
                return await self._fetch_and_publish(shared, request, netloc, found)
            assert isinstance(found, Wait)
            if not waited:
                stats.inc_value("corpus/robots/shared/waited")
                waited = True
            from twisted.internet import reactor  # the one Scrapy installed, at run time

            pause = min(poll, max(found.claim_left, _POLL_FIRST))
            await maybe_deferred_to_future(deferLater(reactor, pause, lambda: None))
            poll = min(poll * 2, _POLL_MAX)

    async def _fetch_and_publish(
        self, shared: SharedRobotsTxt, request: Request, netloc: str, claim: Claimed
    ) -> RobotsEntry:
        url = urlparse_cached(request)
        robots_request = Request(
            f"{url.scheme}://{url.netloc}/robots.txt",
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True},
            callback=NO_CALLBACK,
        )
        # renewed while the download runs (a slow host, retries) and until the entry is
        # published: only a dead process lets its claim expire
        published = threading.Event()

        def renew() -> Deferred[bool] | None:
            if published.is_set():
                renewal.stop()
                return None
            return deferToThread(shared.renew, netloc, claim)

        renewal = LoopingCall(renew)
        renewal.start(shared.config.claim_timeout / 3, now=False).addErrback(
            lambda failure: logger.warning("robots.txt claim renewal: %s", failure.value)
        )
        status, body = NO_RESPONSE, b""
        try:
            response = await self.crawler.engine.download_async(robots_request)
            status, body = response.status, response.body
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{status}")
        except Exception as exc:
            if not isinstance(exc, IgnoreRequest):
                logger.error("Error downloading %s: %s", robots_request, exc)
                self._stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
            if type(exc).__name__ not in TRANSIENT_ERRORS:
                # a refusal of ours (address, scope: the page meets it too) or a bug,
                # not the host's trouble: allow all, as in one process
                status = REFUSED
        except BaseException:  # cancelled (the crawl stops): nothing will be published
            if renewal.running:
                renewal.stop()
            raise
        finally:
            self._stats.inc_value("robotstxt/request_count")
        writer, store = self._writer, self._store
        if writer is None or store is None:
            entry = await maybe_deferred_to_future(
                deferToThread(shared.publish, netloc, claim, status, body)
            )
            published.set()
        else:
            # The capture went to the writer's queue when the response passed
            # WarcCaptureMiddleware; queued after it, the entry is published by the
            # commit that covers it (a kill -9 before that commit publishes nothing and
            # another process archives the file: redis_robots' docstring). This
            # process obeys the rules at once: what it fetches by them is in the same
            # uncommitted output.
            publication = shared.publication(netloc, claim, status, body)
            writer.after_writes(
                lambda: store.publish_robots_with_commit(publication, published.set)
            )
            entry = shared.entry_of(publication, time.time())
        if renewal.running and published.is_set():
            renewal.stop()
        self._stats.inc_value("corpus/robots/shared/fetched")
        if entry.truncated:
            self._stats.inc_value("corpus/robots/truncated")
        if self._rest > 0:
            # the host rests after this response as after a page's (the Redis schedule's
            # rule): Scrapy's slot spaces the two starts, but the first, on a new
            # connection, reaches the server later than the page sent on the kept one
            from twisted.internet import reactor

            await maybe_deferred_to_future(deferLater(reactor, self._rest, lambda: None))
        return entry

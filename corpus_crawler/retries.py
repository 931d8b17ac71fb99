"""Deferred retries: a request that got no response at all is tried again in a later run.

Scrapy's RetryMiddleware retries a failed download a few times within seconds
(`limits.retry_times`); a site that is down for ten minutes, or a machine whose
network is down, outlasts that. Such a request is then *deferred* rather than
finished: its frontier row stays, with an attempt count and a time before which
it is not leased again, a delay that doubles with each attempt (as Heritrix's
retry delay does). After the last deferred attempt it is finished as a failure.

Only transient network errors are deferred: no response at all (DNS, connection
refused, reset or timed out, download timeout, response never received). A
refusal on purpose (robots.txt, scope, addresses, the size cap) is never one, and
neither is a response cut short (``dropped:disconnected``): its exchange is in
the WARC already, and a retry would archive the URL a second time.

A page whose host's robots.txt is unreachable (5xx, 429 or no response, after
Scrapy's retries) is deferred the same way, not fetched (`ROBOTS_UNREACHABLE`;
RFC 9309 section 2.3.1.4 asks for "complete disallow" then, and a crawler that
retries later is what Google does). Once its attempts are used up it is dropped
with `DropReason.ROBOTS_UNREACHABLE`. Each deferral is a crawl log line
``deferred:<reason>`` (`deferral_reason`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .model import DropReason

__all__ = [
    "DEFERRED",
    "NETWORK",
    "ROBOTS_UNREACHABLE",
    "TRANSIENT_ERRORS",
    "WAIT_BOUND",
    "RetryPolicy",
    "deferral_reason",
    "exhausted_outcome",
    "is_transient",
    "pending_note",
]

#: The outcome a deferred request is counted under (``requests/deferred``).
DEFERRED = "deferred"

#: The deferral reason of a request that got no response (``deferred:network``).
NETWORK = "network"

#: The outcome of a page not fetched because its host's robots.txt is unreachable
#: (`pipelines.robots.RobotsTxtUnreachable`, ``politeness.robots_unreachable: defer``).
ROBOTS_UNREACHABLE = "failed:RobotsTxtUnreachable"

#: Exception class names (``failed:<name>``, `spiders/corpus.py`) of a request that got
#: no response because the network or the server was not there: Scrapy's download
#: errors (2.13+: CannotResolveHostError, DownloadConnectionRefusedError,
#: DownloadFailedError, DownloadTimeoutError, ResponseDataLossError; a body cut short
#: after its headers is archived as truncated by `pipelines.download` and never gets
#: here), and the Twisted errors they wrap, which other download handlers raise.
TRANSIENT_ERRORS = frozenset(
    {
        "CannotResolveHostError",
        "DownloadConnectionRefusedError",
        "DownloadFailedError",
        "DownloadTimeoutError",
        "ResponseDataLossError",
        "DNSLookupError",
        "ConnectError",
        "ConnectionRefusedError",
        "ConnectionLost",
        "ConnectionDone",
        "ConnectionAborted",
        "ConnectionResetError",
        "ConnectingCancelledError",
        "NoRouteError",
        "TCPTimedOutError",
        "TimeoutError",
        "ResponseNeverReceived",
        "ResponseFailed",
    }
)

#: Seconds a run waits for a deferred request when nothing else is left to fetch: one
#: due later ends the run, and the next run of the campaign (the same command, from
#: cron) leases it once its time has come. A minute keeps a short outage within one
#: run without holding a finished run open for the default 10-minute delay.
WAIT_BOUND = 60.0


def is_transient(outcome: str) -> bool:
    """Whether a request's outcome is a network failure that a later attempt may not meet."""
    kind, _, error = outcome.partition(":")
    return kind == "failed" and error in TRANSIENT_ERRORS


def deferral_reason(outcome: str) -> str | None:
    """Why a request with this outcome waits for a later attempt (``network``,
    ``robots-unreachable``); None: its outcome is final."""
    if is_transient(outcome):
        return NETWORK
    if outcome == ROBOTS_UNREACHABLE:
        return str(DropReason.ROBOTS_UNREACHABLE)
    return None


def exhausted_outcome(outcome: str) -> str:
    """What a deferrable outcome is finished as once no attempt is left: a network
    failure stays ``failed:<error>``; a page never fetched for its robots.txt is a drop."""
    if outcome == ROBOTS_UNREACHABLE:
        return f"dropped:{DropReason.ROBOTS_UNREACHABLE}"
    return outcome


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and when a request that failed with a network error is tried again."""

    #: Deferred attempts after the first failure; 0: finished at once (no deferral).
    retries: int = 0
    #: Seconds before the first deferred attempt; each further one waits twice as long.
    delay: float = 600.0

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError(f"deferred retries must be 0 or more, got {self.retries}")
        if not self.delay >= 0:
            raise ValueError(f"the retry delay must be 0 or more seconds, got {self.delay}")

    def delay_for(self, attempt: int) -> float:
        """Seconds before deferred attempt `attempt` (1, 2, ...): delay, 2 x delay, 4 x..."""
        return self.delay * 2 ** max(0, attempt - 1)


def pending_note(count: int, first_due: float, now: float) -> str:
    """What a user reads about the deferred requests at the end of a run."""
    due = datetime.fromtimestamp(first_due).astimezone()
    soon = first_due - now < 20 * 3600
    moment = due.strftime("%H:%M" if soon else "%Y-%m-%d %H:%M")
    one = count == 1
    urls = "1 URL" if one else f"{count:,} URLs"
    why = "a network error" if one else "network errors"
    waits = f"{urls} {'waits' if one else 'wait'} for a retry ({why} or an unreachable robots.txt)"
    if first_due <= now:
        return f"{waits}, due now: run the same command"
    return f"{waits}, the first at {moment}: run the same command then"

"""Incremental recrawls: is a capture new, changed or unchanged, and when is it due again.

Pure functions over plain values; `corpus_crawler.state` stores what they decide
(per URL: validators, payload digest, the WARC record of the last full capture,
the revisit interval and the next due time) and the WARC capture middleware asks
`decide` once per exchange whether it is archived as a ``response`` or as a
``revisit`` (`corpus_crawler.warc.RevisitProfile`).

Revisit intervals adapt per URL as in Heritrix's WaitEvaluator and Nutch's
AdaptiveFetchSchedule: a page that changed is visited again sooner (interval
halved), one that did not later (interval x1.5), within the profile's bounds
(``schedule:`` min_interval / max_interval; a new URL starts at initial_interval).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import datetime

from .warc import RevisitProfile

__all__ = [
    "Change",
    "Decision",
    "PreviousCapture",
    "Schedule",
    "decide",
    "next_interval",
    "parse_interval",
]

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_interval(value: object, where: str) -> float:
    """Seconds from ``"12h"``, ``"1.5d"``, ``"30m"``, ``"2w"``, ``"45s"`` or a number of hours.

    `where` names the key in the error message (``schedule.min_interval in x.yaml``).
    """
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected a duration such as 12h or 2d, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value) * 3600.0
    else:
        match = _INTERVAL.match(str(value))
        if match is None:
            raise ValueError(
                f"{where}: expected a duration such as 45s, 30m, 12h, 2d or 1w, got {value!r}"
            )
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds < 0:
        raise ValueError(f"{where}: a duration cannot be negative, got {value!r}")
    return seconds


@dataclass(frozen=True, slots=True)
class Schedule:
    """Bounds of the per-URL revisit intervals, in seconds."""

    min_interval: float = 3600.0
    max_interval: float = 30 * 86400.0
    initial_interval: float = 86400.0

    def checked(self, where: str = "schedule") -> Schedule:
        if self.min_interval > self.max_interval:
            raise ValueError(
                f"{where}: min_interval ({self.min_interval:g} s) is longer than max_interval"
                f" ({self.max_interval:g} s); make min_interval the shorter one"
            )
        return self


class Change(enum.Enum):
    """What a capture says about its URL, compared with the URL's last capture."""

    NEW = "new"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    #: 404/410 or a failed fetch of a URL that answered 200 before.
    GONE = "gone"
    #: Anything else (redirects, errors): archived, not tracked.
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


#: The outcomes of a URL that had content at its last capture.
LIVE = frozenset({Change.NEW.value, Change.CHANGED.value, Change.UNCHANGED.value})


@dataclass(frozen=True, slots=True)
class PreviousCapture:
    """The last full capture of a payload (of a URL, or of any URL with that digest)."""

    record_id: str
    target_uri: str
    date: datetime
    digest: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    interval: float | None = None
    outcome: str = Change.NEW.value


@dataclass(frozen=True, slots=True)
class Decision:
    change: Change
    #: None: a full ``response`` record.
    revisit: RevisitProfile | None = None
    refers_to: PreviousCapture | None = None
    digest: str | None = None


def decide(
    status: int,
    digest: str | None,
    previous: PreviousCapture | None,
    same_payload: PreviousCapture | None,
) -> Decision:
    """Response or revisit, and what changed.

    `digest`: `payload_digest` of the payload of a complete 2xx response (None for
    other statuses and for a truncated body, which is never a revisit);
    `previous`: the URL's last full capture; `same_payload`: the first capture in
    the campaign of any URL with that payload digest.
    """
    if status == 304:
        if previous is not None:
            return Decision(Change.UNCHANGED, RevisitProfile.SERVER_NOT_MODIFIED, previous)
        return Decision(Change.OTHER)  # a 304 we did not ask for: archive it as it came
    if status in (404, 410):
        gone = previous is not None and previous.outcome in LIVE
        return Decision(Change.GONE if gone else Change.OTHER)
    if not 200 <= status < 300 or digest is None:
        return Decision(Change.OTHER)
    change = Change.NEW if previous is None else Change.CHANGED
    if previous is not None and previous.digest == digest:
        if previous.outcome in LIVE:
            return Decision(
                Change.UNCHANGED, RevisitProfile.IDENTICAL_PAYLOAD_DIGEST, previous, digest
            )
        change = Change.CHANGED  # back after being gone
    if same_payload is not None:
        return Decision(change, RevisitProfile.IDENTICAL_PAYLOAD_DIGEST, same_payload, digest)
    return Decision(change, None, None, digest)


def next_interval(previous: float | None, change: Change, schedule: Schedule) -> float:
    """The URL's next revisit interval in seconds (see the module docstring)."""
    if previous is None:
        interval = schedule.initial_interval
    elif change is Change.CHANGED:
        interval = previous / 2
    elif change in (Change.UNCHANGED, Change.GONE):
        interval = previous * 1.5
    else:
        interval = previous
    return min(schedule.max_interval, max(schedule.min_interval, interval))

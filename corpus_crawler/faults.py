"""Kill points for the crash tests: a real ``kill -9`` at an exact moment of a crawl.

Set ``CORPUS_CRAWLER_KILL_AT=POINT[:N]`` in a crawl's environment and the process
that reaches the named point for the N-th time (default: the first) writes one
line to stderr (``corpus-crawler: kill point POINT reached, SIGKILL``) and
sends SIGKILL to itself: no exception, no cleanup, no flush, exactly what a
``kill -9`` from outside leaves, but at a moment the test chose instead of one
the scheduler chose. For tests only; a crawl never sets it.

The variable is read once, at import. Unset, `reached` is one test of a
module global: nothing measurable on the paths it sits on. The points (where
they are, and what a kill there leaves behind) are listed in `POINTS`; a name
not in it is an error at import, so a typo cannot make a test pass by never
killing. `due` and `kill` split `reached` for a point that must do something
between the decision and the kill (write half a record, wait for a commit).
"""

from __future__ import annotations

import os
import signal
from typing import NoReturn

__all__ = ["ENV_VAR", "POINTS", "KillPlan", "armed", "due", "kill", "parse", "reached"]

ENV_VAR = "CORPUS_CRAWLER_KILL_AT"

#: Every kill point, with the state a kill there leaves (all in the crawl process).
POINTS: dict[str, str] = {
    "dedup.rows_written": (
        "the dedup thread has written a kept document's rows into the campaign's open"
        " transaction, the rows of the documents kept before it committed (it kills"
        " holding the connection: these rows are not)"
    ),
    "dedup.rows_committed": (
        "a kept document's dedup rows are committed by the campaign, its document not"
        " yet handed to the writer (the page is fetched again: it must be kept as itself)"
    ),
    "dedup.journal_applied": (
        "committed n-grams were added to the paragraph filter file, their journal rows"
        " not yet deleted"
    ),
    "writer.mid_document": (
        "the writer thread has appended a document to the prevertical, not yet to the"
        " vertical (the request's other records as far as they came before)"
    ),
    "writer.request_written": (
        "every record of a finished request (its WARC exchange, its document in every"
        " corpus file) is written, the request not yet marked done nor committed: bytes"
        " beyond the committed lengths"
    ),
    "writer.committed": (
        "the campaign has committed the files' lengths with the requests done (a commit"
        " that holds new documents); the writer has written nothing after it"
    ),
    "vertical.torn_document": (
        "half of a document's bytes are in a (pre)vertical file, flushed: a torn tail"
        " beyond the committed length"
    ),
}


class KillPlan:
    """Kill at the `nth` time `point` is reached."""

    __slots__ = ("nth", "point", "seen")

    def __init__(self, point: str, nth: int) -> None:
        self.point = point
        self.nth = nth
        self.seen = 0


def parse(value: str | None) -> KillPlan | None:
    """The plan a ``POINT[:N]`` value asks for; None for no value. ValueError when bad."""
    if not value:
        return None
    point, _, count = value.partition(":")
    if point not in POINTS:
        raise ValueError(
            f"{ENV_VAR}={value!r}: no such kill point (known: {', '.join(sorted(POINTS))})"
        )
    nth = int(count) if count else 1
    if nth < 1:
        raise ValueError(f"{ENV_VAR}={value!r}: the count must be 1 or more")
    return KillPlan(point, nth)


_PLAN: KillPlan | None = parse(os.environ.get(ENV_VAR))


def armed(point: str) -> bool:
    """Whether the plan kills at `point` (some time): for a point whose condition costs
    something to compute, computed only then."""
    plan = _PLAN
    return plan is not None and plan.point == point


def due(point: str) -> bool:
    """`point` is reached: True when this is the time the plan kills at (the caller
    then leaves what it must, a torn write say, and calls `kill`). Unset: False at
    the cost of one global test."""
    plan = _PLAN
    if plan is None or plan.point != point:
        return False
    plan.seen += 1  # each point is reached on one thread only: no race on the count
    return plan.seen == plan.nth


def kill(point: str) -> NoReturn:
    """Say so on stderr (fd 2, unbuffered), then SIGKILL this process."""
    os.write(2, f"corpus-crawler: kill point {point} reached, SIGKILL\n".encode())
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable: SIGKILL cannot be caught")  # pragma: no cover


def reached(point: str) -> None:
    """`point` is reached: SIGKILL this process if it is the time the plan says."""
    if due(point):
        kill(point)

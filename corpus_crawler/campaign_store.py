"""What the crawl asks of a campaign store: the seam between the Scrapy side and the state.

Two stores fit it: `corpus_crawler.state.CampaignStore` (one SQLite file, one process)
and `corpus_crawler.redis_state.RedisCampaignStore` (a campaign shared by any number
of processes through Redis). The scheduler, the campaign extension, the writer and
the capture middleware see only this protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from .recrawl import Decision, PreviousCapture
from .state import Admission, BudgetLimits, QueueEntry

__all__ = ["CampaignStoreProtocol"]


class CampaignStoreProtocol(Protocol):
    @property
    def resumed(self) -> bool: ...
    @property
    def run(self) -> int: ...
    @property
    def requeued(self) -> int: ...
    @property
    def queued(self) -> int: ...
    @property
    def changed(self) -> bool: ...

    def in_frontier(self) -> int: ...
    def committed_files(self) -> dict[str, int]: ...
    def counters(self) -> dict[str, int]: ...
    def get_meta(self, key: str) -> Any: ...
    def set_meta(self, key: str, value: Any) -> None: ...

    def enqueue(
        self,
        request: str | Callable[[], str],
        priority: int,
        *,
        fingerprint: bytes | None,
        budget: str | None = None,
        limits: BudgetLimits = ...,
        recrawl: str | None = None,
        site: str = "",
    ) -> Admission: ...

    def enqueue_many(
        self, entries: Sequence[QueueEntry], limits: BudgetLimits = ...
    ) -> list[Admission]: ...

    def lease(self, count: int) -> list[tuple[int, str]]: ...
    def finish(self, row: int, url: str, outcome: str) -> bool: ...

    def previous_capture(self, url: str) -> PreviousCapture | None: ...
    def payload_capture(self, digest: str) -> PreviousCapture | None: ...
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
    ) -> None: ...
    def due_urls(
        self, now: float | None = None, batch: int = 1000
    ) -> Iterator[tuple[str, str | None, str | None, int]]: ...

    def count(self, counts: Mapping[str, int]) -> None: ...
    def commit(
        self, file_lengths: Mapping[str, int], *, fsync_files: Iterable[Path] = ()
    ) -> None: ...
    def close(self, reason: str | None = None) -> None: ...
    def abandon(self) -> None: ...

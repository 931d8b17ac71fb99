from collections.abc import Callable
from typing import Any

from scrapy import Request, Spider

READS_SLOTS: bool

def link_key(seen_url: str) -> int: ...
def plain_json(value: object) -> bool: ...
def link_json(
    request: Request,
    spider: Spider | None,
    method_names: dict[Any, str | None],
    callback_pair_json: Callable[..., str | None],
) -> str | None: ...

class LinkText:
    def __init__(
        self,
        spider: Spider | None,
        method_names: dict[Any, str | None],
        callback_pair_json: Callable[..., str | None],
        other: Callable[[Request, Spider | None, dict[Any, str | None] | None], str],
    ) -> None: ...
    def __call__(self, request: Request) -> str: ...

def link_columns(
    held: list[tuple[Request, str | None, Any]],
    budget_key: Callable[[str], str],
    sites_by_origin: dict[str, str],
    fingerprint_key_of: Callable[[Request], int],
) -> tuple[list[int], list[int], list[str | None], list[str]]: ...

class RecentlySeen:
    def __init__(
        self, enabled: bool, capacity: int = 16384, *, seen_key: Callable[[str], str]
    ) -> None: ...
    def key(self, request: Request) -> str | None: ...
    def __contains__(self, key: str) -> bool: ...
    def met(self, key: str) -> bool: ...
    def add(self, key: str) -> None: ...

"""An item pipeline whose open fails, for tests of a crawl stopped as it starts
(`-s 'ITEM_PIPELINES={"failing_open.FailingOpen": 900}'` with tests/ on PYTHONPATH)."""

from __future__ import annotations


class FailingOpen:
    def open_spider(self) -> None:
        raise OSError("the disk is on fire")

    def process_item(self, item: object) -> object:
        return item

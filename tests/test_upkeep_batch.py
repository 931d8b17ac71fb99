"""A page's links given to the campaign store together (`CampaignStore.enqueue_many`,
`CampaignScheduler.flush`), and the 64-bit seen keys: the same admissions as one link at a
time, nothing lost before a page is finished, and older campaigns still loading."""

from __future__ import annotations

import logging
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider, signals
from scrapy.utils.test import get_crawler
from test_frontier_runs import disk_full_on_insert

from corpus_crawler.state import (
    DATABASE_NAME,
    SCHEMA_VERSION,
    Admission,
    BudgetLimits,
    CampaignStore,
    CampaignTooNew,
    QueueEntry,
)
from pipelines.campaign import CampaignExtension
from pipelines.scheduler import CampaignScheduler

# -- the store --------------------------------------------------------------------------------

_ENTRY = st.tuples(
    st.one_of(st.none(), st.integers(0, 12).map(lambda n: b"fp%d" % n)),
    st.sampled_from([None, "a.example", "b.example"]),
    st.integers(-2, 0),
)


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(st.lists(_ENTRY, max_size=12), max_size=5),
    max_pages=st.one_of(st.none(), st.integers(0, 8)),
    per_domain=st.one_of(st.none(), st.integers(0, 4)),
)
def test_a_batch_is_admitted_as_its_requests_one_at_a_time(
    batches: list[list[tuple[bytes | None, str | None, int]]],
    max_pages: int | None,
    per_domain: int | None,
) -> None:
    limits = BudgetLimits(max_pages=max_pages, max_pages_per_domain=per_domain)
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as many:
        single, batched = CampaignStore(one), CampaignStore(many)
        number = 0
        for batch in batches:
            entries: list[QueueEntry] = []
            expected = []
            for fingerprint, budget, priority in batch:
                text = f"r{number}"
                number += 1
                site = budget or "other.example"
                expected.append(
                    single.enqueue(
                        text, priority, fingerprint=fingerprint, budget=budget, limits=limits,
                        site=site,
                    )
                )  # fmt: skip
                entries.append((f"http://{site}/{text}", text, priority, fingerprint, budget, site))
            assert batched.enqueue_many(entries, limits) == expected
        assert batched.queued == single.queued
        assert batched.lease(1000) == single.lease(1000)
        for store in (single, batched):
            store.commit({})
        assert _table(Path(many), "budgets") == _table(Path(one), "budgets")
        assert _seen_set(Path(many)) == _seen_set(Path(one))
        single.close()
        batched.close()


def _table(directory: Path, name: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        return db.execute(f"SELECT * FROM {name} ORDER BY 1").fetchall()


def _seen_set(directory: Path) -> list[int]:
    """The committed seen set: `seen_keys` and the seen log (each key in one of them)."""
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        rows = db.execute("SELECT key FROM seen_keys UNION ALL SELECT key FROM seen_log")
        return sorted(key for (key,) in rows)


def test_a_batch_keeps_one_of_two_equal_links_and_its_seen_marks_commit_with_its_rows(
    tmp_path: Path,
) -> None:
    store = CampaignStore(tmp_path)
    entries: list[QueueEntry] = [
        ("http://a.example/1", "one", -1, b"f1", "a.example", "a.example"),
        ("http://a.example/1", "one again", -1, b"f1", "a.example", "a.example"),
        ("http://a.example/2", "two", -1, b"f2", "a.example", "a.example"),
    ]
    assert store.enqueue_many(entries) == [
        Admission.QUEUED,
        Admission.DUPLICATE,
        Admission.QUEUED,
    ]
    store.abandon()  # a crash before the commit: neither the marks nor the rows remain
    again = CampaignStore(tmp_path)
    assert again.enqueue_many(entries[2:]) == [Admission.QUEUED]
    again.commit({})
    again.abandon()
    third = CampaignStore(tmp_path)
    assert third.enqueue_many(entries) == [
        Admission.QUEUED,
        Admission.DUPLICATE,
        Admission.DUPLICATE,
    ]
    assert [text for _, text in third.lease(10)] == ["two", "one"]
    third.close()


def test_a_batch_that_fails_half_way_is_never_committed(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    store.enqueue("before", 0, fingerprint=b"before")
    store.commit({"a.warc.gz": 10})
    with store.shared_connection() as db:
        # the disk fills after the batch's seen marks, before its queue rows
        disk_full_on_insert(db, "main.frontier", temp=True)
    entries: list[QueueEntry] = [
        (f"http://a.example/{n}", f"r{n}", 0, b"f%d" % n, None, "a.example") for n in range(600)
    ]
    with pytest.raises(sqlite3.DatabaseError, match="full"):
        store.enqueue_many(entries)
    assert store.changed
    with pytest.raises(sqlite3.DatabaseError, match="half-changed"):
        store.commit({"a.warc.gz": 20})
    store.abandon()
    again = CampaignStore(tmp_path)
    assert again.committed_files() == {"a.warc.gz": 10}
    # none of the batch was marked seen
    assert again.enqueue_many(entries[:2]) == [Admission.QUEUED, Admission.QUEUED]
    assert [text for _, text in again.lease(10)] == ["before", "r0", "r1"]
    again.close()


# -- older and newer campaign databases ----------------------------------------------------------

#: The seen set as campaigns before schema 2 kept it (PRAGMA user_version 0).
_OLD_SEEN = "CREATE TABLE seen (fingerprint BLOB PRIMARY KEY) WITHOUT ROWID"


def _make_old_campaign(directory: Path, fingerprints: list[bytes]) -> None:
    """A campaign database as the store wrote it before the 64-bit seen keys."""
    CampaignStore(directory).close("finished")
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        db.execute("DROP TABLE seen_keys")
        db.execute(_OLD_SEEN)
        db.executemany("INSERT INTO seen (fingerprint) VALUES (?)", [(f,) for f in fingerprints])
        db.execute("PRAGMA user_version = 0")


def test_an_older_campaigns_seen_set_is_converted_and_still_filters(tmp_path: Path) -> None:
    # more marks than one conversion chunk, as Scrapy's 20-byte fingerprints
    import hashlib

    old = [hashlib.sha1(b"%d" % number).digest() for number in range(2500)]
    _make_old_campaign(tmp_path, old)
    store = CampaignStore(tmp_path)
    try:
        assert all(
            store.enqueue("x", 0, fingerprint=fingerprint) is Admission.DUPLICATE
            for fingerprint in old
        )
        fresh = hashlib.sha1(b"fresh").digest()
        assert store.enqueue("fresh", 0, fingerprint=fresh) is Admission.QUEUED
    finally:
        store.close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert "seen" not in tables
        assert db.execute("SELECT count(*) FROM seen_keys").fetchone()[0] == 2500
    assert len(_seen_set(tmp_path)) == 2501


def test_a_conversion_that_stops_midway_leaves_the_old_seen_set_whole(tmp_path: Path) -> None:
    import hashlib

    _make_old_campaign(tmp_path, [hashlib.sha1(b"%d" % n).digest() for n in range(2500)])
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        # the disk fills after the first chunk of converted marks (the table as the
        # store makes it, for the trigger)
        db.execute("CREATE TABLE seen_keys (key INTEGER PRIMARY KEY)")
        disk_full_on_insert(db, "seen_keys", after_rows=1500)
    with pytest.raises(sqlite3.DatabaseError, match="full"):
        CampaignStore(tmp_path)
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM seen").fetchone()[0] == 2500
        assert db.execute("SELECT count(*) FROM seen_keys").fetchone()[0] == 0
        db.execute("DROP TRIGGER full")
    # space is back: the next run converts it all
    CampaignStore(tmp_path).close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        assert db.execute("SELECT count(*) FROM seen_keys").fetchone()[0] == 2500


def test_a_campaign_of_a_newer_schema_is_refused_with_the_fix(tmp_path: Path) -> None:
    CampaignStore(tmp_path).close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer = SCHEMA_VERSION + 1
    with pytest.raises(CampaignTooNew, match=rf"campaign.sqlite has campaign schema {newer}.*upgr"):
        CampaignStore(tmp_path)
    # nothing is left held or changed: a second try says the same
    with pytest.raises(CampaignTooNew):
        CampaignStore(tmp_path)


# -- the scheduler ----------------------------------------------------------------------------


class _Spider(Spider):
    name = "s"

    def parse(self, response: object) -> None:
        pass


def _link(spider: _Spider, url: str, **meta: Any) -> Request:
    return Request(
        url,
        callback=spider.parse,
        headers={"Referer": "http://a.example/"},
        meta={"depth": 1, "verbatim_url": True, "corpus_budget": True, **meta},
        priority=-1,
    )


def _campaign(tmp_path: Path, **settings: Any) -> tuple[CampaignScheduler, _Spider, Any]:
    crawler = get_crawler(_Spider, {"CORPUS_OUTPUT_DIR": str(tmp_path), **settings})
    campaign = CampaignExtension.from_crawler(crawler)
    scheduler = CampaignScheduler(crawler, campaign)
    spider = _Spider()
    scheduler.open(spider)
    return scheduler, spider, campaign


def _close(scheduler: CampaignScheduler, campaign: CampaignExtension) -> None:
    scheduler.close("finished")
    campaign.writer.close()
    campaign.writer._thread.join(timeout=30)
    campaign.store.close("finished")


def _dropped(scheduler: CampaignScheduler) -> list[str]:
    urls: list[str] = []

    def receive(request: Request, spider: object) -> None:
        urls.append(request.url)

    scheduler.crawler.signals.connect(receive, signal=signals.request_dropped, weak=False)
    return urls


def test_a_pages_links_reach_the_store_before_the_page_is_finished(tmp_path: Path) -> None:
    scheduler, spider, campaign = _campaign(tmp_path)
    store = campaign.store
    scheduler.enqueue_request(_link(spider, "http://a.example/seed"))
    page = scheduler.next_request()
    assert page is not None
    links = [f"http://a.example/{number}" for number in range(3)]
    for url in links:
        assert scheduler.enqueue_request(_link(spider, url))
    assert store.queued == 0 and len(scheduler) == 3  # held, counted
    # the page's item: its links go to the store before the writer is told it is done
    campaign.finish(page.meta["corpus_row"], page.url, "kept")
    assert store.queued == 3
    # the writer commits the page's end with its links; nothing else flushes them here
    campaign.writer.close()
    campaign.writer._thread.join(timeout=30)
    campaign.store.close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        rows = db.execute("SELECT request FROM frontier ORDER BY id").fetchall()
    assert [url for url in links if any(url in text for (text,) in rows)] == links
    assert len(rows) == 3  # the seed is finished


def test_held_links_refused_at_the_flush_are_dropped_with_the_signal_and_counted(
    tmp_path: Path,
) -> None:
    scheduler, spider, campaign = _campaign(tmp_path, CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN=2)
    dropped = _dropped(scheduler)
    try:
        urls = [f"http://a.example/{number}" for number in range(3)]
        for url in urls:
            assert scheduler.enqueue_request(_link(spider, url))
        scheduler.flush()
        assert dropped == urls[2:]  # over the site's budget of 2
        scheduler.close("finished")
        assert scheduler.stats is not None
        stats = scheduler.stats.get_stats()
        assert stats["scheduler/enqueued"] == 2
        assert stats["corpus/links/over-max-pages-per-domain"] == 1
    finally:
        _close(scheduler, campaign)


def test_a_held_link_whose_meta_is_not_plain_data_is_refused_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler, spider, campaign = _campaign(tmp_path)
    dropped = _dropped(scheduler)
    try:
        scheduler.enqueue_request(_link(spider, "http://a.example/1"))
        scheduler.enqueue_request(_link(spider, "http://a.example/bad", future=object()))
        scheduler.enqueue_request(_link(spider, "http://a.example/2"))
        with caplog.at_level(logging.ERROR, logger="pipelines.scheduler"):
            scheduler.flush()
        assert dropped == ["http://a.example/bad"]
        assert "meta['future'] is builtins.object, not plain data" in caplog.text
        assert campaign.store.queued == 2
        scheduler.close("finished")
        assert scheduler.stats is not None
        assert scheduler.stats.get_value("corpus/links/unserialisable") == 1
    finally:
        _close(scheduler, campaign)


def test_a_held_link_whose_callback_is_no_method_of_the_spider_is_refused_alone(
    tmp_path: Path,
) -> None:
    scheduler, spider, campaign = _campaign(tmp_path)
    dropped = _dropped(scheduler)

    def not_a_method(response: object) -> None:
        pass

    try:
        scheduler.enqueue_request(Request("http://a.example/odd", callback=not_a_method))
        scheduler.enqueue_request(_link(spider, "http://a.example/2"))
        scheduler.flush()
        assert dropped == ["http://a.example/odd"]
        assert campaign.store.queued == 1
    finally:
        _close(scheduler, campaign)


def test_a_retry_after_held_links_keeps_the_frontier_order(tmp_path: Path) -> None:
    scheduler, spider, campaign = _campaign(tmp_path)
    try:
        scheduler.enqueue_request(_link(spider, "http://a.example/1"))
        scheduler.enqueue_request(_link(spider, "http://a.example/1").replace(dont_filter=True))
        scheduler.enqueue_request(_link(spider, "http://a.example/2"))
        order = []
        while (request := scheduler.next_request()) is not None:
            order.append((request.url, request.dont_filter))
        assert order == [
            ("http://a.example/1", False),
            ("http://a.example/1", True),
            ("http://a.example/2", False),
        ]
    finally:
        _close(scheduler, campaign)


def test_meta_with_a_number_key_or_a_huge_number_comes_back_equal() -> None:
    from pipelines.scheduler import request_from_json, request_to_json

    spider = _Spider()
    # (the standard encoder wrote the keys as text, orjson read 2**70 back as a float:
    # the typed form keeps both, tests/test_frontier_exact_meta.py)
    metas: list[dict[Any, Any]] = [{1: "one"}, {"big": 2**70}, {"nested": {2: [3]}}]
    for meta in metas:
        request = Request("http://a.example/", callback=spider.parse, meta=meta)
        back = request_from_json(request_to_json(request, spider), spider).meta
        assert back == meta  # (2**70 == float(2**70): the types too)
        assert [type(value) for value in back.values()] == [type(value) for value in meta.values()]

"""The campaign store on its own: order, seen set, budgets, commits, crashes, reconciling files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scrapy import Request, Spider

from corpus_crawler.state import (
    Admission,
    BudgetLimits,
    CampaignLocked,
    CampaignStore,
    budget_key,
    reconcile_files,
)
from pipelines.scheduler import request_from_json, request_to_json


def _queue(store: CampaignStore, name: str, priority: int = 0, **kwargs: object) -> Admission:
    return store.enqueue(name, priority, fingerprint=name.encode(), **kwargs)  # type: ignore[arg-type]


def test_highest_priority_first_and_fifo_within_a_priority(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    for name, priority in [("a", -1), ("b", 0), ("c", -1), ("d", 0), ("e", -2)]:
        assert _queue(store, name, priority) is Admission.QUEUED
    assert [text for _, text in store.lease(10)] == ["b", "d", "a", "c", "e"]
    assert store.lease(10) == []
    store.close("finished")


def test_seen_requests_are_filtered_unless_they_have_no_fingerprint(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    assert _queue(store, "a") is Admission.QUEUED
    assert _queue(store, "a") is Admission.DUPLICATE
    assert store.enqueue("retry", 0, fingerprint=None) is Admission.QUEUED
    assert store.enqueue("retry", 0, fingerprint=None) is Admission.QUEUED
    assert store.queued == 3
    store.close()


def test_page_budgets_count_per_key_and_in_total_over_runs(tmp_path: Path) -> None:
    limits = BudgetLimits(max_pages=3, max_pages_per_domain=2)
    store = CampaignStore(tmp_path)
    key = budget_key("http://WWW.A.example:8080/x")
    assert key == "a.example"  # the registered domain: www.a.example and a.example share it
    assert _queue(store, "a1", budget=key, limits=limits) is Admission.QUEUED
    assert _queue(store, "a2", budget=key, limits=limits) is Admission.QUEUED
    assert _queue(store, "a3", budget=key, limits=limits) is Admission.OVER_MAX_PAGES_PER_DOMAIN
    # not a page (a sitemap, a redirect): outside the budgets
    assert _queue(store, "a-sitemap", limits=limits) is Admission.QUEUED
    store.commit({})
    store.close("finished")
    again = CampaignStore(tmp_path)
    assert _queue(again, "b1", budget="b.example", limits=limits) is Admission.QUEUED
    assert _queue(again, "b2", budget="b.example", limits=limits) is Admission.OVER_MAX_PAGES
    again.close()


def test_only_committed_changes_survive_a_crash_and_leased_requests_come_back(
    tmp_path: Path,
) -> None:
    store = CampaignStore(tmp_path)
    for name in "abc":
        _queue(store, name)
    (row_a, _), (row_b, _) = store.lease(2)
    store.finish(row_a, "http://x/a", "kept")
    store.count({"requests/kept": 1})
    store.commit({"x.warc.gz": 100})
    store.finish(row_b, "http://x/b", "kept")  # never committed
    _queue(store, "d")  # never committed
    store.count({"requests/kept": 1})
    store.abandon()  # as a kill -9 leaves it: the open transaction is lost
    resumed = CampaignStore(tmp_path)
    assert resumed.resumed and resumed.run == 2
    assert resumed.requeued == 1  # b: taken, never finished
    assert sorted(text for _, text in resumed.lease(10)) == ["b", "c"]
    assert resumed.committed_files() == {"x.warc.gz": 100}
    assert resumed.counters() == {"requests/kept": 1}
    assert [outcome for _, _, outcome in resumed.fetch_history("http://x/a")] == ["kept"]
    assert resumed.fetch_history("http://x/b") == []
    assert _queue(resumed, "d") is Admission.QUEUED  # its seen mark was not committed either
    resumed.close()


def test_one_process_per_campaign_folder(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    with pytest.raises(CampaignLocked, match="another crawl is using"):
        CampaignStore(tmp_path)
    store.close()
    CampaignStore(tmp_path).close()


def test_output_files_are_cut_back_to_their_committed_length(tmp_path: Path) -> None:
    (tmp_path / "a.warc.gz").write_bytes(b"A" * 10 + b"uncommitted")
    (tmp_path / "b.prevert.open").write_bytes(b"B" * 5 + b"torn")
    (tmp_path / "c.vert").write_bytes(b"never committed")
    (tmp_path / "d.warc.gz").write_bytes(b"D" * 7)
    (tmp_path / "notes.txt").write_bytes(b"not an output file")
    changes = reconcile_files(tmp_path, {"a.warc.gz": 10, "b.prevert": 5, "d.warc.gz": 7})
    assert len(changes) == 3
    assert (tmp_path / "a.warc.gz").read_bytes() == b"A" * 10
    assert (tmp_path / "b.prevert.open").read_bytes() == b"B" * 5
    assert not (tmp_path / "c.vert").exists()
    assert (tmp_path / "uncommitted" / "c.vert").read_bytes() == b"never committed"
    assert (tmp_path / "d.warc.gz").read_bytes() == b"D" * 7
    assert (tmp_path / "notes.txt").exists()


class _Spider(Spider):
    name = "s"

    def parse(self, response: object) -> None:
        pass

    def failed(self, failure: object) -> None:
        pass


def test_requests_go_to_the_frontier_as_json_and_come_back_equal() -> None:
    spider = _Spider()
    request = Request(
        "http://a.example/p?q=1",
        callback=spider.parse,
        errback=spider.failed,
        method="POST",
        body=b"\x00\xffbinary",
        headers={"Referer": "http://a.example/", "X-Bytes": b"\xe9"},
        meta={"depth": 2, "corpus_budget": True, "redirect_urls": ["http://a.example/old"]},
        priority=-2,
    )
    text = request_to_json(request, spider)
    json.loads(text)  # plain JSON text
    back = request_from_json(text, spider)
    assert (back.url, back.method, back.body, back.priority) == (
        request.url,
        request.method,
        request.body,
        request.priority,
    )
    assert back.headers == request.headers
    assert back.meta == request.meta
    assert back.callback == spider.parse and back.errback == spider.failed


def test_a_request_whose_meta_is_not_plain_data_is_refused_by_name() -> None:
    spider = _Spider()
    request = Request("http://a.example/", callback=spider.parse, meta={"future": object()})
    with pytest.raises(TypeError, match=r"meta\['future'\] is builtins.object, not plain data"):
        request_to_json(request, spider)


def test_the_writer_commits_finished_requests_even_when_it_writes_no_file(
    tmp_path: Path,
) -> None:
    import sqlite3
    import time

    from scrapy.settings import Settings

    from pipelines.writer import OutputSettings, OutputWriter

    settings = Settings(
        {
            "CORPUS_OUTPUT_DIR": str(tmp_path),
            "CORPUS_WARC_ENABLED": False,
            "CORPUS_PREVERTICAL_ENABLED": False,
            "CORPUS_CAMPAIGN_COMMIT_INTERVAL": 0.05,
        }
    )
    store = CampaignStore(tmp_path)
    _queue(store, "a")
    _queue(store, "b")
    ((row, _),) = store.lease(1)
    writer = OutputWriter(OutputSettings.from_settings(settings), store)
    writer.start()
    try:
        writer.finish(row, "http://x/a", "links-only")

        def committed() -> list[str]:
            with sqlite3.connect(f"file:{store.path}?mode=ro", uri=True) as db:
                return [r for (r,) in db.execute("SELECT request FROM frontier")]

        deadline = time.monotonic() + 30  # a guard against a hang, not a timing assert
        while committed() != ["b"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert committed() == ["b"]
    finally:
        writer.close()
        writer._thread.join(timeout=30)
        store.close()


def test_a_callback_that_raises_still_finishes_its_request(tmp_path: Path) -> None:
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler
    from twisted.python.failure import Failure

    from pipelines.campaign import CampaignExtension

    crawler = get_crawler(settings_dict={"CORPUS_OUTPUT_DIR": str(tmp_path)})
    campaign = CampaignExtension.from_crawler(crawler)
    campaign.store.enqueue("a", 0, fingerprint=b"a")
    ((row, _),) = campaign.store.lease(1)
    request = Request("http://a.example/", meta={"corpus_row": row})
    response = HtmlResponse("http://a.example/", body=b"<p>x</p>", request=request)
    try:
        raise ValueError("a bug in a callback")
    except ValueError:
        failure = Failure()
    campaign.spider_error(failure, response)
    campaign.writer.close()
    campaign.writer._thread.join(timeout=30)
    campaign.store.close("finished")
    store = CampaignStore(tmp_path)
    try:
        history = store.fetch_history("http://a.example/")
        assert [outcome for _, _, outcome in history] == ["error:ValueError"]
        assert store.in_frontier() == 0
    finally:
        store.close()

"""What the campaign scheduler writes per link, made cheap without changing what it means:
the compact request form (and the full form it falls back to, and the old rows it must
still read), the fingerprint computed without a Request, the budget key's fast path,
the recently-seen set, and the queue rows the store inserts together."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scrapy import FormRequest, Request, Spider, signals
from scrapy.utils.request import RequestFingerprinter
from scrapy.utils.test import get_crawler

from corpus_crawler.domains import registered_domain
from corpus_crawler.state import Admission, CampaignStore, budget_key
from corpus_crawler.traps import seen_key
from pipelines.campaign import CampaignExtension
from pipelines.scheduler import (
    CampaignScheduler,
    RecentlySeen,
    request_from_json,
    request_to_json,
    verbatim_fingerprint,
)


class _Spider(Spider):
    name = "s"

    def parse(self, response: object) -> None:
        pass

    def _download_failed(self, failure: object) -> None:
        pass

    def __private(self, response: object) -> None:
        pass

    def private_callback(self) -> Any:
        return self.__private


def _link(spider: _Spider, url: str, **meta: Any) -> Request:
    return Request(
        url,
        callback=spider.parse,
        errback=spider._download_failed,
        headers={"Referer": "http://a.example/"},
        meta={"depth": 1, "verbatim_url": True, **meta},
        priority=-1,
    )


def _same(back: Request, request: Request) -> None:
    assert type(back) is type(request)
    assert (back.url, back.method, back.body, back.priority, back.dont_filter) == (
        request.url,
        request.method,
        request.body,
        request.priority,
        request.dont_filter,
    )
    assert back.headers == request.headers
    assert back.meta == request.meta
    assert (back.callback, back.errback) == (request.callback, request.errback)
    assert (back.cookies, back.cb_kwargs, back.flags, back.encoding) == (
        request.cookies,
        request.cb_kwargs,
        request.flags,
        request.encoding,
    )


# -- the request forms --------------------------------------------------------------------


def test_a_link_is_stored_in_the_compact_form_and_comes_back_equal() -> None:
    spider = _Spider()
    request = _link(spider, "http://a.example/č/p?q=1")
    text = request_to_json(request, spider)
    data = json.loads(text)
    assert "url" not in data and data["u"] == request.url
    assert len(text) < 200  # Scrapy's to_dict form of the same request is ~320 characters
    _same(request_from_json(text, spider), request)


def test_a_retry_keeps_dont_filter_and_bytes_headers_in_the_compact_form() -> None:
    spider = _Spider()
    request = _link(spider, "http://a.example/", retry_times=1).replace(
        dont_filter=True, headers={"If-None-Match": b'"\xe9tag"', "X-Many": [b"1", b"2"]}
    )
    text = request_to_json(request, spider)
    assert "u" in json.loads(text)
    _same(request_from_json(text, spider), request)


def test_unusual_requests_keep_scrapys_full_form() -> None:
    spider = _Spider()
    unusual = [
        Request("http://a.example/", method="POST", body=b"\x00\xff", callback=spider.parse),
        FormRequest("http://a.example/", formdata={"a": "b"}, callback=spider.parse),
        Request("http://a.example/", cookies={"c": "1"}, callback=spider.parse),
        Request("http://a.example/", cb_kwargs={"k": 1}, callback=spider.parse),
        Request("http://a.example/", flags=["f"], callback=spider.parse),
        Request("http://a.example/", encoding="latin-1", callback=spider.parse),
        Request("http://a.example/", callback=spider.private_callback()),
    ]
    for request in unusual:
        text = request_to_json(request, spider)
        assert "url" in json.loads(text), request
        _same(request_from_json(text, spider), request)


def test_a_callback_that_is_not_a_method_of_the_spider_is_refused_as_before() -> None:
    spider = _Spider()

    def not_a_method(response: object) -> None:
        pass

    request = Request("http://a.example/", callback=not_a_method)
    with pytest.raises(ValueError, match="is not an instance method"):
        request_to_json(request, spider)


def test_rows_written_before_the_compact_form_still_load() -> None:
    # a frontier row exactly as the scheduler wrote it before the compact form existed
    old_row = (
        '{"url":"http://h0.example/p/0.html","callback":"parse","errback":"_download_failed",'
        '"headers":{"Referer":["http://h0.example/"]},"body":"","cookies":{},'
        '"meta":{"depth":1,"verbatim_url":true},"encoding":"utf-8","flags":[],"cb_kwargs":{},'
        '"dont_filter":false,"method":"GET","priority":-1}'
    )
    spider = _Spider()
    back = request_from_json(old_row, spider)
    assert (back.url, back.priority, back.meta) == (
        "http://h0.example/p/0.html",
        -1,
        {"depth": 1, "verbatim_url": True},
    )
    assert back.headers[b"Referer"] == b"http://h0.example/"
    assert (back.callback, back.errback) == (spider.parse, spider._download_failed)


# -- fingerprints and budget keys -----------------------------------------------------------

_URL_TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], max_codepoint=0x1F64F), max_size=40
)


@settings(max_examples=150, deadline=None)
@given(path=_URL_TEXT, query=_URL_TEXT, body=st.binary(max_size=20), post=st.booleans())
def test_the_fingerprint_without_a_request_is_scrapys_byte_for_byte(
    path: str, query: str, body: bytes, post: bool
) -> None:
    url = f"http://a.example/{path}?{query}"
    method = "POST" if post else "GET"
    request = Request(url, method=method, body=body, meta={"verbatim_url": True})
    assert verbatim_fingerprint(method, request.url, request.body) == (
        RequestFingerprinter().fingerprint(request)
    )


_LABEL = st.text(alphabet="abcXYZ019-_", min_size=1, max_size=6)
_HOST = st.one_of(
    st.lists(_LABEL, min_size=1, max_size=4).map(".".join),
    st.lists(_LABEL, min_size=1, max_size=3).map(lambda labels: ".".join(labels) + "."),
    st.tuples(*[st.integers(0, 300)] * 4).map(lambda parts: ".".join(map(str, parts))),
    st.sampled_from(["[::1]", "[2001:db8::7]", "[::1", "[zz::1]", "localhost", ""]),
)
_AUTHORITY = st.tuples(
    st.sampled_from(["", "user@", "user:pw@", "@"]),
    _HOST,
    st.sampled_from(["", ":", ":80", ":8080", ":x"]),
).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    scheme=st.sampled_from(["http", "https", "HTTP", "ftp"]), authority=_AUTHORITY, rest=_URL_TEXT
)
def test_the_budget_keys_fast_path_reads_the_host_as_urlsplit_does(
    scheme: str, authority: str, rest: str
) -> None:
    url = f"{scheme}://{authority}{rest}"
    try:
        expected = registered_domain((urlsplit(url).hostname or "").lower())
    except ValueError:  # urlsplit refuses it (a bad IPv6 literal): so must the fast path
        with pytest.raises(ValueError):
            budget_key(url)
        return
    assert budget_key(url) == expected


# -- the scheduler ---------------------------------------------------------------------------


def _scheduler(tmp_path: Path) -> tuple[CampaignScheduler, _Spider, CampaignExtension]:
    crawler = get_crawler(_Spider, {"CORPUS_OUTPUT_DIR": str(tmp_path)})
    campaign = CampaignExtension.from_crawler(crawler)
    scheduler = CampaignScheduler(crawler, campaign)
    spider = _Spider()
    scheduler.open(spider)
    return scheduler, spider, campaign


def _close(campaign: CampaignExtension) -> None:
    campaign.writer.close()
    campaign.writer._thread.join(timeout=30)
    campaign.store.close("finished")


def test_seen_sets_written_with_scrapys_fingerprints_still_filter(tmp_path: Path) -> None:
    store = CampaignStore(tmp_path)
    spider = _Spider()
    # what the scheduler stored before: Scrapy's fingerprint of the seen key's request
    old = _link(spider, "http://a.example/p;jsessionid=123?id=7&PHPSESSID=9")
    seen = old.replace(url=seen_key(old.url))
    store.enqueue("old", 0, fingerprint=RequestFingerprinter().fingerprint(seen))
    store.commit({})
    store.close("finished")
    scheduler, spider, campaign = _scheduler(tmp_path)
    dropped = _dropped_requests(scheduler)
    try:
        # the same page with other session ids: a duplicate of the old mark
        scheduler.enqueue_request(_link(spider, "http://a.example/p?id=7&PHPSESSID=1"))
        scheduler.enqueue_request(_link(spider, "http://a.example/p?id=8"))
        scheduler.flush()
        assert [request.url for request in dropped] == ["http://a.example/p?id=7&PHPSESSID=1"]
        assert len(scheduler) == 2  # "old" and id=8
    finally:
        scheduler.close("finished")
        _close(campaign)


def _dropped_requests(scheduler: CampaignScheduler) -> list[Request]:
    """The requests the scheduler drops after it took them (Scrapy's request_dropped)."""
    dropped: list[Request] = []

    def receive(request: Request, spider: object) -> None:
        dropped.append(request)

    scheduler.crawler.signals.connect(receive, signal=signals.request_dropped, weak=False)
    return dropped


def test_a_menu_met_on_every_page_is_filtered_and_counted(tmp_path: Path) -> None:
    scheduler, spider, campaign = _scheduler(tmp_path)
    menu = [f"http://a.example/menu/{k}" for k in range(20)]
    try:
        admitted = [scheduler.enqueue_request(_link(spider, url)) for url in menu]
        for _ in range(5):
            admitted += [scheduler.enqueue_request(_link(spider, url)) for url in menu]
        assert admitted == [True] * 20 + [False] * 100
        # a retry of a menu page is never filtered
        retry = _link(spider, menu[0]).replace(dont_filter=True)
        assert scheduler.enqueue_request(retry)
        assert len(scheduler) == 21
        scheduler.close("finished")
        assert scheduler.stats is not None
        stats = scheduler.stats.get_stats()
        assert stats["dupefilter/filtered"] == 100
        assert stats["scheduler/enqueued"] == 21
    finally:
        _close(campaign)


def test_the_recently_seen_set_stays_bounded_and_keeps_what_is_met_again() -> None:
    recent = RecentlySeen(enabled=True, capacity=100)
    for number in range(1000):
        recent.add(f"u{number}")
        assert "menu" in recent or number == 0  # met on every page
        if number == 0:
            recent.add("menu")
    assert "menu" in recent
    assert "u0" not in recent  # long gone
    assert len(recent._newer) + len(recent._older) <= 200


def test_queue_rows_inserted_together_keep_order_and_commit_with_their_seen_marks(
    tmp_path: Path,
) -> None:
    store = CampaignStore(tmp_path)
    for number in range(700):  # more than one batch of held-back rows
        assert store.enqueue(f"r{number}", -(number % 3), fingerprint=b"f%d" % number) is (
            Admission.QUEUED
        )
    store.commit({})
    for number in range(700, 710):  # held back, never committed
        store.enqueue(f"r{number}", 0, fingerprint=b"f%d" % number)
    store.abandon()
    with sqlite3.connect(tmp_path / "campaign.sqlite") as db:
        rows = db.execute("SELECT priority, request FROM frontier ORDER BY id").fetchall()
        seen = db.execute(
            "SELECT (SELECT count(*) FROM seen_keys) + (SELECT count(*) FROM seen_log)"
        ).fetchone()[0]
    # rows go in grouped by their place in the lease order, in FIFO order within it
    for priority in (0, -1, -2):
        assert [text for p, text in rows if p == priority] == [
            f"r{number}" for number in range(700) if -(number % 3) == priority
        ]
    assert len(rows) == 700 and seen == 700
    again = CampaignStore(tmp_path)
    leased = [text for _, text in again.lease(1000)]
    expected = sorted(range(700), key=lambda number: (number % 3, number))
    assert leased == [f"r{number}" for number in expected]
    # the uncommitted ones were never seen: they can be queued again
    assert again.enqueue("r700", 0, fingerprint=b"f700") is Admission.QUEUED
    again.close()


# -- every form comes back as the request it was ------------------------------------------

_PLAIN = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**62), 2**62), st.text(max_size=8)),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=6,
)
_HEADERS = st.sampled_from(
    [
        None,
        {"Referer": "http://a.example/from"},
        {"Referer": "http://a.example/\u00e9"},
        {"Referer": "http://a.example/", "Accept": "text/html"},
        {"Referer": [b"http://a/1", b"http://a/2"]},
        {"If-None-Match": b'"\xe9tag"'},
    ]
)


@settings(max_examples=200, deadline=None)
@example(
    path="p",
    priority=0,
    meta={},
    headers={"Referer": "http://a.example/from"},
    callbacks="parse",
    post=False,
    dont_filter=False,
)
@given(
    path=st.text(max_size=12),
    priority=st.integers(-(2**40), 2**40),
    meta=st.dictionaries(st.text(max_size=12), _PLAIN, max_size=4),
    headers=_HEADERS,
    callbacks=st.sampled_from(["parse+errback", "parse", "none", "private"]),
    post=st.booleans(),
    dont_filter=st.booleans(),
)
def test_every_request_form_rebuilds_the_request_it_was_made_from(
    path: str,
    priority: int,
    meta: dict[str, Any],
    headers: dict[str, Any] | None,
    callbacks: str,
    post: bool,
    dont_filter: bool,
) -> None:
    from pipelines.scheduler import _link_json

    spider = _Spider()
    callback = {
        "parse+errback": spider.parse,
        "parse": spider.parse,
        "none": None,
        "private": spider.private_callback(),
    }[callbacks]
    request = Request(
        "http://a.example/" + path,
        callback=callback,
        errback=spider._download_failed if callbacks == "parse+errback" else None,
        method="POST" if post else "GET",
        body=b"a=1" if post else b"",
        headers=headers,
        meta=meta,
        priority=priority,
        dont_filter=dont_filter,
    )
    method_names: dict[Any, str | None] = {}
    text = request_to_json(request, spider, method_names)
    _same(request_from_json(text, spider), request)
    # the text-built form is taken for exactly the requests it describes: the commonest
    # link (a GET naming the spider's methods, one Referer of one value)
    referers = dict.get(request.headers, b"Referer")
    is_link = (
        not post
        and not dont_filter
        and callbacks != "private"
        and len(request.headers) == 1
        and referers is not None
        and len(referers) == 1
    )
    assert (_link_json(request, spider, method_names) is not None) is is_link
    # and it is what the general compact form would have written, as JSON
    if is_link:
        assert json.loads(text) == json.loads(request_to_json(request, spider, None))
        assert text == request_to_json(request, spider, method_names)

"""The compiled per-link work of the campaign scheduler (`pipelines/_frontier_fast.pyx`)
against its pure-Python twin in `pipelines/scheduler.py`: the same seen keys, the same
JSON texts, the same store columns, and through a real scheduler and store the same
frontier rows, runs, seen marks, budgets and admissions."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import FormRequest, Request, Spider, signals
from scrapy.utils.test import get_crawler

import pipelines.scheduler as scheduler_module
from corpus_crawler.state import DATABASE_NAME, budget_key, fingerprint_key
from pipelines.campaign import CampaignExtension
from pipelines.scheduler import (
    CampaignScheduler,
    _callback_pair_json,
    _link_columns,
    _link_fingerprint,
    _link_json,
    request_to_json,
)

fast = scheduler_module._fast


def test_the_compiled_module_is_built_and_reads_scrapys_slots() -> None:
    assert fast is not None, "pipelines._frontier_fast was not compiled: pip install -e ."
    # (else it reads the properties: right, but the speed this module is for is lost)
    assert fast.READS_SLOTS, "scrapy.Request no longer keeps the slots link_json reads"


# -- seen keys ----------------------------------------------------------------------------------

_URL_CHARACTERS = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.characters(min_codepoint=0x80, max_codepoint=0x7FF),
    # lone surrogates too: a str may hold them, and the text escapes them as \udxxx
    st.characters(min_codepoint=0x800, max_codepoint=0xFFFF, categories=None),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
)


#: What a URL that Scrapy accepts without `verbatim_url` may hold (no lone surrogates).
_PATH_CHARACTERS = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=["Cs"])


@settings(max_examples=400, deadline=None)
@given(url=st.text(_URL_CHARACTERS, max_size=300))
def test_a_links_seen_key_is_the_first_64_bits_of_scrapys_fingerprint(url: str) -> None:
    assert fast is not None
    assert fast.link_key(url) == fingerprint_key(_link_fingerprint(url))


def test_seen_keys_of_long_and_escaped_urls() -> None:
    assert fast is not None
    # past the C buffer on the stack (1 KiB), at the SHA-1 block edges, each escape
    prefix = "http://a.example/"
    urls = [prefix + "x" * length for length in range(0, 140)]
    urls += [prefix + "é" * 200, prefix + "\U0001f600" * 100, prefix + "y" * 5000]
    urls += [prefix + '"\\\b\f\n\r\t\x00\x1f\x7f\x80\xff\ud800\udfff']
    for url in urls:
        assert fast.link_key(url) == fingerprint_key(_link_fingerprint(url)), url


# -- JSON texts -----------------------------------------------------------------------------------


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


def _not_a_method(response: object) -> None:
    pass


_META_VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.text(_URL_CHARACTERS, max_size=8),
    st.lists(st.integers(0, 9), max_size=3),
    st.dictionaries(st.integers(0, 3), st.integers(0, 3), max_size=2),  # number keys
    st.just(object()),  # not plain data: refused
)


@st.composite
def _requests(draw: st.DrawFn, spider: _Spider) -> Request:
    callbacks = draw(st.sampled_from(["parse+errback", "parse", "none", "private", "function"]))
    callback = {
        "parse+errback": spider.parse,
        "parse": spider.parse,
        "none": None,
        "private": spider.private_callback(),
        "function": _not_a_method,
    }[callbacks]
    referer = draw(st.sampled_from(["http://a.example/", "http://a.example/é", "b\"\\'"]))
    headers = draw(
        st.sampled_from(
            [
                {"Referer": referer},
                {"Referer": referer},
                None,
                {"Referer": [referer, referer]},
                {"Referer": referer, "Accept": "text/html"},
                {"X-Other": "1"},
            ]
        )
    )
    meta = draw(st.dictionaries(st.sampled_from(["depth", "k", "é", "a\nb"]), _META_VALUES))
    path = draw(st.text(_PATH_CHARACTERS, max_size=20))
    kind = draw(st.sampled_from(["get", "get", "get", "post", "form", "cookies", "odd"]))
    arguments: dict[str, Any] = {
        "callback": callback,
        "errback": spider._download_failed if callbacks == "parse+errback" else None,
        "headers": headers,
        "meta": {"verbatim_url": True, **meta} if draw(st.booleans()) else meta,
        "priority": draw(st.integers(-3, 3)),
        "dont_filter": draw(st.booleans()),
    }
    url = "http://a.example/" + path
    if kind == "form":
        return FormRequest(url, formdata={"a": "1"}, **arguments)
    if kind == "post":
        return Request(url, method="POST", body=b"a=1\xff", **arguments)
    if kind == "cookies":
        return Request(url, cookies={"c": "1"}, **arguments)
    if kind == "odd":  # (a latin-1 request cannot hold every character)
        url = url.encode("latin-1", "ignore").decode("latin-1")
        return Request(url, flags=["f"], cb_kwargs={"x": 1}, encoding="latin-1", **arguments)
    return Request(url, **arguments)


def _text_or_error(function: Any, *arguments: Any) -> tuple[str, str]:
    try:
        return "text", function(*arguments)
    except (TypeError, ValueError) as exc:
        return "error", type(exc).__name__


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_requests_json_text_is_the_same_compiled_or_not(data: st.DataObject) -> None:
    assert fast is not None
    spider = _Spider()
    request = data.draw(_requests(spider))
    compiled_names: dict[Any, str | None] = {}
    python_names: dict[Any, str | None] = {}
    assert fast.link_json(request, spider, compiled_names, _callback_pair_json) == _link_json(
        request, spider, python_names
    )
    compiled = _text_or_error(request_to_json, request, spider, compiled_names)
    render = fast.LinkText(
        spider, compiled_names, _callback_pair_json, scheduler_module._request_json
    )
    assert _text_or_error(render, request) == compiled
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler_module, "_fast", None)
        assert _text_or_error(request_to_json, request, spider, python_names) == compiled


def test_a_link_of_the_crawls_shape_is_written_by_the_compiled_path() -> None:
    # (the parity above would also hold if link_json never took a request)
    assert fast is not None
    spider = _Spider()
    request = Request(
        'http://a.example/p?q="1"',
        callback=spider.parse,
        errback=spider._download_failed,
        headers={"Referer": "http://a.example/é"},
        meta={"depth": 2, "verbatim_url": True},
        priority=-2,
    )
    text = fast.link_json(request, spider, {}, _callback_pair_json)
    assert text is not None
    assert json.loads(text) == {
        "u": 'http://a.example/p?q="1"',
        "p": -2,
        "c": "parse",
        "e": "_download_failed",
        "h": {"Referer": ["http://a.example/\u00c3\u00a9"]},  # (the header's bytes as latin-1)
        "m": {"depth": 2, "verbatim_url": True},
    }


# -- the store's columns ------------------------------------------------------------------------


def test_the_columns_of_held_links_are_the_same_compiled_or_not() -> None:
    assert fast is not None
    spider = _Spider()
    generator = random.Random(6)
    hosts = ["a.example", "www.b.co.uk", "c.example:8080", "xn--d-eka.example", "É.example"]
    held: list[tuple[Request, str | None, Any]] = []
    for number in range(2000):
        scheme = generator.choice(["http", "https", "ftp", "HTTP"])
        host = generator.choice(hosts)
        tail = generator.choice(["", "/", f"/p/{number}", f"?q={number}", f"#f{number}"])
        url = f"{scheme}://{host}{tail}" if generator.random() < 0.95 else f"data:,{number}"
        request = Request(url, callback=spider.parse, priority=generator.randint(-3, 0))
        recent_key = None if generator.random() < 0.2 else url.partition("#")[0]
        held.append((request, recent_key, generator.random() < 0.7))

    def fingerprint_key_of(request: Request) -> int:
        return fingerprint_key(_link_fingerprint(request.url + "!"))

    expected = _link_columns(held, budget_key, {}, fingerprint_key_of)
    sites_by_origin: dict[str, str] = {}
    assert fast.link_columns(held, budget_key, sites_by_origin, fingerprint_key_of) == expected
    # the cache the compiled version keeps gives the same sites once it is filled
    assert fast.link_columns(held, budget_key, sites_by_origin, fingerprint_key_of) == expected
    assert sites_by_origin


# -- through the scheduler and the store ----------------------------------------------------------


def _crawl_state(directory: Path, requests: list[Request], spider: _Spider) -> dict[str, Any]:
    crawler = get_crawler(_Spider, {"CORPUS_OUTPUT_DIR": str(directory)})
    campaign = CampaignExtension.from_crawler(crawler)
    scheduler = CampaignScheduler(crawler, campaign)
    scheduler.open(spider)
    dropped: list[str] = []
    crawler.signals.connect(
        lambda request, spider: dropped.append(request.url),
        signal=signals.request_dropped,
        weak=False,
    )
    accepted = [scheduler.enqueue_request(request) for request in requests]
    scheduler.flush()
    scheduler.close("finished")
    assert scheduler.stats is not None
    stats = {
        key: value
        for key, value in scheduler.stats.get_stats().items()
        if key.startswith(("scheduler/", "dupefilter/", "corpus/links/"))
    }
    campaign.writer.close()
    campaign.writer._thread.join(timeout=30)
    campaign.store.close("finished")
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        tables = {
            name: db.execute(f"SELECT * FROM {name} ORDER BY 1, 2").fetchall()
            for name in ("frontier", "frontier_runs", "budgets")
        }
        tables["seen"] = sorted(
            db.execute("SELECT key FROM seen_log UNION ALL SELECT key FROM seen_keys").fetchall()
        )
    return {"accepted": accepted, "dropped": dropped, "stats": stats, **tables}


def test_a_page_of_odd_links_leaves_the_same_state_compiled_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spider = _Spider()
    generator = random.Random(8)

    def requests() -> list[Request]:
        made: list[Request] = []
        for number in range(300):
            host = f"h{number % 7}.example"
            path = generator.choice(
                [f"/p/{number % 250}", f"/é/{number}", "/menu", "/;jsessionid=1"]
            )
            meta: dict[str, Any] = {"depth": 1, "corpus_budget": generator.random() < 0.8}
            if generator.random() < 0.7:
                meta["verbatim_url"] = True
            if number % 41 == 0:
                meta["future"] = object()  # refused alone
            if number % 37 == 0:
                meta["big"] = 2**70  # the standard encoder writes it
            made.append(
                Request(
                    f"http://{host}{path}",
                    callback=generator.choice([spider.parse, _not_a_method, None]),
                    errback=spider._download_failed if number % 3 else None,
                    headers={"Referer": f"http://{host}/"} if number % 5 else None,
                    method="GET" if number % 11 else "POST",
                    body=b"" if number % 11 else b"a=1",
                    meta=meta,
                    priority=-(number % 3),
                )
            )
        return made

    seed = generator.getstate()
    compiled = _crawl_state(tmp_path / "compiled", requests(), spider)
    generator.setstate(seed)
    with monkeypatch.context() as patch:
        patch.setattr(scheduler_module, "_fast", None)
        python = _crawl_state(tmp_path / "python", requests(), spider)
    assert compiled == python
    # what the comparison covers: queued links, duplicates, refusals of each kind
    assert len(compiled["frontier"]) > 100
    assert compiled["stats"]["dupefilter/filtered"] > 10
    assert compiled["stats"]["corpus/links/unserialisable"] > 3
    assert any('"u":"http://h1.example/p/1"' in row[3] for row in compiled["frontier"])


# -- the recently seen links and the seen filter --------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    operations=st.lists(
        st.tuples(st.sampled_from(["met", "in", "add"]), st.integers(0, 40).map(str)),
        max_size=200,
    ),
    capacity=st.integers(1, 12),
)
def test_the_recently_seen_links_remember_the_same_keys_compiled_or_not(
    operations: list[tuple[str, str]], capacity: int
) -> None:
    assert fast is not None
    python = scheduler_module.RecentlySeen(enabled=True, capacity=capacity)
    compiled = fast.RecentlySeen(True, capacity, seen_key=scheduler_module.seen_key)
    for operation, key in operations:
        if operation == "met":
            assert compiled.met(key) == python.met(key)
        elif operation == "in":
            assert (key in compiled) == (key in python)
        else:
            compiled.add(key)
            python.add(key)
    assert [key in compiled for key in map(str, range(41))] == [
        key in python for key in map(str, range(41))
    ]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_requests_recent_key_is_the_same_compiled_or_not(data: st.DataObject) -> None:
    assert fast is not None
    spider = _Spider()
    request = data.draw(_requests(spider))
    if data.draw(st.booleans()):  # fragments and session ids: seen_key's own work
        tail = data.draw(st.sampled_from(["#f", ";jsessionid=1", "?sid=2&a=1", "?a=1#x"]))
        request = request.replace(url=request.url + tail, encoding="utf-8")
    for enabled in (True, False):
        python = scheduler_module.RecentlySeen(enabled=enabled)
        compiled = fast.RecentlySeen(enabled, seen_key=scheduler_module.seen_key)
        assert compiled.key(request) == python.key(request)


def test_the_seen_filter_sets_and_finds_the_same_bits_compiled_or_not() -> None:
    from corpus_crawler import state

    assert state._seen_fast is not None, "corpus_crawler._seen_fast was not compiled"
    generator = random.Random(9)
    keys = [generator.getrandbits(64) - 2**63 for _ in range(20000)]
    keys += [-(2**63), 2**63 - 1, 0, -1]
    others = [generator.getrandbits(64) - 2**63 for _ in range(20000)]
    # false "maybe"s: the high half of one key with the low half of another sets no new bit
    others += [
        (a & ~0xFFFFFFFF) | (b & 0xFFFFFFFF)
        for a, b in zip(keys[:500], keys[500:1000], strict=True)
    ]
    compiled = state.SeenFilter(1000)
    compiled.add_all(iter(keys))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state, "_seen_fast", None)
        python = state.SeenFilter(1000)
        python.add_all(iter(keys))
        python_held = python.maybe_held(set(others))
    assert compiled._bits == python._bits
    held = compiled.maybe_held(set(others))
    assert held == python_held
    assert 0 < len(held) < len(others)
    assert compiled.maybe_held(keys) == keys


class _ServedOtherwise(Request):
    """A request class whose URL property is not its slot (the compiled code must ask it)."""

    @property
    def url(self) -> str:
        return self._url + "#served"


def test_a_request_subclass_is_read_through_its_properties() -> None:
    assert fast is not None
    spider = _Spider()
    request = _ServedOtherwise("http://a.example/x", meta={"verbatim_url": True})
    python = scheduler_module.RecentlySeen(enabled=True)
    compiled = fast.RecentlySeen(True, seen_key=scheduler_module.seen_key)
    assert compiled.key(request) == python.key(request)
    held: list[tuple[Request, str | None, Any]] = [(request, None, True)]

    def fingerprint_key_of(request: Request) -> int:
        return fingerprint_key(_link_fingerprint(request.url))

    assert fast.link_columns(held, budget_key, {}, fingerprint_key_of) == _link_columns(
        held, budget_key, {}, fingerprint_key_of
    )
    assert fast.link_json(request, spider, {}, _callback_pair_json) is None

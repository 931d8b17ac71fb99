"""Every request the campaign scheduler accepts comes back from the frontier equal: meta
(and cb_kwargs, cookies) holding `inf`, `nan`, lone surrogates, tuples, number keys or
ints beyond 64 bits is stored in the typed form (`corpus_crawler.exact_json`), in the
compiled and in the pure-Python path alike; meta that is not plain data is refused at
enqueue, counted (`corpus/links/unserialisable`) and logged with where it is, and the
crawl goes on. The common link keeps its compact text byte for byte."""

from __future__ import annotations

import datetime
import enum
import logging
import math
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider, signals
from scrapy.utils.test import get_crawler

import pipelines.scheduler as scheduler_module
from corpus_crawler.exact_json import MAX_DEPTH, is_plain_json, tagged, untagged
from corpus_crawler.state import DATABASE_NAME
from pipelines.campaign import CampaignExtension
from pipelines.scheduler import (
    CampaignScheduler,
    _callback_pair_json,
    _request_json,
    request_from_json,
    request_to_json,
)

fast = scheduler_module._fast


class _Spider(Spider):
    name = "s"

    def parse(self, response: object) -> None:
        pass

    def _download_failed(self, failure: object) -> None:
        pass


def same_value(back: Any, sent: Any) -> bool:
    """`back` is `sent`, type for type (a tuple is no list, 1 is no 1.0), nan for nan and
    -0.0 for -0.0, dict members in the same order."""
    if type(back) is not type(sent):
        return False
    if isinstance(sent, float):
        return (math.isnan(back) and math.isnan(sent)) or repr(back) == repr(sent)
    if isinstance(sent, list | tuple):
        return len(back) == len(sent) and all(map(same_value, back, sent))
    if isinstance(sent, dict):
        return len(back) == len(sent) and all(
            same_value(back_key, sent_key) and same_value(back_item, sent_item)
            for (back_key, back_item), (sent_key, sent_item) in zip(
                back.items(), sent.items(), strict=True
            )
        )
    return bool(back == sent)


# any code point, lone surrogates included
_TEXT = st.text(st.characters(codec=None, categories=None), max_size=6)
_SCALARS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.inf, -math.inf, math.nan, -0.0]),
    st.integers(-(2**80), 2**80),
    st.booleans(),
    st.none(),
    _TEXT,
    st.sampled_from(["x\udcff", "\ud800", "\udfff\ud800", "é\udc80z"]),
    st.binary(max_size=4),
)
_KEYS = st.one_of(_TEXT, st.integers(-(2**70), 2**70), st.booleans(), st.none())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(_KEYS, inner, max_size=3),
    ),
    max_leaves=12,
)
_META = st.dictionaries(st.one_of(_TEXT, st.integers(0, 3)), _VALUES, max_size=4)


def _request(spider: _Spider, shape: str, meta: dict[Any, Any], odd: Any) -> Request:
    arguments: dict[str, Any] = {
        "callback": spider.parse,
        "errback": spider._download_failed,
        "headers": {"Referer": "http://a.example/"},
        "meta": meta,
        "priority": -1,
    }
    if shape == "post":  # Scrapy's full form
        return Request("http://a.example/p", method="POST", body=b"\xff", **arguments)
    if shape == "cb_kwargs":
        return Request("http://a.example/p", cb_kwargs={"odd": odd}, **arguments)
    if shape == "retry":
        return Request("http://a.example/p", dont_filter=True, **arguments)
    return Request("http://a.example/p", **arguments)  # a link: link_json first


def _texts(request: Request, spider: _Spider) -> tuple[str, str, str]:
    """The request's text by the compiled path, the store's render and the Python path."""
    assert fast is not None
    compiled = request_to_json(request, spider, {})
    render = fast.LinkText(spider, {}, _callback_pair_json, _request_json)(request)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scheduler_module, "_fast", None)
        python = request_to_json(request, spider, {})
    return compiled, render, python


@settings(max_examples=300, deadline=None)
@given(
    meta=_META,
    odd=_VALUES,
    shape=st.sampled_from(["link", "link", "post", "cb_kwargs", "retry"]),
)
def test_any_plain_meta_comes_back_equal_compiled_or_not(
    meta: dict[Any, Any], odd: Any, shape: str
) -> None:
    spider = _Spider()
    request = _request(spider, shape, {"depth": 1, "verbatim_url": True, **meta}, odd)
    compiled, render, python = _texts(request, spider)
    assert compiled == render == python
    text = compiled.encode()  # what SQLite stores: valid UTF-8 (no lone surrogate)
    back = request_from_json(text.decode(), spider)
    assert same_value(back.meta, request.meta), (back.meta, request.meta)
    assert same_value(back.cb_kwargs, request.cb_kwargs)
    assert (back.url, back.method, back.body, back.priority, back.dont_filter) == (
        request.url,
        request.method,
        request.body,
        request.priority,
        request.dont_filter,
    )
    assert back.headers == request.headers
    assert (back.callback, back.errback) == (request.callback, request.errback)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_the_plain_check_is_the_same_compiled_or_not_and_means_orjson_is_exact(
    value: Any,
) -> None:
    assert fast is not None
    plain = is_plain_json(value)
    assert fast.plain_json(value) == plain
    if plain:
        try:
            text = orjson.dumps(value)
        except TypeError:
            return  # (a lone surrogate, an int beyond 64 bits: orjson says so itself)
        assert same_value(orjson.loads(text), value)
    assert same_value(untagged(orjson.loads(orjson.dumps(tagged(value)))), value)


def test_the_common_link_keeps_its_compact_text() -> None:
    spider = _Spider()
    request = _request(spider, "link", {"depth": 2, "verbatim_url": True}, None)
    expected = (
        '{"u":"http://a.example/p","p":-1,"c":"parse","e":"_download_failed",'
        '"h":{"Referer":["http://a.example/"]},"m":{"depth":2,"verbatim_url":true}}'
    )
    assert set(_texts(request, spider)) == {expected}


def test_the_four_values_that_were_lost_now_come_back() -> None:
    # orjson wrote inf as null; the standard encoder wrote Infinity (orjson cannot read
    # it) and raw lone surrogates (SQLite cannot store them as UTF-8); number keys came
    # back as text and ints beyond 64 bits as floats
    spider = _Spider()
    meta = {"a": math.inf, "b": "x\udcff", "c": {1: -math.inf}, "d": 2**70, "e": (1, "t")}
    for shape in ("link", "post", "retry"):
        request = _request(spider, shape, dict(meta), None)
        compiled, render, python = _texts(request, spider)
        assert compiled == render == python
        assert "null" not in compiled and "Infinity" not in compiled
        assert same_value(request_from_json(compiled, spider).meta, meta)


def test_a_row_the_standard_encoder_wrote_with_infinity_still_loads() -> None:
    # what `json.dumps(..., ensure_ascii=False)` wrote for a meta orjson refused
    old_row = (
        '{"u":"http://a.example/p","c":"parse",'
        '"m":{"big":1180591620717411303424,"x":Infinity,"y":NaN}}'
    )
    back = request_from_json(old_row, _Spider())
    assert back.meta["x"] == math.inf and math.isnan(back.meta["y"])
    assert back.meta["big"] == 2**70


class _Colour(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    ("value", "where", "kind"),
    [
        (object(), "meta['bad']", "builtins.object"),
        ([1, {"k": datetime.date(2026, 1, 1)}], "meta['bad'][1]['k']", "datetime.date"),
        ({1, 2}, "meta['bad']", "builtins.set"),
        # a subclass would come back as its base type
        (_Colour.RED, "meta['bad']", "_Colour"),
        (defaultdict(list), "meta['bad']", "collections.defaultdict"),
    ],
)
def test_meta_that_is_not_plain_data_is_refused_naming_where_it_is(
    value: Any, where: str, kind: str
) -> None:
    spider = _Spider()
    for shape in ("link", "post"):
        request = _request(spider, shape, {"depth": 1, "bad": value}, None)
        for python in (False, True):
            with pytest.MonkeyPatch.context() as patch:
                if python:
                    patch.setattr(scheduler_module, "_fast", None)
                with pytest.raises(TypeError) as caught:
                    request_to_json(request, spider, {})
            message = str(caught.value)
            assert message.startswith(f"http://a.example/p: {where} is ")
            assert kind in message and "not plain data" in message


def test_meta_nested_too_deep_or_in_a_cycle_is_refused_not_a_crash() -> None:
    spider = _Spider()
    deep: list[Any] = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    for value in (deep, cycle):
        request = _request(spider, "link", {"v": value}, None)
        with pytest.raises(TypeError, match="nested deeper than"):
            request_to_json(request, spider, {})


# -- through a real scheduler and store, and a resume ---------------------------------------------


def _open(directory: Path) -> tuple[CampaignScheduler, CampaignExtension, list[str]]:
    crawler = get_crawler(_Spider, {"CORPUS_OUTPUT_DIR": str(directory)})
    campaign = CampaignExtension.from_crawler(crawler)
    scheduler = CampaignScheduler(crawler, campaign)
    scheduler.open(_Spider())
    dropped: list[str] = []
    crawler.signals.connect(
        lambda request, spider: dropped.append(request.url),
        signal=signals.request_dropped,
        weak=False,
    )
    return scheduler, campaign, dropped


def _close(scheduler: CampaignScheduler, campaign: CampaignExtension) -> None:
    scheduler.close("finished")
    campaign.writer.close()
    campaign.writer._thread.join(timeout=30)
    campaign.store.close("finished")


def _odd_meta(number: int) -> dict[Any, Any]:
    return {
        "depth": 1,
        "verbatim_url": True,
        "inf": [math.inf, -math.inf, math.nan][number % 3],
        "text": f"p{number}\udcff" if number % 2 else f"p{number}\ud800é",
        "shape": (number, {number: (None, b"\x00\xff")}),
        "big": 2**70 + number,
    }


@pytest.mark.parametrize("path", ["compiled", "python"])
def test_odd_requests_go_through_the_store_and_a_resume_equal(
    tmp_path: Path,
    path: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if path == "python":
        monkeypatch.setattr(scheduler_module, "_fast", None)
    scheduler, campaign, dropped = _open(tmp_path)
    spider = scheduler.spider
    assert isinstance(spider, _Spider)
    sent: dict[str, dict[Any, Any]] = {}
    with caplog.at_level(logging.ERROR, logger="pipelines.scheduler"):
        for number in range(60):
            meta = _odd_meta(number)
            url = f"http://h{number % 4}.example/p/{number}"
            # links held for the page's flush, and retries queued at once
            shape = "retry" if number % 5 == 0 else "link"
            request = _request(spider, shape, meta, None).replace(url=url)
            assert scheduler.enqueue_request(request)
            sent[url] = meta
        bad_link = _request(spider, "link", {"when": datetime.date(2026, 1, 1)}, None)
        assert scheduler.enqueue_request(bad_link.replace(url="http://h0.example/bad-link"))
        bad_retry = _request(spider, "retry", {"why": object()}, None)
        # refused at once: the engine sends request_dropped for the False
        assert not scheduler.enqueue_request(bad_retry.replace(url="http://h0.example/bad-retry"))
        scheduler.flush()
    assert dropped == ["http://h0.example/bad-link"]
    assert "meta['when'] is datetime.date" in caplog.text
    assert "meta['why'] is builtins.object" in caplog.text
    assert scheduler.stats is not None
    _close(scheduler, campaign)
    assert scheduler.stats.get_value("corpus/links/unserialisable") == 2
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        rows = [text for (text,) in db.execute("SELECT request FROM frontier")]
    assert len(rows) == 60
    # (orjson alone wrote "inf":null, the standard encoder "inf":Infinity)
    assert all('"inf":' not in row and '{"f":"' in row for row in rows)

    # the next run reads the frontier back
    scheduler, campaign, _ = _open(tmp_path)
    back: dict[str, dict[Any, Any]] = {}
    while (leased := scheduler.next_request()) is not None:
        meta = dict(leased.meta)
        del meta["corpus_row"], meta["corpus_row_url"]
        back[leased.url] = meta
    _close(scheduler, campaign)
    assert back.keys() == sent.keys()
    for url, meta in sent.items():
        assert same_value(back[url], meta), url

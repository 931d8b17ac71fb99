"""The publication date a page declares (`corpus_crawler.pagedate`)."""

from __future__ import annotations

import datetime as dt

import pytest

from corpus_crawler import dom, extract
from corpus_crawler.pagedate import parse_date, published_date

TODAY = dt.date(2026, 11, 25)
BODY = "<p>Some running text of the page, long enough to be a paragraph of it.</p>"


def date_of(html: str, not_after: dt.date = TODAY) -> str | None:
    root = dom.parse(html)
    assert root is not None
    return published_date(root, html, not_after)


def page(head: str = "", body: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head><title>T</title>{head}</head><body>{BODY}{body}</body></html>"
    )


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        # Open Graph
        ('<meta property="article:published_time" content="2023-06-01T10:00:00+02:00">', "",
         "2023-06-01"),
        # JSON-LD in the head, in @graph, and in the body
        ('<script type="application/ld+json">{"@type":"NewsArticle",'
         '"datePublished":"2022-02-03T08:00:00Z"}</script>', "", "2022-02-03"),
        ('<script type="application/ld+json">{"@graph":[{"@type":"WebPage",'
         '"datePublished": "2021-04-05"}]}</script>', "", "2021-04-05"),
        ("", "<script type='application/ld+json'>{\"datePublished\":\"2020-07-08\"}</script>",
         "2020-07-08"),
        # microdata: a time's datetime, a meta's content, an element's own text
        ("", '<time datetime="2019-11-21" itemprop="datePublished">21 Nov</time>', "2019-11-21"),
        ("", '<div itemscope><meta itemprop="datePublished" content="2018-01-02"></div>',
         "2018-01-02"),
        ("", '<span itemprop="datePublished">2017-03-04</span>', "2017-03-04"),
        # named metas: Dublin Core, Highwire (slashes), a plain `date`
        ('<meta name="DC.date.issued" content="2011-12-15">', "", "2011-12-15"),
        ('<meta name="citation_publication_date" content="2016/05/06">', "", "2016-05-06"),
        ('<meta name="date" content="20150304">', "", "2015-03-04"),
        # nothing declared
        ("", "", None),
    ],
)  # fmt: skip
def test_each_declaration_is_read(head: str, body: str, expected: str | None) -> None:
    assert date_of(page(head, body)) == expected


def test_the_most_trusted_declaration_wins() -> None:
    og = '<meta property="article:published_time" content="2023-01-01">'
    ld = '<script type="application/ld+json">{"datePublished":"2022-01-01"}</script>'
    micro = '<time itemprop="datePublished" datetime="2021-01-01">x</time>'
    name = '<meta name="pubdate" content="2020-01-01">'
    assert date_of(page(name + ld + og, micro)) == "2023-01-01"
    assert date_of(page(name + ld, micro)) == "2022-01-01"
    assert date_of(page(name, micro)) == "2021-01-01"
    assert date_of(page(name)) == "2020-01-01"


def test_placeholders_future_dates_and_prose_are_not_dates() -> None:
    epoch = '<meta property="article:published_time" content="1970-01-01T00:00:00Z">'
    fallback = '<meta name="DC.date.issued" content="2014-09-10">'
    # the Unix epoch is a placeholder: the next declaration is used
    assert date_of(page(epoch + fallback)) == "2014-09-10"
    # after the day after the fetch: not yet published
    assert date_of(page('<meta name="date" content="2026-11-27">')) is None
    assert date_of(page('<meta name="date" content="2026-11-26">')) == "2026-11-26"
    for value in ("2024-13-01", "2024-02-30", "May 3, 2019", "2024315", "yesterday"):
        assert date_of(page(f'<meta name="date" content="{value}">')) is None, value
    assert parse_date("2024-3-5T10:00", TODAY) == dt.date(2024, 3, 5)
    assert parse_date("  2024.03.05", TODAY) == dt.date(2024, 3, 5)
    assert parse_date("Tue, 05 Mar 2024 10:00:00 GMT", TODAY) == dt.date(2024, 3, 5)
    assert parse_date("Tue, 05 Foo 2024 10:00:00 GMT", TODAY) is None


def test_a_date_published_outside_a_declaration_is_passed_over() -> None:
    # another script's data (related articles, an app's state), running text,
    # markup shown as text: none is the page's own declaration
    other_script = '<script>var related = {"datePublished": "2010-01-01"};</script>'
    prose = "<p>Set datePublished to 2011-01-01 and itemprop=datePublished too.</p>"
    shown = '<pre>&lt;time itemprop="datePublished" datetime="2012-01-01"&gt;</pre>'
    assert date_of(page("", other_script + prose + shown)) is None


def test_a_page_whose_body_starts_before_its_head() -> None:
    # text before <html> (a PHP warning, a wrapper): libxml2 makes no head, the metas
    # sit in the body and are still found
    html = 'Warning: something\n<html><head><meta name="DC.date.issued" content="2005-01-19">'
    html += f"</head><body>{BODY}</body></html>"
    root = dom.parse(html)
    assert root is not None and root.find("head") is None
    assert published_date(root, html, TODAY) == "2005-01-19"


def test_broken_and_hostile_declarations() -> None:
    broken = '<script type="application/ld+json">{"datePublished": "2009-09-09", </script>'
    assert date_of(page(broken)) == "2009-09-09"  # read without parsing the JSON
    # a page of a million mentions costs a bounded look (the declaration after them is
    # not reached: such a page only loses its own date), and the head is still read
    flood = "<p>" + "datePublished " * 1_000_000 + "</p>"
    late = '<time itemprop="datePublished" datetime="2008-08-08">x</time>'
    assert date_of(page("", flood + late)) is None
    assert date_of(page('<meta name="date" content="2007-07-07">', flood)) == "2007-07-07"


def test_the_url_is_the_last_resort() -> None:
    def by_url(url: str, head: str = "") -> str | None:
        html = page(head)
        root = dom.parse(html)
        return published_date(root, html, TODAY, url)

    assert by_url("https://news.example/2019/11/21/a-story") == "2019-11-21"
    assert by_url("https://news.example/2012/08/2012/08/21/a-story") == "2012-08-21"
    assert by_url("https://blog.example/posts/2019-1-5-new-year") == "2019-01-05"
    assert by_url("https://news.example/2019/11/21.html") == "2019-11-21"
    # what the page declares comes first
    declared = '<meta property="article:published_time" content="2013-01-11">'
    assert by_url("https://news.example/2011/11/18/story", declared) == "2013-01-11"
    # not dates: an archive listing, numbers in a slug, a query, an impossible day
    for url in (
        "https://news.example/2019/11/",
        "https://shop.example/item/12345/67/89",
        "https://news.example/20191121/story",
        "https://news.example/story?d=2019/11/21",
        "https://news.example/2019/02/30/story",
        "https://news.example/2019/11/21x/story",
    ):
        assert by_url(url) is None, url


def test_extract_sets_the_document_date() -> None:
    html = page('<meta property="article:published_time" content="2023-06-01">', BODY * 3)
    assert extract(html.encode()).published == "2023-06-01"
    assert extract(page(body=BODY * 3).encode()).published is None
    dated_url = "https://news.example/2020/02/02/story"
    assert extract(page(body=BODY * 3).encode(), dated_url).published == "2020-02-02"

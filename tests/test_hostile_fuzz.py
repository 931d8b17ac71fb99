"""1,000 generated and mutated pages through extract() and the link extractor (CI's share of
tools/fuzz_pages.py, which runs 100,000): no exception, bounded CPU time and heap per page.

The bounds catch runaway behaviour (quadratic, recursive, unbounded), not speed: the
slowest of these pages took ~0.9 s of CPU and 26 MB of heap on the shared 2-core machine
this was written on (a 20 KB page of 1,600 nested spans).
"""

from __future__ import annotations

from types import ModuleType

from tool_loader import load_tool

from pipelines.worker import extract_links

#: CPU seconds and MB of Python heap per page.
MAX_SECONDS = 10.0
MAX_MB = 200.0


def _fuzz_module() -> ModuleType:
    return load_tool("fuzz_pages")


def test_a_thousand_fuzzed_pages(capsys: object) -> None:
    fuzz = _fuzz_module()
    report = fuzz.run(1000, seed=20261123, max_seconds=MAX_SECONDS, max_mb=MAX_MB)
    print(report.summary())
    assert report.pages == 1000
    assert report.failures == []


def test_links_the_fuzzer_broke_are_skipped_not_raised() -> None:
    # a port no URL library can cast, a character the page's codec cannot encode,
    # and a `data:` base that would turn relative links into data: URLs
    page = (
        b'<a href="http://h\xc3\xa9st:99999/x">port</a>'
        b'<a href="/\xef\xbf\xbd?q=1 2">replacement character</a>'
        b'<a href="http://example.org/ok">ok</a>'
    )
    links, _ = extract_links(page, "http://fuzz.test/", "shift_jis", "shift_jis")
    assert "http://example.org/ok" in links
    page = b'<base href="http://[v1.x/"><a href="http://[::1:1/">bad</a><a href="/n">n</a>'
    links, _ = extract_links(page, "http://fuzz.test/a/", "utf-8", "utf-8")
    assert links == ("http://fuzz.test/n",)
    page = b'<base href="data:text/html,x"><a href="/next">next</a>'
    links, _ = extract_links(page, "http://fuzz.test/a/", "utf-8", "utf-8")
    assert links == ("http://fuzz.test/next",)


def test_a_base_host_is_made_ascii_once_and_an_impossible_one_is_ignored() -> None:
    # an IDN base: every relative link gets the punycode host
    page = '<base href="http://bücher.example/d/"><a href="p?q=1">p</a><a href="ö">ö</a>'
    links, _ = extract_links(page.encode(), "http://fuzz.test/a/", "utf-8", "utf-8")
    assert links == (
        "http://xn--bcher-kva.example/d/p?q=1",
        "http://xn--bcher-kva.example/d/%C3%B6",
    )
    # a host label IDNA refuses (over 63 characters once encoded): no URL can be made
    # from the base, so browsers fall back to the page's own URL, and so does the crawl
    # (it was kept raw, making every link unfollowable and each one slow to quote)
    host = "é" * 60 + ".example"
    page = f'<base href="http://{host}/d/"><a href="p">p</a>'.encode()
    links, _ = extract_links(page, "http://fuzz.test/a/", "utf-8", "utf-8")
    assert links == ("http://fuzz.test/a/p",)

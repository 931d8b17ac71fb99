"""The site the end-to-end crawl tests serve on 127.0.0.1, and what a correct crawl of it does.

Built from real pages (the gold pages, relative links pointed off-site by
`isolate_links`) plus pages written here for one behaviour each:

    /                       index: links to everything below, some twice, one with a #fragment
    /articles/a<N>.html     gold pages; a1 is sent gzip-compressed and chunked, a2 has Last-Modified
    /private/secret.html    disallowed by robots.txt (also listed in a sitemap): never fetched
    /old-location           301 -> /moved/step -> 302 -> /articles/moved-target.html
    /away                   302 -> an off-site URL: refused by the scope, never requested
    /missing.html           404
    /flaky.html             500 the first time, 200 on the retry
    /files/report           a PDF behind an extension-less link: fetched, archived, not extracted
    /files/manual.pdf       a link to a .pdf: never fetched
    /cz/zprava.html         Czech in windows-1250, the charset only in the HTTP header
    /big.html               5 MB of real text (over the main crawl's size cap)
    /slow.html              answers after 1.5 s
    /calendar?month=N       an endless calendar: every month links to the next and previous
    /refresh.html           <meta http-equiv=refresh> to /articles/refreshed.html
    /meta-nofollow.html     robots meta nofollow: its link is never fetched
    /short.html             one good paragraph, fewer words than the profile's min_words
    /sitemap-only.html      reachable only through the gzipped sitemap
    /robots.txt             Disallow: /private/, Sitemap: /sitemap_index.xml
    /sitemap_index.xml      -> /sitemaps/articles.xml.gz (gzip file), /sitemaps/extra.xml

Loaded by the tests with importlib (a package named `site` would shadow the
standard library's).
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path

from corpus_crawler.testserver import (
    BASE_URL_TOKEN,
    Reply,
    Route,
    add_links,
    calendar_trap,
    fail_then,
    html_reply,
    isolate_links,
    redirect,
    slow,
)

BASE = BASE_URL_TOKEN.decode()
#: CleanEval development pages used as articles (English, real boilerplate, real text).
GOLD_IDS = ("2", "3", "4", "6", "10", "11", "12", "14", "19", "21", "25", "29", "31", "36")
ARTICLE_COUNT = 8
BIG_PAGE_BYTES = 5 * 1024 * 1024
SLOW_SECONDS = 1.5
#: The test profile's max_depth; the calendar is linked from the index (depth 1).
MAX_DEPTH = 4

CZECH_PARAGRAPHS = (
    "Praha je hlavní a největší město České republiky. Leží na řece Vltavě a žije v ní"
    " přibližně jeden a půl milionu obyvatel. Historické centrum města je zapsáno na seznamu"
    " světového dědictví a každý rok sem přijíždějí miliony turistů z celého světa.",
    "Nejznámější památkou je Pražský hrad, který byl po staletí sídlem českých knížat, králů"
    " a později také prezidentů. Pod hradem se rozkládá Malá Strana s úzkými uličkami,"
    " barokními paláci a zahradami, které jsou v létě otevřeny veřejnosti.",
    "Karlův most spojuje Malou Stranu se Starým Městem. Jeho stavba začala ve čtrnáctém"
    " století za vlády Karla IV. a most byl dlouho jediným pevným spojením obou břehů řeky."
    " Dnes je to jedno z nejrušnějších míst v celém městě.",
)

PDF = (
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"
)


@dataclass(frozen=True)
class SiteSpec:
    pages: dict[str, Reply]
    routes: dict[str, Route]
    #: Targets (path, or path?query) a correct crawl fetches exactly once.
    once: frozenset[str]
    #: Targets fetched exactly twice (the 500 and its retry).
    twice: frozenset[str]
    #: Targets that must never be requested.
    never: frozenset[str]
    #: The calendar targets within the depth limit.
    calendar: frozenset[str]
    big_page: bytes = field(repr=False)
    czech_page: bytes = field(repr=False)


def _page(title: str, body: str) -> bytes:
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title></head>\n<body>\n{body}\n</body></html>\n"
    ).encode()


def _gold_pages(gold_dir: Path) -> list[bytes]:
    html_dir = gold_dir / "cleaneval-dev" / "html"
    return [isolate_links((html_dir / f"{page_id}.html").read_bytes()) for page_id in GOLD_IDS]


def _gold_paragraphs(gold_dir: Path) -> list[str]:
    lines: list[str] = []
    for path in sorted((gold_dir / "cleaneval-dev" / "gold").glob("*.txt")):
        lines.extend(
            line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        )
    return [line for line in lines if len(line) > 80]


def big_page(gold_dir: Path, size: int = BIG_PAGE_BYTES) -> bytes:
    paragraphs = _gold_paragraphs(gold_dir)
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>A long page</title></head><body>"
    ]
    total = len(parts[0])
    index = 0
    while total < size:
        text = paragraphs[index % len(paragraphs)]
        chunk = (f"<h2>Part {index // 20 + 1}</h2>" if index % 20 == 0 else "") + f"<p>{text}</p>\n"
        parts.append(chunk)
        total += len(chunk.encode())
        index += 1
    parts.append("</body></html>")
    return "".join(parts).encode()


def czech_page() -> bytes:
    body = "".join(f"<p>{p}</p>\n" for p in CZECH_PARAGRAPHS)
    # no <meta charset>: the charset is only in the HTTP header
    html = (
        "<html><head><title>Praha – hlavní město</title></head><body>"
        f"<h1>Praha</h1>\n{body}<p><a href='/'>Zpět na úvod</a></p></body></html>"
    )
    return html.encode("windows-1250")


def _sitemap(urls: list[str]) -> bytes:
    entries = "".join(f"<url><loc>{BASE}{u}</loc></url>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>\n'
    ).encode()


def build_site(gold_dir: Path) -> SiteSpec:
    gold = _gold_pages(gold_dir)
    articles = [f"/articles/a{i}.html" for i in range(ARTICLE_COUNT)]
    pages: dict[str, Reply] = {}
    for i, path in enumerate(articles):
        html = add_links(gold[i], b"<p><a href='/'>Back to the index</a></p>")
        reply = html_reply(html, charset=None)
        if i == 1:
            reply = html_reply(html, charset=None, chunked=True, compress=True)
        if i == 2:
            reply = Reply(
                headers=(
                    ("Content-Type", "text/html"),
                    ("Last-Modified", "Tue, 15 Oct 2019 08:30:00 GMT"),
                ),
                body=html,
            )
        pages[path] = reply
    spare = gold[ARTICLE_COUNT:]
    pages["/articles/moved-target.html"] = html_reply(spare[0], charset=None)
    pages["/articles/refreshed.html"] = html_reply(spare[1], charset=None)
    pages["/sitemap-only.html"] = html_reply(spare[2], charset=None)
    pages["/private/secret.html"] = html_reply(_page("Secret", "<p>Robots may not read this.</p>"))
    pages["/nofollow-target.html"] = html_reply(_page("Nofollow", "<p>Not to be followed.</p>"))
    pages["/only-from-meta-nofollow.html"] = html_reply(_page("Hidden", "<p>Unreachable.</p>"))
    pages["/files/manual.pdf"] = Reply(headers=(("Content-Type", "application/pdf"),), body=PDF)
    pages["/files/report"] = Reply(headers=(("Content-Type", "application/pdf"),), body=PDF)
    czech = czech_page()
    pages["/cz/zprava.html"] = Reply(
        headers=(("Content-Type", "text/html; charset=windows-1250"),), body=czech
    )
    big = big_page(gold_dir)
    pages["/big.html"] = html_reply(big)
    pages["/refresh.html"] = html_reply(
        b"<html><head><meta http-equiv='refresh' content='0; url=/articles/refreshed.html'>"
        b"<title>Moved</title></head><body><p>This page has moved.</p></body></html>"
    )
    pages["/meta-nofollow.html"] = html_reply(
        _page(
            "Do not follow",
            "<p>This page asks robots not to follow its links.</p>"
            "<a href='/only-from-meta-nofollow.html'>hidden</a>",
        ).replace(b"<title>", b"<meta name='robots' content='index, NOFOLLOW'><title>")
    )
    pages["/short.html"] = html_reply(
        _page(
            "A short note",
            "<p>This is a short note that has only one paragraph of text in it, and it is"
            " written in plain English so that the classifier can see that it is a real"
            " sentence, but it has fewer words than the crawl profile asks for.</p>",
        )
    )
    links = [
        *articles,
        "/articles/a0.html#comments",
        articles[3],
        "/private/secret.html",
        "/old-location",
        "/away",
        "/missing.html",
        "/flaky.html",
        "/files/report",
        "/files/manual.pdf",
        "/cz/zprava.html",
        "/big.html",
        "/slow.html",
        "/calendar?month=0",
        "/refresh.html",
        "/meta-nofollow.html",
        "/short.html",
        "http://offsite.invalid/elsewhere.html",
        "mailto:someone@example.org",
        "javascript:void(0)",
    ]
    items = "".join(f"<li><a href='{href}'>{href}</a></li>" for href in links)
    pages["/"] = html_reply(
        _page(
            "Test site",
            "<h1>Test site</h1><p>A site for the crawler's end-to-end tests.</p>"
            f"<ul>{items}<li><a rel='nofollow' href='/nofollow-target.html'>nofollow</a></li></ul>",
        )
    )
    pages["/robots.txt"] = Reply(
        headers=(("Content-Type", "text/plain"),),
        body=f"User-agent: *\nDisallow: /private/\nSitemap: {BASE}/sitemap_index.xml\n".encode(),
    )
    pages["/sitemap_index.xml"] = Reply(
        headers=(("Content-Type", "application/xml"),),
        body=(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{BASE}/sitemaps/articles.xml.gz</loc></sitemap>"
            f"<sitemap><loc>{BASE}/sitemaps/extra.xml</loc></sitemap>"
            "</sitemapindex>\n"
        ).encode(),
    )
    pages["/sitemaps/extra.xml"] = Reply(
        headers=(("Content-Type", "application/xml"),),
        body=_sitemap(["/sitemap-only.html", "/private/secret.html", articles[0]]),
    )
    routes: dict[str, Route] = {
        "/old-location": redirect("/moved/step", 301),
        "/moved/step": redirect("/articles/moved-target.html", 302),
        "/away": redirect("http://offsite.invalid/landing.html", 302),
        "/missing.html": lambda request: Reply(
            status=404, headers=(("Content-Type", "text/html"),), body=b"<p>Not here.</p>"
        ),
        "/flaky.html": fail_then(html_reply(spare[3], charset=None), failures=1, status=500),
        "/slow.html": slow(html_reply(spare[4], charset=None), SLOW_SECONDS),
        "/calendar": calendar_trap("/calendar"),
        # a .xml.gz file (gzip as content, not Content-Encoding), built per request
        # because it must contain the server's address
        "/sitemaps/articles.xml.gz": lambda request: Reply(
            headers=(("Content-Type", "application/x-gzip"),),
            body=gzip_sitemap(f"http://{request.headers['host']}", articles[:4]),
        ),
    }
    calendar = frozenset(f"/calendar?month={month}" for month in range(-(MAX_DEPTH - 1), MAX_DEPTH))
    once = frozenset(
        {
            "/",
            "/sitemap_index.xml",
            "/sitemaps/articles.xml.gz",
            "/sitemaps/extra.xml",
            *articles,
            "/old-location",
            "/moved/step",
            "/away",
            "/articles/moved-target.html",
            "/missing.html",
            "/files/report",
            "/cz/zprava.html",
            "/big.html",
            "/slow.html",
            "/refresh.html",
            "/articles/refreshed.html",
            "/meta-nofollow.html",
            "/short.html",
            "/sitemap-only.html",
            *calendar,
        }
    )
    never = frozenset(
        {
            "/private/secret.html",
            "/nofollow-target.html",
            "/only-from-meta-nofollow.html",
            "/files/manual.pdf",
            f"/calendar?month={MAX_DEPTH}",
            f"/calendar?month={-MAX_DEPTH}",
        }
    )
    return SiteSpec(
        pages=pages,
        routes=routes,
        once=once,
        twice=frozenset({"/flaky.html"}),
        never=never,
        calendar=calendar,
        big_page=big,
        czech_page=czech,
    )


def gzip_sitemap(base_url: str, paths: list[str]) -> bytes:
    return gzip.compress(_sitemap(paths).replace(BASE_URL_TOKEN, base_url.encode()), mtime=0)

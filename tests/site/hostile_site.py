"""Hostile test sites for tests/test_hostile_web.py, and the DNS server they need.

`ScriptedDns` is a real DNS server on 127.0.0.1 (UDP, port 0) whose answers a
test scripts: a name can answer differently on each lookup (rebinding), fail
first (SERVFAIL) and answer later, answer only IPv6 forms, or match a wildcard.
The crawler is pointed at it with the profile's `network.dns_servers`, so test
host names (`*.test`) resolve to loopback addresses without touching the
system's resolver.

Loaded with importlib (a package named `site` would shadow the standard library's).
"""

from __future__ import annotations

import gzip
import html
import http.server
import socket
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType

from twisted.names import dns

from corpus_crawler.testserver import Reply, RequestRecord, Route, html_reply

#: One lookup's answer: addresses, or FAIL for SERVFAIL.
FAIL: tuple[str, ...] = ("SERVFAIL",)
Answer = Sequence[str]


class ScriptedDns:
    """A UDP DNS server on 127.0.0.1 answering A and AAAA queries from a script.

    `script` maps a name (or `*.suffix`, for every name under it) to the answers of
    its successive lookups, the last one repeating; a lookup is counted once per
    name whatever record type is asked (the A query of a lookup decides which
    answer it gets; its AAAA query gets the same one). Addresses containing `:`
    are AAAA records. Unknown names get NXDOMAIN.
    """

    def __init__(self, script: Mapping[str, Sequence[Answer]]) -> None:
        self.script = {name.lower(): list(answers) for name, answers in script.items()}
        self.lookups: Counter[str] = Counter()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="scripted-dns", daemon=True)
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        host, port = self._socket.getsockname()
        return f"{host}:{port}"

    def _answers(self, name: str) -> Sequence[Answer] | None:
        if name in self.script:
            return self.script[name]
        labels = name.split(".")
        for start in range(1, len(labels)):
            wildcard = "*." + ".".join(labels[start:])
            if wildcard in self.script:
                return self.script[wildcard]
        return None

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                reply = self._reply(data)
            except Exception:  # a query we cannot parse: no answer, as a real server
                continue
            self._socket.sendto(reply, client)

    def _reply(self, data: bytes) -> bytes:
        message = dns.Message()
        message.fromStr(data)
        query = message.queries[0]
        name = query.name.name.decode("ascii").lower().rstrip(".")
        answers = self._answers(name)
        message.answer = 1
        message.recAv = 1
        if answers is None:
            message.rCode = dns.ENAME
            return bytes(message.toStr())
        with self._lock:
            if query.type == dns.A:
                self.lookups[name] += 1
            index = max(self.lookups[name] - 1, 0)
        answer = answers[min(index, len(answers) - 1)]
        if tuple(answer) == FAIL:
            message.rCode = dns.ESERVER
            return bytes(message.toStr())
        for address in answer:
            if query.type == dns.A and ":" not in address:
                payload: object = dns.Record_A(address, ttl=0)
            elif query.type == dns.AAAA and ":" in address:
                payload = dns.Record_AAAA(address, ttl=0)
            else:
                continue
            message.answers.append(dns.RRHeader(name=name, type=query.type, payload=payload, ttl=0))
        return bytes(message.toStr())

    def start(self) -> ScriptedDns:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()

    def __enter__(self) -> ScriptedDns:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


# -- pages ----------------------------------------------------------------------------------


def page(title: str, links: Sequence[str] = (), text: str = "") -> bytes:
    body = text or (
        f"This is the page called {title}. It has a few sentences of text so that it looks"
        " like a page of a real site and not like an empty one."
    )
    anchors = "".join(f'<li><a href="{link}">{link[:40]}</a></li>' for link in links)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        f"<h1>{title}</h1><p>{body}</p><ul>{anchors}</ul></body></html>"
    ).encode()


def closing(reply: Reply) -> Reply:
    """`reply` with `Connection: close`: each request opens (and resolves) a new connection."""
    return Reply(
        status=reply.status, headers=(*reply.headers, ("Connection", "close")), body=reply.body
    )


def secret_site(marker: str) -> dict[str, Reply]:
    """What the refused address serves: anything archived from it is a leak."""
    pages = {
        path: closing(html_reply(page(f"{marker} {path}", ["/a", "/b", "/c"])))
        for path in ("/", "/a", "/b", "/c")
    }
    pages["/robots.txt"] = Reply(
        headers=(("Content-Type", "text/plain"),), body=b"# " + marker.encode()
    )
    return pages


def public_site() -> dict[str, Reply]:
    """The allowed address's pages: the same paths, innocent content."""
    return {
        path: closing(html_reply(page(f"public {path}", ["/a", "/b", "/c"])))
        for path in ("/", "/a", "/b", "/c")
    }


def cookie_routes(seen_cookies: list[str]) -> dict[str, Route]:
    """`/` sets a cookie for its registered domain; `/next` records the Cookie header."""

    def first(request: RequestRecord) -> Reply:
        reply = html_reply(page("cookie jar", ["/next"]))
        return Reply(
            headers=(*reply.headers, ("Set-Cookie", "visit=1; Domain=cookie.test; Path=/")),
            body=reply.body,
        )

    def second(request: RequestRecord) -> Reply:
        seen_cookies.append(request.headers.get("cookie", ""))
        return html_reply(page("after the cookie"))

    return {"/": first, "/next": second}


def huge_robots_txt(size: int = 10_000_000) -> bytes:
    """Many user-agent groups: what makes a robots.txt parser slow (2.5 s for 10 MB)."""
    line = 0
    parts: list[bytes] = []
    total = 0
    while total < size:
        chunk = f"User-agent: bot{line}\nDisallow: /private/{line}/\n".encode()
        parts.append(chunk)
        total += len(chunk)
        line += 1
    return b"".join(parts)[:size]


def tree_site(count: int) -> dict[str, Reply]:
    """`count` pages, /p0 .. /p<count-1>, page i linking to pages 2i+1 and 2i+2."""
    pages: dict[str, Reply] = {}
    for i in range(count):
        links = [f"/p{j}" for j in (2 * i + 1, 2 * i + 2) if j < count]
        pages[f"/p{i}"] = html_reply(page(f"page {i}", links))
    pages["/"] = pages["/p0"]
    return pages


# -- traps ----------------------------------------------------------------------------------

LONG_LINK = "/long?" + "x" * 8000
TOO_MANY_PARAMETERS = "/params?" + "&".join(f"k{i}=v" for i in range(20))
BOMB_BYTES = 30 * 1024 * 1024


def trap_routes(base: str, wild: str) -> dict[str, Route]:
    """The trap host's routes; `base` is its http://trap.test:PORT, `wild` a format string
    http://w{}.wild.test:PORT for the wildcard subdomains."""
    bomb = gzip.compress(b"\0" * BOMB_BYTES, compresslevel=9)

    def index(request: RequestRecord) -> Reply:
        links = [
            "/grow/",
            "/session?sid=0",
            "/calendar?month=0",
            wild.format(0) + "/w",
            LONG_LINK,
            TOO_MANY_PARAMETERS,
            "/bomb.html",
        ]
        return html_reply(page("traps", links))

    def session(request: RequestRecord) -> Reply:
        query = urllib.parse.parse_qs(request.query)
        sid = int(query.get("sid", ["0"])[0]) + 1
        return html_reply(page("session", [f"/session?sid={sid}", f"/session?sid={sid}&page=2"]))

    def calendar(request: RequestRecord) -> Reply:
        query = urllib.parse.parse_qs(request.query)
        month = int(query.get("month", ["0"])[0])
        return html_reply(page(f"month {month}", [f"/calendar?month={month + 1}"]))

    def bomb_page(request: RequestRecord) -> Reply:
        return Reply(
            headers=(("Content-Type", "text/html"), ("Content-Encoding", "gzip")), body=bomb
        )

    return {"/": index, "/session": session, "/calendar": calendar, "/bomb.html": bomb_page}


def grow_fallback(wild: str) -> Route:
    """Every other path: /grow/... links relatively to `a/` (the path grows without end),
    and a wildcard subdomain's page links to the next subdomain."""

    def route(request: RequestRecord) -> Reply:
        host = request.headers.get("host", "")
        if host.startswith("w") and ".wild.test" in host:
            number = int(host[1:].split(".", 1)[0])
            # ten new subdomains a page: the crawl fans out wide, not deep
            links = [wild.format(10 * number + k) + "/w" for k in range(1, 11)]
            return html_reply(page(f"subdomain {number}", links))
        if request.path.startswith("/grow/"):
            return html_reply(page(f"grown {request.path.count('/')}", ["a/"]))
        return Reply(status=404, headers=(("Content-Type", "text/plain"),), body=b"not found\n")

    return route


def sitemap_routes(base: str) -> dict[str, Route]:
    """An endless chain of sitemap indexes, each also listing five leaf sitemaps, and a
    sitemap with an internal DTD."""
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'

    def index(request: RequestRecord) -> Reply:
        depth = int(urllib.parse.parse_qs(request.query).get("d", ["0"])[0])
        entries = [f"{base}/sm/index?d={depth + 1}"] + [
            f"{base}/sm/urls?d={depth}&amp;k={k}" for k in range(5)
        ]
        body = "".join(f"<sitemap><loc>{e}</loc></sitemap>" for e in entries)
        xml = f'<?xml version="1.0"?><sitemapindex {ns}>{body}</sitemapindex>'
        return Reply(headers=(("Content-Type", "application/xml"),), body=xml.encode())

    def urls(request: RequestRecord) -> Reply:
        loc = html.escape(f"{base}/from-sitemap?{request.query}")
        xml = f"<urlset {ns}><url><loc>{loc}</loc></url></urlset>"
        return Reply(headers=(("Content-Type", "application/xml"),), body=xml.encode())

    def with_dtd(request: RequestRecord) -> Reply:
        comments = "".join(f"<!-- the subset is long, line {i} -->\n" for i in range(30))
        xml = (
            f"<!DOCTYPE urlset [\n{comments}<!ELEMENT urlset (url*)>\n"
            '<!ENTITY dir "from-dtd">\n]>\n'
            f"<urlset {ns}><url><loc>{base}/&dir;/1</loc></url>"
            f"<url><loc>{base}/from-dtd/2</loc></url></urlset>"
        )
        return Reply(headers=(("Content-Type", "text/xml"),), body=xml.encode())

    def leaf(request: RequestRecord) -> Reply:
        return html_reply(page(f"listed {request.path}"))

    return {
        "/sm/index": index,
        "/sm/urls": urls,
        "/sm/dtd.xml": with_dtd,
        "/from-sitemap": leaf,
        "/from-dtd/1": leaf,
        "/from-dtd/2": leaf,
    }


# -- a big sitemap --------------------------------------------------------------------------


def big_sitemap(size: int, listed: Sequence[str]) -> bytes:
    """A urlset of about `size` bytes: `<url>` entries without a `<loc>` (each still an
    element the parser walks: ~5 s of CPU for 40 MB), then the `listed` URLs at the end,
    so a reader knows them only once it has read the whole file."""
    ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {ns}>\n'.encode()
    entry = b"<url><lastmod>2024-01-01</lastmod><changefreq>daily</changefreq></url>\n"
    locs = "".join(f"<url><loc>{html.escape(url)}</loc></url>\n" for url in listed)
    tail = (locs + "</urlset>\n").encode()
    return head + entry * max(0, (size - len(head) - len(tail)) // len(entry)) + tail


class SitemapHost(http.server.ThreadingHTTPServer):
    """Serves one big sitemap and the pages it lists, and notes when the sitemap's last
    byte was handed to the socket (the SiteServer records arrivals only)."""

    daemon_threads = True

    def __init__(self, listed: int) -> None:
        super().__init__(("127.0.0.1", 0), _SitemapHandler)
        self.listed_paths = [f"/listed/{i}" for i in range(listed)]
        self.body = b""
        self.events: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def note(self, what: str) -> None:
        with self.lock:
            self.events.append((time.monotonic(), what))

    def listed_requested(self) -> bool:
        with self.lock:
            return any(what.startswith("GET /listed/") for _, what in self.events)

    def __enter__(self) -> SitemapHost:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _SitemapHandler(http.server.BaseHTTPRequestHandler):
    server: SitemapHost

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.server.note(f"GET {self.path}")
        if self.path == "/sitemap.xml":
            status, body, kind = 200, self.server.body, "application/xml"
        elif self.path in self.server.listed_paths:
            status, body, kind = 200, page(self.path), "text/html"
        else:
            status, body, kind = 404, b"not found", "text/plain"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        if self.path == "/sitemap.xml":
            self.server.note("sitemap sent")


def chain_until(done: Callable[[], bool], times: list[float], max_pages: int) -> Route:
    """/p0, /p1, ... each linking to the next until `done()` (or `max_pages`), noting
    when each was requested: a host crawled for as long as something else takes."""

    def route(request: RequestRecord) -> Reply:
        times.append(time.monotonic())
        number = int(request.path[2:]) if request.path.startswith("/p") else 0
        more = number < max_pages and not done()
        links = [f"/p{number + 1}"] if more else []
        return html_reply(page(f"page {number}", links))

    return route

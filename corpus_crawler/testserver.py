"""A small threaded HTTP server on 127.0.0.1 for the demo, the crawl tests and the benchmark.

It serves a folder (or pages held in memory) plus *routes*: functions that
answer one path and can redirect, fail, stall or generate pages. Every request
is logged, so a test can check that a page was fetched exactly once and that a
page disallowed by robots.txt never was.

Only the standard library is used; the server binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import gzip
import http.server
import mimetypes
import re
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

__all__ = [
    "Reply",
    "RequestRecord",
    "Route",
    "SiteServer",
    "add_links",
    "calendar_trap",
    "fail_then",
    "html_reply",
    "isolate_links",
    "redirect",
    "slow",
]


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the server saw it."""

    method: str
    #: Path without the query string, e.g. `/a/b.html`.
    path: str
    #: The query string without `?` ("" when there is none).
    query: str
    headers: Mapping[str, str]
    #: How many requests for the same path and query came before this one.
    previous: int

    @property
    def target(self) -> str:
        return f"{self.path}?{self.query}" if self.query else self.path


@dataclass(frozen=True, slots=True)
class Reply:
    """What a route answers."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    #: Seconds to wait before answering (a slow server).
    delay: float = 0.0
    #: Send the body with `Transfer-Encoding: chunked` instead of `Content-Length`.
    chunked: bool = False
    #: gzip the body when the client accepts it (`Content-Encoding: gzip`).
    compress: bool = False


Route = Callable[[RequestRecord], Reply]


def html_reply(
    body: bytes,
    charset: str | None = "utf-8",
    *,
    status: int = 200,
    chunked: bool = False,
    compress: bool = False,
) -> Reply:
    """An HTML page; `charset=None` leaves the charset out of the Content-Type header."""
    content_type = "text/html" + (f"; charset={charset}" if charset else "")
    return Reply(
        status=status,
        headers=(("Content-Type", content_type),),
        body=body,
        chunked=chunked,
        compress=compress,
    )


def redirect(location: str, status: int = 301) -> Route:
    """A route answering with a redirect to `location` (absolute path or URL)."""

    def route(request: RequestRecord) -> Reply:
        return Reply(status=status, headers=(("Location", location),), body=b"moved\n")

    return route


def fail_then(reply: Reply, failures: int = 1, status: int = 500) -> Route:
    """A route failing with `status` on its first `failures` requests, then answering `reply`."""

    def route(request: RequestRecord) -> Reply:
        if request.previous < failures:
            return Reply(
                status=status,
                headers=(("Content-Type", "text/plain"),),
                body=b"temporary failure\n",
            )
        return reply

    return route


def slow(reply: Reply, delay: float) -> Route:
    """A route answering `reply` after `delay` seconds."""

    def route(request: RequestRecord) -> Reply:
        return Reply(
            status=reply.status,
            headers=reply.headers,
            body=reply.body,
            delay=delay,
            chunked=reply.chunked,
            compress=reply.compress,
        )

    return route


def calendar_trap(path: str) -> Route:
    """An endless calendar: every month links to the next one, forever (a crawler trap)."""

    def route(request: RequestRecord) -> Reply:
        query = urllib.parse.parse_qs(request.query)
        try:
            month = int(query.get("month", ["0"])[0])
        except ValueError:
            month = 0
        body = (
            "<!DOCTYPE html><html><head><title>Events calendar</title></head><body>"
            f"<h1>Events in month {month}</h1>"
            "<p>There are no events planned for this month yet.</p>"
            f'<p><a href="{path}?month={month - 1}">previous month</a> | '
            f'<a href="{path}?month={month + 1}">next month</a></p>'
            "</body></html>"
        ).encode()
        return html_reply(body)

    return route


#: In served text and XML files (robots.txt, sitemaps), replaced by the server's address.
BASE_URL_TOKEN = b"{{BASE_URL}}"


@dataclass(slots=True)
class _State:
    root: Path | None
    routes: Mapping[str, Route]
    pages: Mapping[str, Reply]
    html_charset: str | None
    #: Answers every path nothing else answers (a test site of generated paths).
    fallback: Route | None = None
    base_url: str = ""
    #: False: count requests per target but keep no log (a soak test of millions of pages).
    keep_log: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)
    log: list[RequestRecord] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)


class _Handler(http.server.BaseHTTPRequestHandler):
    # keep-alive like a real server, so a crawler reuses its connections
    protocol_version = "HTTP/1.1"
    server_version = "corpus-crawler-testserver/1"
    state: _State

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, send_body: bool) -> None:
        parts = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parts.path) or "/"
        target = f"{path}?{parts.query}" if parts.query else path
        state = self.state
        with state.lock:
            previous = state.seen[target]
            state.seen[target] += 1
            record = RequestRecord(
                method=self.command,
                path=path,
                query=parts.query,
                headers={k.lower(): v for k, v in self.headers.items()},
                previous=previous,
            )
            if state.keep_log:
                state.log.append(record)
        reply = self._reply(record)
        if reply.delay:
            time.sleep(reply.delay)
        body = reply.body
        headers = list(reply.headers)
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        if content_type.startswith("text/") or "xml" in content_type:
            body = body.replace(BASE_URL_TOKEN, state.base_url.encode("ascii"))
        accepts_gzip = "gzip" in record.headers.get("accept-encoding", "")
        if reply.compress and accepts_gzip:
            body = gzip.compress(body, mtime=0)
            headers.append(("Content-Encoding", "gzip"))
        self.send_response(reply.status)
        for name, value in headers:
            self.send_header(name, value)
        if reply.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not send_body:
            return
        try:
            if reply.chunked:
                step = 4096
                for start in range(0, len(body), step):
                    piece = body[start : start + step]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # the client gave up (a size cap, a timeout): that is its right
            self.close_connection = True

    def _reply(self, record: RequestRecord) -> Reply:
        state = self.state
        route = state.routes.get(record.path)
        if route is not None:
            return route(record)
        page = state.pages.get(record.target) or state.pages.get(record.path)
        if page is not None:
            return page
        if state.root is not None:
            return _file_reply(state.root, record.path, state.html_charset)
        if state.fallback is not None:
            return state.fallback(record)
        return _not_found()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A client closing a kept-alive connection is normal; anything else is printed.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def _not_found() -> Reply:
    return Reply(status=404, headers=(("Content-Type", "text/plain"),), body=b"not found\n")


def _file_reply(root: Path, path: str, html_charset: str | None) -> Reply:
    relative = path.lstrip("/")
    candidate = (root / relative).resolve()
    if candidate.is_dir():
        candidate = candidate / "index.html"
    try:
        candidate.relative_to(root.resolve())
    except ValueError:
        return _not_found()
    if not candidate.is_file():
        return _not_found()
    content_type = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
    body = candidate.read_bytes()
    if content_type == "text/html" and html_charset:
        content_type += f"; charset={html_charset}"
    return Reply(headers=(("Content-Type", content_type),), body=body)


class SiteServer:
    """Serve `root` (a folder), `pages` (path -> Reply) and `routes` on 127.0.0.1.

    Lookup order: routes (by path), pages (by path with query, then path), files,
    then `fallback` (a route for every other path), else 404.
    In text and XML replies, ``{{BASE_URL}}`` becomes the server's address (for
    robots.txt `Sitemap:` lines and sitemaps, which need absolute URLs).
    Use as a context manager or call `start()` / `stop()`. `host` and `port` bind
    another loopback address (Linux routes all of 127/8 to lo) or a fixed port, e.g.
    the same port on 127.0.0.2 for a test name that resolves to either address.
    `keep_log=False` keeps no `requests` log (a long soak would hold every request).
    """

    def __init__(
        self,
        root: Path | None = None,
        *,
        routes: Mapping[str, Route] | None = None,
        pages: Mapping[str, Reply] | None = None,
        html_charset: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        fallback: Route | None = None,
        keep_log: bool = True,
    ) -> None:
        self._state = _State(
            root=root,
            routes=dict(routes or {}),
            pages=dict(pages or {}),
            html_charset=html_charset,
            fallback=fallback,
            keep_log=keep_log,
        )
        handler = type("Handler", (_Handler,), {"state": self._state})
        self._server = _Server((host, port), handler)
        self._state.base_url = self.base_url
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def start(self) -> SiteServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="site-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request so far, in arrival order."""
        with self._state.lock:
            return list(self._state.log)

    def count(self, target: str) -> int:
        """How many times `target` (path, with `?query` if any) was requested."""
        with self._state.lock:
            return self._state.seen[target]

    def counts(self) -> dict[str, int]:
        with self._state.lock:
            return dict(self._state.seen)


# -- building test sites ------------------------------------------------------------------

_HREF = re.compile(rb"""(\shref\s*=\s*)(["']?)([^"'\s>]*)""", re.IGNORECASE)
_BASE_TAG = re.compile(rb"<base\b[^>]*>", re.IGNORECASE)
_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)
_KEPT_PREFIXES = (b"http://", b"https://", b"#", b"mailto:", b"javascript:", b"//")


def isolate_links(html: bytes, offsite: bytes = b"http://offsite.invalid/") -> bytes:
    """A real page made safe to serve elsewhere: its relative links point off-site.

    Pages copied from the web keep links to their original site's paths; served
    on a test server they would all be 404s. Each relative ``href`` gets the
    `offsite` prefix (so a crawl sees them but its scope refuses them), and
    ``<base>`` tags go.
    """

    def rewrite(match: re.Match[bytes]) -> bytes:
        value = match.group(3)
        if not value or value.lower().startswith(_KEPT_PREFIXES):
            return match.group(0)
        return match.group(1) + match.group(2) + offsite + value.lstrip(b"./")

    return _HREF.sub(rewrite, _BASE_TAG.sub(b"", html))


def add_links(html: bytes, links: bytes) -> bytes:
    """`links` (HTML) inserted before the page's last ``</body>``, or appended."""
    ends = list(_BODY_END.finditer(html))
    if not ends:
        return html + links
    at = ends[-1].start()
    return html[:at] + links + html[at:]

"""Loopback servers that break HTTP on purpose, at the byte level.

`HostileServer` listens on several ports of 127.0.0.1 (a port is a host to the
crawler: its own robots.txt, its own politeness slot). The main port serves an
index linking to every hostile path of `PATHS`; the other ports each serve a
different broken robots.txt (`ROBOTS`) and one plain page. A canary port on
127.0.0.2, an address the crawl's profile does not allow, records whether
anything ever connects to it.

Each handler writes raw bytes to the socket: lying framing, bombs, drips,
floods, redirects to other schemes and addresses, content-type lies. The
server records every request line it read (`log`), so a test can tell an
exchange that happened from one that did not.
"""

from __future__ import annotations

import bz2
import gzip
import socket
import socketserver
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["PATHS", "ROBOTS", "HostileCrawl", "HostileServer", "crawl"]

ROOT = Path(__file__).resolve().parent.parent.parent

#: The size cap (limits.max_page_bytes) of the crawl.
CAP = 100_000
#: The sitemap size cap (limits.max_sitemap_bytes) of the crawl.
SITEMAP_CAP = 1_000_000
#: The sitemaps the crawl starts from.
SITEMAPS = (
    "/sitemap-ok.xml",
    "/sitemap-bomb.xml",
    "/sitemap-bad-gzip.xml",
    "/sitemap-zstd.xml",
    "/sitemap-file.xml.gz",
)
#: The download timeout of the crawl, seconds.
TIMEOUT = 3


def html(title: str, links: tuple[str, ...] = ()) -> bytes:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    paragraphs = "".join(
        f"<p>{title}: tento odstavec číslo {number} má dost slov, aby prošel jako dobrý"
        " text, a proto ho extraktor ponechá v korpusu.</p>"
        for number in range(6)
    )
    return (
        f"<!DOCTYPE html><html lang=cs><head><meta charset=utf-8><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{paragraphs}<ul>{anchors}</ul></body></html>"
    ).encode()


def head(status: bytes, *lines: bytes) -> bytes:
    return status + b"\r\n" + b"".join(line + b"\r\n" for line in lines) + b"\r\n"


def page(body: bytes, *lines: bytes, status: bytes = b"HTTP/1.1 200 OK") -> bytes:
    return head(status, *lines, b"Content-Length: %d" % len(body), b"Connection: close") + body


HTML = b"Content-Type: text/html; charset=utf-8"
XML = b"Content-Type: application/xml"


def _sitemap(*urls: str) -> bytes:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    ).encode()


# -- bombs: small on the wire, huge decoded ----------------------------------------------

_ZEROS_MB = 1024 * 1024


def _gzip_bomb(megabytes: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * _ZEROS_MB
    return b"".join(compressor.compress(block) for _ in range(megabytes)) + compressor.flush()


def _deflate_bomb(megabytes: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS)
    block = b"\0" * _ZEROS_MB
    return b"".join(compressor.compress(block) for _ in range(megabytes)) + compressor.flush()


def _brotli_bomb(megabytes: int) -> bytes:
    import brotli

    # quality 2 is the fastest that still fits a GB of zeros in a few KB
    compressor = brotli.Compressor(quality=2)
    block = b"\0" * _ZEROS_MB
    out = b"".join(compressor.process(block) for _ in range(megabytes))
    return out + compressor.finish()


def _gzip_members_bomb(megabytes: int) -> bytes:
    """One gzip member of a MB of zeros, repeated: a valid gzip stream (RFC 1952 2.2)
    that decodes to `megabytes` MB, made in milliseconds."""
    return _gzip_bomb(1) * megabytes


#: Decoded sizes of the bombs, MB: the single ones stay under CAP on the wire (gzip
#: and deflate top out near 1:1000), brotli and the nested gzip reach a GB or more
#: from a few KB.
BOMB_MB = 80
BROTLI_BOMB_MB = 1024
NESTED_BOMB_MB = 2048


@dataclass(frozen=True)
class Bombs:
    gzip: bytes
    deflate: bytes
    brotli: bytes
    nested: bytes


def make_bombs() -> Bombs:
    return Bombs(
        gzip=_gzip_bomb(BOMB_MB),
        deflate=_deflate_bomb(BOMB_MB),
        brotli=_brotli_bomb(BROTLI_BOMB_MB),
        # gzip of a gzip: the outer layer is ~2 MB decoded, the inner one 2 GB
        nested=gzip.compress(_gzip_members_bomb(NESTED_BOMB_MB), 9, mtime=0),
    )


# -- handlers --------------------------------------------------------------------------

Handler = Callable[[socket.socket, "_Server"], None]


def send(data: bytes) -> Handler:
    def handler(sock: socket.socket, server: _Server) -> None:
        sock.sendall(data)

    return handler


def drip(data: bytes, every: float, start: int = 0) -> Handler:
    """Send `data[:start]` at once, then one byte every `every` seconds."""

    def handler(sock: socket.socket, server: _Server) -> None:
        sock.sendall(data[:start])
        for index in range(start, len(data)):
            if server.stop.wait(every):
                return
            try:
                sock.sendall(data[index : index + 1])
            except OSError:
                return  # the client gave up: what the test wants

    return handler


def endless_headers(sock: socket.socket, server: _Server) -> None:
    """A status line, then header lines as fast as the client reads them, never a blank one."""
    sock.sendall(b"HTTP/1.1 200 OK\r\n")
    batch = b"".join(b"X-More-%d: %s\r\n" % (n, b"v" * 40) for n in range(1000))
    while not server.stop.is_set():
        try:
            sock.sendall(batch)
        except OSError:
            return


def flaky(cut: bytes, whole: bytes, path: str) -> Handler:
    """`cut` the first time `path` is asked for, `whole` after that."""

    def handler(sock: socket.socket, server: _Server) -> None:
        with server.lock:
            first = server.log.count(path) == 1
        sock.sendall(cut if first else whole)

    return handler


def silent(sock: socket.socket, server: _Server) -> None:
    """Accept, read the request, never answer; hold the connection until the client leaves."""
    sock.settimeout(0.5)
    while not server.stop.is_set():
        try:
            if not sock.recv(4096):
                return
        except TimeoutError:
            continue
        except OSError:
            return


def redirect(location: bytes, status: bytes = b"HTTP/1.1 302 Found") -> Handler:
    return send(head(status, b"Location: " + location, b"Content-Length: 0", b"Connection: close"))


def _chunked(body: bytes, size: int) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


_META_REFRESH = b'<html><head><meta http-equiv="refresh" content="0; url=%s"></head></html>'
_PNG = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + bytes(range(256)) * 8
_PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n" + bytes(range(256)) * 8
_ZIP = b"PK\x03\x04" + bytes(range(256)) * 8


#: The page most hostile paths wrap.
OK_PAGE = html("Stránka")
#: What /flaky.html serves whole, after a first answer cut short by a close.
FLAKY_PAGE = html("Napodruhé")
#: path -> (Content-Encoding, body) the crawler cannot undo: broken or unknown codings.
CODED_BODIES = {
    "/bad-gzip.html": (b"gzip", b"\x1f\x8b\x08\x00garbage" * 50),
    "/zstd.html": (b"zstd", b"\x28\xb5\x2f\xfd" + OK_PAGE),  # a zstd magic, then no frame
    "/compress.html": (b"compress", b"\x1f\x9d" + OK_PAGE),
    "/bzip2.html": (b"bzip2", bz2.compress(OK_PAGE)),
    "/invented.html": (b"x-invented-42", html("Vymyšlené kódování")),
}


def wire_body(path: str) -> bytes:
    """The body as sent of a path of `CODED_BODIES`."""
    return CODED_BODIES[path][1]


def hostile_paths(port: int, canary: str, bombs: Bombs) -> dict[str, Handler]:
    """path -> handler, for the main port (`port`); `canary`: base URL nobody may contact."""
    ok = OK_PAGE
    chunked_ok = _chunked(ok, 500)
    chained = {
        f"/chain/{n}": redirect(b"/chain/%d" % (n + 1), b"HTTP/1.1 301 Moved Permanently")
        for n in range(30)
    }
    return {
        # -- compression
        "/bomb-gzip.html": send(page(bombs.gzip, HTML, b"Content-Encoding: gzip")),
        "/bomb-deflate.html": send(page(bombs.deflate, HTML, b"Content-Encoding: deflate")),
        "/bomb-br.html": send(page(bombs.brotli, HTML, b"Content-Encoding: br")),
        "/bomb-nested.html": send(page(bombs.nested, HTML, b"Content-Encoding: gzip, gzip")),
        "/gzip-gzip.html": send(
            page(
                gzip.compress(gzip.compress(html("Dvakrát"), mtime=0), mtime=0),
                HTML,
                b"Content-Encoding: gzip, gzip",
            )
        ),
        **{
            path: send(page(body, HTML, b"Content-Encoding: " + coding))
            for path, (coding, body) in CODED_BODIES.items()
        },
        # -- framing
        "/cl-long.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Content-Length: 50000", b"Connection: close") + ok
        ),
        "/flaky.html": flaky(
            head(b"HTTP/1.1 200 OK", HTML, b"Content-Length: 50000", b"Connection: close") + ok,
            page(FLAKY_PAGE, HTML),
            "/flaky.html",
        ),
        "/cl-short.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Content-Length: 100", b"Connection: close")
            + ok
            + b"HTTP/1.1 200 OK\r\n\r\nsmuggled"
        ),
        "/cl-conflict.html": send(
            head(
                b"HTTP/1.1 200 OK",
                HTML,
                b"Content-Length: %d" % len(ok),
                b"Content-Length: 10",
                b"Connection: close",
            )
            + ok
        ),
        "/chunk-truncated.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Transfer-Encoding: chunked", b"Connection: close")
            + chunked_ok[: len(chunked_ok) // 2]
        ),
        "/chunk-bad.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Transfer-Encoding: chunked", b"Connection: close")
            + chunked_ok[:507]  # the first chunk (500 bytes) whole, then no size
            + b"zz; nonsense\r\n"
            + b"x" * 100
        ),
        "/over-cap-small-cl.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Content-Length: 1000", b"Connection: close")
            + b"<p>" * (CAP * 3)
        ),
        "/over-cap-no-length.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Connection: close") + b"<p>x</p>" * CAP
        ),
        "/te-and-cl.html": send(
            head(
                b"HTTP/1.1 200 OK",
                HTML,
                b"Transfer-Encoding: chunked",
                b"Content-Length: 10",
                b"Connection: close",
            )
            + chunked_ok
        ),
        "/te-unknown.html": send(
            head(
                b"HTTP/1.1 200 OK", HTML, b"Transfer-Encoding: gzip, chunked", b"Connection: close"
            )
            + _chunked(gzip.compress(ok, mtime=0), 300)
        ),
        "/cl-negative.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Content-Length: -1", b"Connection: close") + ok
        ),
        "/cl-garbage.html": send(
            head(b"HTTP/1.1 200 OK", HTML, b"Content-Length: 12abc", b"Connection: close") + ok
        ),
        "/http09.html": send(ok),
        "/close-in-headers.html": send(b"HTTP/1.1 200 OK\r\nContent-Type: te"),
        "/close-at-once.html": send(b""),
        # -- time
        "/drip-headers.html": drip(page(ok, HTML), every=0.25),
        "/silent.html": silent,
        "/drip-body.html": drip(page(ok, HTML), every=0.05, start=200),
        # -- headers
        "/many-headers.html": send(
            page(html("Hlavičky"), HTML, *(b"X-Flood-%d: %d" % (n, n) for n in range(5000)))
        ),
        "/huge-header.html": send(page(ok, HTML, b"X-Huge: " + b"a" * 1_000_000)),
        "/endless-headers.html": endless_headers,
        "/cookie-flood.html": send(
            page(
                html("Sušenky"),
                HTML,
                b"Set-Cookie: big=" + b"v" * 5000 + b"; Path=/",
                *(b"Set-Cookie: c%d=%s; Path=/" % (n, b"v" * 60) for n in range(2000)),
            )
        ),
        "/status-999.html": send(page(ok, HTML, status=b"HTTP/1.1 999 Request Denied")),
        "/status-1xx-only.html": send(b"HTTP/1.1 100 Continue\r\n\r\n" * 3),
        "/status-103.html": send(
            b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + page(html("Rané rady"), HTML)
        ),
        "/204-body.html": send(page(ok, HTML, status=b"HTTP/1.1 204 No Content")),
        "/304-body.html": send(page(ok, HTML, status=b"HTTP/1.1 304 Not Modified")),
        "/no-reason.html": send(page(html("Bez důvodu"), HTML, status=b"HTTP/1.1 200")),
        # -- redirects
        "/loop-a": redirect(b"/loop-b"),
        "/loop-b": redirect(b"/loop-a"),
        "/self-loop": redirect(b"/self-loop"),
        **chained,
        "/to-ftp": redirect(b"ftp://127.0.0.1:%d/file.txt" % port),
        "/to-file": redirect(b"file:///etc/passwd"),
        "/to-data": redirect(b"data:text/html,<p>injected</p>"),
        "/to-javascript": redirect(b"javascript:alert(1)"),
        "/to-private": redirect(b"http://10.255.255.1/secret"),
        "/to-other-loopback": redirect(canary.encode() + b"/secret"),
        "/to-localhost": redirect(canary.replace("127.0.0.2", "localhost").encode() + b"/secret"),
        "/to-ipv6-loopback": redirect(b"http://[::1]:%d/secret" % port),
        "/to-decimal-ip": redirect(
            b"http://2130706434:%s/secret" % canary.rsplit(":", 1)[1].encode()
        ),
        "/location-space": redirect(b"/target page.html"),
        "/location-control": redirect(b"/tar\x01get\x7f.html"),
        "/location-empty": redirect(b""),
        "/location-crlf": send(
            head(b"HTTP/1.1 302 Found", b"Location: /ok.html\rX-Injected: 1", b"Content-Length: 0")
        ),
        "/target%20page.html": send(page(html("Cíl s mezerou"), HTML)),
        "/ok.html": send(page(html("V pořádku"), HTML)),
        "/meta-a.html": send(
            page(
                _META_REFRESH % b"/meta-b.html",
                HTML,
            )
        ),
        "/meta-b.html": send(
            page(
                _META_REFRESH % b"/meta-a.html",
                HTML,
            )
        ),
        # -- content-type lies
        "/pdf-as-html.html": send(page(_PDF, HTML)),
        "/zip-as-html.html": send(page(_ZIP, HTML)),
        "/png-as-html.html": send(page(_PNG, HTML)),
        "/html-as-octet.html": send(
            page(html("Binární?"), b"Content-Type: application/octet-stream")
        ),
        "/robots.txt": send(
            page(b"", b"Content-Type: text/plain", status=b"HTTP/1.1 404 Not Found")
        ),
        # -- sitemaps (the crawl's seeds.sitemaps)
        "/sitemap-ok.xml": send(page(_sitemap(f"http://127.0.0.1:{port}/from-sitemap.html"), XML)),
        "/from-sitemap.html": send(page(html("Ze sitemapy"), HTML)),
        "/sitemap-bomb.xml": send(page(bombs.nested, XML, b"Content-Encoding: gzip, gzip")),
        "/sitemap-bad-gzip.xml": send(
            page(b"\x1f\x8b\x08\x00sitemap garbage" * 50, XML, b"Content-Encoding: gzip")
        ),
        "/sitemap-zstd.xml": send(page(b"\x28\xb5\x2f\xfd" * 50, XML, b"Content-Encoding: zstd")),
        # a gzipped file (no content coding) that decodes to 80 MB of zeros
        "/sitemap-file.xml.gz": send(page(bombs.gzip, b"Content-Type: application/gzip")),
    }


#: The hostile paths linked from the main port's index (chain and loops by their start).
PATHS = (
    "/bomb-gzip.html",
    "/bomb-deflate.html",
    "/bomb-br.html",
    "/bomb-nested.html",
    "/gzip-gzip.html",
    "/bad-gzip.html",
    "/zstd.html",
    "/compress.html",
    "/bzip2.html",
    "/invented.html",
    "/cl-long.html",
    "/cl-short.html",
    "/cl-conflict.html",
    "/chunk-truncated.html",
    "/chunk-bad.html",
    "/over-cap-small-cl.html",
    "/over-cap-no-length.html",
    "/te-and-cl.html",
    "/te-unknown.html",
    "/cl-negative.html",
    "/cl-garbage.html",
    "/http09.html",
    "/close-in-headers.html",
    "/close-at-once.html",
    "/drip-headers.html",
    "/silent.html",
    "/drip-body.html",
    "/many-headers.html",
    "/huge-header.html",
    "/endless-headers.html",
    "/cookie-flood.html",
    "/status-999.html",
    "/status-1xx-only.html",
    "/status-103.html",
    "/204-body.html",
    "/304-body.html",
    "/no-reason.html",
    "/loop-a",
    "/self-loop",
    "/chain/0",
    "/to-ftp",
    "/to-file",
    "/to-data",
    "/to-javascript",
    "/to-private",
    "/to-other-loopback",
    "/to-localhost",
    "/to-ipv6-loopback",
    "/to-decimal-ip",
    "/location-space",
    "/location-control",
    "/location-empty",
    "/location-crlf",
    "/meta-a.html",
    "/pdf-as-html.html",
    "/zip-as-html.html",
    "/png-as-html.html",
    "/html-as-octet.html",
)


def robots_handlers(bombs: Bombs) -> dict[str, Handler]:
    """robots.txt variant -> handler; each variant is served by a port of its own."""
    return {
        "loop": redirect(b"/robots.txt"),
        "html": send(page(html("Robots jako HTML"), HTML)),
        "binary": send(page(_PNG, b"Content-Type: text/plain")),
        "error": send(page(b"oops", b"Content-Type: text/plain", status=b"HTTP/1.1 503 Busy")),
        "bomb": send(page(bombs.gzip, b"Content-Type: text/plain", b"Content-Encoding: gzip")),
        "bad-gzip": send(
            page(b"\x1f\x8b\x08\x00garbage", b"Content-Type: text/plain", b"Content-Encoding: gzip")
        ),
        "zstd": send(
            page(
                b"\x28\xb5\x2f\xfdUser-agent: *\nDisallow: /",
                b"Content-Type: text/plain",
                b"Content-Encoding: zstd",
            )
        ),
        "silent": silent,
        "close": send(b"HTTP/1.1 200 OK\r\nContent-Le"),
    }


ROBOTS = ("loop", "html", "binary", "error", "bomb", "bad-gzip", "zstd", "silent", "close")


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(30)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                data += chunk
        except OSError:
            return
        request_line = data.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        path = parts[1] if len(parts) > 1 else "/"
        with self.server.lock:
            self.server.log.append(path)
        handler = self.server.route(path)
        try:
            handler(sock, self.server)
            time.sleep(0.01)
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: str, stop: threading.Event) -> None:
        super().__init__((address, 0), _Handler)
        self.log: list[str] = []
        self.lock = threading.Lock()
        self.stop = stop
        self.routes: dict[str, Handler] = {}
        self.fallback: Handler = send(page(b"not here", status=b"HTTP/1.1 404 Not Found"))

    def route(self, path: str) -> Handler:
        return self.routes.get(path, self.fallback)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class HostileServer:
    """``with HostileServer() as server``: `main`, `robots[variant]` and `canary` base URLs;
    `log(base)` lists the paths requested from that port."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._main = _Server("127.0.0.1", self._stop)
        self._robots = {variant: _Server("127.0.0.1", self._stop) for variant in ROBOTS}
        self._canary = _Server("127.0.0.2", self._stop)
        bombs = make_bombs()
        port = self._main.server_address[1]
        self._main.routes = hostile_paths(port, self._canary.base_url, bombs)
        robots_links = tuple(server.base_url + "/page.html" for server in self._robots.values())
        self._main.routes["/"] = send(page(html("Úvod", PATHS + robots_links), HTML))
        for variant, handler in robots_handlers(bombs).items():
            server = self._robots[variant]
            server.routes = {"/robots.txt": handler, "/page.html": send(page(html(variant), HTML))}
        self._threads: list[threading.Thread] = []

    def _servers(self) -> list[_Server]:
        return [self._main, self._canary, *self._robots.values()]

    @property
    def main(self) -> str:
        return self._main.base_url

    @property
    def canary(self) -> str:
        return self._canary.base_url

    @property
    def robots(self) -> dict[str, str]:
        return {variant: server.base_url for variant, server in self._robots.items()}

    def log(self, base: str) -> list[str]:
        for server in self._servers():
            if server.base_url == base:
                with server.lock:
                    return list(server.log)
        raise KeyError(base)

    def __enter__(self) -> HostileServer:
        for server in self._servers():
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        for server in self._servers():
            server.shutdown()
            server.server_close()


PROFILE = """\
name: hostile
seeds:
  urls: [{seeds}]
  sitemaps: [{sitemaps}]
  sitemaps_from_robots: false
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  max_page_bytes: {cap}
  download_timeout: {timeout}
  retry_times: {retry_times}
  max_sitemap_bytes: {sitemap_cap}
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
  documents:
    jsonl: true
"""


@dataclass(frozen=True)
class HostileCrawl:
    out: Path
    main: str
    canary: str
    robots: dict[str, str]
    logs: dict[str, list[str]]
    returncode: int
    stdout: str
    stderr: str
    #: Peak resident memory of the crawl process, KiB (VmHWM from /proc).
    peak_rss_kib: int


def _peak_rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def crawl(
    workdir: Path,
    *,
    profile: str = PROFILE,
    timeout: float = 240,
    seeds: tuple[str, ...] = ("/",),
    retry_times: int = 0,
) -> HostileCrawl:
    """Crawl the hostile server with `corpus-crawler crawl` in a subprocess."""
    out = workdir / "hostile"
    with HostileServer() as server:
        profile_path = workdir / "hostile.yaml"
        profile_path.write_text(
            profile.format(
                base=server.main,
                cap=CAP,
                timeout=TIMEOUT,
                sitemap_cap=SITEMAP_CAP,
                sitemaps=", ".join(f'"{server.main}{path}"' for path in SITEMAPS)
                if seeds == ("/",)
                else "",
                seeds=", ".join(f'"{server.main}{path}"' for path in seeds),
                retry_times=retry_times,
            ),
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile_path)]
        command += ["-o", str(out)]
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        peak = 0
        outputs: list[Any] = []

        def communicate() -> None:
            outputs.extend(process.communicate())

        reader = threading.Thread(target=communicate, daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            peak = max(peak, _peak_rss_kib(process.pid))
            time.sleep(0.1)
        if process.poll() is None:
            process.kill()
            reader.join()
            raise AssertionError(f"the crawl hung for {timeout} s:\n{outputs[1][-5000:]}")
        reader.join()
        logs = {
            base: server.log(base) for base in (server.main, server.canary, *server.robots.values())
        }
        return HostileCrawl(
            out=out,
            main=server.main,
            canary=server.canary,
            robots=server.robots,
            logs=logs,
            returncode=process.returncode,
            stdout=outputs[0],
            stderr=outputs[1],
            peak_rss_kib=peak,
        )

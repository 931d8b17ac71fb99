"""A loopback HTTP server that answers with exact bytes, for WARC fidelity and replay tests.

http.server rewrites what it sends (its own status phrases, header case and
framing); this one writes canned responses byte for byte, so a test can
compare the archive with what went over the wire. Each connection carries one
exchange (``Connection: close``).
"""

from __future__ import annotations

import gzip
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["CAP", "PAGES", "WireCrawl", "WirePage", "WireServer", "crawl"]

ROOT = Path(__file__).resolve().parent.parent.parent

#: The size cap (limits.max_page_bytes) the tests crawl with.
CAP = 40_000


def _html(title: str, text: str, links: tuple[str, ...] = ()) -> bytes:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    paragraphs = "".join(
        f"<p>{text} Odstavec číslo {number} má dost slov, aby prošel jako dobrý text.</p>"
        for number in range(8)
    )
    return (
        f"<!DOCTYPE html><html lang=cs><head><meta charset=utf-8><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{paragraphs}<ul>{anchors}</ul></body></html>"
    ).encode()


@dataclass(frozen=True)
class WirePage:
    status_line: bytes
    #: Header lines exactly as sent (without CRLF).
    header_lines: tuple[bytes, ...]
    #: The body as the client should decode it (de-chunked, content coding kept).
    payload: bytes
    #: What goes on the wire after the blank line (chunked framing, if any).
    wire_body: bytes | None = None
    #: Send this many body bytes, then stall (a download that times out mid-body).
    stall_after: int | None = None
    #: The URL path the server answers on (percent-encoded, as clients request it).
    path: str = "/"
    extra: dict[str, bytes] = field(default_factory=dict)

    def wire(self) -> bytes:
        head = self.status_line + b"\r\n" + b"".join(line + b"\r\n" for line in self.header_lines)
        return head + b"\r\n" + (self.payload if self.wire_body is None else self.wire_body)


NON_ASCII_PATH_TEXT = "/čeština/stránka.html"
NON_ASCII_PATH = "/%C4%8De%C5%A1tina/str%C3%A1nka.html"

_LINKS = ("/chunked.html", "/gzip.html", "/redirect", "/big.html", "/slow.html")
_INDEX = _html("Úvod", "Úvodní stránka zkušebního webu.", _LINKS)
_CHUNKED = _html("Po kouscích", "Tato stránka přichází po kouscích.")
_GZIP_PLAIN = _html("Zabaleno", "Tato stránka přichází zabalená gzipem.")
_GZIP = gzip.compress(_GZIP_PLAIN, mtime=0)
_TARGET = _html("Cíl", "Sem vede přesměrování na adresu s diakritikou.")
_BIG = _html("Velká", "Velká stránka. " * 2000)
_SLOW = _html("Pomalá", "Pomalá stránka, která nikdy nedojde celá. " * 200)


def _chunked(body: bytes, size: int) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


def _length(body: bytes) -> bytes:
    return b"Content-Length: %d" % len(body)


PAGES: dict[str, WirePage] = {
    page.path: page
    for page in (
        WirePage(
            b"HTTP/1.1 200 Everything Fine",
            (
                b"Content-Type: text/html; charset=utf-8",
                b'ETag: "v1-\xc3\xba"',
                b"X-Name: na\xc3\xafve caf\xc3\xa9",
                b"set-cookie: a=1; Path=/",
                b"X-Between: 1",
                b"Set-Cookie: b=2; Path=/",
                b"Connection: close",
                _length(_INDEX),
            ),
            _INDEX,
            path="/",
        ),
        WirePage(
            b"HTTP/1.1 200 OK",
            (
                b"Content-Type: text/html; charset=utf-8",
                b"Transfer-Encoding: chunked",
                b"Connection: close",
            ),
            _CHUNKED,
            wire_body=_chunked(_CHUNKED, 700),
            path="/chunked.html",
        ),
        WirePage(
            b"HTTP/1.1 200 OK",
            (
                b"Content-Type: text/html; charset=utf-8",
                b"Content-Encoding: gzip",
                b"Vary: Accept-Encoding",
                b"Connection: close",
                _length(_GZIP),
            ),
            _GZIP,
            path="/gzip.html",
        ),
        WirePage(
            b"HTTP/1.1 302 Found",
            (
                b"Location: " + NON_ASCII_PATH_TEXT.encode("utf-8"),
                b"Content-Length: 0",
                b"Connection: close",
            ),
            b"",
            path="/redirect",
        ),
        WirePage(
            b"HTTP/1.1 200 OK",
            (b"Content-Type: text/html; charset=utf-8", b"Connection: close", _length(_TARGET)),
            _TARGET,
            path=NON_ASCII_PATH,
        ),
        WirePage(
            b"HTTP/1.1 200 OK",
            (b"Content-Type: text/html; charset=utf-8", b"Connection: close", _length(_BIG)),
            _BIG,
            path="/big.html",
        ),
        WirePage(
            b"HTTP/1.1 200 OK",
            (b"Content-Type: text/html; charset=utf-8", b"Connection: close", _length(_SLOW)),
            _SLOW,
            stall_after=3000,
            path="/slow.html",
        ),
        WirePage(
            b"HTTP/1.1 404 Not Found",
            (b"Content-Type: text/plain", b"Content-Length: 0", b"Connection: close"),
            b"",
            path="/robots.txt",
        ),
    )
}


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return
            data += chunk
        request_line = data.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        path = parts[1] if len(parts) > 1 else "/"
        self.server.log.append(path)
        self.server.request_heads[path] = data.split(b"\r\n\r\n", 1)[0]
        page = PAGES.get(path)
        if page is None:
            sock.sendall(PAGES["/robots.txt"].wire())
            return
        wire = page.wire()
        if page.stall_after is None:
            sock.sendall(wire)
        else:
            head_length = len(wire) - len(page.payload)
            sock.sendall(wire[: head_length + page.stall_after])
            # Hold the connection open until the client gives up (or the server stops).
            self.server.stop.wait(30)
        time.sleep(0.01)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, tls: ssl.SSLContext | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log: list[str] = []
        #: path -> the request line and headers as received (the last request of that path)
        self.request_heads: dict[str, bytes] = {}
        self.stop = threading.Event()
        self.tls = tls

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


def self_signed_context(directory: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "wire-cert.pem", directory / "wire-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context


class WireServer:
    """``with WireServer() as server: server.base_url``; `log` lists the paths requested.

    With `tls` (a server context, see `self_signed_context`) it speaks HTTPS.
    """

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._server = _Server(tls)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        scheme = "https" if self._server.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{port}"

    @property
    def log(self) -> list[str]:
        return list(self._server.log)

    @property
    def request_heads(self) -> dict[str, bytes]:
        return dict(self._server.request_heads)

    def __enter__(self) -> WireServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.stop.set()
        self._server.shutdown()
        self._server.server_close()


PROFILE = """\
name: wire
seeds:
  urls: ["{base}/"]
  sitemaps_from_robots: false
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  max_page_bytes: {cap}
  download_timeout: 2
  retry_times: 0
extraction:
  workers: 1
output:
  progress_interval: 0
  warc:
    prefix: wire
    metadata_records: true
    operator: "Corpus Team <corpus@example.org>"
    publisher: "Example Institute"
    http_header_from: "corpus@example.org"
settings:
  # Scrapy's cookie jar asks tldextract for the public suffix list (issue 11).
  COOKIES_ENABLED: false
"""


def crawl(
    workdir: Path, *, extra_args: tuple[str, ...] = (), tls: bool = False, timeout: float = 180
) -> WireCrawl:
    """Crawl the wire site with `corpus-crawler crawl` in a subprocess; the output folder."""
    out = workdir / "wire"
    with WireServer(self_signed_context(workdir) if tls else None) as server:
        profile = workdir / "wire.yaml"
        profile.write_text(PROFILE.format(base=server.base_url, cap=CAP), encoding="utf-8")
        command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile)]
        command += ["-o", str(out), *extra_args]
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
        )
        log, heads = server.log, server.request_heads
    assert result.returncode == 0, f"crawl failed:\n{result.stdout}\n{result.stderr[-5000:]}"
    return WireCrawl(
        out=out, base_url=server.base_url, log=log, stdout=result.stdout, request_heads=heads
    )


@dataclass(frozen=True)
class WireCrawl:
    out: Path
    base_url: str
    log: list[str]
    stdout: str
    request_heads: dict[str, bytes]

"""pywb replays what the crawl archived, from the CDXJ indexes the crawl wrote.

A crawl of tests/site/wire_site.py (a gzip page, a chunked page, a redirect to
a non-ASCII URL sent as raw UTF-8, a page cut at the size cap, one cut at the
timeout) plus a WARC of revisit records (both WARC 1.1 profiles) are put in a
pywb collection, with the crawl's own ``*.cdxj`` files as its index, and served
by pywb's ``wayback`` on 127.0.0.1 in a subprocess.

pywb pins old versions of several libraries (redis 2.x, cryptography, ...),
so it may live in its own virtualenv: ``CORPUS_PYWB_PYTHON`` names that
environment's Python (.ci/run sets it up); otherwise this Python must have pywb.
"""

from __future__ import annotations

import gzip
import http.client
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import wire_site
from test_warc_wire import Record, read_records

from corpus_crawler.warc import (
    Exchange,
    RevisitProfile,
    WarcConfig,
    WarcWriter,
)

STARTUP_TIMEOUT = 60  # seconds: a guard against a hung server, not a speed assertion


#: pywb, in a virtualenv of its own: it pins old redis/cryptography/Werkzeug versions.
PYWB_REQUIREMENT = "pywb==2.10.0"


def pywb_python() -> str:
    """The Python that runs pywb: CORPUS_PYWB_PYTHON, this Python if it has pywb, or a
    virtualenv made once (in the user's cache) with pywb from PyPI, so that
    `python -m pytest` needs no other step on a fresh machine."""
    configured = os.environ.get("CORPUS_PYWB_PYTHON")
    if configured:
        return configured
    if importlib.util.find_spec("pywb") is not None:
        return sys.executable
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = cache / "corpus-crawler" / PYWB_REQUIREMENT.replace("==", "-")
    python = venv / "bin" / "python"
    ready = venv / ".installed"
    if not ready.is_file():
        import fcntl

        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(venv.parent / ".pywb.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (pytest -n)
            if not ready.is_file():
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
                install = subprocess.run(
                    [str(python), "-m", "pip", "install", "--quiet", PYWB_REQUIREMENT],
                    capture_output=True, text=True, timeout=900, check=False,
                )  # fmt: skip
                if install.returncode != 0:
                    pytest.fail(
                        f"could not install {PYWB_REQUIREMENT} into {venv} for the replay"
                        f" tests: {install.stderr[-2000:]}"
                    )
                ready.touch()
    return str(python)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Wayback:
    port: int
    records: list[Record]
    base_url: str

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def capture(self, url: str) -> Record:
        (found,) = [
            r
            for r in self.records
            if r.type in ("response", "revisit") and r.headers["WARC-Target-URI"] == url
        ]
        return found


def stamp(record: Record) -> str:
    return "".join(c for c in record.headers["WARC-Date"] if c.isdigit())[:14]


REVISIT_BODY = b"<!DOCTYPE html><html><body><p>The same page, twice.</p></body></html>"
NOT_MODIFIED_BODY = b"<!DOCTYPE html><html><body><p>Unchanged since.</p></body></html>"
T0 = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
T1 = T0 + timedelta(days=30)


def write_revisits(directory: Path) -> None:
    """Two pages, each captured whole and then revisited, one per WARC 1.1 profile."""
    html = (("Content-Type", "text/html; charset=utf-8"),)
    with WarcWriter(WarcConfig(directory, prefix="revisits", hostname="test")) as writer:
        same = "http://revisit.example/same.html"
        first = writer.write_exchange(
            Exchange(url=same, status=200, body=REVISIT_BODY, response_headers=html, date=T0)
        )
        writer.write_revisit(
            Exchange(url=same, status=200, body=REVISIT_BODY, response_headers=html, date=T1),
            profile=RevisitProfile.IDENTICAL_PAYLOAD_DIGEST,
            refers_to=first.response_id,
            refers_to_uri=same,
            refers_to_date=T0,
        )
        unchanged = "http://revisit.example/unchanged.html"
        first = writer.write_exchange(
            Exchange(
                url=unchanged, status=200, body=NOT_MODIFIED_BODY, response_headers=html, date=T0
            )
        )
        writer.write_revisit(
            Exchange(
                url=unchanged,
                status=304,
                request_headers=(("If-Modified-Since", "Mon, 06 May 2024 07:08:09 GMT"),),
                response_headers=(("ETag", '"v1"'),),
                date=T1,
            ),
            profile=RevisitProfile.SERVER_NOT_MODIFIED,
            refers_to=first.response_id,
            refers_to_uri=unchanged,
            refers_to_date=T0,
        )


@pytest.fixture(scope="module")
def wayback(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wayback]:
    python = pywb_python()
    workdir = tmp_path_factory.mktemp("replay")
    crawl = wire_site.crawl(workdir)
    write_revisits(workdir / "revisits")
    warcs = sorted(crawl.out.glob("*.warc.gz")) + sorted((workdir / "revisits").glob("*.warc.gz"))
    root = workdir / "pywb"
    archive = root / "collections" / "crawl" / "archive"
    indexes = root / "collections" / "crawl" / "indexes"
    archive.mkdir(parents=True)
    indexes.mkdir()
    lines: list[str] = []
    for warc in warcs:
        shutil.copy(warc, archive / warc.name)
        # the crawl's own index files, as pywb (and py-wacz) read them
        index = warc.with_name(warc.name.removesuffix(".warc.gz") + ".cdxj")
        lines += index.read_text(encoding="utf-8").splitlines()
    (indexes / "index.cdxj").write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")
    port = free_port()
    log = open(workdir / "wayback.log", "wb")  # noqa: SIM115 - closed below
    command = [python, "-c", "from pywb.apps.cli import wayback; wayback()"]
    process = subprocess.Popen(
        [*command, "-p", str(port), "-b", "127.0.0.1"],
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            assert process.poll() is None, (workdir / "wayback.log").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "pywb did not start"
                time.sleep(0.2)
        records = [r for warc in warcs for r in read_records(warc)]
        yield Wayback(port=port, records=records, base_url=crawl.base_url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def decoded(record: Record) -> bytes:
    """The payload with its content coding undone (pywb serves it decoded)."""
    lines = [line.lower() for line in record.head.split(b"\r\n")]
    if b"content-encoding: gzip" in lines:
        return gzip.decompress(record.payload)
    return record.payload


@pytest.mark.parametrize(
    "path",
    ["/", "/chunked.html", "/gzip.html", wire_site.NON_ASCII_PATH, "/big.html", "/slow.html"],
)
def test_replayed_body_equals_the_captured_payload(wayback: Wayback, path: str) -> None:
    capture = wayback.capture(wayback.base_url + path)
    status, _, body = wayback.get(f"/crawl/{stamp(capture)}id_/{wayback.base_url}{path}")
    assert status == 200
    assert body == decoded(capture)
    assert body  # the metadata record (warc-fields) of the same URL is never served instead


def test_the_original_status_line_is_replayed(wayback: Wayback) -> None:
    capture = wayback.capture(wayback.base_url + "/")
    connection = http.client.HTTPConnection("127.0.0.1", wayback.port, timeout=30)
    try:
        connection.request("GET", f"/crawl/{stamp(capture)}id_/{wayback.base_url}/")
        response = connection.getresponse()
        response.read()
        assert (response.status, response.reason) == (200, "Everything Fine")
    finally:
        connection.close()


def test_a_redirect_to_a_non_ascii_url_replays(wayback: Wayback) -> None:
    capture = wayback.capture(wayback.base_url + "/redirect")
    status, headers, _ = wayback.get(f"/crawl/{stamp(capture)}mp_/{wayback.base_url}/redirect")
    assert status == 302
    location = headers["Location"]
    target = wayback.base_url + wire_site.NON_ASCII_PATH
    assert location.endswith("mp_/" + target)
    final = wayback.capture(target)
    status, _, body = wayback.get(f"/crawl/{stamp(final)}id_/{target}")
    assert status == 200
    assert body == final.payload == wire_site.PAGES[wire_site.NON_ASCII_PATH].payload


def revisit_of(wayback: Wayback, url: str) -> Record:
    (revisit,) = [
        r for r in wayback.records if r.type == "revisit" and r.headers["WARC-Target-URI"] == url
    ]
    return revisit


def test_an_identical_payload_revisit_replays_the_earlier_payload(wayback: Wayback) -> None:
    url = "http://revisit.example/same.html"
    revisit = revisit_of(wayback, url)
    assert revisit.payload == b""  # the record holds headers only
    status, _, replayed = wayback.get(f"/crawl/{stamp(revisit)}id_/{url}")
    assert status == 200
    assert replayed == REVISIT_BODY


def test_a_server_not_modified_revisit_replays_as_sent_and_points_at_its_original(
    wayback: Wayback,
) -> None:
    # pywb serves a revisit with the revisit's own HTTP headers: the 304 the server sent
    # (no body, as HTTP has it); the capture it refers to replays the page.
    url = "http://revisit.example/unchanged.html"
    revisit = revisit_of(wayback, url)
    assert revisit.headers["WARC-Profile"].endswith("/server-not-modified")
    status, headers, replayed = wayback.get(f"/crawl/{stamp(revisit)}id_/{url}")
    assert (status, replayed) == (304, b"")
    assert headers["X-Archive-Orig-ETag"] == '"v1"'
    original = "".join(c for c in revisit.headers["WARC-Refers-To-Date"] if c.isdigit())[:14]
    status, _, replayed = wayback.get(f"/crawl/{original}id_/{url}")
    assert status == 200
    assert replayed == NOT_MODIFIED_BODY

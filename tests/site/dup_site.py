"""A loopback web of several hosts with planted duplicates, for the dedup and yield tests.

Each host is its own HTTP server on its own loopback address (127.0.0.2,
127.0.0.3, ...: all of 127.0.0.0/8 routes to lo on Linux), so host-level
statistics see distinct hosts. The text is generated English (stop-word dense,
so jusText keeps it), seeded, so every run serves the same bytes.

Planted, on the news hosts:

* unique articles, each on one host;
* exact byte copies of some articles at other URLs of the same host (``/print/...``);
* the same articles re-published on another host, under that host's navigation
  and boilerplate;
* copies with one paragraph added or one removed;
* boilerplate paragraphs long enough for jusText to keep: one per host on every
  page (a cookie notice) and one shared by every host (a syndication notice).

`groups` maps each article URL to its group (the original and all its copies);
`unique_paragraphs` are the paragraphs that occur in one article only.

For the yield tests: a link farm (pages of links and a line of text) and an
image gallery (pages of ``<img>`` tags), plus good hosts with real text.
"""

from __future__ import annotations

import http.server
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import TracebackType

STOPWORD_FRAMES = (
    "the {a} of the {b} was {c} and it {d} to the {e} in {f}",
    "we have {a} that this {b} is not {c} but it {d} with the {e}",
    "when they {a} the {b} there was a {c} which {d} into {e}",
    "it is {a} to say that {b} and {c} are {d} for all of the {e}",
    "there are {a} who {b} that the {c} should be {d} by {e}",
    "after the {a} had {b} we {c} on the {d} for {e} of {f}",
    "she {a} him about the {b} and he {c} that it was {d}",
    "this {a} may be {b} if you {c} the {d} before the {e}",
)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "tu", "ra", "so", "vi", "be", "do", "gu", "pe", "zo"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _sentence(rng: random.Random, vocabulary: list[str]) -> str:
    frame = rng.choice(STOPWORD_FRAMES)
    text = frame.format(**{key: rng.choice(vocabulary) for key in "abcdef"})
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, vocabulary: list[str], sentences: int) -> str:
    return " ".join(_sentence(rng, vocabulary) for _ in range(sentences))


@dataclass
class Host:
    address: str
    name: str
    pages: dict[str, bytes] = field(default_factory=dict)


@dataclass
class DupSite:
    hosts: dict[str, Host]
    #: article URL path on host -> group id; keys are (address, path)
    groups: dict[tuple[str, str], int]
    #: group id -> kind: unique, exact, republished, added, removed
    group_kinds: dict[int, str]
    host_boilerplate: dict[str, str]
    shared_boilerplate: str
    #: paragraphs that occur in one article (and its copies) only
    unique_paragraphs: list[str]
    #: the paragraphs added to copies (they leave with their near-duplicate copy)
    added_paragraphs: list[str] = field(default_factory=list)


def _page(host: Host, title: str, body_paragraphs: Iterable[str], boilerplate: list[str]) -> bytes:
    nav = "".join(
        f'<li><a href="/section/{n}.html">{host.name} section {n}</a></li>' for n in range(6)
    )
    paragraphs = "\n".join(f"<p>{text}</p>" for text in body_paragraphs)
    footer = "\n".join(f'<div class="notice"><p>{text}</p></div>' for text in boilerplate)
    html = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        f"<div class='header'><h3>{host.name}</h3><ul>{nav}</ul></div>"
        f"<div class='article'><h1>{title}</h1>\n{paragraphs}\n</div>"
        f"<div class='footer'>{footer}</div></body></html>"
    )
    return html.encode("utf-8")


def _index(host: Host, paths: Iterable[str]) -> bytes:
    links = "".join(f'<li><a href="{path}">{path}</a></li>' for path in paths)
    return (
        f"<!DOCTYPE html><html><head><title>{host.name}</title></head><body>"
        f"<h1>{host.name}</h1><ul>{links}</ul></body></html>"
    ).encode()


def build_dup_site(
    seed: int = 9, addresses: tuple[str, ...] = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
) -> DupSite:
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng, 4000)
    hosts = {address: Host(address, f"News site {i}") for i, address in enumerate(addresses)}
    host_boilerplate = {
        address: (
            f"We use cookies on {host.name.lower()} to remember your settings and to measure"
            " how the site is used. If you go on reading we take it that you agree to this,"
            " and you can change your mind at any time in the settings at the bottom of"
            " every page of the site."
        )
        for address, host in hosts.items()
    }
    shared = (
        "This article was first published by the agency and is shared with all of its"
        " partner sites under the terms of the syndication agreement. It may not be copied"
        " or sold again without the written consent of the agency and of the author."
    )
    groups: dict[tuple[str, str], int] = {}
    kinds: dict[int, str] = {}
    unique: list[str] = []
    added: list[str] = []
    address_list = list(addresses)
    for number in range(48):
        home = address_list[number % len(address_list)]
        host = hosts[home]
        body = [paragraph(rng, vocabulary, rng.randint(3, 5)) for _ in range(rng.randint(8, 12))]
        unique.extend(body)
        title = f"Story {number} from {host.name}"
        path = f"/a/{number}.html"
        boiler = [host_boilerplate[home], shared]
        host.pages[path] = _page(host, title, body, boiler)
        groups[(home, path)] = number
        kind = ("unique", "exact", "republished", "added", "removed", "unique")[number % 6]
        kinds[number] = kind
        if kind == "exact":
            host.pages[f"/print/a/{number}.html"] = host.pages[path]
            groups[(home, f"/print/a/{number}.html")] = number
        elif kind == "republished":
            other = address_list[(number + 1) % len(address_list)]
            copy_path = f"/syndicated/{number}.html"
            hosts[other].pages[copy_path] = _page(
                hosts[other], title, body, [host_boilerplate[other], shared]
            )
            groups[(other, copy_path)] = number
        elif kind == "added":
            extra = paragraph(rng, vocabulary, 3)
            added.append(extra)
            copy_path = f"/updated/{number}.html"
            position = rng.randint(1, len(body) - 1)
            host.pages[copy_path] = _page(
                host, title + " (updated)", [*body[:position], extra, *body[position:]], boiler
            )
            groups[(home, copy_path)] = number
        elif kind == "removed":
            other = address_list[(number + 2) % len(address_list)]
            copy_path = f"/short/{number}.html"
            position = rng.randint(1, len(body) - 1)
            hosts[other].pages[copy_path] = _page(
                hosts[other],
                title,
                [*body[:position], *body[position + 1 :]],
                [host_boilerplate[other], shared],
            )
            groups[(other, copy_path)] = number
    for host in hosts.values():
        articles = sorted(path for path in host.pages if path.endswith(".html"))
        host.pages["/"] = _index(host, articles)
    return DupSite(hosts, groups, kinds, host_boilerplate, shared, unique, added)


def build_yield_site(
    good: tuple[str, ...] = ("127.0.0.2", "127.0.0.3"),
    farm: str = "127.0.0.5",
    gallery: str = "127.0.0.6",
    pages_per_host: int = 60,
    seed: int = 5,
) -> dict[str, Host]:
    """Good hosts (articles), a link farm and an image gallery, each with `pages_per_host`
    pages chained from its index."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng, 4000)
    hosts: dict[str, Host] = {}
    for address in good:
        host = Host(address, f"Good site {address}")
        for number in range(pages_per_host):
            body = [paragraph(rng, vocabulary, 4) for _ in range(6)]
            host.pages[f"/a/{number}.html"] = _page(host, f"Article {number}", body, [])
        hosts[address] = host
    farm_host = Host(farm, "Link farm")
    for number in range(pages_per_host):
        links = "".join(
            f'<a href="/p/{(number * 7 + k) % pages_per_host}.html">cheap offer {k}</a> '
            for k in range(40)
        )
        padding = "<!-- " + "x" * 6000 + " -->"
        farm_host.pages[f"/p/{number}.html"] = (
            f"<html><head><title>Offers {number}</title></head><body>{padding}"
            f"<div>{links}</div><p>Best deals.</p></body></html>"
        ).encode()
    hosts[farm] = farm_host
    gallery_host = Host(gallery, "Gallery")
    for number in range(pages_per_host):
        images = "".join(
            f'<figure><img src="/img/{number}-{k}.jpg" alt=""><figcaption>Photo {k}'
            "</figcaption></figure>"
            for k in range(30)
        )
        style = "<style>" + "figure{margin:0}" * 300 + "</style>"
        gallery_host.pages[f"/g/{number}.html"] = (
            f"<html><head><title>Gallery {number}</title>{style}</head><body>{images}</body></html>"
        ).encode()
    hosts[gallery] = gallery_host
    for host in hosts.values():
        host.pages["/"] = _index(host, sorted(host.pages))
    return hosts


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, bytes]
    log: list[str]
    lock: threading.Lock

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        with self.lock:
            self.log.append(path)
        body = self.pages.get(path)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class MultiHostServer:
    """One HTTP server per host address, all on one port number when it is free."""

    def __init__(self, hosts: dict[str, Host]) -> None:
        self.hosts = hosts
        self.logs: dict[str, list[str]] = {}
        self._servers: dict[str, http.server.ThreadingHTTPServer] = {}
        self._threads: list[threading.Thread] = []

    def start(self) -> MultiHostServer:
        for address, host in self.hosts.items():
            log: list[str] = []
            handler = type(
                "Handler",
                (_Handler,),
                {"pages": host.pages, "log": log, "lock": threading.Lock()},
            )
            server = http.server.ThreadingHTTPServer((address, 0), handler)
            server.daemon_threads = True
            self._servers[address] = server
            self.logs[address] = log
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def base_url(self, address: str) -> str:
        return f"http://{address}:{self._servers[address].server_address[1]}"

    def stop(self) -> None:
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join()

    def __enter__(self) -> MultiHostServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

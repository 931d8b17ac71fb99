"""What runs in the extraction processes: a page in, its `Document` and its links out.

A worker does all the CPU-heavy work of a page, so the reactor thread of the
crawl only downloads and schedules: `extract()` for the text and one lxml pass
for the outgoing links (Scrapy's own link extractor is about 43% of the
reactor's CPU time in a bare crawl; here it runs in parallel instead).

No Scrapy import: the workers start fast (spawn / forkserver) and this module
is testable on its own. Each page runs under a time cap (SIGALRM, in the
worker's main thread); a page over the cap becomes a `DropReason.TIMEOUT`
document, never a lost page.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import date
from types import FrameType
from typing import TYPE_CHECKING, overload
from urllib.parse import urljoin, urlsplit

from lxml import etree
from w3lib.url import safe_url_string

from corpus_crawler.config import ExtractConfig, Preset
from corpus_crawler.decode import decode_html
from corpus_crawler.dedup import DedupConfig
from corpus_crawler.extract import extract
from corpus_crawler.model import Document, DropReason, Paragraph, ParagraphClass
from corpus_crawler.vertical import DocMeta, VerticalConfig, format_document

if TYPE_CHECKING:
    from corpus_crawler.dedup import DocumentFingerprint

__all__ = [
    "DEDUP_MODULE",
    "FormattedVertical",
    "PageResult",
    "PageTask",
    "VerticalTask",
    "WorkerConfig",
    "extract_links",
    "format_vertical",
    "init_worker",
    "links_in_tree",
    "process_page",
    "run_task",
]


#: What dedup fingerprints need (numpy, rensa: ~75 ms of imports), loaded only when dedup
#: is on: the crawl process imports this module for its task types, with or without dedup.
DEDUP_MODULE = "corpus_crawler.dedup._fingerprint"


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """Set once per worker process (the pool's initializer), not sent with every page."""

    #: None: links only (the profile turned text extraction off).
    extract: ExtractConfig | None
    #: Seconds one page may take; 0 means no cap.
    page_timeout: float = 30.0
    #: Keep `Document.html` (cleaned HTML of some extractors); off, it is not pickled back.
    keep_html: bool = False
    #: Send back every paragraph. Off, only the good ones travel back: unpickling
    #: hundreds of boilerplate paragraphs per page costs the crawl process ~1 ms a page.
    all_paragraphs: bool = False
    #: The vertical file's settings: the workers tokenise and format its text (~1.5 ms a
    #: document, which on the writer thread would compete with the reactor), either with
    #: the page (`PageTask.meta` given) or, when dedup runs, for the documents it keeps
    #: (`VerticalTask`), so that no duplicate is tokenised only to be thrown away.
    vertical: VerticalConfig | None = None
    #: The crawl process: the worker exits when it is gone (0: no watchdog).
    crawl_pid: int = 0
    #: The dedup stages' config: the worker computes each kept document's fingerprint
    #: (normalising, hashing, MinHash, paragraph language), so the crawl process only
    #: looks it up in the stores (None: dedup off).
    dedup: DedupConfig | None = None


@dataclass(frozen=True, slots=True)
class PageTask:
    url: str
    body: bytes
    http_charset: str | None = None
    #: Extract the outgoing links too.
    links: bool = True
    #: The document's crawl facts, for formatting its vertical text with the page (None:
    #: not now; with dedup on, a `VerticalTask` formats it once the document is kept).
    meta: DocMeta | None = None
    #: The day the page was fetched, when not today (an archive's record date).
    fetched: date | None = None


@dataclass(frozen=True, slots=True)
class VerticalTask:
    """A kept document to format for the vertical file (`WorkerConfig.vertical`).

    Sent after the dedup verdict, with the document as dedup left it and `meta` with
    its marks, so the text is what `VerticalWriter.write` would write for it."""

    url: str
    #: The document without its paragraphs (they travel as `paragraphs`).
    shell: Document
    #: (text, cf_class value, final_class value, heading) of each paragraph: what
    #: `format_document` reads of a `Paragraph`. Plain tuples pickle in C; the slotted
    #: `Paragraph`s took the crawl process 3.7x longer (168 against 45 us a document
    #: on the gold pages, against ~1.5-3 ms of tokenising saved per dropped duplicate).
    paragraphs: tuple[tuple[str, str, str, bool], ...]
    meta: DocMeta

    @classmethod
    def of(cls, url: str, document: Document, meta: DocMeta) -> VerticalTask:
        paragraphs = tuple(
            (p.text, p.cf_class.value, p.final_class.value, p.heading) for p in document.paragraphs
        )
        return cls(url, dataclasses.replace(document, paragraphs=()), paragraphs, meta)

    def document(self) -> Document:
        """The document to format, paragraphs and all."""
        return dataclasses.replace(
            self.shell,
            paragraphs=tuple(
                Paragraph(text, ParagraphClass(cf_class), ParagraphClass(final), heading=heading)
                for text, cf_class, final, heading in self.paragraphs
            ),
        )


@dataclass(frozen=True, slots=True)
class FormattedVertical:
    #: `format_document`'s text; None when the document has nothing to write.
    text: str | None
    #: Worker CPU seconds spent formatting it.
    cpu_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class PageResult:
    #: None when text extraction is off.
    document: Document | None
    #: Absolute http(s) URLs without fragments, in page order, each once.
    links: tuple[str, ...] = ()
    #: The page asked robots not to follow its links (`<meta name=robots content=nofollow>`).
    nofollow: bool = False
    timed_out: bool = False
    #: Worker CPU seconds spent on the page.
    cpu_seconds: float = 0.0
    #: Paragraphs `extract()` found (also when only the good ones were sent back).
    paragraph_count: int = 0
    #: The tokenised vertical text (WorkerConfig.vertical), None if not formatted here.
    vertical_text: str | None = None
    #: The good paragraphs' dedup fingerprint (WorkerConfig.dedup), None if not computed.
    fingerprint: DocumentFingerprint | None = None


class _PageTimeout(BaseException):
    # BaseException: extract() turns every Exception into a counted drop, and the
    # time cap must get through that to stop the page.
    pass


_config: WorkerConfig | None = None


def init_worker(config: WorkerConfig) -> None:
    """Pool initializer: keep the config and load what the first page would load."""
    global _config
    _config = config
    if config.crawl_pid:
        _watch_crawl(config.crawl_pid)
    if config.extract is not None:
        # Stop lists and language data load on first use; do it before the first page.
        extract(b"<html><body><p>warm-up</p></body></html>", "http://localhost/", config.extract)
    if config.dedup is not None:
        # loaded before the first page, not under its time cap (the fork server has it already)
        importlib.import_module(DEDUP_MODULE)


# -- no orphans ------------------------------------------------------------------------

#: Seconds between two looks at the crawl process.
WATCHDOG_INTERVAL = 0.5


def _watch_crawl(crawl_pid: int) -> None:
    """Exit this worker when the crawl process dies, however it died.

    A worker blocks reading its task pipe; after a `kill -9` of the crawl nobody
    closes that pipe (the fork server and the sibling workers hold copies), so
    without this the workers, then the fork server and the resource tracker that
    wait for them, would live on as orphans. Two guards: PR_SET_PDEATHSIG (Linux;
    it fires when the *parent* dies, which is the fork server, not always the
    crawl) and a thread that polls the crawl's pid.
    """
    _set_parent_death_signal()
    thread = threading.Thread(
        target=_watchdog, args=(crawl_pid,), name="crawl-watchdog", daemon=True
    )
    thread.start()


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _proc_stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()
    except OSError:
        return None


def _process_start(pid: int) -> str | None:
    """The start time of `pid` (Linux), to tell it from a later process given its pid."""
    fields = _proc_stat(pid)
    return fields[19].decode() if fields is not None and len(fields) > 19 else None


def _alive(pid: int, started: str | None) -> bool:
    """Whether the crawl process runs: not gone, not a later process with its pid, and
    not a zombie (a crawl killed with SIGKILL stays one until its parent reaps it, and a
    parent that waits for the crawl's pipes to close before reaping, as
    `subprocess.run` does, would wait for these workers forever)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _proc_stat(pid)
    if fields is None:
        return started is None
    if fields[0] in (b"Z", b"X"):
        return False
    return started is None or (len(fields) > 19 and fields[19].decode() == started)


def _watchdog(crawl_pid: int) -> None:
    started = _process_start(crawl_pid)
    while _alive(crawl_pid, started):
        time.sleep(WATCHDOG_INTERVAL)
    os._exit(0)


@overload
def run_task(task: PageTask) -> PageResult: ...
@overload
def run_task(task: VerticalTask) -> FormattedVertical: ...
def run_task(task: PageTask | VerticalTask) -> PageResult | FormattedVertical:
    """The function the pool runs."""
    config = _config if _config is not None else WorkerConfig(extract=ExtractConfig())
    if isinstance(task, VerticalTask):
        return format_vertical(task, config)
    return process_page(task, config)


def format_vertical(task: VerticalTask, config: WorkerConfig) -> FormattedVertical:
    """The vertical text of a kept document, under the page time cap.

    Raises `TimeoutError` over the cap (the caller lets the writer format it: slower,
    never lost) and `ValueError` when the worker has no vertical settings."""
    vertical = config.vertical
    if vertical is None:
        raise ValueError("this worker has no vertical settings (WorkerConfig.vertical)")
    started = time.process_time()
    try:
        with _time_cap(config.page_timeout):
            text = _format(task.document(), task.meta, vertical)
    except _PageTimeout:
        raise TimeoutError(f"formatting {task.url} took over {config.page_timeout:g} s") from None
    if _cap.fired:
        raise TimeoutError(f"formatting {task.url} took over {config.page_timeout:g} s")
    return FormattedVertical(text, time.process_time() - started)


def _format(document: Document, meta: DocMeta, vertical: VerticalConfig) -> str | None:
    return format_document(
        document,
        meta,
        format=vertical.format,
        all_paragraphs=vertical.all_paragraphs,
        sentences=vertical.sentences,
    )


def process_page(task: PageTask, config: WorkerConfig) -> PageResult:
    started = time.process_time()
    document: Document | None = None
    vertical_text: str | None = None
    print_: DocumentFingerprint | None = None
    links: tuple[str, ...] = ()
    nofollow = False
    paragraph_count = 0
    # the links come from extract()'s own parse when it can share it (one parse a page)
    from_tree: list[tuple[tuple[str, ...], bool]] = []
    share = task.links and config.extract is not None and _tree_shareable(task, config.extract)

    def links_of(root: etree._Element, encoding: str) -> None:
        # a failure here must not drop the page: the separate parse below runs instead
        with suppress(Exception):
            from_tree.append(links_in_tree(root, task.url, encoding))

    try:
        with _time_cap(config.page_timeout):
            if config.extract is not None:
                document = extract(
                    task.body,
                    task.url,
                    config.extract,
                    http_charset=task.http_charset,
                    on_tree=links_of if share else None,
                    fetched=task.fetched,
                )
                paragraph_count = len(document.paragraphs)
                if config.vertical is not None and task.meta is not None:
                    vertical_text = _format(document, task.meta, config.vertical)
                if config.dedup is not None and document.drop_reason is None:
                    good = document.good_paragraphs
                    if good:
                        from corpus_crawler.dedup import fingerprint  # DEDUP_MODULE

                        print_ = fingerprint(
                            [p.text for p in good], document.language, config.dedup
                        )
                document = _trimmed(document, config)
            if from_tree:
                links, nofollow = from_tree[0]
            elif task.links:
                encoding = document.encoding if document is not None else None
                links, nofollow = extract_links(task.body, task.url, task.http_charset, encoding)
    except _PageTimeout:
        return _timeout_result(task, config, started)
    if _cap.fired:
        # The alarm went off but its exception was swallowed: it ran inside a
        # finaliser or a gc callback, whose exceptions Python only prints.
        return _timeout_result(task, config, started)
    return PageResult(
        document,
        links,
        nofollow,
        False,
        time.process_time() - started,
        paragraph_count,
        vertical_text,
        print_,
    )


def _tree_shareable(task: PageTask, extract_config: ExtractConfig) -> bool:
    """Whether extract()'s parse holds every link `extract_links` would find: the whole
    body parsed (not cut at the extraction's byte cap), as a whole document (the
    reference preset's jusText-style parse may keep only a fragment of it)."""
    return (
        len(task.body) <= extract_config.max_bytes and extract_config.preset is not Preset.REFERENCE
    )


def _timeout_result(task: PageTask, config: WorkerConfig, started: float) -> PageResult:
    return PageResult(
        document=Document(
            paragraphs=(),
            url=task.url,
            raw_size=len(task.body),
            extractor=config.extract.extractor if config.extract else "",
            preset=config.extract.preset.value if config.extract else "",
            drop_reason=DropReason.TIMEOUT,
            drop_detail=f"over {config.page_timeout:g} s",
        ),
        timed_out=True,
        cpu_seconds=time.process_time() - started,
    )


def _trimmed(document: Document, config: WorkerConfig) -> Document:
    changes: dict[str, object] = {}
    if document.html is not None and not config.keep_html:
        changes["html"] = None
    if not config.all_paragraphs:
        good = document.good_paragraphs
        if len(good) != len(document.paragraphs):
            changes["paragraphs"] = good
    return dataclasses.replace(document, **changes) if changes else document  # type: ignore[arg-type]


# -- time cap ---------------------------------------------------------------------------


class _Cap:
    """The time cap's state: armed while a page runs; fired once its alarm went off."""

    armed = False
    fired = False


_cap = _Cap()


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _cap.armed:
        _cap.fired = True
        raise _PageTimeout


@contextmanager
def _time_cap(seconds: float) -> Iterator[None]:
    _cap.fired = False
    usable = (
        seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    _cap.armed = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        _cap.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- links ------------------------------------------------------------------------------

#: Anything but RFC 3986's unreserved and reserved characters and "%".
_NEEDS_QUOTING = re.compile(r"[^A-Za-z0-9\-._~:/?\[\]@!$&'()*+,;=%]")
_SKIPPED_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "ftp:", "file:", "about:")


def _parser() -> etree.HTMLParser:
    parser: etree.HTMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.HTMLParser(remove_comments=True, no_network=True)
        _local.parser = parser
    return parser


_local = threading.local()


def extract_links(
    body: bytes,
    url: str,
    http_charset: str | None = None,
    encoding: str | None = None,
) -> tuple[tuple[str, ...], bool]:
    """The followable links of a page and whether its robots meta says `nofollow`.

    `encoding` is the codec the page was decoded with (`Document.encoding`);
    without it the page is decoded like `extract()` does. Links with
    ``rel=nofollow``, non-http(s) links and fragments are left out; a robots
    ``nofollow``/``none`` meta tag empties the list. A meta refresh target is a
    link like the others (the crawl does not use Scrapy's MetaRefreshMiddleware).
    """
    if encoding is None:
        decoded = decode_html(body, http_charset)
        text, encoding = decoded.text, decoded.encoding
    else:
        text = body.decode(encoding, "replace")
    if text.lstrip()[:5].lower() == "<?xml":
        # lxml refuses str input with an encoding declaration
        text = text.split("?>", 1)[-1]
    try:
        root = etree.fromstring(text, _parser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return (), False
    if root is None:
        return (), False
    return links_in_tree(root, url, encoding)


def links_in_tree(root: etree._Element, url: str, encoding: str) -> tuple[tuple[str, ...], bool]:
    """`extract_links` on a parsed page (`root` as lxml's HTML parser made it)."""
    base = url
    hrefs: list[str] = []
    for element in root.iter("a", "area", "base", "meta"):
        tag = element.tag
        if tag == "meta":
            name = (element.get("name") or "").strip().lower()
            if name == "robots":
                content = (element.get("content") or "").lower().replace(",", " ").split()
                if "nofollow" in content or "none" in content:
                    return (), True
            elif (element.get("http-equiv") or "").strip().lower() == "refresh":
                target = _refresh_target(element.get("content") or "")
                if target:
                    hrefs.append(target)
            continue
        href = element.get("href")
        if not href:
            continue
        if tag == "base":
            if base is url:
                try:
                    candidate = urljoin(url, href.strip())
                except ValueError:  # `http://[bad` (found by tools/fuzz_pages.py)
                    continue
                # a `data:` or `javascript:` base would make every relative link non-http
                if candidate[:8].lower().startswith(("http://", "https://")):
                    base = _safe_base(candidate, encoding) or base
            continue
        rel = element.get("rel")
        if rel and "nofollow" in rel.lower().split():
            continue
        hrefs.append(href)
    return _absolute_links(hrefs, base, encoding), False


_REFRESH_URL = re.compile(r"""^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?["']?([^"'\s]+)""", re.I)


def _refresh_target(content: str) -> str | None:
    """The URL of a ``<meta http-equiv=refresh content="5; url=...">``, if any."""
    if "url" not in content.lower():
        return None
    match = _REFRESH_URL.match(content)
    return match.group(1) if match else None


def _safe_base(base: str, encoding: str) -> str | None:
    """`base` quoted once, so that the links joined to it need no quoting of their
    own (tools/fuzz_pages.py: an IDN `<base>` host made every relative link pay
    `safe_url_string`'s IDNA encoding, 0.18 ms a link, 1.2 s on one page); None for a
    base no URL can be made from (a host label IDNA refuses), which browsers ignore."""
    if _NEEDS_QUOTING.search(base) is None:
        return base
    try:
        safe = safe_url_string(base, encoding=encoding)
    except (ValueError, UnicodeError):
        return None
    return None if _NEEDS_QUOTING.search(safe) is not None else safe


def _absolute_links(hrefs: list[str], base: str, encoding: str) -> tuple[str, ...]:
    # urljoin and safe_url_string dominate this function's time on link-heavy pages,
    # so the common shapes (absolute URLs, root-relative paths, plain ASCII) skip them.
    try:
        parts = urlsplit(base)
    except ValueError:  # an invalid IPv6 host in the page's own URL: no link can be made
        return ()
    origin = f"{parts.scheme}://{parts.netloc}"
    seen_hrefs: set[str] = set()
    seen: set[str] = set()
    links: list[str] = []
    for href in hrefs:
        if href in seen_hrefs:
            continue
        seen_hrefs.add(href)
        href = href.strip()
        if not href or href[0] == "#" or href[:11].lower().startswith(_SKIPPED_SCHEMES):
            continue
        try:
            if href[:8].lower().startswith(("http://", "https://")):
                absolute = href
            elif href[0] == "/" and not href.startswith("//") and "/." not in href:
                absolute = origin + href
            else:
                absolute = urljoin(base, href)
                if not absolute[:8].lower().startswith(("http://", "https://")):
                    continue
            absolute = absolute.partition("#")[0]
            if "[" in absolute:
                _ = urlsplit(absolute).port  # a bad IPv6 host or port raises ValueError
            if _NEEDS_QUOTING.search(absolute) is not None:
                # the spider sends these URLs verbatim, so they must be safe here
                absolute = safe_url_string(absolute, encoding=encoding)
        except (ValueError, UnicodeError):
            # found by tools/fuzz_pages.py: a port like `99999` or a character the page's
            # codec cannot encode makes the URL libraries raise; such a link is not followable
            continue
        if len(absolute) > 8 and absolute not in seen:
            seen.add(absolute)
            links.append(absolute)
    return tuple(links)

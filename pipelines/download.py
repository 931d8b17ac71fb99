"""The HTTP(S) download handler of the corpus crawl: Scrapy's, plus what a WARC needs.

`CorpusDownloadHandler` is Scrapy's `HTTP11DownloadHandler` (same connection
pool, TLS, proxies, timeouts, signals) with three changes, installed through
``DOWNLOAD_HANDLERS`` for http and https:

* **The wire as received.** Twisted's client parser keeps only a dict of
  decoded headers (connection headers such as ``Transfer-Encoding`` and
  ``Connection`` are kept apart and dropped, names re-cased, repeats
  regrouped) and Scrapy rebuilds ``Content-Length``; the reason phrase is lost.
  Our parser records the raw status line and header lines as they arrive; they
  travel in ``request.meta["corpus_wire"]`` as plain data (see `WireRecord`).
* **The size cap truncates.** Scrapy cancels a response over
  ``DOWNLOAD_MAXSIZE`` and nothing is left to archive. Here the first
  ``DOWNLOAD_MAXSIZE`` bytes are kept and the response is returned with the flag
  ``truncated:length`` (Heritrix and Common Crawl archive the prefix with
  ``WARC-Truncated: length``). `pipelines.capture.SizeCapMiddleware` archives
  nothing itself; it counts the page as ``too-large`` and drops it after the
  capture.
* **A timeout in the body truncates.** When ``DOWNLOAD_TIMEOUT`` strikes after
  the headers arrived, the bytes received so far are returned with the flag
  ``truncated:time``; before the headers it is Scrapy's usual timeout error.

The request headers as written to the connection, the request send time and the
fetch time (send to last byte, Common Crawl's ``fetchTimeMs``) travel in the same
record.
"""

from __future__ import annotations

import logging
import time
from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict, cast

from scrapy import Request, signals
from scrapy.core.downloader.handlers.http11 import (
    HTTP11DownloadHandler,
    _LenientHTTP11ClientFactory,
    _LenientHTTP11ClientProtocol,
    _LenientHTTPClientParser,
    _ResponseReader,
    _ScrapyAgent,
)
from scrapy.exceptions import ResponseDataLossError
from scrapy.http import Response
from scrapy.utils._download_handlers import (
    check_stop_download,
    get_dataloss_msg,
    wrap_twisted_exceptions,
)
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure
from twisted.web._newclient import HEADER, ResponseFailed, _DataLoss
from twisted.web.iweb import UNKNOWN_LENGTH

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IAddress
    from twisted.web._newclient import HTTP11ClientProtocol
    from twisted.web._newclient import Request as TxRequest
    from twisted.web.client import Response as TxResponse
    from twisted.web.iweb import IResponse

__all__ = [
    "MAX_RESPONSE_HEAD_BYTES",
    "WIRE_META_KEY",
    "CorpusDownloadHandler",
    "ResponseHeadTooLarge",
    "WireRecord",
    "truncation_of",
]

logger = logging.getLogger(__name__)

#: The `request.meta` key of the `WireRecord` of the last download of that request.
WIRE_META_KEY = "corpus_wire"
TRUNCATED_FLAG_PREFIX = "truncated:"
#: Status line and header lines of one response, bytes (Chrome refuses more:
#: net::ERR_RESPONSE_HEADERS_TOO_BIG).
MAX_RESPONSE_HEAD_BYTES = 256 * 1024


class ResponseHeadTooLarge(ValueError):
    """A response head past `MAX_RESPONSE_HEAD_BYTES`: the download fails."""


class WireRecord(TypedDict):
    """What the handler saw on the wire, as plain data (it may go to a disk queue)."""

    #: The status line without CRLF, e.g. ``b"HTTP/1.1 200 Everything Fine"``.
    status_line: bytes
    #: (name, value) as sent: case, order and repeats kept; folded lines joined by a space.
    headers: list[tuple[bytes, bytes]]
    #: The request headers exactly as Twisted wrote them (Host first, as sent).
    request_headers: list[tuple[bytes, bytes]]
    #: Epoch seconds when the request was handed to the connection.
    sent_at: float
    #: Epoch seconds when the body ended (or was cut).
    received_at: float
    #: "length", "time" or "disconnect" when the body is a prefix of what was sent, else "".
    truncated: str


def truncation_of(response: Response) -> str:
    """``"length"``, ``"time"``, ``"disconnect"`` or ``""``: why this response's body is cut."""
    for flag in response.flags:
        if flag.startswith(TRUNCATED_FLAG_PREFIX):
            return flag[len(TRUNCATED_FLAG_PREFIX) :]
    return ""


# -- the parser: raw status and header lines --------------------------------------------


class _WireRecordingParser(_LenientHTTPClientParser):
    """Scrapy's lenient parser that also keeps the raw status line and header lines."""

    _corpus_status_line: bytes = b""
    _corpus_header_lines: list[bytes]
    _corpus_head_bytes: int = 0

    def statusReceived(self, status: bytes) -> None:
        # Also after an ignored 1xx response: the final response starts afresh.
        self._corpus_status_line = status
        self._corpus_header_lines = []
        self._corpus_head_bytes = len(status)
        super().statusReceived(status)

    def lineReceived(self, line: bytes) -> None:
        if self.state == HEADER:
            self._corpus_head_bytes += len(line) + 2
            if self._corpus_head_bytes > MAX_RESPONSE_HEAD_BYTES:
                # HTTP11ClientProtocol fails the response with it and drops the link
                raise ResponseHeadTooLarge(
                    f"response head over {MAX_RESPONSE_HEAD_BYTES} bytes"
                    f" ({len(self._corpus_header_lines)} header lines so far)"
                )
            raw = line.removesuffix(b"\r")
            if raw:
                lines = self._corpus_header_lines
                if raw[:1] in (b" ", b"\t") and lines:
                    lines[-1] += b" " + raw.strip()  # obs-fold continuation
                else:
                    lines.append(raw)
        super().lineReceived(line)

    def allHeadersReceived(self) -> None:
        # Before the parent: it fires the response Deferred, whose callbacks read this.
        response = getattr(self, "response", None)
        if response is not None:
            response._corpus_wire = (self._corpus_status_line, list(self._corpus_header_lines))
        super().allHeadersReceived()


def _split_header_lines(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    pairs: list[tuple[bytes, bytes]] = []
    for line in lines:
        name, colon, value = line.partition(b":")
        if colon and name.strip():  # a line with no colon is skipped, as the parser does
            pairs.append((name.rstrip(), value.strip(b" \t")))
    return pairs


class _HeadRecorder:
    """Passes Twisted's request head to the transport and keeps a copy of its bytes."""

    def __init__(self, transport: Any, head: list[bytes]) -> None:
        self._transport = transport
        self._head = head

    def writeSequence(self, data: Any) -> None:
        lines = list(data)
        self._head.extend(lines)
        self._transport.writeSequence(lines)


class _WireRecordingProtocol(_LenientHTTP11ClientProtocol):
    def request(self, request: TxRequest) -> Deferred[IResponse]:
        sent_at = time.time()
        head: list[bytes] = []
        write_headers = request._writeHeaders

        def recording(transport: Any, te_or_cl: bytes | None) -> None:
            # Request._writeHeaders writes the whole head with one writeSequence.
            write_headers(_HeadRecorder(transport, head), te_or_cl)

        request._writeHeaders = recording  # type: ignore[method-assign]
        d = super().request(request)
        if self._parser is not None:
            # HTTP11ClientProtocol.request() hardcodes its parser class (see Scrapy's
            # _LenientHTTP11ClientProtocol); ours only adds lazily set attributes.
            self._parser.__class__ = _WireRecordingParser

        def stamp(response: IResponse) -> IResponse:
            response._corpus_sent_at = sent_at
            response._corpus_request_head = b"".join(head)
            return response

        d.addCallback(stamp)
        return d


class _WireRecordingFactory(_LenientHTTP11ClientFactory):
    def buildProtocol(self, addr: IAddress | None) -> HTTP11ClientProtocol:
        return _WireRecordingProtocol(self._quiescentCallback)


# -- the body reader: cut instead of cancel ---------------------------------------------


class _TruncatingReader(_ResponseReader):
    """Keeps the first `maxsize` bytes and returns them, flagged, instead of cancelling."""

    def dataReceived(self, data: bytes) -> None:
        if self._finished.called:
            return
        room = self._maxsize - self._bytes_received if self._maxsize else len(data)
        if len(data) <= room:
            super().dataReceived(data)
            return
        self._bodybuf.write(data[:room])
        self._bytes_received += room
        logger.info(
            "cut %s at the size cap of %d bytes (archived as truncated)",
            self._request.url,
            self._maxsize,
        )
        self.cut("length")

    def connectionLost(self, reason: Failure | None = None) -> None:
        if (
            reason is not None
            and not self._finished.called
            and self._fail_on_dataloss
            and reason.check(ResponseFailed)
            and any(r.check(_DataLoss) for r in reason.value.reasons)
        ):
            # Scrapy fails the download and nothing is archived, though the headers and
            # part of the body arrived: keep what came, marked as a prefix.
            logger.info(
                "%s: the connection closed %d bytes into the body, before its end"
                " (archived as truncated)",
                self._request.url,
                self._bytes_received,
            )
            self._finish_response(flags=[TRUNCATED_FLAG_PREFIX + "disconnect"])
            return
        if reason is None:
            super().connectionLost()
        else:
            super().connectionLost(reason)

    def cut(self, reason: str) -> None:
        """Finish with what has arrived, flagged ``truncated:<reason>``, and drop the link."""
        if self._finished.called:
            return
        self._finish_response(flags=[TRUNCATED_FLAG_PREFIX + reason])
        # The rest of the body is never read, so the connection cannot be reused.
        with suppress(Exception):
            self._txresponse._transport._producer.abortConnection()


class _CorpusAgent(_ScrapyAgent):
    """One download (Scrapy makes an agent per request); see the module docstring."""

    _reader: _TruncatingReader | None = None
    _cut_by_timeout = False

    def download_request(self, request: Request) -> Deferred[Response]:
        from twisted.internet import reactor

        request.meta.pop(WIRE_META_KEY, None)  # never a stale record from a redirect source
        self._request = request
        d = super().download_request(request)
        # Our own timer replaces Scrapy's, so that a timeout in the body keeps the prefix.
        timeout = request.meta.get("download_timeout") or self._connectTimeout
        scrapy_timer = cast("Any", self._timeout_cl)
        if scrapy_timer.active():  # not when the download failed at once (a refused name)
            scrapy_timer.cancel()
        self._timeout_cl = cast("Any", reactor).callLater(timeout, self._on_timeout, d)
        return d

    def _on_timeout(self, d: Deferred[Response]) -> None:
        reader = self._reader
        if reader is not None and not reader._finished.called:
            self._cut_by_timeout = True
            logger.info(
                "cut %s at the download timeout (archived as truncated)", reader._request.url
            )
            reader.cut("time")
        else:
            d.cancel()

    def _cb_timeout(self, result: Any, request: Request, url: str, timeout: float) -> Any:
        if self._cut_by_timeout:
            return result
        return super()._cb_timeout(result, request, url, timeout)

    def _cb_bodyready(self, txresponse: TxResponse, request: Request) -> Any:
        if stop_download := check_stop_download(
            signals.headers_received,
            self._crawler,
            request,
            headers=self._headers_from_twisted_response(txresponse),
            body_length=txresponse.length,
        ):
            txresponse._transport.stopProducing()
            txresponse._transport.loseConnection()
            return {"txresponse": txresponse, "stop_download": stop_download}

        if cast("int", txresponse.length) == 0:  # deliverBody hangs for an empty body
            return {
                "txresponse": txresponse,
                "certificate": getattr(txresponse, "_scrapy_certificate", None),
                "ip_address": getattr(txresponse, "_scrapy_ip_address", None),
            }

        maxsize = request.meta.get("download_maxsize", self._maxsize)
        warnsize = request.meta.get("download_warnsize", self._warnsize)
        expected = txresponse.length if txresponse.length != UNKNOWN_LENGTH else -1
        if maxsize and cast("int", expected) > maxsize:
            logger.info(
                "%s announces %d bytes, over the cap of %d: keeping the first %d",
                request.url,
                expected,
                maxsize,
                maxsize,
            )
        d: Deferred[Any] = Deferred(partial(self._cancel, txresponse=txresponse))
        self._reader = _TruncatingReader(
            finished=d,
            txresponse=txresponse,
            request=request,
            maxsize=maxsize,
            warnsize=warnsize,
            reached_warnsize=bool(warnsize and cast("int", expected) > warnsize),
            fail_on_dataloss=request.meta.get("download_fail_on_dataloss", self._fail_on_dataloss),
            crawler=self._crawler,
            tls_verbose_logging=self._tls_verbose_logging,
        )
        txresponse.deliverBody(self._reader)
        self._txresponse = txresponse
        return d

    def _cb_bodydone(self, result: Any, url: str) -> Response:
        response = super()._cb_bodydone(result, url)
        txresponse = result["txresponse"]
        status_line, lines = getattr(txresponse, "_corpus_wire", (b"", []))
        sent_at = getattr(txresponse, "_corpus_sent_at", None)
        now = time.time()
        request_head = getattr(txresponse, "_corpus_request_head", b"")
        request_lines = request_head.split(b"\r\n")[1:]
        wire: WireRecord = {
            "status_line": status_line,
            "headers": _split_header_lines(lines),
            "request_headers": _split_header_lines([line for line in request_lines if line]),
            "sent_at": sent_at if sent_at is not None else now,
            "received_at": now,
            "truncated": truncation_of(response),
        }
        self._request.meta[WIRE_META_KEY] = wire
        return response


class CorpusDownloadHandler(HTTP11DownloadHandler):
    """``DOWNLOAD_HANDLERS`` for http and https; see the module docstring."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._pool._factory = _WireRecordingFactory

    async def download_request(self, request: Request) -> Response:
        agent = _CorpusAgent(
            contextFactory=self._contextFactory,
            bindAddress=self._bind_address,
            pool=self._pool,
            maxsize=self._default_maxsize,
            warnsize=self._default_warnsize,
            fail_on_dataloss=self._fail_on_dataloss,
            crawler=self._crawler,
            tls_verbose_logging=self._tls_verbose_logging,
        )
        try:
            with wrap_twisted_exceptions():
                return await maybe_deferred_to_future(agent.download_request(request))
        except ResponseDataLossError:
            if not self._fail_on_dataloss_warned:
                logger.warning(get_dataloss_msg(request.url))
                self._fail_on_dataloss_warned = True
            raise

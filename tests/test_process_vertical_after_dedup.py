"""`corpus-crawler process` tokenises the vertical only for the documents dedup keeps.

With dedup on, the chunk tasks leave the vertical out; after the dedup verdict (in
archive order, in the main process) the kept documents, as dedup left them, go back to
the pool as one `VerticalBatch` per task result. Real runs over WARCs holding exact
copies and near copies (a paragraph added) check, in dedup's ``remove`` and ``mark``
modes:

* every vertical document is, byte for byte, what `format_document` makes of the
  document the prevertical holds (the prevertical's text tokenised), in the same order;
* only kept documents were tokenised (``dedup.vertical_tokenised`` in the summary is
  the number of documents written; the duplicates were not);
* a worker that fails on a batch leaves the batch to the main process: the same files.
"""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from test_vertical_after_dedup import tokenised, written_documents
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from corpus_crawler.dedup import DedupConfig
from corpus_crawler.process import LocalEngine, ProcessOptions, ProcessSettings, process_archives
from corpus_crawler.process._task import VerticalBatch, VerticalBatchResult

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240  # a guard against a hung run, not a speed assertion
PAGES = 24

PROFILE = """\
name: process-vertical
seeds:
  urls: ["http://example.org/"]
extraction:
  language: auto
output:
  vertical:
    enabled: true
    sentences: true
dedup:
  enabled: true
  paragraphs: mark
  paragraph_filter_mib: 8
"""


def _archive(path: Path, pages: list[tuple[str, bytes]]) -> str:
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="WARC/1.1")
        for url, body in pages:
            headers = [("Content-Type", "text/html; charset=utf-8")]
            headers.append(("Content-Length", str(len(body))))
            writer.write_record(
                writer.create_warc_record(
                    url,
                    "response",
                    payload=io.BytesIO(body),
                    length=len(body),
                    http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
                    warc_headers_dict={"WARC-Date": "2024-01-02T03:04:05Z"},
                )
            )
    return str(path)


@pytest.fixture(scope="module")
def inputs(
    gold_pages: Callable[[str], Iterator[tuple[str, bytes, str, dict[str, Any]]]],
    tmp_path_factory: pytest.TempPathFactory,
) -> list[str]:
    """Two archives: the gold pages, then each of them again (exact copies) and a near
    copy of a third of them (one paragraph added: its other paragraphs are seen)."""
    folder = tmp_path_factory.mktemp("process-vertical-in")
    html = [page for _, page, _, _ in gold_pages("cleaneval-dev")][:PAGES]
    first = [(f"http://a.example/{n}.html", page) for n, page in enumerate(html)]
    second = [(f"http://b.example/{n}.html", page) for n, page in enumerate(html)]
    for n, page in enumerate(html[: PAGES // 3]):
        extra = (
            f"<p>An added paragraph of near copy {n}: the page was shared again with one"
            " more sentence at the end of its text, so most of it was seen before.</p></body>"
        ).encode()
        second.append((f"http://c.example/{n}.html", page.replace(b"</body>", extra, 1)))
    return [
        _archive(folder / "first.warc.gz", first),
        _archive(folder / "second.warc.gz", second),
    ]


def _process(inputs: list[str], out: Path, *options: str) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "corpus_crawler.cli", "process", *inputs, "-o", str(out),
        "--dedup", "--vertical", "--no-progress", "-j", "2", "--chunk-mb", "0.05", *options,
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    summary: dict[str, Any] = json.loads((out / "process-summary.json").read_text("utf-8"))
    return summary


@pytest.fixture(scope="module")
def removed(inputs: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("process-vertical") / "remove"
    _process(inputs, out)
    return out


def _check_vertical(out: Path, sentences: bool) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "process-summary.json").read_text("utf-8"))
    prevertical, vertical = written_documents(out, ".prevert"), written_documents(out, ".vert")
    assert len(vertical) == len(prevertical) == summary["documents"] >= PAGES // 2
    for pre, vert in zip(prevertical, vertical, strict=True):
        assert vert == tokenised(pre, sentences)
    # only what dedup kept was tokenised, all of it in workers; the copies were dropped
    assert summary["dedup"]["vertical_tokenised"] == len(vertical)
    assert "vertical_tokenised_here" not in summary["dedup"]
    assert summary["dropped"]["duplicate"] >= PAGES // 2
    return summary


def test_the_vertical_is_the_kept_documents_tokenised_in_remove_mode(removed: Path) -> None:
    summary = _check_vertical(removed, sentences=False)  # (the default without a profile)
    # so the comparison covered documents dedup changed, not only untouched ones
    assert summary["dedup"]["paragraphs_removed"] > PAGES // 3


def test_the_vertical_is_the_kept_documents_tokenised_in_mark_mode(
    inputs: list[str], tmp_path: Path
) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE, encoding="utf-8")
    out = tmp_path / "mark"
    _process(inputs, out, "--profile", str(profile))
    _check_vertical(out, sentences=True)
    vertical = "".join(written_documents(out, ".vert"))
    assert vertical.count(' dup="1.00"') > 20 and vertical.count(' dup="0.00"') > 20


def _fail(batch: VerticalBatch) -> VerticalBatchResult:
    raise RuntimeError("a worker that fails on every vertical batch")


class _FailingVerticalEngine(LocalEngine):
    def submit_vertical(self, batch: VerticalBatch) -> Future[VerticalBatchResult]:
        assert self._executor is not None
        return self._spool.submit(self._executor, _fail, batch)


def test_a_worker_failing_on_a_batch_leaves_it_to_the_main_process(
    inputs: list[str], removed: Path, tmp_path: Path
) -> None:
    # what the command line runs with --dedup --vertical --chunk-mb 0.05 (`removed`)
    settings = ProcessSettings()
    settings = dataclasses.replace(
        settings, outputs=dataclasses.replace(settings.outputs, vertical=True)
    )
    out = tmp_path / "failing"
    options = ProcessOptions(
        output=out, settings=settings, chunk_bytes=int(0.05 * 1024 * 1024), dedup=DedupConfig()
    )
    engine = _FailingVerticalEngine(workers=2)
    try:
        process_archives([Path(path) for path in inputs], options, engine)
    finally:
        engine.close()
    summary = json.loads((out / "process-summary.json").read_text("utf-8"))
    expected = json.loads((removed / "process-summary.json").read_text("utf-8"))
    assert summary["dedup"]["vertical_tokenised_here"] == expected["documents"] >= PAGES // 2
    assert "vertical_tokenised" not in summary["dedup"]
    assert written_documents(out, ".vert") == written_documents(removed, ".vert")
    assert written_documents(out, ".prevert") == written_documents(removed, ".prevert")


def test_a_local_dask_cluster_tokenises_the_same_vertical(
    inputs: list[str], removed: Path, tmp_path: Path
) -> None:
    out = tmp_path / "dask"
    summary = _process(inputs, out, "--dask")
    assert summary["dedup"]["vertical_tokenised"] == summary["documents"]
    assert written_documents(out, ".vert") == written_documents(removed, ".vert")
    assert written_documents(out, ".prevert") == written_documents(removed, ".prevert")

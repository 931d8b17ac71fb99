"""The vertical text is tokenised only for the documents dedup keeps, and is the same text.

With dedup on, the extraction workers no longer format the vertical with the
page: `pipelines.extract.VerticalFormatPipeline` sends each document dedup kept
(paragraphs removed, marks added) back to a worker. Real crawls of the planted
duplicate site (tests/site/dup_site.py: exact copies, near copies, repeated
boilerplate paragraphs) check, for dedup's ``remove`` and ``mark`` modes and with
dedup off (the workers format with the page, as before):

* every vertical document is, byte for byte, what `format_document` makes of the
  document the prevertical holds (same ``<doc>`` and ``<p>`` lines, marks
  included; the prevertical's text tokenised), in the same order;
* only kept documents were tokenised: one worker format per vertical document,
  none for the duplicates (the counter is absent with dedup off);
* `VerticalTask` in a worker gives `format_document`'s text, and a document over
  the page time cap is an error the crawl turns into a writer-thread format.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import dup_site
import pytest

from corpus_crawler.model import Document, Paragraph, ParagraphClass
from corpus_crawler.tokenize import split_sentences, tokenize
from corpus_crawler.vertical import (
    DocMeta,
    VerticalConfig,
    VerticalFormat,
    escape,
    format_document,
    unescape,
)
from pipelines.worker import VerticalTask, WorkerConfig, format_vertical

ROOT = Path(__file__).resolve().parent.parent
CRAWL_TIMEOUT = 240  # a guard against a hung crawl, not a speed assertion

PROFILE = """\
name: vertical-after-dedup
seeds:
  urls: {seeds}
scope:
  max_depth: 2
politeness:
  obey_robots_txt: false
  concurrent_requests: 8
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: en
  workers: 2
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    enabled: false
  prevertical:
    enabled: true
  vertical:
    enabled: true
    sentences: {sentences}
dedup:
  enabled: {enabled}
  paragraphs: {mode}
  paragraph_filter_mib: 8
yield:
  preset: "off"
"""

#: name -> (dedup on, paragraphs mode, sentences)
CRAWLS = {
    "remove": (True, "remove", True),
    "mark": (True, "mark", False),
    "off": (False, "remove", True),
}


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    workdir = tmp_path_factory.mktemp("vertical-after-dedup")
    site = dup_site.build_dup_site()
    outs = {}
    running: dict[str, subprocess.Popen[str]] = {}
    with dup_site.MultiHostServer(site.hosts) as server:
        seeds = [server.base_url(address) + "/" for address in site.hosts]
        # the three crawls share nothing but the (read-only) site: they run side by side
        for name, (enabled, mode, sentences) in CRAWLS.items():
            profile = workdir / f"{name}.yaml"
            profile.write_text(
                PROFILE.format(
                    seeds=json.dumps(seeds),
                    enabled=str(enabled).lower(),
                    mode=mode,
                    sentences=str(sentences).lower(),
                ),
                encoding="utf-8",
            )
            out = workdir / name
            command = [
                sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)
            ]  # fmt: skip
            running[name] = subprocess.Popen(
                command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            outs[name] = out
        try:
            for name, process in running.items():
                stdout, stderr = process.communicate(timeout=CRAWL_TIMEOUT)
                assert process.returncode == 0, f"crawl {name} failed:\n{stdout}\n{stderr[-5000:]}"
        finally:
            for process in running.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()
    return outs


def written_documents(out: Path, suffix: str) -> list[str]:
    """The documents of the crawl's `suffix` files, in file order, each as written
    (``<doc`` to ``</doc>\\n``)."""
    blocks = []
    for path in sorted(out.glob(f"*{suffix}")):
        text = path.read_text(encoding="utf-8")
        blocks += [block + "</doc>\n" for block in text.split("</doc>\n")[:-1]]
        assert text.endswith("</doc>\n")
    return blocks


def tokenised(prevertical: str, sentences: bool) -> str:
    """`format_document`'s vertical for the document of a prevertical block: the same
    tag lines, each paragraph's lines joined by one space and tokenised."""
    out: list[str] = []
    lines: list[str] | None = None
    for line in prevertical.rstrip("\n").split("\n"):
        if line.startswith("<p "):
            out.append(line)
            lines = []
        elif line == "</p>":
            assert lines is not None
            tokens = tokenize(" ".join(unescape(text) for text in lines))
            for group in split_sentences(tokens) if sentences else [tokens]:
                out.extend(["<s>"] if sentences else [])
                for token in group:
                    out.extend(["<g/>"] if token.glue else [])
                    out.append(escape(token.text))
                out.extend(["</s>"] if sentences else [])
            out.append(line)
            lines = None
        elif lines is not None:
            lines.append(line)
        else:  # <doc ...> and </doc>
            out.append(line)
    return "\n".join(out) + "\n"


def _summary(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads(
        next(out.glob("*-summary.json")).read_text(encoding="utf-8")
    )
    return summary


def _stats(out: Path) -> dict[str, int]:
    stats: dict[str, int] = _summary(out)["stats"]
    return stats


@pytest.mark.parametrize("name", list(CRAWLS))
def test_vertical_is_the_prevertical_documents_tokenised(
    crawls: dict[str, Path], name: str
) -> None:
    out = crawls[name]
    prevertical, vertical = written_documents(out, ".prevert"), written_documents(out, ".vert")
    sentences = CRAWLS[name][2]
    assert len(vertical) == len(prevertical) > 40
    for pre, vert in zip(prevertical, vertical, strict=True):
        assert vert == tokenised(pre, sentences)


def test_dedup_changed_what_the_vertical_holds(crawls: dict[str, Path]) -> None:
    # so the test above compared documents dedup changed, not only untouched ones
    removed, marked, off = (_stats(crawls[name]) for name in ("remove", "mark", "off"))
    assert removed["corpus/dedup/paragraphs_removed"] > 40
    assert removed["corpus/dropped/duplicate"] + removed["corpus/dropped/near-duplicate"] > 10
    vertical = "".join(written_documents(crawls["mark"], ".vert"))
    assert vertical.count(' dup="1.00"') > 40 and vertical.count(' dup="0.00"') > 40
    assert "corpus/dedup/paragraphs_removed" not in marked
    assert "corpus/dedup/documents" not in off


@pytest.mark.parametrize("name", ["remove", "mark"])
def test_only_kept_documents_are_tokenised(crawls: dict[str, Path], name: str) -> None:
    stats = _stats(crawls[name])
    documents = len(written_documents(crawls[name], ".vert"))
    assert stats["corpus/vertical/formatted_after_dedup"] == documents
    assert stats["corpus/docs_kept"] == documents
    assert "corpus/vertical/formatted_by_writer" not in stats
    # the duplicates dedup dropped were extracted, never tokenised
    assert stats["corpus/dedup/documents"] > documents


def test_without_dedup_the_workers_format_with_the_page(crawls: dict[str, Path]) -> None:
    stats = _stats(crawls["off"])
    assert "corpus/vertical/formatted_after_dedup" not in stats
    written = _summary(crawls["off"])["writer"]["counts"]["vertical/documents"]
    assert written == stats["corpus/docs_kept"] == len(written_documents(crawls["off"], ".vert"))


# -- the worker's side --------------------------------------------------------------------


def _document() -> Document:
    good = "The committee met on Tuesday, and it agreed (after a long debate) to go on."
    return Document(
        (
            Paragraph("Home | News", ParagraphClass.BAD, ParagraphClass.BAD, heading=True),
            Paragraph(good, ParagraphClass.GOOD, ParagraphClass.GOOD, heading=False),
            Paragraph("It said: “no”.", ParagraphClass.SHORT, ParagraphClass.GOOD),
        ),
        url="http://example.test/a",
        title="A <title> & more",
        language="en",
    )


def _meta() -> DocMeta:
    return DocMeta(
        doc_id="abc",
        crawl_date=datetime(2026, 11, 24, 12, 0, tzinfo=timezone.utc),
        url="http://example.test/a",
        paragraph_dups=(None, 0.25, 1.0),
        paragraph_lang_diffs=(None, 0.0),
        lang_diff=0.1,
    )


@pytest.mark.parametrize("all_paragraphs", [False, True])
def test_a_vertical_task_gives_format_document_text(tmp_path: Path, all_paragraphs: bool) -> None:
    vertical = VerticalConfig(
        tmp_path, format=VerticalFormat.VERTICAL, all_paragraphs=all_paragraphs, sentences=True
    )
    config = WorkerConfig(extract=None, vertical=vertical)
    formatted = format_vertical(
        VerticalTask.of("http://example.test/a", _document(), _meta()), config
    )
    expected = format_document(
        _document(), _meta(), format=VerticalFormat.VERTICAL, all_paragraphs=all_paragraphs
    )
    assert formatted.text == expected
    assert expected is not None and 'dup="0.25"' in expected and 'lang_diff="0.10"' in expected
    # the bad heading travels (as a plain tuple) and is written with every paragraph
    assert ('class="bad" cfclass="bad" heading="1"' in expected) is all_paragraphs


def test_a_vertical_task_over_the_time_cap_is_an_error(tmp_path: Path) -> None:
    vertical = VerticalConfig(tmp_path, format=VerticalFormat.VERTICAL)
    # ~2 MB of text: tokenising it takes a good part of a second, far over a 10 ms cap
    huge = Paragraph("word, " * 300_000, ParagraphClass.GOOD, ParagraphClass.GOOD)
    task = VerticalTask.of("http://example.test/huge", Document((huge,), language="en"), _meta())
    with pytest.raises(TimeoutError, match=re.escape("http://example.test/huge")):
        format_vertical(task, WorkerConfig(extract=None, vertical=vertical, page_timeout=0.01))
    with pytest.raises(ValueError, match=re.escape("WorkerConfig.vertical")):
        format_vertical(task, WorkerConfig(extract=None))


# -- the crawl's side without a crawl -------------------------------------------------------


def _item(document: Document) -> Any:
    from pipelines.items import CorpusDocument, FetchedPage

    page = FetchedPage(
        url="http://example.test/a", request_url="http://example.test/a", status=200,
        fetched_at="2026-11-24T12:00:00+00:00", depth=0, content_type="text/html",
        http_charset="utf-8", last_modified=None, ip_address="127.0.0.1", is_html=True,
    )  # fmt: skip
    return CorpusDocument(page, document, "abc", words=20, clean_bytes=100)


def test_a_worker_failure_leaves_the_text_to_the_writer(tmp_path: Path) -> None:
    from scrapy.exceptions import NotConfigured
    from scrapy.utils.test import get_crawler
    from twisted.internet.defer import ensureDeferred

    from pipelines.extract import ExtractSettings, PageProcessor, VerticalFormatPipeline

    settings = {"CORPUS_OUTPUT_DIR": str(tmp_path), "CORPUS_VERTICAL_ENABLED": True}
    crawler = get_crawler(settings_dict=settings)
    extract = ExtractSettings.from_settings(crawler.settings)
    # dedup is on by default: the workers leave the vertical to the format pipeline
    assert extract.vertical is not None and not extract.vertical_with_page
    processor = PageProcessor(crawler, extract)  # its pool never started: every run fails
    item = _item(_document())
    outcomes: list[Any] = []
    ensureDeferred(processor.format_vertical(item)).addBoth(outcomes.append)
    assert outcomes == [item]  # unchanged: the writer formats it on its thread
    assert crawler.stats.get_value("corpus/vertical/formatted_by_writer") == 1
    off = get_crawler(settings_dict={**settings, "CORPUS_VERTICAL_ENABLED": False})
    with pytest.raises(NotConfigured) as refused:
        VerticalFormatPipeline.from_crawler(off)
    # the vertical is off by default: Scrapy would print a message as a WARNING on every crawl
    assert refused.value.args == ()
    without_dedup = get_crawler(settings_dict={**settings, "CORPUS_DEDUP_ENABLED": False})
    assert ExtractSettings.from_settings(without_dedup.settings).vertical_with_page

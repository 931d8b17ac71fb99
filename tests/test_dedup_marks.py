"""Dedup in ``mark`` mode: the crawl writes SpiderLing/onion-style marks into its corpus files.

A loopback site of English articles that share a boilerplate paragraph, one of
them with a German paragraph, crawled with ``dedup.paragraphs: mark`` and
``dedup.paragraph_language: mark``: nothing is removed, and

* every ``<p>`` carries ``dup`` (share of its n-grams seen before): the
  boilerplate's first occurrence is new, its repeats are duplicates, the
  articles' own paragraphs are new;
* ``langdiff`` on the paragraphs: the German one is another language, the
  English ones are not; ``lang_diff`` on the ``<doc>``: the share of its words
  in another language;
* the prevertical (formatted on the writer thread) and the vertical (formatted
  in a worker after the dedup verdict, marks and all) carry the same marks, both
  parse, and the vertical's Manatee registry declares every attribute it uses.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import dup_site
import pytest
import test_corpustools as corpustools_tests  # its registry grammar parser

from corpus_crawler.testserver import SiteServer, html_reply
from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
CRAWL_TIMEOUT = 240  # a guard against a hung crawl, not a speed assertion


ARTICLES = 8
GERMAN = (
    "Die Stadt liegt an einem großen Fluss und hat eine lange Geschichte, die bis in das"
    " zwölfte Jahrhundert zurückreicht; heute leben dort viele Menschen sehr gern, und"
    " jedes Jahr kommen Besucher aus der ganzen Welt, um die alten Kirchen zu sehen."
)

PROFILE = """\
name: dedup-marks
seeds:
  urls: ["{seed}"]
scope:
  max_depth: 1
politeness:
  obey_robots_txt: false
  concurrent_requests: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: en
  # no stop-word test: the German paragraph must be good text for jusText with the
  # English stop list, as a quotation inside an English article would be
  parameters: {{stopwords_low: 0.0, stopwords_high: 0.0}}
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    enabled: false
  prevertical:
    enabled: true
  vertical:
    enabled: true
    sentences: true
    corpus_tools: true
  documents:
    jsonl: true
dedup:
  enabled: true
  near_documents: false
  paragraphs: mark
  paragraph_language: mark
  paragraph_filter_mib: 8
yield:
  preset: "off"
"""


def _site() -> tuple[dict[str, bytes], str, dict[str, list[str]]]:
    rng = random.Random(90)
    vocabulary = dup_site._vocabulary(rng, 400)
    boilerplate = (
        "This site uses cookies so that we can tell which of the pages are read and in"
        " what order; if you go on reading the pages we take it that you agree to it."
    )
    pages: dict[str, bytes] = {}
    own: dict[str, list[str]] = {}
    for number in range(ARTICLES):
        paragraphs = [dup_site.paragraph(rng, vocabulary, 4) for _ in range(3)]
        if number == 3:
            paragraphs.insert(1, GERMAN)
        own[f"/a/{number}.html"] = paragraphs
        body = "".join(f"<p>{text}</p>" for text in [*paragraphs, boilerplate])
        pages[f"/a/{number}.html"] = (
            f"<html><head><title>Article {number}</title></head><body>"
            f"<h1>Article {number}</h1>{body}</body></html>"
        ).encode()
    links = "".join(f'<li><a href="/a/{n}.html">Article {n}</a></li>' for n in range(ARTICLES))
    pages["/"] = f"<html><body><ul>{links}</ul></body></html>".encode()
    return pages, boilerplate, own


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    workdir = tmp_path_factory.mktemp("dedup-marks")
    pages, boilerplate, own = _site()
    out = workdir / "out"
    with SiteServer(pages={path: html_reply(body) for path, body in pages.items()}) as server:
        profile = workdir / "marks.yaml"
        profile.write_text(PROFILE.format(seed=server.url("/")), encoding="utf-8")
        result = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=CRAWL_TIMEOUT, check=False,
        )  # fmt: skip
    assert result.returncode == 0, f"crawl failed:\n{result.stdout}\n{result.stderr[-5000:]}"
    return {"out": out, "boilerplate": boilerplate, "own": own}


def _docs(path: Path) -> list[tuple[dict[str, str], list[tuple[dict[str, str], str]]]]:
    return [
        (attributes, [(p, " ".join(text.split())) for p, text in paragraphs])
        for attributes, paragraphs in read_vertical(path)
    ]


def _files(out: Path, suffix: str) -> list[Path]:
    files = sorted(out.glob(f"*{suffix}"))
    assert files, f"no {suffix} file in {out}"
    return files


def test_marks_in_the_prevertical(crawl: dict[str, object]) -> None:
    out, boilerplate, own = crawl["out"], crawl["boilerplate"], crawl["own"]
    assert isinstance(out, Path) and isinstance(own, dict)
    docs = [doc for path in _files(out, ".prevert") for doc in _docs(path)]
    assert len(docs) == ARTICLES  # mark mode drops nothing
    boilerplate_dups = []
    for attributes, paragraphs in docs:
        path = "/" + attributes["url"].split("/", 3)[3]
        texts = [text for _, text in paragraphs]
        assert boilerplate in texts  # marked, not removed
        for p_attributes, text in paragraphs:
            assert "dup" in p_attributes, p_attributes
            # judged when long enough (12 words): the articles' paragraphs, not the headings
            assert ("langdiff" in p_attributes) == (len(text.split()) >= 12), p_attributes
            if "langdiff" not in p_attributes:
                continue
            if text == boilerplate:
                boilerplate_dups.append(float(p_attributes["dup"]))
            else:
                assert float(p_attributes["dup"]) < 0.5, (path, text[:40])
            if text == GERMAN:
                assert float(p_attributes["langdiff"]) >= 0.2
            else:
                assert float(p_attributes["langdiff"]) < 0.2, (path, text[:40])
        if GERMAN in texts:
            words = [len(text.split()) for text in texts]
            share = words[texts.index(GERMAN)] / sum(words)
            assert float(attributes["lang_diff"]) == pytest.approx(share, abs=0.05)
            assert float(attributes["lang_diff"]) > 0
        else:
            assert attributes["lang_diff"] == "0.00"
    # the first occurrence is new, every later one a duplicate (whichever came first)
    assert sorted(dup >= 0.5 for dup in boilerplate_dups) == [False] + [True] * (ARTICLES - 1)
    assert min(boilerplate_dups) == 0.0


def test_the_vertical_carries_the_same_marks_and_its_registry_declares_them(
    crawl: dict[str, object],
) -> None:
    out = crawl["out"]
    assert isinstance(out, Path)

    def marks(suffix: str) -> dict[str, tuple[str, list[tuple[str, str | None]]]]:
        found = {}
        for path in _files(out, suffix):
            for attributes, paragraphs in read_vertical(path):
                found[attributes["url"]] = (
                    attributes["lang_diff"],
                    [(p["dup"], p.get("langdiff")) for p, _ in paragraphs],
                )
        return found

    prevertical, vertical = marks(".prevert"), marks(".vert")
    assert len(vertical) == ARTICLES
    assert vertical == prevertical
    # the JSONL documents carry the same marks, as numbers
    jsonl = {}
    for path in _files(out, ".jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            jsonl[record["url"]] = (
                record["lang_diff"],
                [(p["dup"], p["langdiff"]) for p in record["paragraphs"]],
            )
    assert jsonl.keys() == vertical.keys()
    for url, (lang_diff, paragraphs) in vertical.items():
        assert f"{jsonl[url][0]:.2f}" == lang_diff, url
        assert [
            (f"{dup:.2f}", None if langdiff is None else f"{langdiff:.2f}")
            for dup, langdiff in jsonl[url][1]
        ] == paragraphs, url
    for path in _files(out, ".vert"):
        registry_path = path.with_name(path.name.removesuffix(".vert") + ".manatee")
        registry = corpustools_tests.parse_registry(registry_path.read_text(encoding="utf-8"))
        used = corpustools_tests._tags_in(path)
        assert {"lang_diff"} <= used["doc"] and {"dup", "langdiff"} <= used["p"]
        for structure, attributes in used.items():
            declared = set(registry["structures"][structure]["attributes"])
            assert attributes <= declared, (structure, attributes - declared)


def test_mark_mode_counts_what_it_marked(crawl: dict[str, object]) -> None:
    out = crawl["out"]
    assert isinstance(out, Path)
    (summary,) = out.glob("*summary*.json")
    stats = json.loads(summary.read_text(encoding="utf-8"))["stats"]
    assert stats["corpus/dedup/paragraphs_seen"] == ARTICLES - 1
    assert stats["corpus/dedup/paragraphs_foreign"] == 1
    assert "corpus/dedup/paragraphs_removed" not in stats
    assert not any(re.fullmatch(r"corpus/dropped/(near-)?duplicate", key) for key in stats)

"""tools/gold_sets.py: public data sets (CleanEval, Dragnet, L3S-GN1) laid out as gold sets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from tool_loader import load_tool

from corpus_crawler.evaluate import evaluate_set, load_gold_set


def _tool() -> ModuleType:
    return load_tool("gold_sets")


def _records(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_bundled_dev_golds_come_out_of_their_annotations(
    gold_dir: Path, tmp_path: Path
) -> None:
    """The bundled cleaneval-dev holds each page's annotation (gold-marked/) beside
    the gold made from it: laid out as CleanEval distributed them, the tool gives the
    same words."""
    dev = gold_dir / "cleaneval-dev"
    source = tmp_path / "cleaneval"
    shutil.copytree(dev / "html", source / "input")
    shutil.copytree(dev / "gold-marked", source / "GoldStandard")
    target = tmp_path / "set"
    tool = _tool()
    done = tool.convert(source, target, tool.cleaneval_gold, keep_marked=True)
    assert done.pages == 58 and not done.without_html
    differ = [
        path.name
        for path in sorted((dev / "gold").glob("*.txt"))
        if (target / "gold" / path.name).read_text(encoding="utf-8").split()
        != path.read_text(encoding="utf-8").split()
    ]
    assert differ == []
    bundled = {r["id"]: r["url"] for r in _records(dev / "manifest.jsonl")}
    made = {r["id"]: r["url"] for r in _records(target / "manifest.jsonl")}
    assert made == bundled
    report = evaluate_set(load_gold_set(target))
    assert report.summary.pages == 58 and report.errors == 0


def test_marks_url_lines_encodings_and_missing_pages(tmp_path: Path) -> None:
    tool = _tool()
    source = tmp_path / "cleaneval"
    (source / "input").mkdir(parents=True)
    (source / "GoldStandard").mkdir()
    html = b'<text id="http://example.org/a" title="a" encoding="unset">\n<p>Caf\xe9 text</p>'
    (source / "input" / "1.html").write_bytes(html)
    (source / "input" / "2.html").write_bytes(b"<p>no text line</p>")
    # the URL on the line after "URL:", a BOM, marks mid-line and at the start
    (source / "GoldStandard" / "1.txt").write_bytes(
        "\ufeffURL:\nhttp://example.org/a\n\n<h>  Title\n<p>One line <l>and more\n\n  \n".encode()
    )
    (source / "GoldStandard" / "2.txt").write_bytes(b"URL: http://x/\n<p>Caf\xe9 au lait\n")
    (source / "GoldStandard" / "3.txt").write_bytes(b"URL: http://y/\n<p>no page\n")
    # UTF-8 text with one stray windows-1252 byte: the UTF-8 is kept
    (source / "input" / "4.html").write_bytes(b"<p>x</p>")
    (source / "GoldStandard" / "4.txt").write_bytes(
        "<p>Søren Søndergaard and Akgün\n".encode() + b"<p>vis-\xe0-vis\n"
    )
    target = tmp_path / "set"
    done = tool.convert(source, target, tool.cleaneval_gold, keep_marked=True)
    assert (done.pages, done.without_html, done.not_utf8) == (3, ("3",), ("2", "4"))
    mixed = (target / "gold" / "4.txt").read_text(encoding="utf-8")
    assert mixed == "Søren Søndergaard and Akgün\nvis-\ufffd-vis\n"
    assert (target / "gold" / "1.txt").read_text(encoding="utf-8") == "Title\nOne line and more\n"
    assert (target / "gold" / "2.txt").read_text(encoding="utf-8") == "Café au lait\n"
    assert (target / "html" / "1.html").read_bytes() == html
    records = _records(target / "manifest.jsonl")
    assert [(r["id"], r["url"], r["gold_encoding"]) for r in records] == [
        ("1", "http://example.org/a", "utf-8"),
        ("2", None, "cp1252"),
        ("4", None, "utf-8 (bad bytes replaced)"),
    ]
    # a second run into the same folder is refused: it would mix two sets
    assert tool.main(["cleaneval", str(source), str(target)]) == 2


def _source(folder: Path, pages: dict[str, tuple[bytes, bytes]]) -> Path:
    (folder / "input").mkdir(parents=True)
    (folder / "GoldStandard").mkdir()
    for page_id, (html, annotation) in pages.items():
        (folder / "input" / f"{page_id}.html").write_bytes(html)
        (folder / "GoldStandard" / f"{page_id}.txt").write_bytes(annotation)
    return folder


def test_dragnet_content_and_comments(tmp_path: Path) -> None:
    annotation = (
        b"\nJuly 24, 2012\n\n  Latest search falls short  \n\nThe expedition is back.\n"
        b"\n!@#$%^&*()  COMMENTS\n\nGreat story!\n  Thanks.\n"
    )
    source = _source(
        tmp_path / "dragnet", {"R5": (b"<p>x</p>", annotation), "12": (b"<p>y</p>", b"")}
    )
    for comments, expected in (
        (False, "July 24, 2012\nLatest search falls short\nThe expedition is back.\n"),
        (True, "July 24, 2012\nLatest search falls short\nThe expedition is back.\n"
               "Great story!\nThanks.\n"),
    ):  # fmt: skip
        target = tmp_path / f"set-{comments}"
        flags = ["--comments"] if comments else []
        assert _tool().main(["dragnet", *flags, str(source), str(target)]) == 0
        assert (target / "gold" / "R5.txt").read_text(encoding="utf-8") == expected
        # pages in number order, letters first: the set's own order
        assert [r["id"] for r in _records(target / "manifest.jsonl")] == ["12", "R5"]
        assert not (target / "gold-marked").exists()


def test_l3s_gn1_headline_and_full_text(tmp_path: Path) -> None:
    annotation = (
        b"<html><body><span class='x-nc-sel0'>Home | News</span>"
        b"<h1><span class='x-nc-sel1'>Council  meets</span></h1>"
        b"<p><span class='x-nc-sel2'>The council\n discussed the mission.</span></p>"
        b"<p><span class='x-nc-sel3'>Photo: UN</span><span class='x-nc-sel5'>Nice</span></p>"
        b"<p><span class='x-nc-sel2'>No agreement was reached.</span></p></body></html>"
    )
    source = _source(tmp_path / "l3s", {"a1": (b"<p>page</p>", annotation)})
    target = tmp_path / "set"
    assert _tool().main(["l3s-gn1", str(source), str(target)]) == 0
    assert (target / "gold" / "a1.txt").read_text(encoding="utf-8") == (
        "Council meets\nThe council discussed the mission.\nNo agreement was reached.\n"
    )


def test_annotations_with_a_byte_order_mark_are_read_in_its_encoding(tmp_path: Path) -> None:
    # five of Dragnet's annotations are UTF-16 (a Windows editor's "Unicode"); read
    # as windows-1252 they were a gold of "ÿþ" and NUL bytes that no extractor matched
    text = "Café owners’ pay\n\nThe expedition is back.\n"
    sources = {
        "1": text.encode("utf-16"),  # with its little-endian mark
        "2": b"\xfe\xff" + text.encode("utf-16-be"),
        "3": b"\xef\xbb\xbf" + text.encode("utf-8"),
    }
    source = _source(tmp_path / "dragnet", {k: (b"<p>x</p>", v) for k, v in sources.items()})
    target = tmp_path / "set"
    assert _tool().main(["dragnet", str(source), str(target)]) == 0
    for page_id in sources:
        gold = (target / "gold" / f"{page_id}.txt").read_text(encoding="utf-8")
        assert gold == "Café owners’ pay\nThe expedition is back.\n"
    encodings = {r["id"]: r["gold_encoding"] for r in _records(target / "manifest.jsonl")}
    assert encodings == {"1": "utf-16", "2": "utf-16", "3": "utf-8"}


def test_chinese_web_layout_is_scored_by_characters(tmp_path: Path) -> None:
    """immortal-autumn/Chinese-Web-Content-Extraction-Dataset keeps original/<id>.html
    and cleaned/<id>.txt; the gold is the text, and every record asks for character
    tokens."""
    source = tmp_path / "chinese"
    (source / "original").mkdir(parents=True)
    (source / "cleaned").mkdir()
    html = '<meta charset="gbk"><p>张家界的春天，美得让人眩目。</p>'.encode("gbk")
    (source / "original" / "a1.html").write_bytes(html)
    (source / "cleaned" / "a1.txt").write_bytes("  张家界的春天，\n\n美得让人眩目。\n".encode())
    target = tmp_path / "set"
    assert _tool().main(["chinese-web", str(source), str(target)]) == 0
    assert (target / "html" / "a1.html").read_bytes() == html
    assert (target / "gold" / "a1.txt").read_text(
        encoding="utf-8"
    ) == "张家界的春天，\n美得让人眩目。\n"
    (record,) = _records(target / "manifest.jsonl")
    assert record["tokens"] == "characters"
    report = evaluate_set(load_gold_set(target), _text_of_p)
    assert report.summary.f1 == 1.0  # the gold's line break inside the sentence does not count


def _text_of_p(html: bytes, url: str | None) -> str:
    import lxml.html

    return "\n".join(p.text_content() for p in lxml.html.fromstring(html).iter("p"))


def test_daniel_is_laid_out_as_one_set_per_language(tmp_path: Path) -> None:
    """DAnIEL keeps html/<id> and reference/<id> without file endings and names each
    page's language in doc_lg.json; its references mark paragraphs with <p>."""
    source = tmp_path / "daniel"
    (source / "html").mkdir(parents=True)
    (source / "reference").mkdir()
    pages = {
        "20120104_www.rp.pl_ab12": (
            "Polish",
            "<p>Sąd uznał,</p>\n<p>że wyrok jest prawomocny.</p>",
        ),
        "20120104_sina.com.cn_cd34": ("Chinese", "<p>今天的新闻。</p>"),
        "20120104_pravda.ru_ef56": ("Russian", "<p>Новости дня</p>"),
    }
    for page_id, (_, reference) in pages.items():
        (source / "html" / page_id).write_bytes(b"<p>x</p>")
        (source / "reference" / page_id).write_text(reference, encoding="utf-8")
    (source / "reference" / "20120104_orphan.gr_0000").write_text("<p>x</p>", encoding="utf-8")
    languages = {page_id: language for page_id, (language, _) in pages.items()}
    languages["20120104_orphan.gr_0000"] = "Greek"
    (source / "doc_lg.json").write_text(json.dumps(languages), encoding="utf-8")
    target = tmp_path / "sets"
    assert _tool().main(["daniel", str(source), str(target)]) == 0
    made = sorted(p.name for p in target.iterdir())
    assert made == ["daniel-el", "daniel-pl", "daniel-ru", "daniel-zh"]  # no English page
    polish = target / "daniel-pl"
    gold = (polish / "gold" / "20120104_www.rp.pl_ab12.txt").read_text(encoding="utf-8")
    assert gold == "Sąd uznał,\nże wyrok jest prawomocny.\n"
    assert (polish / "html" / "20120104_www.rp.pl_ab12.html").read_bytes() == b"<p>x</p>"
    (chinese,) = _records(target / "daniel-zh" / "manifest.jsonl")
    assert (chinese["language"], chinese["tokens"]) == ("zh", "characters")
    (russian,) = _records(target / "daniel-ru" / "manifest.jsonl")
    assert "tokens" not in russian
    # the Greek reference has no page: left out, and named
    assert _records(target / "daniel-el" / "manifest.jsonl") == []


def test_scrapinghub_pages_are_unpacked_with_their_article_body(tmp_path: Path) -> None:
    """scrapinghub/article-extraction-benchmark keeps html/<id>.html.gz and one
    ground-truth.json: `articleBody` is the gold, `url` the page's URL."""
    import gzip

    source = tmp_path / "benchmark"
    (source / "html").mkdir(parents=True)
    page = b"<html><body><h1>Title</h1><p>First.</p><p>Second.</p></body></html>"
    (source / "html" / "aa11.html.gz").write_bytes(gzip.compress(page))
    (source / "html" / "cc33.html.gz").write_bytes(gzip.compress(b"<p>nothing</p>"))
    truth = {
        "aa11": {"articleBody": "First.\n\n  Second.  \n", "url": "https://example.org/a"},
        "bb22": {"articleBody": "no page", "url": "https://example.org/b"},
        "cc33": {"articleBody": "", "url": "https://example.org/c"},
    }
    (source / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    target = tmp_path / "set"
    done = _tool().convert_scrapinghub(source, target)
    assert (done.pages, done.without_html, done.empty_gold) == (2, ("bb22",), ("cc33",))
    assert (target / "html" / "aa11.html").read_bytes() == page
    assert (target / "gold" / "aa11.txt").read_text(encoding="utf-8") == "First.\nSecond.\n"
    records = {r["id"]: r for r in _records(target / "manifest.jsonl")}
    assert records["aa11"]["url"] == "https://example.org/a"
    assert records["aa11"]["bytes"] == len(page)
    assert "tokens" not in records["aa11"]
    report = evaluate_set(load_gold_set(target))
    assert report.summary.pages == 2 and report.errors == 0
    # the command line names a folder that is not the benchmark's
    with pytest.raises(SystemExit, match=r"ground-truth\.json"):
        _tool().main(["scrapinghub", str(tmp_path / "elsewhere"), str(tmp_path / "out")])

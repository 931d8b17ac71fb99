"""tools/cleaneval_gold.py: a CleanEval folder (input/, GoldStandard/) as a gold set."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

from corpus_crawler.evaluate import evaluate_set, load_gold_set


def _tool() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tools" / "cleaneval_gold.py"
    spec = importlib.util.spec_from_file_location("cleaneval_gold", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cleaneval_gold"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


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
    done = _tool().convert(source, target)
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
    done = tool.convert(source, target)
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
    assert tool.main([str(source), str(target)]) == 2

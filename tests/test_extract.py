"""`extract()`, the one entry point, and the `corpus-crawler extract` command."""

from __future__ import annotations

import io
import json
import sys
import types
from pathlib import Path

import pytest

from corpus_crawler.cli import main
from corpus_crawler.config import ExtractConfig, JustextParams, Preset
from corpus_crawler.extract import extract
from corpus_crawler.model import Document, DropReason, ParagraphClass

EN = ExtractConfig(language="en")
ARTICLE = (
    "This is the text of the article that is in the main part of the page, and it is there"
    " for all of the readers who want to know what it is about and why it is here. "
)
RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва — столица России. "


def page(title: str = "A page") -> bytes:
    return (
        f"<html><head><title>{title}</title></head><body>"
        '<ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul>'
        "<h1>The headline</h1>"
        f"<p>{ARTICLE}</p>"
        f"<p>{ARTICLE * 2}</p>"
        '<div class="footer">&copy; 2024 Example Corp. All rights reserved.</div>'
        "</body></html>"
    ).encode()


def no_error(doc: Document) -> Document:
    assert doc.drop_reason is not DropReason.EXTRACTOR_ERROR, doc.drop_detail
    return doc


@pytest.mark.parametrize("preset", list(Preset))
@pytest.mark.parametrize(
    "html", [b"", "", b" \n\t \r\n ", "   "], ids=["bytes", "str", "ws", "ws-str"]
)
def test_empty_and_blank_input(html: bytes | str, preset: Preset) -> None:
    doc = extract(html, config=ExtractConfig(language="en", preset=preset))
    assert doc.paragraphs == ()
    assert doc.drop_reason is DropReason.EMPTY
    assert doc.text == ""
    assert not doc.kept
    assert doc.raw_size == len(html)


@pytest.mark.parametrize("preset", list(Preset))
def test_plain_text_without_tags(preset: Preset) -> None:
    doc = no_error(extract(ARTICLE * 2, config=ExtractConfig(language="en", preset=preset)))
    assert [p.text for p in doc.paragraphs] == [(ARTICLE * 2).strip()]
    assert doc.kept


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.LANGUAGE_INDEPENDENT])
@pytest.mark.parametrize(
    ("encoding", "text"), [("utf-8", "Naïve café. " + ARTICLE), ("windows-1251", RUSSIAN * 3)]
)
def test_xml_declaration_with_encoding(preset: Preset, encoding: str, text: str) -> None:
    html = (
        f'<?xml version="1.0" encoding="{encoding}"?>\n'
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x.dtd">\n'
        f'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>{text}</p></body></html>'
    )
    for data in (html.encode(encoding), html):
        doc = no_error(extract(data, config=ExtractConfig(language=None, preset=preset)))
        assert [p.text for p in doc.paragraphs] == [text.strip()]


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_an_xml_declaration_that_lost_its_end(preset: Preset) -> None:
    """L3S-GN1 holds a page whose bytes were cut inside its head: the declaration's
    encoding runs on into a meta tag's keywords and never reaches `?>`. lxml refuses
    text that begins with a declaration naming an encoding, and the page was dropped
    as "no HTML document"; a browser reads `<?` as a bogus comment ending at the
    first `>`, and so does the parse now."""
    html = (
        '<?xml version="1.0" encoding="democracy, parliament, syndicate" />\n'
        '<meta name="robots" content="index, follow" />\n'
        f"<div><p>{ARTICLE * 2}</p></div></body></html>"
    )
    for data in (html.encode(), html):
        doc = no_error(extract(data, config=ExtractConfig(language="en", preset=preset)))
        assert ARTICLE.strip() in doc.text
        assert "democracy" not in doc.text


def test_xml_declaration_with_the_reference_preset() -> None:
    html = f'<?xml version="1.0" encoding="utf-8"?>\n<html><body><p>{ARTICLE * 2}</p></body></html>'
    doc = no_error(
        extract(html.encode(), config=ExtractConfig(language="en", preset=Preset.REFERENCE))
    )
    assert all("xml" not in p.text for p in doc.paragraphs)
    assert ARTICLE.strip() in doc.text


def test_a_page_of_boilerplate_only() -> None:
    html = (
        b"<html><body><ul><li><a href='/'>Home</a></li><li><a href='/a'>About</a></li></ul>"
        b"<p>Short.</p><div>&copy; 2024 Corp</div></body></html>"
    )
    doc = extract(html, config=EN)
    assert doc.drop_reason is DropReason.NO_GOOD_PARAGRAPH
    assert len(doc.paragraphs) == 4
    assert all(p.final_class is ParagraphClass.BAD for p in doc.paragraphs)
    assert doc.text == ""
    assert not doc.kept


def test_only_tags_and_scripts_is_empty() -> None:
    doc = extract(
        b"<html><head><script>var a;</script></head><body><div></div></body></html>", config=EN
    )
    assert doc.drop_reason is DropReason.EMPTY
    assert doc.paragraphs == ()


def test_wrong_language() -> None:
    config = ExtractConfig(language="en", accept_languages=frozenset({"cs", "sk"}))
    doc = extract(page(), config=config)
    assert doc.drop_reason is DropReason.WRONG_LANGUAGE
    assert "en" in doc.drop_detail
    assert doc.language == "en"
    assert not doc.kept


def test_accepted_language() -> None:
    doc = extract(page(), config=ExtractConfig(language="en", accept_languages=frozenset({"en"})))
    assert doc.drop_reason is None
    assert doc.kept


def test_language_names_resolve_to_codes() -> None:
    doc = extract(page(), config=ExtractConfig(language="English"))
    assert doc.language == "en"
    assert doc.language_confidence == 1.0


def test_metadata_is_recorded() -> None:
    data = page(title="  The \n title ")
    doc = extract(data, "https://example.com/a?b=c", config=EN)
    assert doc.title == "The title"
    assert doc.url == "https://example.com/a?b=c"
    assert doc.raw_size == len(data)
    assert doc.extractor == "justext"
    assert doc.preset == "seed"
    assert doc.encoding == "ascii"
    assert doc.declared_encoding is None
    assert doc.drop_reason is None and doc.drop_detail == ""


def test_preset_is_recorded() -> None:
    for preset in Preset:
        doc = extract(page(), config=ExtractConfig(language="en", preset=preset))
        assert doc.preset == preset.value


def test_document_text_is_the_good_paragraphs_joined_by_newlines() -> None:
    doc = extract(page(), config=EN)
    good = [p.text for p in doc.paragraphs if p.final_class is ParagraphClass.GOOD]
    assert good == ["The headline", ARTICLE.strip(), (ARTICLE * 2).strip()]
    assert doc.text == "\n".join(good)
    assert doc.good_paragraphs == tuple(
        p for p in doc.paragraphs if p.final_class is ParagraphClass.GOOD
    )
    assert [p.text for p in doc.paragraphs if p.final_class is ParagraphClass.BAD] == [
        "Home",
        "News",
        "© 2024 Example Corp. All rights reserved.",
    ]
    assert doc.kept


def test_paragraph_features() -> None:
    doc = extract(page(), config=EN)
    article = doc.paragraphs[3]
    words = ARTICLE.split()
    assert article.length == len(ARTICLE.strip())
    assert article.word_count == len(words)
    assert 0 < article.stopword_count < len(words)
    assert article.stopword_density == article.stopword_count / len(words)
    assert article.dom_path == "html.body.p"
    assert article.xpath == "/html[1]/body[1]/p[1]"


def test_max_bytes_cuts_the_page() -> None:
    data = page()
    cut = data.index(b"<p>") + 3 + len(ARTICLE) // 2
    doc = no_error(extract(data, config=ExtractConfig(language="en", max_bytes=cut)))
    assert doc.raw_size == len(data)
    assert ARTICLE * 2 not in doc.text
    assert all("Example Corp" not in p.text for p in doc.paragraphs)


def test_explicit_parameters_replace_the_language_overrides() -> None:
    config = ExtractConfig(language="en", params=JustextParams(length_low=10, length_high=20))
    doc = extract(b"<p>short text of the page here</p>", config=config)
    assert doc.paragraphs[0].cf_class is ParagraphClass.GOOD


def test_a_callers_mistake_is_a_type_error_not_a_dropped_page() -> None:
    """`extract(html, config)` passed the config as the URL: every page came back as an
    extractor error, from deep inside the publication-date reader."""
    with pytest.raises(TypeError, match=r"url must be a str or None, got ExtractConfig \(pass"):
        extract(b"<p>text</p>", ExtractConfig())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be an ExtractConfig, got dict"):
        extract(b"<p>text</p>", config={"preset": "corpus"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="html must be bytes or str, got NoneType"):
        extract(None)  # type: ignore[arg-type]


def test_missing_stoplist_file_is_not_a_crash(tmp_path: Path) -> None:
    config = ExtractConfig(language=None, stoplist_path=str(tmp_path / "missing.txt"))
    doc = extract(page(), config=config)
    assert isinstance(doc, Document)


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def page_file(tmp_path: Path) -> Path:
    path = tmp_path / "page.html"
    path.write_bytes(page())
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["extract", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_text(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, out, _ = run_cli(capsys, str(page_file), "--lang", "en", "--format", "text")
    assert code == 0
    assert out == extract(page(), config=EN).text + "\n"


def test_cli_text_is_the_default(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, out, _ = run_cli(capsys, str(page_file), "--lang", "en")
    assert code == 0
    assert out.splitlines()[0] == "The headline"


def test_cli_detailed(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, out, _ = run_cli(capsys, str(page_file), "--lang", "en", "--format", "detailed")
    assert code == 0
    assert out.startswith(f"== {page_file}\n")
    assert "title=A page" in out
    assert "class     cf_class" in out
    assert "/html[1]/body[1]/h1[1]" in out
    headline = next(line for line in out.splitlines() if line.endswith("/html[1]/body[1]/h1[1]"))
    assert headline.split()[:3] == ["good", "good", "h1"]
    assert "      Home" in out


def test_cli_json(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, out, _ = run_cli(
        capsys, str(page_file), "--lang", "en", "--format", "json", "--url", "https://example.com/"
    )
    assert code == 0
    (line,) = out.splitlines()
    record = json.loads(line)
    assert record["url"] == "https://example.com/"
    assert record["title"] == "A page"
    assert record["language"] == "en"
    assert record["drop_reason"] is None
    assert record["text"] == extract(page(), config=EN).text
    classes = [(p["text"], p["class"], p["cf_class"]) for p in record["paragraphs"]]
    assert classes[0] == ("Home", "bad", "bad")
    assert classes[2] == ("The headline", "good", "good")


@pytest.mark.parametrize("fmt", ["prevertical", "vertical"])
def test_cli_corpus_formats(capsys: pytest.CaptureFixture[str], page_file: Path, fmt: str) -> None:
    code, out, _ = run_cli(capsys, str(page_file), "--lang", "en", "--format", fmt)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("<doc ") and 'title="A page"' in lines[0]
    assert lines[-1] == "</doc>"
    assert lines.count('<p class="good" cfclass="good" heading="1">') == 1
    assert "Home" not in lines
    if fmt == "prevertical":
        assert "The headline" in lines
    else:
        assert "<s>" in lines
        assert "headline" in lines and "The" in lines


def test_cli_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(page())))
    code, out, _ = run_cli(capsys, "--lang", "en")
    assert code == 0
    assert out == extract(page(), config=EN).text + "\n"


def test_cli_reads_stdin_by_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(page())))
    code, out, _ = run_cli(capsys, "-", "--lang", "en", "--format", "json")
    assert code == 0
    assert json.loads(out)["source"] == "<stdin>"


def test_cli_missing_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, page_file: Path
) -> None:
    missing = tmp_path / "nope.html"
    code, out, err = run_cli(capsys, str(missing), str(page_file), "--lang", "en")
    assert code == 1
    assert str(missing) in err
    assert "No such file" in err
    assert "The headline" in out


def test_cli_a_url_is_named_as_one(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    # a new user's first try; Path() would report "https:/example.org/x: No such file"
    code, out, err = run_cli(capsys, "https://example.org/x", str(page_file), "--lang", "en")
    assert code == 1
    assert "https://example.org/x: a URL, not a file" in err
    assert "corpus-crawler crawl" in err
    assert "The headline" in out


def test_cli_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "a.html").write_bytes(page("First"))
    (tmp_path / "b.htm").write_bytes(page("Second"))
    (tmp_path / "notes.txt").write_text("not html")
    code, out, _ = run_cli(capsys, str(tmp_path), "--lang", "en", "--format", "json")
    assert code == 0
    assert [json.loads(line)["title"] for line in out.splitlines()] == ["First", "Second"]


def test_cli_bad_parameter(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, out, err = run_cli(capsys, str(page_file), "--lang", "en", "--param", "length_low=-1")
    assert code == 2
    assert out == ""
    assert "length_low must be a whole number >= 0, got -1" in err


def test_cli_unknown_parameter(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, _, err = run_cli(capsys, str(page_file), "--lang", "en", "--param", "lenght_low=5")
    assert code == 2
    assert "did you mean 'length_low'" in err


def test_cli_parameter_without_value(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, _, err = run_cli(capsys, str(page_file), "--lang", "en", "--param", "length_low")
    assert code == 2
    assert "NAME=VALUE" in err


def test_cli_parameters_apply(capsys: pytest.CaptureFixture[str], page_file: Path) -> None:
    code, out, _ = run_cli(
        capsys, str(page_file), "--lang", "en", "--param", "no_headlines=true", "--format", "json"
    )
    assert code == 0
    headline = json.loads(out)["paragraphs"][2]
    assert headline["text"] == "The headline"
    assert headline["cf_class"] == "short"


def test_cli_language_independent_with_a_parameter(
    capsys: pytest.CaptureFixture[str], page_file: Path
) -> None:
    """`--preset language-independent` must keep its zero stop-word thresholds when the
    user tunes another parameter, as jusText's `-s None` does."""
    code, out, _ = run_cli(
        capsys,
        str(page_file),
        "--lang",
        "none",
        "--preset",
        "language-independent",
        "--param",
        "length_high=150",
        "--format",
        "json",
    )
    assert code == 0
    record = json.loads(out)
    assert ARTICLE.strip() in record["text"]


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_a_page_of_short_headings_alone_has_no_running_text(preset: Preset) -> None:
    html = (
        b"<html><body><h1>Welcome to our site</h1><h2>404 : Page Not Found</h2>"
        b'<ul><li><a href="/">Home</a></li></ul></body></html>'
    )
    doc = no_error(extract(html, config=ExtractConfig(preset=preset, language="en")))
    assert doc.drop_reason is DropReason.NO_GOOD_PARAGRAPH
    assert doc.drop_detail == "only headings are good"


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_running_text_inside_a_heading_left_open_is_kept(preset: Preset) -> None:
    """An `<h6>` never closed puts the whole page in one heading (a shop page of
    the CleanEval final set was dropped whole): a heading as long as a long block
    is running text."""
    html = (
        "<html><body><center><h6>Welcome to our shop.<br>"
        f"{ARTICLE}<br>{ARTICLE * 2}<br>{ARTICLE}</center></body></html>"
    ).encode()
    doc = no_error(extract(html, config=ExtractConfig(preset=preset, language="en")))
    assert doc.drop_reason is None, doc.drop_detail
    assert all(p.heading for p in doc.paragraphs if p.is_good)
    assert ARTICLE.strip() in doc.text


@pytest.mark.parametrize("preset", [Preset.SEED, Preset.CORPUS, Preset.ARTICLE])
def test_short_paragraphs_inside_a_heading_left_open_are_kept(preset: Preset) -> None:
    """A news page in `<h1>` from its header to its footer (two Hong Kong pages of
    DAnIEL were dropped whole): each paragraph is shorter than a long block, but a
    block element stands between it and the heading's tag, so it is no heading."""
    sentences = ARTICLE.split(". ")
    paragraphs = "".join(f"<p>{s.strip()}.</p>" for s in sentences if s.strip())
    html = (
        "<html><body><div><h1><div class='logo'>News</div>"
        f"<div class='story'>{paragraphs * 2}</div></body></html>"
    ).encode()
    doc = no_error(extract(html, config=ExtractConfig(preset=preset, language="en")))
    assert doc.drop_reason is None, doc.drop_detail
    good = [p for p in doc.paragraphs if p.is_good]
    assert good and all(p.heading and len(p.text) < 200 for p in good)

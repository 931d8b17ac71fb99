"""Prevertical and vertical writers: golden output, round trip, hygiene, rotation, recovery."""

from __future__ import annotations

import gzip
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler._files import gzip_member_ends
from corpus_crawler.config import ConfigError
from corpus_crawler.model import Document, DropReason, Paragraph, ParagraphClass
from corpus_crawler.tokenize import detokenize, tokenize
from corpus_crawler.vertical import (
    DOC_ATTRIBUTES,
    PARAGRAPH_ATTRIBUTES,
    DocMeta,
    RecoveryAction,
    VerticalConfig,
    VerticalFormat,
    VerticalWriter,
    clean_lines,
    escape,
    format_document,
    length_bucket,
    read_vertical,
    recover,
    unescape,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("CORPUS_CRAWLER_UPDATE_GOLDEN") == "1"
NOW = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc)
G, N, S, B = (
    ParagraphClass.GOOD,
    ParagraphClass.NEAR_GOOD,
    ParagraphClass.SHORT,
    ParagraphClass.BAD,
)


def assert_golden(name: str, data: bytes) -> None:
    """Compare with tests/golden/<name>; CORPUS_CRAWLER_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if UPDATE_GOLDEN:
        path.write_bytes(data)
    assert path.exists(), f"{path} is missing: run with CORPUS_CRAWLER_UPDATE_GOLDEN=1 once"
    assert data == path.read_bytes()


def article() -> Document:
    return Document(
        paragraphs=(
            Paragraph("Home | News | Contact", B, B),
            Paragraph('Prague & <Brno>: "quotes"', S, G, heading=True),
            Paragraph("Dr. Novák said it's fine.\x07 See https://example.cz/a?b=1&c=2.", G, G),
            Paragraph("Share on Facebook", N, N),
            Paragraph("東京です。大阪\tです。\r\nSecond   line!", B, G),
        ),
        url="https://example.cz/final",
        title='Article <1> & "more"',
        published="2015-10-20",
        language="cs",
        language_confidence=0.9876,
        declared_encoding="windows-1250",
        encoding="utf-8",
    )


def menu_only() -> Document:
    return Document(
        paragraphs=(Paragraph("Home", B, B), Paragraph("Login", S, S)),
        url="https://example.cz/menu",
    )


def meta(doc_id: str = "1", **overrides: object) -> DocMeta:
    values: dict[str, object] = {
        "doc_id": doc_id,
        "crawl_date": NOW,
        "url": "https://example.cz/start",
        "last_modified": "Wed, 21 Oct 2015 07:28:00 GMT",
        "ip": "192.0.2.7",
    }
    values.update(overrides)
    return DocMeta(**values)  # type: ignore[arg-type]


def bare() -> Document:
    """Nothing but one good paragraph: every optional attribute is unknown."""
    return Document(paragraphs=(Paragraph("Just text.", G, G),), encoding="")


def write(
    tmp_path: Path, documents: list[tuple[Document, DocMeta]], **config: object
) -> VerticalWriter:
    settings_: dict[str, object] = {"prefix": "test", "hostname": "crawler1"}
    settings_.update(config)
    writer = VerticalWriter(VerticalConfig(tmp_path, **settings_), clock=lambda: NOW)  # type: ignore[arg-type]
    with writer:
        for document, doc_meta in documents:
            writer.write(document, doc_meta)
    return writer


SAMPLE = [
    (article(), meta("1")),
    (menu_only(), meta("2")),
    (bare(), DocMeta("3", NOW, "http://b.example/")),
]


# --- golden output ---------------------------------------------------------------------


def test_golden_prevertical(tmp_path: Path) -> None:
    writer = write(tmp_path, SAMPLE)
    (path,) = writer.files
    assert path.name == "test-20240506070809123-00000-crawler1.prevert"
    assert (writer.written, writer.skipped) == (2, 1)
    assert_golden("sample.prevert", path.read_bytes())


def test_golden_vertical_all_paragraphs(tmp_path: Path) -> None:
    writer = write(tmp_path, SAMPLE, format=VerticalFormat.VERTICAL, all_paragraphs=True)
    (path,) = writer.files
    assert path.name.endswith(".vert")
    assert_golden("sample.vert", path.read_bytes())


# --- structure ------------------------------------------------------------------------------


def test_every_doc_has_the_same_attributes_in_the_same_order(tmp_path: Path) -> None:
    for fmt in VerticalFormat:
        (path,) = write(tmp_path / fmt.value, SAMPLE, format=fmt, all_paragraphs=True).files
        lines = path.read_text(encoding="utf-8").splitlines()
        doc_lines = [line for line in lines if line.startswith("<doc ")]
        p_lines = [line for line in lines if line.startswith("<p ")]
        assert len(doc_lines) == 2
        for line in doc_lines:
            assert re.findall(r' ([\w_]+)="', line) == list(DOC_ATTRIBUTES)
        for line in p_lines:
            assert re.findall(r' ([\w_]+)="', line) == list(PARAGRAPH_ATTRIBUTES)
    docs = list(read_vertical(path))
    assert docs[1][0] == {name: "" for name in DOC_ATTRIBUTES} | {
        "id": "3",
        "length": "0-100",
        "chars": "10",
        "crawl_date": "2024-05-06 07:08",
        "url": "http://b.example/",
        "final_url": "http://b.example/",
        "file_type": "html",
        "extractor": "justext",
    }


def test_doc_attributes(tmp_path: Path) -> None:
    (path,) = write(tmp_path, SAMPLE[:1]).files
    ((attrs, paragraphs),) = read_vertical(path)
    assert attrs == {
        "id": "1",
        "title": 'Article <1> & "more"',
        "length": "100-500",
        "chars": str(len("\n".join(text for _, text in paragraphs))),
        "crawl_date": "2024-05-06 07:08",
        "last_modified": "2015-10-21 07:28",
        "published": "2015-10-20",
        "lang": "cs",
        "lang_conf": "0.99",
        "ip": "192.0.2.7",
        "url": "https://example.cz/start",
        "final_url": "https://example.cz/final",
        "file_type": "html",
        "enc_meta": "windows-1250",
        "enc_chared": "utf-8",
        "extractor": "justext",
    }


def test_meta_overrides_and_unparsable_dates() -> None:
    text = format_document(
        article(),
        meta(
            final_url="https://example.cz/other",
            last_modified="yesterday",
            declared_encoding="iso-8859-2",
            encoding="cp1250",
        ),
    )
    assert text is not None
    first = text.splitlines()[0]
    assert 'last_modified=""' in first
    assert 'final_url="https://example.cz/other"' in first
    assert 'enc_meta="iso-8859-2" enc_chared="cp1250"' in first
    with_datetime = format_document(article(), meta(last_modified=datetime(2020, 1, 2, 3, 4)))
    assert with_datetime is not None
    assert 'last_modified="2020-01-02 03:04"' in with_datetime


@pytest.mark.parametrize(
    ("chars", "bucket"),
    [
        (0, "0-100"),
        (99, "0-100"),
        (100, "100-500"),
        (499, "100-500"),
        (500, "500-1k"),
        (999, "500-1k"),
        (1000, "1k-5k"),
        (5000, "5k-10k"),
        (10_000, "10k-100k"),
        (100_000, "100k-1M"),
        (1_000_000, "1M+"),
    ],
)
def test_length_buckets_follow_spiderling(chars: int, bucket: str) -> None:
    assert length_bucket(chars) == bucket


# --- paragraph selection ------------------------------------------------------------------------


def test_only_good_paragraphs_by_default() -> None:
    text = format_document(article(), meta())
    assert text is not None
    assert ' class="bad"' not in text and ' class="neargood"' not in text
    assert text.count("<p ") == 3
    assert "Home | News" not in text


def test_all_paragraphs_switch_keeps_classes(tmp_path: Path) -> None:
    (path,) = write(tmp_path, SAMPLE[:1], all_paragraphs=True).files
    ((_, paragraphs),) = read_vertical(path)
    assert [(p["class"], p["cfclass"], p["heading"]) for p, _ in paragraphs] == [
        ("bad", "bad", "0"),
        ("good", "short", "1"),
        ("good", "good", "0"),
        ("neargood", "neargood", "0"),
        ("good", "bad", "0"),
    ]


@pytest.mark.parametrize("all_paragraphs", [False, True])
def test_documents_without_good_paragraphs_are_not_written(
    tmp_path: Path, all_paragraphs: bool
) -> None:
    blank_good = Document(paragraphs=(Paragraph(" \x00\t ", G, G), Paragraph("menu", B, B)))
    dropped = Document(paragraphs=article().paragraphs, drop_reason=DropReason.TOO_SHORT)
    writer = VerticalWriter(
        VerticalConfig(tmp_path, all_paragraphs=all_paragraphs), clock=lambda: NOW
    )
    with writer:
        assert writer.write(menu_only(), meta()) is False
        assert writer.write(blank_good, meta()) is False
        assert writer.write(dropped, meta()) is False
    assert (writer.written, writer.skipped) == (0, 3)
    assert writer.files == ()
    assert list(tmp_path.iterdir()) == []


# --- hygiene -------------------------------------------------------------------------------------


def test_escaping_of_text_and_attributes(tmp_path: Path) -> None:
    (path,) = write(tmp_path, SAMPLE[:1]).files
    raw = path.read_text(encoding="utf-8")
    assert 'title="Article &lt;1&gt; &amp; &quot;more&quot;"' in raw
    assert "Prague &amp; &lt;Brno&gt;: &quot;quotes&quot;" in raw
    # No raw markup characters outside the structure tags.
    for line in raw.splitlines():
        if not line.startswith(("<doc ", "<p ", "</p>", "</doc>")):
            assert not set(line) & set('<>"'), line
            assert "&" not in line.replace("&amp;", "").replace("&lt;", "").replace(
                "&gt;", ""
            ).replace("&quot;", "")
    ((attrs, paragraphs),) = read_vertical(path)
    assert attrs["title"] == 'Article <1> & "more"'
    assert paragraphs[0][1] == 'Prague & <Brno>: "quotes"'


def test_escape_and_unescape_are_inverse() -> None:
    text = 'a & b < c > d " e &amp; f'
    assert escape(text) == "a &amp; b &lt; c &gt; d &quot; e &amp;amp; f"
    assert unescape(escape(text)) == text


def test_control_characters_are_removed() -> None:
    assert clean_lines("a\x00b\x07c\x1bd\x7fe\x9ff\ufffe") == ["abcdef"]
    assert clean_lines("one\ttwo\x0bthree\x0cfour") == ["one two three four"]
    assert clean_lines("l1\r\nl2\rl3\x85l4\u2028l5\n\n  \nl6  ") == [
        "l1",
        "l2",
        "l3",
        "l4",
        "l5",
        "l6",
    ]
    assert clean_lines("lone \ud800 surrogate") == ["lone surrogate"]
    text = format_document(
        Document(paragraphs=(Paragraph("bell\x07 and\x00 nul", G, G),), title="t\x1bi\ntle"),
        meta(),
    )
    assert text is not None
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
    assert "bell and nul" in text
    assert 'title="ti tle"' in text


# --- vertical specifics --------------------------------------------------------------------------


def paragraph_lines(text: str, **kwargs: object) -> list[str]:
    document = Document(paragraphs=(Paragraph(text, G, G),))
    out = format_document(document, meta(), format=VerticalFormat.VERTICAL, **kwargs)  # type: ignore[arg-type]
    assert out is not None
    lines = out.splitlines()
    return lines[2 : lines.index("</p>")]


def test_glue_tags_sit_between_tokens_without_space() -> None:
    assert paragraph_lines("Hello, world!", sentences=False) == [
        "Hello",
        "<g/>",
        ",",
        "world",
        "<g/>",
        "!",
    ]
    assert paragraph_lines('He said: "Go."', sentences=False) == [
        "He",
        "said",
        "<g/>",
        ":",
        "&quot;",
        "<g/>",
        "Go",
        "<g/>",
        ".",
        "<g/>",
        "&quot;",
    ]


def test_sentences_are_wrapped() -> None:
    assert paragraph_lines("One. Two!") == [
        "<s>",
        "One",
        "<g/>",
        ".",
        "</s>",
        "<s>",
        "Two",
        "<g/>",
        "!",
        "</s>",
    ]
    # CJK sentences follow each other without a space: the glue goes before the token.
    assert paragraph_lines("東京。大阪。") == [
        "<s>", "東", "<g/>", "京", "<g/>", "。", "</s>",
        "<s>", "<g/>", "大", "<g/>", "阪", "<g/>", "。", "</s>",
    ]  # fmt: skip


def test_tokens_in_vertical_are_the_tokenizer_tokens() -> None:
    text = "Mail me@x.org, see https://x.org/a?b=1&c=2 or call 1,000.5 times (don't)."
    lines = paragraph_lines(text, sentences=False)
    tokens = [unescape(line) for line in lines if line != "<g/>"]
    assert tokens == [t.text for t in tokenize(text)]
    assert "https://x.org/a?b=1&amp;c=2" in lines


# --- round trip ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(VerticalFormat))
@pytest.mark.parametrize("compress", [False, True])
def test_round_trip(tmp_path: Path, fmt: VerticalFormat, compress: bool) -> None:
    documents = [(article(), meta("a")), (bare(), meta("b")), (article(), meta("c"))]
    writer = write(tmp_path, documents, format=fmt, gzip=compress, all_paragraphs=True)
    (path,) = writer.files
    assert path.name.endswith(fmt.extension + (".gz" if compress else ""))
    parsed = list(read_vertical(path))
    assert [attrs["id"] for attrs, _ in parsed] == ["a", "b", "c"]
    for (document, _), (_, paragraphs) in zip(documents, parsed, strict=True):
        expected = [
            "\n".join(clean_lines(p.text))
            if fmt is VerticalFormat.PREVERTICAL
            else " ".join(clean_lines(p.text))
            for p in document.paragraphs
        ]
        assert [text for _, text in paragraphs] == expected
        assert [a["class"] for a, _ in paragraphs] == [
            str(p.final_class) for p in document.paragraphs
        ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=80),
        min_size=1,
        max_size=4,
    )
)
def test_any_text_survives_both_formats(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    document = Document(paragraphs=tuple(Paragraph(text, G, G) for text in texts))
    expected = [lines for lines in (clean_lines(text) for text in texts) if lines]
    for fmt in VerticalFormat:
        directory = tmp_path_factory.mktemp("any")
        writer = write(directory, [(document, meta())], format=fmt)
        if not expected:
            assert writer.files == ()
            continue
        ((_, paragraphs),) = read_vertical(writer.files[0])
        if fmt is VerticalFormat.PREVERTICAL:
            assert [text for _, text in paragraphs] == ["\n".join(lines) for lines in expected]
        else:
            assert [text for _, text in paragraphs] == [
                detokenize(tokenize(" ".join(lines))) for lines in expected
            ]


# --- files: rotation, gzip, recovery -------------------------------------------------------


def test_open_while_written_then_renamed(tmp_path: Path) -> None:
    writer = VerticalWriter(VerticalConfig(tmp_path, prefix="t", hostname="h"), clock=lambda: NOW)
    writer.write(article(), meta())
    assert [p.name for p in tmp_path.iterdir()] == ["t-20240506070809123-00000-h.prevert.open"]
    writer.close()
    assert [p.name for p in tmp_path.iterdir()] == ["t-20240506070809123-00000-h.prevert"]


@pytest.mark.parametrize("compress", [False, True])
def test_rotation_by_size(tmp_path: Path, compress: bool) -> None:
    documents = [(article(), meta(str(i))) for i in range(7)]
    writer = write(tmp_path, documents, max_bytes=1200, gzip=compress, timestamp_digits=14)
    assert len(writer.files) >= 3
    assert sorted(tmp_path.iterdir()) == sorted(writer.files)
    ids = [attrs["id"] for path in writer.files for attrs, _ in read_vertical(path)]
    assert ids == [str(i) for i in range(7)]
    for serial, path in enumerate(writer.files):
        suffix = r"\.prevert\.gz" if compress else r"\.prevert"
        assert re.fullmatch(rf"test-20240506070809-{serial:05d}-crawler1{suffix}", path.name)


def test_gzip_has_one_member_per_document(tmp_path: Path) -> None:
    (path,) = write(tmp_path, [(article(), meta(str(i))) for i in range(3)], gzip=True).files
    with open(path, "rb") as handle:
        members = list(gzip_member_ends(handle))
    assert len(members) == 3
    assert all(tail.endswith(b"</doc>\n") for _, tail in members)
    assert gzip.decompress(path.read_bytes()).count(b"</doc>\n") == 3


@pytest.mark.parametrize("compress", [False, True])
def test_recover_cuts_a_torn_document(tmp_path: Path, compress: bool) -> None:
    (path,) = write(
        tmp_path / "src", [(article(), meta(str(i))) for i in range(3)], gzip=compress
    ).files
    complete = path.read_bytes()
    torn_doc = format_document(article(), meta("torn"))
    assert torn_doc is not None
    torn = torn_doc.encode()[:50]
    if compress:
        torn = gzip.compress(torn_doc.encode())[:40]
    crashed = tmp_path / (path.name + ".open")
    crashed.write_bytes(complete + torn)
    (result,) = recover(tmp_path)
    assert result.action is RecoveryAction.TRUNCATED
    assert (result.units, result.kept_bytes, result.dropped_bytes) == (3, len(complete), len(torn))
    assert result.destination == tmp_path / path.name
    assert [a["id"] for a, _ in read_vertical(result.destination)] == ["0", "1", "2"]


def test_recover_renames_complete_and_quarantines_empty(tmp_path: Path) -> None:
    (path,) = write(tmp_path / "src", [(article(), meta())], format=VerticalFormat.VERTICAL).files
    (tmp_path / (path.name + ".open")).write_bytes(path.read_bytes())
    (tmp_path / "x-1-00000-h.prevert.gz.open").write_bytes(b"\x1f\x8b\x08\x00")
    (tmp_path / "y-1-00000-h.prevert.open").write_text('<doc id="1">\n<p class="good">\ntext\n')
    (tmp_path / "z.warc.gz.open").write_bytes(b"not mine")
    results = {r.source.name: r for r in recover(tmp_path)}
    assert set(results) == {
        path.name + ".open",
        "x-1-00000-h.prevert.gz.open",
        "y-1-00000-h.prevert.open",
    }
    assert results[path.name + ".open"].action is RecoveryAction.RENAMED
    assert results["x-1-00000-h.prevert.gz.open"].action is RecoveryAction.QUARANTINED
    assert results["y-1-00000-h.prevert.open"].action is RecoveryAction.QUARANTINED
    assert (tmp_path / "quarantine" / "y-1-00000-h.prevert.open").exists()
    assert (tmp_path / "z.warc.gz.open").exists()


# --- config ---------------------------------------------------------------------------------------


def test_config_accepts_format_names_and_names_the_fix(tmp_path: Path) -> None:
    assert VerticalConfig(tmp_path, format="vert").format is VerticalFormat.VERTICAL  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="use one of prevert, vert"):
        VerticalConfig(tmp_path, format="vertical")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_bytes must be > 0"):
        VerticalConfig(tmp_path, max_bytes=0)
    with pytest.raises(ConfigError, match="try 'my_corpus'"):
        VerticalConfig(tmp_path, prefix="my corpus")


def test_read_vertical_reports_broken_structure(tmp_path: Path) -> None:
    path = tmp_path / "broken.prevert"
    path.write_text("stray text\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.prevert:1: text outside <p>"):
        list(read_vertical(path))


# --- SpiderLing's language-difference attributes ------------------------------------------


def test_lang_diff_attributes_are_written_only_when_given() -> None:
    document = article()
    plain = format_document(document, DocMeta("1", NOW, "http://example.com/"))
    assert plain is not None and "lang_diff" not in plain and "langdiff" not in plain
    good = [i for i, p in enumerate(document.paragraphs) if p.final_class is G]
    diffs: list[float | None] = [None] * len(document.paragraphs)
    diffs[good[0]] = 0.125
    meta = DocMeta(
        "1", NOW, "http://example.com/", lang_diff=0.5, paragraph_lang_diffs=tuple(diffs)
    )
    text = format_document(document, meta, all_paragraphs=True)
    assert text is not None
    doc_line = text.splitlines()[0]
    # SpiderLing's name, after the fixed attributes so uniform readers are unaffected
    assert doc_line.endswith(' lang_diff="0.50">')
    p_lines = [line for line in text.splitlines() if line.startswith("<p ")]
    assert p_lines[good[0]].endswith(' heading="1" langdiff="0.12">')
    assert all("langdiff" not in line for i, line in enumerate(p_lines) if i != good[0])
    parsed_doc, parsed_paragraphs = next(iter(_parse_text(text)))
    assert parsed_doc["lang_diff"] == "0.50"
    assert parsed_paragraphs[good[0]][0]["langdiff"] == "0.12"


def _parse_text(text: str) -> list[tuple[dict[str, str], list[tuple[dict[str, str], str]]]]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.prevert"
        path.write_text(text, encoding="utf-8")
        return list(read_vertical(path))


def test_vertical_writer_writes_corpus_tool_files_for_each_finished_file(tmp_path: Path) -> None:
    config = VerticalConfig(
        tmp_path, format=VerticalFormat.VERTICAL, max_bytes=200, corpus_tools=True
    )
    with VerticalWriter(config, clock=lambda: NOW) as writer:
        for number in range(3):
            writer.write(article(), DocMeta(str(number), NOW, f"http://example.com/{number}"))
        assert len(writer.files) >= 2  # rotated: a registry per finished file so far
        for path in writer.files:
            stem = path.name.removesuffix(".vert")
            assert (tmp_path / f"{stem}.manatee").is_file()
            assert os.access(tmp_path / f"{stem}.cwb.sh", os.X_OK)
    names = {p.name for p in tmp_path.iterdir()}
    assert not [n for n in names if n.endswith(".open")]
    assert len([n for n in names if n.endswith(".manatee")]) == len(writer.files)

"""JSONL and Parquet documents: read back with pandas and pyarrow, match the prevertical."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from corpus_crawler import extract
from corpus_crawler.config import ConfigError, ExtractConfig
from corpus_crawler.documents import (
    FIELDS,
    DocumentsConfig,
    JsonlWriter,
    ParquetWriter,
    WarcLocation,
    document_record,
    jsonl_to_parquet,
    read_jsonl,
    recover_documents,
)
from corpus_crawler.model import Document
from corpus_crawler.vertical import (
    DocMeta,
    VerticalConfig,
    VerticalWriter,
    read_vertical,
)

SITE = Path(__file__).resolve().parent.parent / "corpus_crawler" / "demo_site"
NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)


def demo_documents() -> list[tuple[Document, DocMeta]]:
    """Every page of the bundled demo site, extracted for real (kept or not)."""
    out = []
    for number, path in enumerate(sorted(SITE.rglob("*.html"))):
        url = f"http://demo.test/{path.relative_to(SITE).as_posix()}"
        document = extract(path.read_bytes(), url, ExtractConfig())
        meta = DocMeta(
            doc_id=f"doc{number:03d}",
            crawl_date=NOW,
            url=url,
            last_modified="Mon, 06 May 2024 07:00:00 GMT",
            ip="127.0.0.1",
            lang_diff=0.25 if number % 2 else None,
        )
        out.append((document, meta))
    return out


def write_all(tmp_path: Path, *, all_paragraphs: bool = False, row_group_rows: int = 3) -> dict:
    documents = demo_documents()
    config = DocumentsConfig(tmp_path, max_bytes=10_000_000, row_group_rows=row_group_rows)
    with (
        VerticalWriter(VerticalConfig(tmp_path, all_paragraphs=all_paragraphs)) as prevert,
        JsonlWriter(config) as jsonl,
        ParquetWriter(config) as parquet,
    ):
        for document, meta in documents:
            record = document_record(
                document,
                meta,
                warc=WarcLocation("x.warc.gz", f"<urn:uuid:{meta.doc_id}>"),
                all_paragraphs=all_paragraphs,
            )
            written = prevert.write(document, meta)
            # the same documents in every format
            assert written == (record is not None)
            if record is not None:
                jsonl.write(record)
                parquet.write(record)
    return {
        "prevert": prevert.files,
        "jsonl": jsonl.files,
        "parquet": parquet.files,
        "count": len(documents),
    }


@pytest.mark.parametrize("all_paragraphs", [False, True])
def test_jsonl_and_parquet_match_the_prevertical_document_for_document(
    tmp_path: Path, all_paragraphs: bool
) -> None:
    files = write_all(tmp_path, all_paragraphs=all_paragraphs)
    prevert = [doc for path in files["prevert"] for doc in read_vertical(path)]
    assert len(prevert) >= 5  # the demo site has real articles

    frame = pd.concat([pd.read_json(p, lines=True, dtype=False) for p in files["jsonl"]])
    table = pq.read_table(files["parquet"][0])
    assert table.num_rows == len(prevert)
    assert table.column_names == list(FIELDS)
    assert list(frame["id"]) == [attrs["id"] for attrs, _ in prevert]
    assert table.column("id").to_pylist() == [attrs["id"] for attrs, _ in prevert]

    rows = table.to_pylist()
    assert sum(1 for attrs, _ in prevert if attrs["published"]) >= 3  # the demo's dated pages
    for (attrs, paragraphs), (_, json_row), parquet_row in zip(
        prevert, frame.iterrows(), rows, strict=True
    ):
        texts = [text for _, text in paragraphs]
        classes = [p["class"] for p, _ in paragraphs]
        for row in (json_row, parquet_row):
            assert [p["text"] for p in row["paragraphs"]] == texts
            assert [p["class"] for p in row["paragraphs"]] == classes
            good = [t for t, c in zip(texts, classes, strict=True) if c == "good"]
            assert row["text"] == "\n".join(good)
            assert str(row["chars"]) == attrs["chars"]
            assert row["title"] == (attrs["title"] or None)
            assert row["final_url"] == attrs["final_url"]
            assert row["language"] == attrs["lang"]
            assert row["encoding"] == attrs["enc_chared"]
            assert row["warc_record_id"] == f"<urn:uuid:{attrs['id']}>"
        published = parquet_row["published"]  # a Parquet date; a string in the JSON
        assert (published.isoformat() if published else "") == attrs["published"]
        in_json = json_row["published"]  # pandas reads a null as NaN
        assert (in_json if isinstance(in_json, str) else "") == attrs["published"]
        assert parquet_row["crawl_date"] == NOW
        assert parquet_row["last_modified"] == datetime(2024, 5, 6, 7, 0, tzinfo=timezone.utc)
        assert json_row["crawl_date"] == "2024-05-06T07:08:09Z"
        assert (parquet_row["lang_diff"] is None) == ("lang_diff" not in attrs)


def test_parquet_is_written_in_row_groups_with_a_fixed_schema(tmp_path: Path) -> None:
    files = write_all(tmp_path, row_group_rows=2)
    metadata = pq.ParquetFile(files["parquet"][0]).metadata
    rows = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert metadata.num_row_groups >= 3 and set(rows[:-1]) == {2}
    # an empty documents file has the same schema as a full one
    empty = tmp_path / "empty"
    ParquetWriter(DocumentsConfig(empty)).close()
    assert not list(empty.glob("*.parquet"))  # nothing written: no file at all
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    jsonl_to_parquet(files["jsonl"], a)
    jsonl_to_parquet([], b)
    assert pq.read_schema(a) == pq.read_schema(b) == pq.read_schema(files["parquet"][0])
    assert pq.read_table(a).to_pylist() == pq.read_table(files["parquet"][0]).to_pylist()


def test_files_rotate_by_size_and_nothing_is_lost(tmp_path: Path) -> None:
    documents = [
        record
        for document, meta in demo_documents()
        if (record := document_record(document, meta)) is not None
    ]
    config = DocumentsConfig(tmp_path, max_bytes=2000, row_group_rows=1)
    with JsonlWriter(config) as jsonl, ParquetWriter(config) as parquet:
        for record in documents:
            jsonl.write(record)
            parquet.write(record)
    assert len(jsonl.files) > 1 and len(parquet.files) > 1
    assert [r["id"] for p in jsonl.files for r in read_jsonl(p)] == [r["id"] for r in documents]
    ids = [i for p in parquet.files for i in pq.read_table(p).column("id").to_pylist()]
    assert ids == [r["id"] for r in documents]


def test_gzip_jsonl_has_a_member_per_document_and_crash_recovery_keeps_whole_lines(
    tmp_path: Path,
) -> None:
    records = [r for d, m in demo_documents() if (r := document_record(d, m)) is not None]
    writer = JsonlWriter(DocumentsConfig(tmp_path, gzip=True))
    for record in records:
        writer.write(record)
    # a crash: the file is left as *.open with a torn last member
    (open_path,) = tmp_path.glob("*.jsonl.gz.open")
    torn = open_path.read_bytes()
    open_path.write_bytes(torn[:-7])
    plain = JsonlWriter(DocumentsConfig(tmp_path / "plain"))
    for record in records:
        plain.write(record)
    (plain_open,) = (tmp_path / "plain").glob("*.jsonl.open")
    plain_open.write_bytes(plain_open.read_bytes()[:-3])
    parquet = ParquetWriter(DocumentsConfig(tmp_path / "plain", row_group_rows=1))
    parquet.write(records[0])
    recovered = recover_documents(tmp_path) + recover_documents(tmp_path / "plain")
    assert sorted(str(r.action) for r in recovered) == ["quarantined", "truncated", "truncated"]
    (gz,) = tmp_path.glob("*.jsonl.gz")
    assert [r["id"] for r in read_jsonl(gz)] == [r["id"] for r in records[:-1]]
    with gzip.open(gz, "rt", encoding="utf-8") as handle:
        assert [json.loads(line) for line in handle] == records[:-1]
    (jl,) = (tmp_path / "plain").glob("*.jsonl")
    assert [r["id"] for r in read_jsonl(jl)] == [r["id"] for r in records[:-1]]
    assert list((tmp_path / "plain" / "quarantine").glob("*.parquet.open"))


def test_bad_config_names_the_key() -> None:
    with pytest.raises(ConfigError, match="row_group_rows must be a whole number > 0"):
        DocumentsConfig(Path("x"), row_group_rows=0)
    with pytest.raises(ConfigError, match="prefix"):
        DocumentsConfig(Path("x"), prefix="a b")

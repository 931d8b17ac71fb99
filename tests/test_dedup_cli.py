"""`corpus-crawler dedup` over prevertical/vertical files, in a real subprocess.

Inputs are made from the planted-duplicate site (tests/site/dup_site.py) by
`extract()` and the vertical writer's formatter, plus a SpiderLing-style
prevertical written by hand.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import dup_site
import pytest

from corpus_crawler import extract
from corpus_crawler.config import ExtractConfig
from corpus_crawler.vertical import DocMeta, VerticalFormat, format_document, read_vertical

ROOT = Path(__file__).resolve().parent.parent


def dedup(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "dedup", "-q", "--filter-mib", "8", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """The dup site's article pages as one prevertical and one gzipped vertical file."""
    folder = tmp_path_factory.mktemp("dedup-cli")
    site = dup_site.build_dup_site()
    config = ExtractConfig(language="auto")
    prevert, vert = [], []
    date = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for (address, path), _group in sorted(site.groups.items()):
        url = f"http://{address}{path}"
        document = extract(site.hosts[address].pages[path], url, config)
        meta = DocMeta(doc_id=url, crawl_date=date, url=url)
        text = format_document(document, meta, format=VerticalFormat.PREVERTICAL)
        assert text is not None
        prevert.append(text)
        vertical = format_document(document, meta, format=VerticalFormat.VERTICAL)
        assert vertical is not None
        vert.append(vertical)
    (folder / "site.prevert").write_text("".join(prevert), encoding="utf-8")
    with gzip.open(folder / "site.vert.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(vert))
    return folder, site


def test_prevertical_duplicates_and_boilerplate_go(corpus: tuple[Path, object]) -> None:
    folder, site = corpus
    out = folder / "out-prevert"
    result = dedup(
        str(folder / "site.prevert"), "-o", str(out), "--summary", str(folder / "s.json")
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((folder / "s.json").read_text())
    docs_in = list(read_vertical(folder / "site.prevert"))
    docs_out = list(read_vertical(out / "site.prevert"))
    groups = {f"http://{a}{p}": g for (a, p), g in site.groups.items()}
    kept_groups = [groups[attrs["url"]] for attrs, _ in docs_out]
    assert len(docs_in) == len(site.groups)
    # exactly one document per group: the first of each
    assert sorted(kept_groups) == sorted(set(groups.values()))
    assert summary["documents_in"] == len(docs_in)
    assert summary["documents_out"] == len(docs_out)
    assert summary["duplicate"] + summary["near_duplicate"] + summary["emptied"] == len(
        docs_in
    ) - len(docs_out)
    assert summary["duplicate"] >= 8  # the byte copies at /print/
    shared = site.shared_boilerplate
    assert sum(text == shared for _, ps in docs_out for _, text in ps) == 1
    # the output is the input minus what went: attributes untouched
    attrs_in = {attrs["url"]: attrs for attrs, _ in docs_in}
    for attrs, _ in docs_out:
        assert attrs == attrs_in[attrs["url"]]


def test_gzipped_vertical_in_mark_mode_keeps_tokens_and_marks(corpus: tuple[Path, object]) -> None:
    folder, _site = corpus
    out = folder / "out-vert"
    result = dedup(
        str(folder / "site.vert.gz"), "-o", str(out), "--paragraphs", "mark", "--no-near"
    )
    assert result.returncode == 0, result.stderr
    with gzip.open(out / "site.vert.gz", "rt", encoding="utf-8") as handle:
        text = handle.read()
    assert 'dup="' in text
    assert "<g/>" in text and "<s>" in text
    with gzip.open(folder / "site.vert.gz", "rt", encoding="utf-8") as handle:
        original = handle.read()
    # marking removes no paragraph: every kept <p> line is an input <p> line plus dup=".."
    assert text.count("<p ") < original.count("<p ")  # the byte copies are gone
    assert all(
        line.split(' dup="')[0] + ">" in original or line in original
        for line in text.splitlines()
        if line.startswith("<p ")
    )


SPIDERLING = """\
<doc id="1" title="Zprávy" length="1k-5k" crawl_date="2019-01-01 10:00" url="http://a.cz/1" \
file_type="html" enc_meta="utf-8" enc_chared="utf-8">
<p class="good" cfclass="good" langdiff="0.01">
{czech}
</p>
<p class="good" cfclass="good" langdiff="0.02">
{english}
</p>
</doc>
<doc id="2" title="Zprávy" length="1k-5k" crawl_date="2019-01-01 10:01" url="http://b.cz/1" \
file_type="html" enc_meta="utf-8" enc_chared="utf-8">
<p class="good" cfclass="good" langdiff="0.01">
{czech}
</p>
</doc>
"""

CZECH = (
    "Praha je hlavní a největší město České republiky. Leží na řece Vltavě a žije v ní"
    " přibližně jeden a půl milionu obyvatel. Historické centrum města je zapsáno na seznamu"
    " světového dědictví a každý rok sem přijíždějí miliony turistů z celého světa."
)
ENGLISH = (
    "This paragraph was written in English and it has nothing to do with the rest of the"
    " document, which is in Czech; a corpus of Czech should not contain it at all."
)


def test_spiderling_prevertical_language_and_persistence(tmp_path: Path) -> None:
    source = tmp_path / "spiderling.prevert"
    source.write_text(SPIDERLING.format(czech=CZECH, english=ENGLISH), encoding="utf-8")
    out = tmp_path / "out"
    result = dedup(str(source), "-o", str(out), "--language", "cs")
    assert result.returncode == 0, result.stderr
    docs = list(read_vertical(out / "spiderling.prevert"))
    # the English paragraph goes (other language); the second document is a duplicate
    assert [(attrs["id"], [t for _, t in ps]) for attrs, ps in docs] == [("1", [CZECH])]
    # a later file into the same folder is checked against the stores of the first run
    later = tmp_path / "later.prevert"
    later.write_text(SPIDERLING.format(czech=CZECH, english=ENGLISH).replace('id="1"', 'id="9"'))
    result = dedup(str(later), "-o", str(out), "--language", "cs")
    assert result.returncode == 0, result.stderr
    assert list(read_vertical(out / "later.prevert")) == []
    # running the same file into the same folder again is refused: it would drop everything
    again = dedup(str(source), "-o", str(out))
    assert again.returncode == 2
    assert "deduplicated into" in again.stderr


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.prevert"
    broken.write_text('<doc id="1">\n<p class="good">\nsome text\n</p>\n', encoding="utf-8")
    result = dedup(str(broken), "-o", str(tmp_path / "out"))
    assert result.returncode == 1
    assert "broken.prevert:4: the file ends inside the <doc> of line 1" in result.stderr
    missing = dedup(str(tmp_path / "nope.prevert"), "-o", str(tmp_path / "out2"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    bad = dedup(str(broken), "-o", str(tmp_path / "out3"), "--filter-mib", "3")
    assert bad.returncode == 2 and "paragraph_filter_mib" in bad.stderr


def test_marking_spiderling_paragraphs_replaces_their_langdiff(tmp_path: Path) -> None:
    source = tmp_path / "spiderling.prevert"
    source.write_text(SPIDERLING.format(czech=CZECH, english=ENGLISH), encoding="utf-8")
    out = tmp_path / "out"
    result = dedup(
        str(source), "-o", str(out), "--language", "cs", "--paragraph-language", "mark",
        "--no-exact", "--no-near", "--paragraphs", "off",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    tags = (out / "spiderling.prevert").read_text().splitlines()
    p_tags = [line for line in tags if line.startswith("<p ")]
    assert all(line.count("langdiff=") == 1 for line in p_tags), p_tags
    # the English paragraph: the identifier's confidence in English, a number as
    # SpiderLing writes it; the Czech ones keep SpiderLing's own values
    assert float(p_tags[1].split('langdiff="')[1].split('"')[0]) >= 0.2
    assert 'langdiff="0.01"' in p_tags[0] and 'langdiff="0.01"' in p_tags[2]
    assert [attrs["id"] for attrs, _ in read_vertical(out / "spiderling.prevert")] == ["1", "2"]

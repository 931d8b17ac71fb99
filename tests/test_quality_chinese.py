"""Quality on Chinese pages (issue 13: languages without a stoplist), a little under
the scores measured on tests/data/gold-chinese.tar.xz.

The set is immortal-autumn/Chinese-Web-Content-Extraction-Dataset (MIT licence, its
LICENSE is in the archive): 69 blog, forum and news pages from 2005 to 2022, their
article text copied by hand, laid out by `python tools/gold_sets.py chinese-web`.
No rule or constant was chosen on it. It is scored by character (`"tokens":
"characters"` in its manifest), because Chinese has no spaces between words.

Measured with `python benchmarks/anchor_table.py --gold DIR` (DIR holding the
unpacked set), shingle F1 (P / R):
  seed              0.901 (0.890 / 0.913)
  corpus            0.938 (0.915 / 0.962)
  article           0.953 (0.945 / 0.961)
  article-comments  0.944 (0.927 / 0.961)
  readability-lxml 0.889, resiliparse 0.883, trafilatura 0.748, jusText 3.0.2
  without a stoplist 0.642 (and 0.000 with its English one)
(0.940 / 0.956 / 0.947 before the ideographic comma stopped scoring container
points, `tests/test_container_commas.py`: one page, a table of exam subjects
numbered "1、2、", fell from 1.00 to 0.64, while DAnIEL's 401 Chinese news pages
gained 0.008-0.012.) Before the decoder kept a damaged multi-byte page in its
encoding, one forum page of the set read as windows-1251 and the presets scored
0.926 / 0.942 (`corpus` / `article`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from f1_floor import assert_f1_floor

from corpus_crawler import ExtractConfig, Preset
from corpus_crawler.evaluate import evaluate_set, iter_gold_pages
from corpus_crawler.extract import extract

FLOORS = {
    Preset.SEED: 0.89,
    Preset.CORPUS: 0.93,
    Preset.ARTICLE: 0.945,
}


@pytest.mark.parametrize("preset", sorted(FLOORS, key=lambda p: p.value))
def test_chinese_shingle_f1_floor(chinese_gold_set: Path, preset: Preset) -> None:
    report = evaluate_set(chinese_gold_set, ExtractConfig(preset=preset))
    assert report.summary.pages == 69
    assert_f1_floor(report, f"{preset.value} on chinese-web", FLOORS[preset])


def test_the_set_is_scored_by_character(chinese_gold_set: Path) -> None:
    """Scored by the benchmark's word runs, a Chinese shingle is four clauses: the same
    extraction scores far lower, and one wrapped line in the gold costs a whole clause."""
    pages = list(iter_gold_pages(chinese_gold_set))
    assert all(page.characters for page in pages)
    by_character = evaluate_set(chinese_gold_set, ExtractConfig(preset=Preset.CORPUS))
    words = chinese_gold_set.parent / "as-words"
    (words / "html").mkdir(parents=True, exist_ok=True)
    (words / "gold").mkdir(exist_ok=True)
    for page in pages:
        (words / "html" / f"{page.id}.html").write_bytes(page.html)
        (words / "gold" / f"{page.id}.txt").write_text(page.gold, encoding="utf-8")
    by_word_runs = evaluate_set(words, ExtractConfig(preset=Preset.CORPUS))
    assert by_word_runs.summary.f1 < by_character.summary.f1 - 0.02


def test_every_page_reads_in_a_chinese_encoding(chinese_gold_set: Path) -> None:
    """A forum page with one bad byte late in its GBK was read as windows-1251: the
    detector drops an encoding that fails to decode anywhere."""
    encodings = {
        page.id: extract(page.html, page.url).encoding for page in iter_gold_pages(chinese_gold_set)
    }
    odd = {page: codec for page, codec in encodings.items() if codec not in {"gb18030", "utf-8"}}
    assert odd == {}

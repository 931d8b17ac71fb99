"""Quality on recent news and blog pages (issue 13), a little under the scores
measured on tests/data/gold-scrapinghub.tar.xz.

The set is scrapinghub/article-extraction-benchmark (MIT licence, its LICENSE is in
the archive): 181 pages of 2019-2020 from as many sites, most of them English news,
some blogs and pages in Portuguese, Russian, Korean and Japanese, with each page's
article body as gold (without its headline, which the presets keep as the
article's first line: about 0.008 of precision). Laid out by
`python tools/gold_sets.py scrapinghub`. No rule or constant was chosen on it; it
found one bug (`test_presets_article_in_aside.py`), checked on its two halves.

Measured with `python benchmarks/anchor_table.py --gold DIR` (DIR holding the
unpacked set), shingle F1 (P / R):
  seed              0.832 (0.838 / 0.826)
  corpus            0.923 (0.872 / 0.982)
  article           0.944 (0.908 / 0.982)
  article-comments  0.931 (0.884 / 0.982)
  trafilatura 0.953, readability-lxml 0.947, resiliparse 0.898, jusText 3.0.2
  0.792 (English stoplist) and 0.845 (none)
Before an article ended the aside above it, `corpus` and `article` scored 0.913 and
0.933: two pages of one WordPress theme kept only their cookie notice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from f1_floor import assert_f1_floor

from corpus_crawler import ExtractConfig, Preset
from corpus_crawler.evaluate import evaluate_set, iter_gold_pages, page_scores
from corpus_crawler.extract import extract

FLOORS = {
    Preset.SEED: 0.82,
    Preset.CORPUS: 0.915,
    Preset.ARTICLE: 0.935,
}

#: The theme that names its post-and-sidebar column "penci_sidebar".
LAYOUT_ASIDE_PAGES = ("4219d096902dad9f", "0e014df693f18282")


@pytest.mark.parametrize("preset", sorted(FLOORS, key=lambda p: p.value))
def test_news_shingle_f1_floor(scrapinghub_gold_set: Path, preset: Preset) -> None:
    report = evaluate_set(scrapinghub_gold_set, ExtractConfig(preset=preset))
    assert report.summary.pages == 181
    assert_f1_floor(report, f"{preset.value} on scrapinghub", FLOORS[preset])


@pytest.mark.parametrize("preset", [Preset.ARTICLE, Preset.CORPUS])
def test_the_post_in_a_layout_wrapper_named_sidebar_is_kept(
    scrapinghub_gold_set: Path, preset: Preset
) -> None:
    pages = [
        page
        for page in iter_gold_pages(scrapinghub_gold_set)
        if page.id.startswith(LAYOUT_ASIDE_PAGES)
    ]
    assert len(pages) == 2
    for page in pages:
        text = extract(page.html, page.url, ExtractConfig(preset=preset)).text
        assert page_scores(text, page.gold).f1 > 0.85, page.id

"""The commas that score readability points: readability.js's list.

readability scores a block a point per comma. Its list (REGEXPS.commas) holds the
Latin, Arabic, small, vertical, reversed, raised, turned and full-width commas, and
not the ideographic comma (U+3001, "、"), which separates the items of an
enumeration: a news site's keyword list ("蔡英文、民進黨、國民黨...") had outscored
the article beside it (DAnIEL's Chinese news: pts.org.tw, t.cntv.cn).
"""

from __future__ import annotations

import pytest

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.container import ContainerOptions, _Subtrees
from corpus_crawler.model import Paragraph, ParagraphClass

READABILITY_COMMAS = ",\u060c\ufe50\ufe10\ufe11\u2e41\u2e34\u2e32\uff0c"


def _points(text: str) -> float:
    """The points a single block gives its element."""
    good = ParagraphClass.GOOD
    block = Paragraph(
        text=text, cf_class=good, final_class=good, length=len(text), xpath="/html[1]/body[1]/p[1]"
    )
    return _Subtrees([block], ContainerOptions()).points["/html[1]/body[1]/p[1]"]


@pytest.mark.parametrize("comma", list(READABILITY_COMMAS))
def test_each_of_readabilitys_commas_scores_a_point(comma: str) -> None:
    plain = "x" * 40
    assert _points(comma.join([plain] * 4)) == _points(plain * 4) + 3


def test_the_enumeration_comma_scores_nothing() -> None:
    plain = "x" * 40
    assert _points("\u3001".join([plain] * 4)) == _points(plain * 4)


CLAUSE = "流感疫情來勢洶洶，根據疾管局最新的監測資料，又新增多例流感併發症病例，還有四人死亡。"
KEYWORDS = "、".join(f"關鍵詞{i}" for i in range(60))


def _news_page() -> bytes:
    """pts.org.tw: the site's keyword list above, the article's paragraphs below."""
    article = "".join(f"<p>{CLAUSE * 2}</p>" for _ in range(3))
    return (
        "<html><head><meta charset='utf-8'><title>新聞</title></head><body>"
        f"<div class='top'><div>{KEYWORDS}</div></div>"
        f"<div class='main'><table><tr><td><h1>流感添四死</h1>{article}</td></tr></table></div>"
        "</body></html>"
    ).encode()


@pytest.mark.parametrize("preset", [Preset.ARTICLE, Preset.CORPUS])
def test_a_keyword_list_does_not_outscore_the_article(preset: Preset) -> None:
    doc = extract(_news_page(), config=ExtractConfig(language="auto", preset=preset))
    assert doc.text.count(CLAUSE) == 6, doc.drop_detail

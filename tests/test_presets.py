"""The `corpus` and `article` presets (issue 13): jusText plus the main container.

Real pages built here and parsed by the real pipeline; the gold-set floors are
in test_quality.py.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from corpus_crawler import ConfigError, ExtractConfig, Preset, extract
from corpus_crawler.config import EXTRACTORS, JustextParams
from corpus_crawler.container import (
    ContainerOptions,
    container_pass,
    inside_containers,
    main_containers,
    main_region,
)
from corpus_crawler.crossval import cross_validate, fold_of
from corpus_crawler.evaluate import page_scores
from corpus_crawler.extractors import EXTRACTORS as REGISTRY
from corpus_crawler.extractors import Extractor
from corpus_crawler.model import ParagraphClass
from corpus_crawler.presets import container_options

PACKAGE = Path(__file__).resolve().parent.parent / "corpus_crawler"

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
LINKED = (
    'The <a href="/river">river Avon</a> runs through the <a href="/valley">Severn valley</a>'
    ' and it is one of the <a href="/longest">longest rivers of England</a> in the region,'
    ' which is why <a href="/trade">trade on the river</a> began when the'
    ' <a href="/towns">first market towns</a> were built on its banks by the people there.'
)


def page(article: str, aside: str = "") -> bytes:
    menu = "".join(f'<li><a href="/s{i}">Section {i}</a></li>' for i in range(12))
    return (
        "<html><head><title>t</title></head><body>"
        f'<div id="menu"><ul>{menu}</ul></div>'
        f'<div id="main"><div class="story">{article}</div></div>'
        f'<div id="aside">{aside}</div>'
        '<div id="footer"><p><a href="/a">About</a> | <a href="/c">Contact</a></p></div>'
        "</body></html>"
    ).encode()


def texts(preset: Preset, html: bytes) -> list[str]:
    doc = extract(html, config=ExtractConfig(preset=preset, language="en"))
    return [p.text for p in doc.good_paragraphs]


def test_a_link_rich_paragraph_in_the_main_container_is_kept() -> None:
    """Kimatu/jusText drop Wikipedia-style paragraphs (link density over 0.2);
    inside the main container the presets keep them."""
    html = page(f"<p>{SENTENCE * 2}</p><p>{LINKED}</p><p>{SENTENCE * 2}</p>")
    doc = extract(html, config=ExtractConfig(language="en"))
    linked_block = next(p for p in doc.paragraphs if p.text.startswith("The river"))
    assert 0.2 < linked_block.link_density <= 0.5
    assert any(t.startswith("The river") for t in texts(Preset.CORPUS, html))
    assert not any(t.startswith("The river") for t in texts(Preset.SEED, html))
    assert any(t.startswith("The river") for t in texts(Preset.ARTICLE, html))


def test_article_drops_running_text_outside_the_main_container() -> None:
    """One class step down outside the container: a good block there becomes NEAR_GOOD,
    which jusText's context pass then drops between boilerplate (next to the article it
    would join it: the evidence moves classes, the context still decides)."""
    related = "".join(f'<li><a href="/r{i}">Related story number {i}</a></li>' for i in range(5))
    aside = f"<ul>{related}</ul><p>{SENTENCE * 2}</p>"
    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(4))
    html = page(article, aside)
    assert len(texts(Preset.SEED, html)) == 5
    assert len(texts(Preset.CORPUS, html)) == 5  # a corpus keeps all running text
    assert len(texts(Preset.ARTICLE, html)) == 4


def test_the_container_is_found_from_the_blocks_alone() -> None:
    article = "".join(f"<p>{SENTENCE}</p>" for _ in range(5))
    doc = extract(page(article), config=ExtractConfig(language="en"))
    options = ContainerOptions()
    containers = main_containers(doc.paragraphs, options)
    assert containers == ["/html[1]/body[1]/div[2]/div[1]"]
    inside = inside_containers(doc.paragraphs, containers)
    assert sum(inside) == 5
    assert main_region(doc.paragraphs, containers, options) == containers[0]
    assert main_containers((), options) == []


def test_the_region_reaches_an_article_split_over_sibling_wrappers() -> None:
    """One wrapper per two paragraphs (as some news sites do): readability's container
    is one wrapper; the region is their parent."""
    wrappers = "".join(
        f'<div class="part"><div class="body"><p>{SENTENCE}</p><p>{SENTENCE}</p></div></div>'
        for _ in range(4)
    )
    doc = extract(page(wrappers), config=ExtractConfig(language="en"))
    options = ContainerOptions(sibling_min_score=1000)  # no sibling joins
    containers = main_containers(doc.paragraphs, options)
    assert len(containers) == 1
    region = main_region(doc.paragraphs, containers, options)
    assert region is not None and containers[0].startswith(region + "/")
    assert sum(inside_containers(doc.paragraphs, [region])) == 8


def test_no_shift_leaves_the_paragraphs_unchanged() -> None:
    doc = extract(page(f"<p>{SENTENCE * 2}</p>"), config=ExtractConfig(language="en"))
    assert container_pass(doc.paragraphs, JustextParams(), ContainerOptions()) == doc.paragraphs


def test_the_seed_hard_rules_are_not_outweighed() -> None:
    html = page(f"<p>{SENTENCE * 2}</p><p>{SENTENCE} \u00a9 2024 The Paper.</p><p>{SENTENCE}</p>")
    doc = extract(html, config=ExtractConfig(preset=Preset.CORPUS, language="en"))
    copyright_block = next(p for p in doc.paragraphs if "\u00a9" in p.text)
    assert copyright_block.cf_class is ParagraphClass.BAD


def test_shipped_preset_options_load_and_bad_ones_name_the_fix() -> None:
    corpus = container_options(Preset.CORPUS)
    article = container_options(Preset.ARTICLE)
    assert corpus is not None and article is not None
    assert article.outside_shift < 0 <= corpus.outside_shift
    assert container_options(Preset.SEED) is None
    with pytest.raises(ConfigError, match="did you mean 'inside_shift'"):
        ContainerOptions.from_mapping({"inside_shfit": 1}, "presets.yaml corpus")
    with pytest.raises(ConfigError, match="between -3 and 3"):
        ContainerOptions(outside_shift=-4)
    with pytest.raises(ConfigError, match="furniture_shift must be a whole number"):
        ContainerOptions(furniture_shift=-5)
    with pytest.raises(ConfigError, match="comment_shift must be a whole number"):
        ContainerOptions(comment_shift=True)  # type: ignore[arg-type]
    assert ContainerOptions(comment_shift=None).comment_shift is None
    # article-comments is article with its comment sections lifted, unnamed
    # threads kept in the region and the threads' titles dropped, nothing else
    comments = container_options(Preset.ARTICLE_COMMENTS)
    assert comments is not None and comments.comment_shift == 1
    assert not comments.region_stops_at_threads and article.region_stops_at_threads
    assert comments.drop_comment_titles and not article.drop_comment_titles
    assert (
        dataclasses.replace(
            comments,
            comment_shift=article.comment_shift,
            region_stops_at_threads=article.region_stops_at_threads,
            drop_comment_titles=article.drop_comment_titles,
        )
        == article
    )
    with pytest.raises(ConfigError, match="region_share must be between 0 and 1"):
        ContainerOptions(region_share=1.5)


def test_every_extractor_name_has_a_registered_function() -> None:
    assert tuple(e.value for e in Extractor) == EXTRACTORS
    assert set(REGISTRY) == set(Extractor)


def _imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.add((node.module or "").split(".")[0])
            found.update(alias.name for alias in node.names if node.module is None)
    return found


def test_no_import_cycle_between_extract_extractors_and_combined() -> None:
    """Issue 13: extract -> extractors -> combined, never back (lazy imports count too)."""
    assert "extract" not in _imports("extractors")
    assert not {"extract", "extractors"} & _imports("combined")
    # (config.ExtractConfig.checked() imports language_setup and extractors lazily: it is
    # called once where settings are read, never on the way to a page.)
    for below in ("classify", "language_setup", "presets", "segment", "model"):
        assert not {"extract", "extractors", "combined"} & _imports(below), below


def test_cjk_pages_get_thresholds_in_characters() -> None:
    """A Chinese paragraph of 80 characters reads like 80 words: the seed preset keeps
    it now (jusText's length_high of 200 characters made it NEAR_GOOD, then BAD)."""
    paragraph = "我们今天在这里讨论城市的发展问题，" * 5  # 85 characters
    html = f"<html><body><p>{paragraph}</p><p>{paragraph}</p></body></html>".encode()
    doc = extract(html)
    assert doc.language == "zh"
    assert len(doc.good_paragraphs) == 2
    reference = extract(html, config=ExtractConfig(preset=Preset.REFERENCE))
    assert reference.good_paragraphs == ()  # jusText 3.0.2's behaviour stays as it was


# --------------------------------------------------------------------------- crossval


def test_cross_validation_chooses_each_fold_without_its_own_pages() -> None:
    """A point that is perfect exactly on one fold's pages must not be chosen for that
    fold: its held-out score is the steady point's."""
    ids = [f"page-{n}" for n in range(40)]
    perfect, wrong = page_scores("a b c d e", "a b c d e"), page_scores("x y z w v", "a b c d e")
    lucky = [perfect if fold_of(i, 4) == 0 else wrong for i in ids]
    fair = page_scores("a b c d e", "a b c d e f g h")
    steady = [fair] * len(ids)
    result = cross_validate(
        {"steady": {"set": steady}, "lucky": {"set": lucky}},
        {"set": ids},
        lambda summaries: summaries["set"].f1,
        folds=4,
    )
    assert result.chosen == ("steady",) * 4
    assert result.held_out["set"].f1 == pytest.approx(fair.f1)


def test_folds_are_stable_and_balanced() -> None:
    ids = [f"p{n}" for n in range(500)]
    folds = [fold_of(i, 5) for i in ids]
    assert folds == [fold_of(i, 5) for i in ids]
    assert all(60 <= folds.count(k) <= 140 for k in range(5))
    with pytest.raises(ValueError, match="at least 2 folds"):
        cross_validate({"a": {"s": []}}, {"s": []}, lambda s: 0.0, folds=1)

"""A description list's terms and descriptions (<dt>, <dd>) score no container
points (ContainerOptions.description_lists_score_nothing, in `corpus`, `article`
and `article-comments`): readability scores paragraphs, table cells and
preformatted text, and a news feed written as a <dl> of linked headlines and their
summaries (vz.ru's) outscored the article beside it.

Shown on a small page through both container passes (compiled and Python), on and
off, and through the presets.
"""

from __future__ import annotations

import pytest
from container_kept import container_kept
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.presets import container_options

STORY = (
    "The ambulance driver was detained on Thursday after he fired two shots in the"
    " waiting room of the clinic, where he had gone, the police said, to settle a"
    " quarrel with a doctor he blamed for the death of his mother last year. "
)
SUMMARY = (
    "The regional court, which sat for the first time since the reform, ruled on"
    " Tuesday that the tender had been lawful, and the works may now go on, %d."
)


def _page() -> bytes:
    """A 1,100-character story in a <div> of its own, and beside it, in the same
    cell, a feed of twelve linked headlines, each with a summary of 150 characters
    and commas (by readability's points, 3-4 each: the <dl> outscores the story)."""
    feed = "".join(
        f'<dt>10:{i:02d} <a href="/news/{i}">Headline number {i} of the feed</a></dt>'
        f"<dd>{SUMMARY % i}</dd>"
        for i in range(12)
    )
    return (
        "<html><body><table><tr><td>"
        "<h1>Driver fires shots at a clinic</h1>"
        f'<div class="text"><p>{STORY * 3}</p><p>{STORY * 2}</p></div>'
        f'<dl class="feed">{feed}</dl>'
        "</td></tr></table></body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_feed_in_a_description_list_does_not_become_the_container(compiled: bool) -> None:
    def kept(rule: bool) -> str:
        # no region: what is kept is what the container holds
        return container_kept(
            _page(), compiled=compiled, region_share=0.0, description_lists_score_nothing=rule
        )

    with_rule, without = kept(True), kept(False)
    assert "ambulance driver" in with_rule and "regional court" not in with_rule
    # without the rule the feed is the container (the story joins it as a sibling
    # scoring a fifth of it, as readability joins siblings)
    assert "regional court" in without


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_the_presets_keep_the_story_and_not_the_feed(preset: Preset) -> None:
    options = container_options(preset)
    assert options is not None and options.description_lists_score_nothing
    text = extract(_page(), config=ExtractConfig(preset=preset, language="en")).text
    assert "ambulance driver" in text
    if preset is not Preset.CORPUS:
        # corpus keeps the running text around its container: the feed's summaries
        # are sentences with stop words, as jusText alone keeps them
        assert "regional court" not in text


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 20),
    st.integers(1, 4),
    st.integers(20, 400),
    st.booleans(),
    st.booleans(),
)
def test_both_passes_agree_on_generated_feeds(
    items: int, paragraphs: int, summary_chars: int, linked_terms: bool, rule: bool
) -> None:
    """The compiled and Python passes choose the same container whichever of the
    story and the feed wins, with the rule on or off."""
    summary = (SUMMARY * 4)[:summary_chars]
    term = '<a href="/n">Headline of the feed</a>' if linked_terms else "Headline of the feed"
    feed = "".join(f"<dt>{term} {i}</dt><dd>{summary} {i}</dd>" for i in range(items))
    story = "".join(f"<p>{STORY}</p>" for _ in range(paragraphs))
    html = (
        f'<html><body><div class="cell"><div class="text">{story}</div>'
        f"<dl>{feed}</dl></div></body></html>"
    ).encode()
    texts = [
        container_kept(html, compiled=c, region_share=0.0, description_lists_score_nothing=rule)
        for c in (True, False)
    ]
    assert texts[0] == texts[1]

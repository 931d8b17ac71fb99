"""Issue 13, article5 (rules found with Dragnet as the development set): a form's
<select> options score no container points. The furniture retry's two rules
(asides kept out, the longest attempt wins) are in test_presets_marks.py.

Shown on a small page through both container passes (compiled and Python), on and off.
"""

from __future__ import annotations

import pytest
from container_kept import container_kept

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.presets import container_options

STORY = (
    "The assistant secretary said on Wednesday that she would leave the department at"
    " the end of the month, after three years in which the office was reorganised."
)
CITIES = [
    "Albany, the capital of New York",
    "Austin, the capital of Texas",
    "Boise, the capital of Idaho",
    "Denver, the capital of Colorado",
] * 15


def _page() -> bytes:
    options = "".join(f"<option>{city}</option>" for city in CITIES)
    return (
        "<html><body>"
        f'<div class="story"><h1>She leaves</h1><p>{STORY}</p><p>{STORY}</p></div>'
        f'<form><p>Your city</p><p><select name="city">{options}</select></p></form>'
        "</body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_select_of_cities_does_not_become_the_container(compiled: bool) -> None:
    """Sixty options of 25 characters or more, each a block with a comma: by
    readability's points (2 each) their <select> outscores a two-paragraph story.
    jusText makes a block in a <select> bad by a hard rule; with
    `select_scores_nothing` it scores no container points either."""
    html = _page()
    doc = extract(html, config=ExtractConfig(language="en"))
    selects = [p for p in doc.paragraphs if p.in_select]
    assert len(selects) == 60 and all(len(p.text) >= 25 for p in selects)
    shipped = container_options(Preset.CORPUS)
    assert shipped is not None and shipped.select_scores_nothing

    def kept(rule: bool) -> str:
        # no region: what is kept is what the container holds
        return container_kept(html, compiled=compiled, region_share=0.0, select_scores_nothing=rule)

    assert "The assistant secretary" in kept(True)
    assert "The assistant secretary" not in kept(False)


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_both_presets_keep_the_story_beside_a_long_select(preset: Preset) -> None:
    options = container_options(preset)
    assert options is not None and options.select_scores_nothing
    text = extract(_page(), config=ExtractConfig(preset=preset, language="en")).text
    assert "The assistant secretary" in text
    assert "Albany" not in text

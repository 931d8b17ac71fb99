"""A list's items are weighed as their list (ContainerOptions.lists_weighed_whole, in
`corpus`, `article` and `article-comments`): readability's conditional cleaning
weighs a list as a whole and never drops one of its items, so a list of
references or of news summaries, each item citing a source or two, stays whole in
its article. A list of links (a menu, related stories) is over the limit as a whole
and stays out.

Shown on a small page through both container passes (compiled and Python), on and
off, through the presets, and on a pure function.
"""

from __future__ import annotations

import pytest
from container_kept import container_kept

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.container import whole_list_items
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options

STORY = (
    "The regional court ruled on Tuesday that the tender had been lawful, and the works"
    " on the bridge may now go on, though the opposition, which had brought the case,"
    " said it would appeal to the supreme court before the end of the month. "
)
#: An item of a briefing: a sentence and a linked source a little longer than it
#: (link density 0.54 alone, in 176 characters: under jusText's length_high, so no
#: linked prose; the unlinked items bring the list to 0.35).
LINKED_ITEM = (
    "<li>The mayor has resigned after a vote, and the deputy will act until the"
    ' election. <a href="/s/{i}">Read the story of the vote, what the deputy said to'
    " the press and what comes next for the city</a></li>"
)
PLAIN_ITEM = (
    "<li>The port will close for a week in March while the cranes are replaced, and"
    " ships will call at the other harbour of the bay until then.</li>"
)
MENU = "".join(f'<li><a href="/section/{i}">Section number {i}</a></li>' for i in range(8))


def _page() -> bytes:
    """An article of two paragraphs and a briefing list of five items, three of them
    linked past 0.5 each, and a menu of links inside the article's wrapper."""
    items = "".join(LINKED_ITEM.format(i=i) if i % 2 == 0 else PLAIN_ITEM for i in range(5))
    return (
        '<html><body><div class="story">'
        "<h1>What happened this week</h1>"
        f"<p>{STORY * 2}</p><ol>{items}</ol><p>{STORY}</p>"
        f'<ul class="sections">{MENU}</ul>'
        "</div></body></html>"
    ).encode()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_linked_items_of_a_list_stay_with_their_list(compiled: bool) -> None:
    def kept(rule: bool) -> str:
        return container_kept(_page(), compiled=compiled, lists_weighed_whole=rule)

    with_rule, without = kept(True), kept(False)
    assert with_rule.count("The mayor has resigned") == 3
    assert with_rule.count("The port will close") == 2
    assert "Section number" not in with_rule
    # without the rule the items linked past the limit are judged alone and dropped
    assert "The mayor has resigned" not in without
    assert without.count("The port will close") == 2


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS])
def test_the_presets_keep_the_whole_briefing_and_not_the_menu(preset: Preset) -> None:
    options = container_options(preset)
    assert options is not None and options.lists_weighed_whole
    text = extract(_page(), config=ExtractConfig(preset=preset, language="en")).text
    assert text.count("The mayor has resigned") == 3
    assert "Section number" not in text


def _item(xpath: str, length: int, link_chars: int) -> Paragraph:
    return Paragraph(
        "x" * length,
        ParagraphClass.BAD,
        ParagraphClass.BAD,
        length,
        1,
        link_chars,
        link_chars / length if length else 0.0,
        xpath=xpath,
    )


def test_whole_list_items_weighs_each_list_by_its_own_items() -> None:
    body = "/html[1]/body[1]"
    blocks = [
        # a list at (60 + 0) / 200 = 0.3: both items pass, the linked one too
        _item(f"{body}/ol[1]/li[1]", 100, 60),
        _item(f"{body}/ol[1]/li[2]", 100, 0),
        # a menu at 0.9: no item passes, the unlinked one neither
        _item(f"{body}/ul[1]/li[1]", 100, 100),
        _item(f"{body}/ul[1]/li[2]", 100, 80),
        # a block inside an item, an item outside a list, a paragraph: not list items
        _item(f"{body}/ol[1]/li[3]/p[1]", 100, 0),
        _item(f"{body}/div[1]/li[1]", 100, 0),
        _item(f"{body}/p[1]", 100, 0),
        # a list of empty items holds no text to weigh
        _item(f"{body}/ul[2]/li[1]", 0, 0),
        # exactly at the limit is within it
        _item(f"{body}/ul[3]/li[1]", 100, 50),
    ]
    assert whole_list_items(blocks, 0.5) == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        True,
    ]
    assert whole_list_items([], 0.5) == []

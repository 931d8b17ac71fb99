"""Element marks (hidden elements, page furniture) and what the presets do with them.

The marks are read from attributes during the one segmentation walk; both
walkers (compiled and pure Python) must give the same marks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from corpus_crawler import ExtractConfig, Preset, dom, extract
from corpus_crawler import segment as segment_module
from corpus_crawler.classify import ConfigError, ContainerOptions
from corpus_crawler.decode import decode_html
from corpus_crawler.elementmarks import HIDDEN, UNLIKELY, element_marks
from corpus_crawler.segment import segment

GoldPages = Callable[[str], Iterator[tuple[str, bytes, str, dict[str, object]]]]

SENTENCE = (
    "The committee said that it would meet again in the spring, and that the members were"
    " not yet sure whether the plan could go ahead as it was first written. "
)
REPLY = (
    "I think that the committee is wrong about this, and that the plan should have been"
    " put to the vote of all the members before it was sent to the town council. "
)


def _marks(tag: str = "div", **attributes: str) -> int:
    names = ("class", "id", "role", "hidden", "aria-hidden", "style")
    return element_marks(tag, *(attributes.get(n.replace("-", "_")) for n in names))


def test_hidden_attributes_and_styles_mark_an_element_hidden() -> None:
    assert _marks(hidden="") == HIDDEN
    assert _marks(aria_hidden="true") == HIDDEN
    assert _marks(aria_hidden=" TRUE ") == HIDDEN
    assert _marks(style="color: red; display : none") == HIDDEN
    assert _marks(style="visibility:hidden") == HIDDEN
    assert _marks(aria_hidden="false") == 0
    assert _marks(style="display: block") == 0


def test_furniture_names_and_roles_mark_an_element_unlikely() -> None:
    assert _marks(**{"class": "comment-list"}) == UNLIKELY
    assert _marks(id="site-footer") == UNLIKELY
    assert _marks(role="navigation") == UNLIKELY
    assert _marks("aside", **{"class": "sidebar widget"}) == UNLIKELY
    # a name that also says content is not furniture (readability's okMaybe)
    assert _marks(**{"class": "main-comments"}) == 0
    assert _marks(**{"class": "sidebar"}, id="content") == 0
    # the page itself and links never are
    assert _marks("body", **{"class": "has-sidebar"}) == 0
    assert _marks("a", **{"class": "comment-link"}) == 0
    assert _marks(**{"class": "story"}) == 0
    assert _marks(**{"class": "comments"}, hidden="") == HIDDEN | UNLIKELY


PAGE = (
    "<html><body>"
    '<div class="comments"><p>one two</p><div id="x" style="display: none"><p>hid</p></div></div>'
    '<nav role="navigation"><br><br>after two brs</nav>'
    "<p hidden>h2</p>"
    '<div class="main-comment"><p>ok</p></div>'
    'text<a class="comment">link</a>'
    "</body></html>"
)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_blocks_carry_the_marks_of_their_element_and_its_ancestors(compiled: bool) -> None:
    root = dom.preprocess_seed(dom.parse(PAGE))
    found = {b.text: b.marks for b in segment(root, compiled=compiled, marked=True)}
    assert found == {
        "one two": UNLIKELY,
        "hid": UNLIKELY | HIDDEN,
        "after two brs": UNLIKELY,  # a block begun at a BR keeps the BR's marks
        "h2": HIDDEN,
        "ok": 0,
        "textlink": 0,
    }
    # without `marked` nothing is read
    assert {b.marks for b in segment(root, compiled=compiled)} == {0}


@pytest.mark.parametrize("gold_set", ["cleaneval-dev", "cleanportaleval", "readability"])
def test_compiled_and_python_walkers_give_the_same_marks_on_gold_pages(
    gold_pages: GoldPages, gold_set: str
) -> None:
    assert segment_module._fast is not None, "the compiled walker is not built"
    differing = []
    marked_blocks = 0
    for page_id, html, _gold, _record in gold_pages(gold_set):
        root = dom.parse(decode_html(html).text)
        if root is None:
            continue
        root = dom.preprocess_seed(root)
        fast = segment(root, compiled=True, marked=True)
        if fast != segment(root, compiled=False, marked=True):
            differing.append(page_id)
        marked_blocks += sum(1 for b in fast if b.marks)
    assert differing == []
    assert marked_blocks > 0


def _article_page(hidden: str = "", comments: int = 0) -> bytes:
    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(3))
    replies = "".join(f"<p>{REPLY * 2}</p>" for _ in range(comments))
    share = "".join(f'<li><a href="/s{i}">Share on network {i}</a></li>' for i in range(6))
    return (
        "<html><body>"
        f'<div class="post"><h1>The plan</h1>{article}{hidden}</div>'
        f'<ul class="share">{share}</ul>'
        f'<div id="comments" class="comments-area">{replies}</div>'
        "</body></html>"
    ).encode()


def _kept(preset: Preset, html: bytes) -> str:
    doc = extract(html, config=ExtractConfig(preset=preset, language="en"))
    return doc.text


@pytest.mark.parametrize("preset", [Preset.CORPUS, Preset.ARTICLE])
def test_hidden_text_is_not_kept_by_the_presets(preset: Preset) -> None:
    secret = "This hidden note is never shown to a reader of the page but it is long. " * 3
    html = _article_page(hidden=f'<div style="display:none"><p>{secret}</p></div>')
    assert "hidden note" in _kept(Preset.SEED, html)
    kept = _kept(preset, html)
    assert "hidden note" not in kept
    assert "The committee said" in kept


def test_a_comment_section_longer_than_the_article_does_not_become_the_container() -> None:
    """Readability removes page furniture before it scores; without that, six long
    comments outscore a three-paragraph article and the article preset keeps the
    comments. The corpus preset keeps both (CleanEval keeps comments)."""
    html = _article_page(comments=6)
    article = _kept(Preset.ARTICLE, html)
    assert "The committee said" in article
    assert "I think that the committee" not in article
    corpus = _kept(Preset.CORPUS, html)
    assert "The committee said" in corpus
    assert "I think that the committee" in corpus


def test_without_the_furniture_rule_the_comments_win() -> None:
    """The page above is a fair test: the container pass alone picks the comments,
    and with furniture left out of the scoring it picks the article."""
    from corpus_crawler.classify import _Subtrees, main_containers
    from corpus_crawler.extractors import furniture

    html = _article_page(comments=6)
    doc = extract(html, config=ExtractConfig(language="en"))
    root = dom.preprocess_seed(dom.parse(html.decode()))
    segments = segment(root, marked=True)
    assert [s.text for s in segments] == [p.text for p in doc.paragraphs]
    options = ContainerOptions(tag_scores=True, skip_unlikely=True)
    assert options.uses_marks
    everything = _Subtrees(doc.paragraphs, options)
    assert main_containers(doc.paragraphs, options, everything)[0].startswith(
        "/html[1]/body[1]/div[2]"
    )
    without = _Subtrees(doc.paragraphs, options, furniture(segments))
    assert main_containers(doc.paragraphs, options, without) == ["/html[1]/body[1]/div[1]"]


def test_bad_mark_options_name_the_key() -> None:
    with pytest.raises(ConfigError, match="drop_hidden must be true or false"):
        ContainerOptions(drop_hidden="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="did you mean 'skip_unlikely'"):
        ContainerOptions.from_mapping({"skip_unlikly": True}, "presets.yaml article")


def test_noscript_text_is_hidden() -> None:
    """A browser that runs scripts never shows NOSCRIPT (cookie walls live there)."""
    assert _marks("noscript") == HIDDEN
    html = _article_page(hidden=f"<noscript><p>{REPLY * 3}</p></noscript>")
    assert "I think that the committee" in _kept(Preset.SEED, html)
    assert "I think that the committee" not in _kept(Preset.ARTICLE, html)


def test_furniture_is_ignored_when_it_leaves_too_little_for_a_container() -> None:
    """readability's retry: a site that names its whole page wrapper `header-...`
    would leave no article; with less than `min_container_chars` in the container
    chosen without the furniture, the container is chosen with it."""
    from corpus_crawler.classify import container_pass
    from corpus_crawler.config import JustextParams
    from corpus_crawler.model import ParagraphClass

    article = "".join(f"<p>{SENTENCE * 2}</p>" for _ in range(4))
    links = "".join(f'<li><a href="/r{i}">Related story number {i}</a></li>' for i in range(8))
    html = (
        '<html><body><div class="header-wrap">'
        f'<div class="story">{article}</div></div>'
        f"<div><p>A short note at the bottom of the page, and a line.</p><ul>{links}</ul></div>"
        "</body></html>"
    )
    root = dom.preprocess_seed(dom.parse(html))
    segments = segment(root, marked=True)
    doc = extract(html.encode(), config=ExtractConfig(language="en"))
    unlikely = [bool(s.marks & UNLIKELY) for s in segments]
    assert sum(unlikely) == 4
    options = ContainerOptions(skip_unlikely=True, inside_shift=2, outside_shift=-3)
    retried = container_pass(doc.paragraphs, JustextParams(), options, unlikely)
    kept = [p.text for p in retried if p.final_class is ParagraphClass.GOOD]
    assert len(kept) == 4 and all(t.startswith("The committee") for t in kept)
    from dataclasses import replace

    no_retry = container_pass(
        doc.paragraphs, JustextParams(), replace(options, min_container_chars=1), unlikely
    )
    assert not any(
        p.text.startswith("The committee") for p in no_retry if p.final_class is ParagraphClass.GOOD
    )

"""Differential test: the `reference` preset against jusText 3.0.2 itself.

For every page of the three gold sets, with the English stoplist, the
paragraphs (text, final class, context-free class, xpath) must equal those of
the PyPI jusText 3.0.2 package run on the same bytes. One test per page, so a
page that differs is a failing test with its own name.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import justext
import pytest

from corpus_crawler import ExtractConfig, Preset, extract
from corpus_crawler.segment import _fast

GOLD_TARBALL = Path(__file__).parent / "data" / "gold.tar.xz"


def _page_ids() -> list[str]:
    with tarfile.open(GOLD_TARBALL) as archive:
        names = archive.getnames()
    ids = []
    for name in names:
        parts = name.split("/")
        if len(parts) == 4 and parts[2] == "html" and parts[3].endswith(".html"):
            ids.append(f"{parts[1]}/{parts[3][: -len('.html')]}")
    return sorted(ids)


PAGE_IDS = _page_ids()
ENGLISH = justext.get_stoplist("English")
REFERENCE = ExtractConfig(preset=Preset.REFERENCE, language="en")


def test_all_gold_pages_are_compared() -> None:
    assert len(PAGE_IDS) == 58 + 71 + 116


def _reference_paragraphs(html: bytes) -> list[tuple[str, str, str, str]]:
    return [(p.text, p.class_type, p.cf_class, p.xpath) for p in justext.justext(html, ENGLISH)]


@pytest.mark.parametrize("page", PAGE_IDS)
def test_reference_preset_equals_justext(gold_dir: Path, page: str) -> None:
    set_name, page_id = page.split("/")
    html = (gold_dir / set_name / "html" / f"{page_id}.html").read_bytes()
    expected = _reference_paragraphs(html)
    doc = extract(html, config=REFERENCE)
    ours = [(p.text, p.final_class.value, p.cf_class.value, p.xpath) for p in doc.paragraphs]
    assert ours == expected


def test_reference_preset_equals_justext_with_python_walker(
    gold_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pure-Python fallback walker (no compiler) gives the same output too."""
    import corpus_crawler.segment as segment

    monkeypatch.setattr(segment, "_fast", None)
    differing = []
    for page in PAGE_IDS[::7]:
        set_name, page_id = page.split("/")
        html = (gold_dir / set_name / "html" / f"{page_id}.html").read_bytes()
        ours = [
            (p.text, p.final_class.value, p.cf_class.value, p.xpath)
            for p in extract(html, config=REFERENCE).paragraphs
        ]
        if ours != _reference_paragraphs(html):
            differing.append(page)
    assert differing == []


def test_compiled_walker_is_built() -> None:
    """pip install builds the compiled walker here (CI and the README's setup).

    Without a C compiler the package still works on the Python walker; this
    test says so loudly instead of letting the speed silently drop.
    """
    assert _fast is not None, "corpus_crawler._segment_fast was not compiled: pip install -e ."

"""What the container pass keeps of a small page made for a test, either pass."""

from __future__ import annotations

from dataclasses import replace

import pytest

from corpus_crawler import ExtractConfig, Preset, dom, extract, extractors
from corpus_crawler.config import JustextParams
from corpus_crawler.container import ContainerOptions, container_pass
from corpus_crawler.model import Paragraph, ParagraphClass
from corpus_crawler.presets import container_options
from corpus_crawler.segment import furniture, lead_elements, segment, stated_elements


def preset_text(
    html: bytes, preset: Preset, monkeypatch: pytest.MonkeyPatch, **changes: object
) -> str:
    """The text a preset extracts from `html` (English), with its shipped container
    options changed by `changes` (for options the passes after the container read)."""

    def options(p: Preset) -> ContainerOptions | None:
        shipped = container_options(p)
        return None if shipped is None else replace(shipped, **changes)  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(extractors, "container_options", options)
        return extract(html, config=ExtractConfig(preset=preset, language="en")).text


def page_marks(html: bytes) -> list[int]:
    """Per block of the page, its furniture marks (what `extract` gives the pass)."""
    return furniture(segment(dom.preprocess_seed(dom.parse(html.decode())), marked=True))


def page_stated(html: bytes) -> dict[str, int]:
    """The page's elements that state a mark of their own (what `extract` gives the pass)."""
    return stated_elements(segment(dom.preprocess_seed(dom.parse(html.decode())), marked=True))


def page_leads(html: bytes) -> list[tuple[str, ...]]:
    """Per block of the page, the elements above it named as a lead (what `extract`
    gives the standfirst pass)."""
    return lead_elements(segment(dom.preprocess_seed(dom.parse(html.decode())), marked=True))


def kept_on_and_off(html: bytes, flag: str, *, compiled: bool) -> tuple[str, str]:
    """`container_kept` with the option `flag` on, then off."""
    return (
        container_kept(html, compiled=compiled, **{flag: True}),
        container_kept(html, compiled=compiled, **{flag: False}),
    )


def container_kept(html: bytes, *, compiled: bool, **changes: object) -> str:
    """The text the container pass keeps of `html` (English, seed classes) with the
    shipped `corpus` options changed by `changes`, and every block outside the
    container made BAD (outside_shift -3, comment sections and other furniture
    included), so that what is kept is what the container holds."""
    shipped = container_options(Preset.CORPUS)
    assert shipped is not None
    everything_outside = {"outside_shift": -3, "comment_shift": None, "furniture_shift": 0}
    options = replace(shipped, **{**everything_outside, **changes})  # type: ignore[arg-type]
    return pass_text(html, options, compiled=compiled)


def pass_text(
    html: bytes,
    options: ContainerOptions,
    *,
    compiled: bool,
    paragraphs: tuple[Paragraph, ...] | None = None,
) -> str:
    """The text the container pass with `options` keeps of `html` (English), run
    on `paragraphs` or, by default, on the page's seed classes."""
    if paragraphs is None:
        paragraphs = extract(html, config=ExtractConfig(language="en")).paragraphs
    passed = container_pass(
        paragraphs,
        JustextParams(),
        options,
        page_marks(html),
        compiled=compiled,
        stated=page_stated(html),
    )
    return " ".join(p.text for p in passed if p.final_class is ParagraphClass.GOOD)

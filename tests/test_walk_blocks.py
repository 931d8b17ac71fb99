"""The compiled walk makes `Segment`s itself (no Python call per block): they must
be real Segments, equal to constructed ones, with sound reference counts."""

from __future__ import annotations

import copy
import gc
import importlib
import pickle
import sys

import pytest

from corpus_crawler import dom
from corpus_crawler.segment import Segment, segment

segment_module = importlib.import_module("corpus_crawler.segment")

HTML = (
    "<html><body><div class='comments'><p>First block of text, with a "
    "<a href='/x'>link</a> in it.</p></div><p>Second&#4; block.</p><img src='a.png'>"
    "</body></html>"
)


def test_the_compiled_walk_makes_segments() -> None:
    fast = segment_module._fast
    assert fast is not None, "corpus_crawler._segment_fast was not compiled"
    root = dom.preprocess_seed(dom.parse(HTML))
    blocks = segment(root, marked=True)
    python = segment(root, marked=True, compiled=False)
    assert blocks == python
    assert [type(b) for b in blocks] == [Segment] * len(blocks)
    first = blocks[0]
    assert first == Segment(*first) and hash(first) == hash(Segment(*first))
    assert first.text.startswith("First block") and first.link_chars == 4 and first.marks
    assert first._replace(text="x").text == "x"
    assert pickle.loads(pickle.dumps(first)) == first
    assert copy.deepcopy(blocks) == blocks
    # the control character was cleaned through _replace on a walked Segment
    assert blocks[1].text == "Second block." and type(blocks[1]) is Segment


def test_walked_segments_hold_their_own_references() -> None:
    """Each field is owned by the block (a missing incref would free it under us)."""
    root = dom.preprocess_seed(dom.parse(HTML))
    blocks = segment(root)
    texts = [b.text for b in blocks]
    del root
    gc.collect()
    for block, text in zip(blocks, texts, strict=True):
        assert sys.getrefcount(block.text) >= 3  # the block, `texts`, the call
        assert block.text == text
    paths = [b.xpath for b in blocks]
    del blocks
    gc.collect()
    assert paths[0].startswith("/html[1]/body[1]")


def test_a_block_type_that_is_not_a_tuple_is_refused() -> None:
    fast = segment_module._fast
    assert fast is not None
    root = dom.preprocess_seed(dom.parse(HTML))
    with pytest.raises(TypeError, match="tuple subclass"):
        fast.walk(root, False, 100, None, dict)

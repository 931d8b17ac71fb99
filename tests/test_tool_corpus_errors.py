"""tools/corpus_errors.py's ceiling: the oracle keeps exactly the blocks the gold holds."""

from __future__ import annotations

from types import ModuleType

from tool_loader import load_tool

from corpus_crawler import Preset
from corpus_crawler.evaluate import page_scores


def _tool() -> ModuleType:
    return load_tool("corpus_errors")


ARTICLE = [
    "The committee met on Tuesday to discuss the new budget and the plans for the "
    "coming year, which were not accepted by all of the members who were there.",
    "After a long debate the chairman said that the vote would take place in the "
    "spring, when the final figures of the accounts are known to all of them.",
]
MENU = ["Home", "About us", "Contact", "Privacy policy and terms of use of this site"]


def _page() -> bytes:
    menu = "".join(f'<li><a href="/{i}">{m}</a></li>' for i, m in enumerate(MENU))
    body = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (
        f"<html><body><ul>{menu}</ul><div id='content'>{body}</div>"
        f"<div class='footer'><p>{MENU[3]}</p></div></body></html>"
    ).encode()


def test_oracle_keeps_the_gold_blocks_and_bounds_the_preset() -> None:
    tool = _tool()
    gold = "\n".join(ARTICLE)
    blocks, text = tool.page_blocks(_page(), gold, Preset.CORPUS)
    assert [b.in_gold for b in blocks] == [False] * 4 + [True, True, False]
    oracle = tool.oracle_text(blocks)
    assert oracle == gold
    assert page_scores(oracle, gold).f1 == 1.0
    assert page_scores(text, gold).f1 <= page_scores(oracle, gold).f1

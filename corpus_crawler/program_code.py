"""Program code in a page: <pre> blocks of code, shell sessions or data, which a
corpus of a language does not want (ContainerOptions.drop_program_code)."""

from __future__ import annotations

from collections.abc import Sequence

from .classify import (
    BAD,
    GOOD,
    revise,
)
from .config import JustextParams
from .model import Paragraph, reclassified


def _preformatted(p: Paragraph) -> bool:
    path = p.dom_path
    return bool(p.text) and (path.endswith(".pre") or ".pre." in path)


def _non_ascii(text: str) -> int:
    # counted in C: a Python loop over the characters costs ~30x more
    return len(text) - len(text.encode("ascii", "ignore"))


def program_code_blocks(paragraphs: Sequence[Paragraph], params: JustextParams) -> list[bool]:
    """Per block: whether it is preformatted text (inside a <pre>) that does not read
    as running text of the page's language.

    With a stoplist: a stop-word density under `stopwords_low`, jusText's line between
    a short sentence and a menu. Source code, shell sessions and data dumps fall below
    it; prose set in <pre> (RFCs, mailing-list archives, plain-text pages) does not.

    Without one (`stopwords_low` 0: Chinese, Japanese, Thai...): on a page whose kept
    text outside <pre> is mostly non-ASCII (at least `_SCRIPT_SHARE` of its
    characters), a <pre> block at most `_CODE_SCRIPT_SHARE` non-ASCII is code: program
    text is written in ASCII whatever the language around it, and prose in <pre> on
    such a page is in the page's script. A page in a Latin script without a stoplist
    has no code by this test."""
    # the substring test first: most blocks are in no <pre>, and a call per block
    # would double the cost (~0.1 us a block)
    pre = [".pre" in p.dom_path and _preformatted(p) for p in paragraphs]
    if not any(pre):
        return pre
    low = params.stopwords_low
    if low > 0:
        return [f and p.stopword_density < low for p, f in zip(paragraphs, pre, strict=True)]
    kept = non_ascii = 0
    for p, f in zip(paragraphs, pre, strict=True):
        if not f and p.final_class is GOOD:
            kept += len(p.text)
            non_ascii += _non_ascii(p.text)
    if not kept or non_ascii < _SCRIPT_SHARE * kept:
        return [False] * len(paragraphs)
    return [
        f and _non_ascii(p.text) <= _CODE_SCRIPT_SHARE * len(p.text)
        for p, f in zip(paragraphs, pre, strict=True)
    ]


#: Not tuned (no gold page has a <pre> in an unspaced script): running Chinese or
#: Japanese text is ~80-95% non-ASCII (spaces, digits and Latin names are the rest),
#: source code 0-5% (a comment or a string in the page's language now and then).
_SCRIPT_SHARE = 0.5
_CODE_SCRIPT_SHARE = 0.1


def code_pass(paragraphs: Sequence[Paragraph], params: JustextParams) -> tuple[Paragraph, ...]:
    """`paragraphs` with the blocks of program code (`program_code_blocks`) made BAD and
    the three later phases run again, so that no container lift or good neighbour
    keeps them: what the context-sensitive pass keeps between good paragraphs is a
    short sentence, and a line of code is not one. Run after `container_pass`:
    its choice of container reads the blocks' text and links, not their classes,
    and it moves each block by its own class (its fallback aside, which reads the
    page's final classes and which `corpus` does not use), so the result is the
    container pass with the code blocks BAD and unmoved."""
    code = program_code_blocks(paragraphs, params)
    if not any(
        p.cf_class is not BAD or p.final_class is not BAD
        for p, c in zip(paragraphs, code, strict=True)
        if c
    ):
        return tuple(paragraphs)
    cf_classes = [BAD if c else p.cf_class for p, c in zip(paragraphs, code, strict=True)]
    headings = [p.heading for p in paragraphs]
    lengths = [p.length for p in paragraphs]
    final = revise(cf_classes, headings, lengths, params)
    return tuple(
        p if p.cf_class is cf and p.final_class is fin else reclassified(p, cf, fin)
        for p, cf, fin in zip(paragraphs, cf_classes, final, strict=True)
    )

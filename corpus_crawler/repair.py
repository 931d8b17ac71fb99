"""Pages whose parse lost them: an element that libxml2 let run past its end.

libxml2 reads some elements' content as raw text, or keeps them open while a
tag inside is open; when the end tag is missing or ignored, the rest of the
page ends up inside the element, where every extractor leaves it out. Each
function looks at a parsed tree and its source and returns the source
rewritten so that a second parse keeps the page, or None (nearly every page)
when the parse lost nothing. Pure functions; `dom.parse_page` applies them.
"""

from __future__ import annotations

import re

from lxml import etree

# A <noscript> element's source: its content runs to the first </noscript>, as a
# browser running scripts reads it (raw text).
_NOSCRIPT_SPAN = re.compile(r"(<noscript\b[^>]*>)(.*?)(</noscript\s*>)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)")
_MARKUP = re.compile(r"<[A-Za-z/!]")
_TITLE_START = re.compile(r"<title\b[^>]*>", re.IGNORECASE)
_TITLE_END = re.compile(r"</title", re.IGNORECASE)
#: Elements without content or end tag (HTML's void elements).
_VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta"}
    | {"param", "source", "track", "wbr"}
)


def unclosed_title(root: etree._Element, text: str) -> str | None:
    """A <title> with no </title>: libxml2 (and a browser) read the rest of the
    page as the title's text, so no extractor finds any. The title is taken to
    end where its text meets the first tag, and the page's markup is parsed.

    A title that holds a literal `<` (written `&lt;`) has its </title>, so a
    tag in a title without one is markup that it swallowed.
    """
    title = root.find("head/title")
    if title is None or not title.text or _MARKUP.search(title.text) is None:
        return None
    start = _TITLE_START.search(text)
    if start is None or _TITLE_END.search(text, start.end()) is not None:
        return None
    markup = _MARKUP.search(text, start.end())
    if markup is None:
        return None
    return f"{text[: markup.start()]}</title>{text[markup.start() :]}"


def open_noscript(root: etree._Element, text: str) -> str | None:
    """A tag left open inside a <noscript> (`<noscript><div id=x></noscript>`, a
    fallback for a `document.write` that opens the page's wrapper): libxml2
    parses the content as markup, ignores the </noscript> while the tag is
    open, and puts the rest of the page inside the <noscript>, which a browser
    running scripts never shows and the extractors that read the page as one
    leave out. The page is then read as that browser reads it: each
    <noscript>'s content is raw text up to its </noscript>, so it is emptied.

    A <noscript> without any </noscript> hides the rest of the page in that
    browser too, and is left alone.
    """
    spans = [m.group(2) for m in _NOSCRIPT_SPAN.finditer(text)]
    if not any(_leaves_open(span) for span in spans):
        return None  # most pages: no tree walk
    # Each character of an element's text comes from at least one character of
    # its source, so text longer than every source span came from past one's end.
    longest = max(len(span) for span in spans)
    if not any(len("".join(el.itertext())) > longest for el in root.iter("noscript")):
        return None
    return _NOSCRIPT_SPAN.sub(r"\1\3", text)


def _leaves_open(source: str) -> bool:
    """Whether a <noscript>'s source opens an element (not a void one) more often
    than it closes it: the only way libxml2 reads past its </noscript>."""
    if "<" not in source:
        return False
    depth: dict[str, int] = {}
    for closing, name in _TAG.findall(source):
        name = name.lower()
        if name not in _VOID_TAGS:
            depth[name] = depth.get(name, 0) + (-1 if closing else 1)
    return any(n > 0 for n in depth.values())

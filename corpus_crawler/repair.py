"""Pages whose parse lost them: an element that libxml2 let run past its end.

libxml2 reads some elements' content as raw text, or keeps them open while a
tag inside is open; when the end tag is missing or ignored, the rest of the
page ends up inside the element, where every extractor leaves it out. Each
function looks at a parsed tree (or the parse's errors) and its source and
returns the source rewritten so that a second parse keeps the page as a
browser shows it, or None (nearly every page) when the parse lost nothing.
Pure functions; `dom.parse_page` applies them.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Sequence

from lxml import etree

# A <noscript> element's source: its content runs to the first </noscript>, as a
# browser running scripts reads it (raw text).
_NOSCRIPT_SPAN = re.compile(r"(<noscript\b[^>]*>)(.*?)(</noscript\s*>)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)")
# A <script> type that names a template to render, not a program (text/template,
# text/x-template, text/ng-template, text/x-handlebars-template, text/x-tmpl).
_TEMPLATE_TYPE = re.compile(r"""\btype\s*=\s*["']?[^"'\s>]*(?:templ|tmpl)""", re.IGNORECASE)
_TEMPLATE_WORD = re.compile(r"templ|tmpl", re.IGNORECASE)
#: How far before a <noscript> the end of a <script> is looked for (white space).
_SCRIPT_END_REACH = 64
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


def noscript_sources(text: str) -> list[re.Match[str]]:
    """Every <noscript> element's source in `text`, its content as group 2: one scan
    of the page that `open_noscript` and `follows_template` share."""
    return list(_NOSCRIPT_SPAN.finditer(text))


def follows_template(text: str, sources: Sequence[re.Match[str]]) -> bool:
    """Whether a <noscript> of `sources` comes right after a `<script>` whose type
    names a template (`text/template`, `text/x-handlebars-template`...): the
    fallback of a page that renders its text from the template
    (`dom.show_template_fallbacks`). Reads a few characters before each one."""
    for source in sources:
        start = source.start()
        before = text[max(0, start - _SCRIPT_END_REACH) : start].rstrip()
        if before[-9:].lower() != "</script>":
            continue
        opened = max(text.rfind("<script", 0, start), text.rfind("<SCRIPT", 0, start))
        if opened < 0:
            continue
        tag = text[opened : text.find(">", opened, start) + 1]
        if _TEMPLATE_TYPE.search(tag) is not None:
            return True
    return False


def names_template(script_type: str) -> bool:
    """Whether a <script>'s `type` value names a template (see `follows_template`)."""
    return _TEMPLATE_WORD.search(script_type) is not None


def open_noscript(
    root: etree._Element, text: str, sources: Sequence[re.Match[str]] | None = None
) -> str | None:
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
    if sources is None:
        sources = noscript_sources(text)
    spans = [m.group(2) for m in sources]
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


# What hides markup: comments and raw-text elements (group 1), matched whole so
# that a tag written inside one is not taken for markup. Unended, each runs to the end.
_NO_MARKUP = r"<!--.*?(?:-->|\Z)|<(script|style|textarea|title|xmp)\b[^>]*>.*?(?:</\1\s*>|\Z)"
# A document's end tags (group 2), outside what hides markup.
_DOCUMENT_END = re.compile(_NO_MARKUP + r"|</(html|body)\s*>", re.IGNORECASE | re.DOTALL)
_RAW_TEXT_TAGS = frozenset({"script", "style"})
#: How many `<` from the end the cheap test reads before it leaves the page to
#: the exact search (end tags, comments and a script's code hold them).
_LAST_TAG_TRIES = 1000
_START_TAG_NAME = re.compile(r"<([A-Za-z][\w:.-]*)")
# What shows nothing: comments, scripts, styles, tags, white space.
_SHOWS_NOTHING = re.compile(
    r"<!--.*?(?:-->|\Z)|<(script|style|noscript|template)\b.*?(?:</\1\s*>|\Z)|<[^>]*>|&nbsp;|\s+",
    re.IGNORECASE | re.DOTALL,
)


def content_after_html_end(root: etree._Element, text: str) -> str | None:
    """Text after the page's </html>: libxml2 closes the document there and
    drops the rest, where a browser reads on into the body (HTML's "after
    after body" rules: `</body>` and `</html>` end nothing). Pages put together
    from whole documents (a header include that brings its own `</body></html>`,
    a second page appended to the first) lose their article that way. The page
    is read as the browser reads it: its `</body>` and `</html>` end tags are
    taken out, so libxml2 ends the document at the end of the text.

    Most pages are parsed to their last start tag, which is the tree's last
    element: then nothing was dropped and the source is not searched. A page
    whose dropped part ends as the kept part does (the same last element with
    the same text) is taken for whole: that test is what keeps the search off
    the other pages. (An advert's own `<html>...</html>` inside a page does
    not end libxml2's document, and its end tags are left alone unless the
    page lost text after another.)
    """
    if _parsed_to_the_end(root, text):
        return None
    ends = [match for match in _DOCUMENT_END.finditer(text) if match.group(2) is not None]
    html_end = next((match for match in ends if match.group(2).lower() == "html"), None)
    if html_end is None:
        return None  # every </html> is written inside a comment or a script
    if _SHOWS_NOTHING.sub("", text[html_end.end() :]) == "":
        return None  # scripts, comments or tags after it: nothing lost
    parts: list[str] = []
    last = 0
    for match in ends:
        parts.append(text[last : match.start()])
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)


#: What HTML lets <head> hold ("in head" insertion mode); any other start tag
#: ends the head and opens the body.
_HEAD_CONTENT = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes"}
    | {"style", "script", "template"}
)
#: What shows no text where it stands.
_NOT_SHOWN = frozenset({"title", "script", "style", "noscript", "template"})
_BODY_START = re.compile(_NO_MARKUP + r"|(<body\b[^>]*>)", re.IGNORECASE | re.DOTALL)


def body_in_head(root: etree._Element, text: str) -> str | None:
    """A start tag that HTML does not allow in <head> ends it, and the body
    begins there: a browser shows what follows it. libxml2 keeps an element it
    does not know (a template's `<mbox>`, Yandex's `<noindex>`, a JSP's `<c:if>`)
    in <head>, with everything after it up to the page's `<body>` tag, or the
    whole page when it has none, and every extractor leaves <head> out. The page
    is read as the browser reads it: a `<body>` tag goes before that element's
    start tag (the page's own, when it has one, so that its attributes stay).

    Only when the elements kept in <head> that way show text; a page whose
    stray tag libxml2 cannot name again in the source (a start tag broken
    inside its attributes) is left as it is.
    """
    head = root.find("head")
    if head is None:
        return None
    stray = next((c for c in head if isinstance(c.tag, str) and c.tag not in _HEAD_CONTENT), None)
    if stray is None or not _shows_text([stray, *stray.itersiblings()]):
        return None
    start = re.compile(_NO_MARKUP + rf"|<({re.escape(stray.tag)})(?=[\s/>])", re.I | re.DOTALL)
    at = next((m.start() for m in start.finditer(text) if m.group(2) is not None), None)
    if at is None:
        return None
    own = next((m.group(2) for m in _BODY_START.finditer(text, at) if m.group(2)), "<body>")
    return f"{text[:at]}{own}{text[at:]}"


def _shows_text(elements: Sequence[etree._Element]) -> bool:
    for element in elements:
        if not isinstance(element.tag, str):
            continue  # a comment's text is not shown; its tail is
        elif element.tag not in _NOT_SHOWN:
            if element.text and not element.text.isspace():
                return True
            if _shows_text(list(element)):
                return True
        if element.tail and not element.tail.isspace():
            return True
    return False


def _parsed_to_the_end(root: etree._Element, text: str) -> bool:
    """Whether the tree's last element is the source's last start tag, with the
    same text after it (a cheap test: a page it cannot tell about, such as a
    `<` in the code of a script or a tag in a comment at the end, only goes to
    the exact search)."""
    last = root
    while (child := next((c for c in reversed(last) if isinstance(c.tag, str)), None)) is not None:
        last = child
    if last.tag in _RAW_TEXT_TAGS:
        # its code may hold a `<`: the source's last such element, and its code
        closing = _last_end_tag(text, last.tag)
        opening = _last_start_tag(text, last.tag, closing)
        if opening is None:
            return False
        source = text[text.find(">", opening) + 1 : closing]
        return _folded(source[-200:])[-40:] == _folded((last.text or "")[-200:])[-40:]
    position = text.rfind("<")
    for _ in range(_LAST_TAG_TRIES):
        if position < 0:
            return True  # no start tag at all
        tag = _START_TAG_NAME.match(text, position)
        if tag is not None:
            if tag.group(1).lower() != last.tag:
                return False
            # the same name: the same text up to the next tag, too
            opened = text.find(">", tag.end()) + 1
            closed = text.find("<", opened)
            source = html.unescape(text[opened : closed if closed >= 0 else len(text)])
            after = last.tail if last.tag in _VOID_TAGS else last.text
            return _folded(source) == _folded(after or "")
        position = text.rfind("<", 0, position)
    return False  # no start tag among the last `<`s: the exact search decides


def _last_end_tag(text: str, name: str) -> int:
    return _rfind_either(text, f"</{name}", 0, len(text))


def _last_start_tag(text: str, name: str, before: int) -> int | None:
    if before < 0:
        return None
    found = _rfind_either(text, f"<{name}", 0, before)
    return found if found >= 0 else None


def _rfind_either(text: str, lower: str, start: int, end: int) -> int:
    """The last `lower` or its upper-case spelling in text[start:end]; the
    second search only covers what follows the first's find."""
    found = text.rfind(lower, start, end)
    return max(found, text.rfind(lower.upper(), max(found, start), end))


def _folded(text: str) -> str:
    return " ".join(text.split())[:40]


#: End tags that a browser honours by closing every element left open inside
#: the element they end (HTML's "in body" rules: lists, list items, sectioning
#: and grouping elements), where libxml2 ignores them while a <div> is open there.
_POPPING_END_TAGS = frozenset(
    {"ul", "ol", "li", "dl", "dd", "dt", "menu", "dir"}
    | {"section", "article", "aside", "nav", "header", "footer", "main", "address"}
    | {"blockquote", "center", "figure", "figcaption", "details", "summary", "fieldset", "hgroup"}
)
#: Elements an end tag does not look past (table structure scopes its content).
_TABLE_SCOPES = frozenset({"table", "caption", "td", "th"})
_ITEMS = frozenset({"dd", "dt"})
_TRACKED = _POPPING_END_TAGS | _TABLE_SCOPES | {"div"}
# The tracked tags (end slash: group 2, name: group 3), outside what hides markup.
_SOURCE_TAG = re.compile(
    _NO_MARKUP
    + r"|<(/?)("
    + "|".join(sorted(_TRACKED, key=len, reverse=True))
    + r")(?=[\s/>])[^>]*>",
    re.IGNORECASE | re.DOTALL,
)
_MISMATCH = re.compile(r"Opening and ending tag mismatch: ([\w:-]+) and ")
#: How deep libxml2 nests elements without XML_PARSE_HUGE (lxml's default parser).
_LIBXML2_DEPTH = 256


def end_tags_behind_divs(text: str, mismatches: Sequence[tuple[str, int]]) -> str | None:
    """An end tag that libxml2 ignored because a <div> was left open inside
    the element it ends (`<li><div>...</li></ul>`, a widget's `</divl>`): no
    end tag but a <div>'s or a table's closes a <div> in libxml2, so the list
    item, and often the rest of the page, stays inside the widget, where a
    browser closes the <div> and the item. The page is read as the browser
    reads it: the <div>s are closed just before that end tag.

    `mismatches` are libxml2's "ending tag mismatch" errors of the first parse
    as (end tag, line) (`mismatches_of`); a page without one of the end tags
    above is not scanned. The scan follows the source's <div>s and the
    elements those end tags end, and an end tag that finds a <div> open inside
    its element is rewritten when libxml2 reported it on that line.

    libxml2 reports no more than 100 errors a parse, so an end tag past them is
    left as it was parsed: none of the 88 pages of 7,280 evaluation pages that
    reach 100 errors has such an end tag past its hundredth error.
    """
    lines = {(tag, line) for tag, line in mismatches if tag in _POPPING_END_TAGS}
    if not lines:
        return None  # nearly every page: no scan
    cuts: list[tuple[int, int]] = []  # (position, <div>s to close there)
    stack: list[str] = []
    opened: Counter[str] = Counter()  # how many of each name the stack holds
    counted = 0
    line = 1
    last_line = max(number for _, number in lines)
    for match in _SOURCE_TAG.finditer(text):
        name = match.group(3)
        if name is None:
            continue  # a comment or a raw-text element: its content is no markup
        name = name.lower()
        if not match.group(2):
            if stack and (stack[-1] == name == "li" or (name in _ITEMS and stack[-1] in _ITEMS)):
                opened[stack.pop()] -= 1  # an item ends the one before it
            stack.append(name)
            opened[name] += 1
            continue
        if not opened[name]:
            continue  # a stray end tag: ignored by libxml2 and browsers alike
        index = len(stack) - 1
        # libxml2 nests no deeper: a hostile page's thousands of <div>s cost no more
        floor = max(0, len(stack) - _LIBXML2_DEPTH)
        while index >= floor and stack[index] != name:
            if stack[index] in _TABLE_SCOPES and name not in _TABLE_SCOPES:
                index = -1  # an end tag does not reach out of a table cell
            else:
                index -= 1
        if index < floor:
            continue  # a stray end tag: ignored by libxml2 and browsers alike
        divs = stack[index + 1 :].count("div")
        for closed in stack[index:]:
            opened[closed] -= 1
        del stack[index:]
        if name in _POPPING_END_TAGS:
            line += text.count("\n", counted, match.start())
            counted = match.start()
            if divs and (name, line) in lines:
                cuts.append((match.start(), divs))
            elif line > last_line:
                break  # past the last end tag libxml2 reported
    if not cuts:
        return None
    parts: list[str] = []
    last = 0
    for start, divs in cuts:
        parts += (text[last:start], "</div>" * divs)
        last = start
    parts.append(text[last:])
    return "".join(parts)


def mismatches_of(error_log: etree._ListErrorLog) -> list[tuple[str, int]]:
    """A parse's "ending tag mismatch" errors as (end tag, line): the second
    argument of `end_tags_behind_divs`."""
    found = []
    for entry in error_log.filter_types((etree.ErrorTypes.ERR_TAG_NAME_MISMATCH,)):
        match = _MISMATCH.match(entry.message)
        if match is not None:
            found.append((match.group(1).lower(), entry.line))
    return found

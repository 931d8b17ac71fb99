"""Text -> lxml tree, and the preprocessing phase of seed 000.

Trees are plain `lxml.etree` elements (no `lxml.html` element classes: their
Python lookup slows every node access). Removal uses lxml's C-level
`strip_elements` / `strip_tags`, which leave `.text`/`.tail` exactly as
`drop_tree` / `drop_tag` would.
"""

from __future__ import annotations

import copy
import re
import threading

from lxml import etree

from . import repair

_local = threading.local()

# An HTML parser reads `<?` as a bogus comment that ends at the first `>` (HTML's
# tokenizer), which also ends an XML declaration whose `?>` bytes were lost.
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>", re.IGNORECASE)
_FULL_HTML = re.compile(r"^\s*<(?:html|!doctype)", re.IGNORECASE)
_FULL_HTML_BYTES = re.compile(rb"^\s*<(?:html|!doctype)", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")

#: Seed 000, "Pre-processing": removed with their contents.
SEED_REMOVED_TAGS = ("head", "meta", "title", "script", "style")

# jusText 3.0.2 runs lxml's Cleaner(scripts, comments, style, embedded, forms,
# kill_tags=head); these are the tags that configuration kills or unwraps.
_REFERENCE_KILLED = (
    "head",
    "script",
    "style",
    "applet",
    "button",
    "input",
    "select",
    "textarea",
    "base",
)
_REFERENCE_UNWRAPPED = ("iframe", "embed", "layer", "object", "param", "form")
_KILL_MARK = "corpus-crawler-kill"
_DROP_MARK = "corpus-crawler-drop"


def _parser(encoding: str | None = None) -> etree.HTMLParser:
    # One parser per thread: lxml parsers must not be used concurrently. The
    # default limits stay on (no huge_tree): libxml2 then caps nesting depth and
    # text-node size, which bounds the work a hostile page can cause, and it is
    # the parser jusText 3.0.2 uses. `encoding` ("utf-8": a page's own UTF-8 bytes,
    # `parse_page`) is given to libxml2, so a meta charset in them is not obeyed:
    # the page is already decoded.
    parsers = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(encoding)
    if parser is None:
        parser = parsers[encoding] = etree.HTMLParser(encoding=encoding)
    return parser


def _fromstring(source: str | bytes, parser: etree.HTMLParser) -> etree._Element | None:
    try:
        return etree.fromstring(source, parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def parse(text: str) -> etree._Element | None:
    """Parse decoded text; None when there is no document at all."""
    # The text is already decoded, so an XML declaration's encoding is moot,
    # and lxml refuses str input that carries one.
    if text.lstrip()[:5].lower() == "<?xml":
        text = _XML_DECLARATION.sub("", text, count=1)
    return _fromstring(text, _parser())


def parse_page(text: str, *, scripting: bool, utf8: bytes | None = None) -> etree._Element | None:
    """Parse a page's decoded text as `parse` does, then recover the page from an
    element that libxml2 let run past its end, or cut short (`repair`): a
    <title> never closed, an end tag ignored while a <div> was open inside its
    element, text after the document's </html>, a page's body kept in <head>
    behind an element that HTML does not allow there and, with
    `scripting` (an extractor that leaves <noscript> out, as a browser running
    scripts does), a <noscript> with a tag left open inside it. Such pages are
    rare; only they are parsed a second time. With `scripting`, a template's
    <noscript> fallback is shown (`show_template_fallbacks`).

    `utf8`: `text` in UTF-8, when the caller has it (`decode.Decoded.utf8`, the
    bytes of a UTF-8 page that decoding changed nothing in). libxml2 reads those
    bytes directly, an eighth faster than a str, which lxml hands it as Latin-1,
    UCS-2 or UCS-4 to convert; the tree is the same (tests/test_dom_utf8.py)."""
    if text.lstrip()[:5].lower() == "<?xml":
        text = _XML_DECLARATION.sub("", text, count=1)  # the lines libxml2 reports are this text's
        utf8 = None
    if utf8 is None:
        root, parser = parse(text), _parser()
    else:
        parser = _parser("utf-8")
        root = _fromstring(utf8, parser)
    if root is None:
        return None
    repaired = repair.unclosed_title(root, text)
    if repaired is not None:
        text, root, parser = repaired, parse(repaired), _parser()
        if root is None:
            return None
    repaired = repair.end_tags_behind_divs(text, repair.mismatches_of(parser.error_log))
    if repaired is not None:
        text, root = repaired, parse(repaired)
        if root is None:
            return None
    repaired = repair.content_after_html_end(root, text)
    if repaired is not None:
        text, root = repaired, parse(repaired)
    if root is not None and (repaired := repair.body_in_head(root, text)) is not None:
        text, root = repaired, parse(repaired)
    if scripting and root is not None:
        sources = repair.noscript_sources(text)
        repaired = repair.open_noscript(root, text, sources)
        if repaired is not None:
            root = parse(repaired)
        elif repair.follows_template(text, sources):
            show_template_fallbacks(root)
    return root


def show_template_fallbacks(root: etree._Element) -> None:
    """Make a <noscript> that follows a template <script> a <div>, in place.

    A page whose script renders its text from a template in a `<script
    type="text/template">` (Google's blogs put every post there) gives a reader
    without scripts the same text in the <noscript> after it. A browser running
    scripts shows the rendered template where the <noscript> stands, so the
    <noscript>'s text is the text it shows, the only copy a parse can read; the
    extractors that leave <noscript> out (`scripting`) would find no post at all.
    `parse_page` calls it only when the page's source has such a <noscript>
    (`repair.follows_template`), as walking the tree costs more than the scan.
    """
    fallbacks = [
        noscript
        for noscript in root.iter("noscript")
        if (script := noscript.getprevious()) is not None
        and script.tag == "script"
        and repair.names_template(script.get("type") or "")
    ]
    for noscript in fallbacks:
        noscript.tag = "div"


def title_of(root: etree._Element) -> str | None:
    title = root.find(".//title")
    if title is None:
        return None
    text = "".join(title.itertext())
    text = _WHITESPACE.sub(" ", text).strip()
    return text or None


def preprocess_seed(root: etree._Element) -> etree._Element:
    """Drop HEAD, META, TITLE, SCRIPT, STYLE, comments and XML declarations with their contents."""
    etree.strip_elements(
        root, *SEED_REMOVED_TAGS, etree.Comment, etree.ProcessingInstruction, with_tail=False
    )
    return root


def parse_like_reference(text: str, raw: bytes) -> etree._Element | None:
    """Parse as jusText 3.0.2 does: `lxml.html.fromstring` on the decoded text.

    That function returns a fragment's single element or a renamed body when
    the text does not start with <html> or a doctype; the xpaths of the
    reference output depend on it, so it is reproduced here.
    """
    parser = _parser()
    is_full = _FULL_HTML.match(text) is not None
    try:
        doc = etree.fromstring(text, parser)
    except ValueError:
        # str input with an XML encoding declaration: jusText re-parses the bytes.
        is_full = _FULL_HTML_BYTES.match(raw) is not None
        try:
            doc = etree.fromstring(raw, parser)
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            return None
    except (etree.ParserError, etree.XMLSyntaxError):
        return None
    if doc is None or is_full:
        return doc
    bodies = doc.findall("body")
    body = bodies[0] if bodies else None
    if body is not None:
        for other in bodies[1:]:
            _merge_body(body, other)
    heads = doc.findall("head")
    if heads:
        for other in heads[1:]:
            heads[0].extend(other)
            _drop_tree(other)
        return doc
    if body is None:
        return doc
    if (
        len(body) == 1
        and (not body.text or not body.text.strip())
        and (not body[-1].tail or not body[-1].tail.strip())
        # lxml.html would return a lone comment or processing instruction, which the
        # Cleaner then refuses (jusText 3.0.2 raises ValueError): it is no document,
        # so it stays in its body, which the walk finds empty
        and isinstance(body[0].tag, str)
    ):
        return body[0]
    # lxml.html's own list (imported here: only this preset needs lxml.html), so the
    # choice follows the installed lxml as jusText's does
    from lxml.html.defs import block_tags

    if any(el.tag in block_tags for el in body.iter(etree.Element)):
        body.tag = "div"
    else:
        body.tag = "span"
    return body


def _merge_body(body: etree._Element, other: etree._Element) -> None:
    """lxml.html.fromstring's merge of a second body: its text joins the first body's
    last tail (or text), its children follow, and it is dropped with `_drop_tree`.

    Done by moving nodes, never by assigning joined strings: lxml re-validates an
    assigned string and refuses control characters that its own HTML parser kept,
    so jusText 3.0.2 raises ValueError on such a page (a fuzz find). Moving gives
    the same tree where jusText succeeds and extracts the page where it raises.
    """
    children = list(other)
    for child in children:  # a child leaves with its tail
        other.remove(child)
    carrier = copy.copy(other)  # the text, copied in C, with no validation
    carrier.tail = None
    carrier.attrib.clear()
    carrier.tag = _DROP_MARK
    carrier.extend(children)
    body.append(carrier)
    # unwrapping joins the carrier's text to the previous node, as the merge did
    etree.strip_tags(body, _DROP_MARK)
    _drop_tree(other)


def _drop_tree(el: etree._Element) -> None:
    """lxml.html's `drop_tree`: the element goes with its content, its tail joins the
    previous sibling's tail or the parent's text (by unwrapping, see `_merge_body`)."""
    parent = el.getparent()
    if parent is None:
        return
    for child in list(el):
        el.remove(child)
    el.text = None
    el.attrib.clear()
    el.tag = _DROP_MARK
    etree.strip_tags(parent, _DROP_MARK)


def preprocess_reference(root: etree._Element) -> etree._Element:
    """jusText 3.0.2's Cleaner configuration, as lxml_html_clean applies it."""
    for el in list(root.iter("image", "param", "link")):  # one pass over the tree
        tag = el.tag
        if tag == "image":
            el.tag = "img"
        elif tag == "param":
            ancestor = el.getparent()
            while ancestor is not None and ancestor.tag not in ("applet", "object"):
                ancestor = ancestor.getparent()
            if ancestor is None:
                el.tag = _KILL_MARK
        elif "stylesheet" in (el.get("rel") or "").lower():
            el.tag = _KILL_MARK
    # The Cleaner cannot remove the element it was given; it rewrites it.
    if root.tag in _REFERENCE_UNWRAPPED:
        root.tag = "div"
        root.attrib.clear()
    elif root.tag in _REFERENCE_KILLED:
        tag = root.tag
        root.clear()
        if tag != "html":
            root.tag = "div"
    etree.strip_elements(root, *_REFERENCE_KILLED, _KILL_MARK, etree.Comment, with_tail=False)
    etree.strip_tags(root, *_REFERENCE_UNWRAPPED)
    return root

# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of `segment._walk_python`: the same blocks, read straight off
libxml2's nodes instead of through lxml's per-node Python proxies.

Why: at ~160 blocks and ~3,000 nodes per page, the Python walk costs more
than parsing the page, and the issue's goal (6x jusText 3.0.2, under 4x the
bare parse) leaves no room for it. Only libxml2's node struct is read (via the
headers lxml ships); nothing is linked or modified. `tests/test_segment.py`
checks that both walks give identical output on every gold page.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_4BYTE_KIND, PyUnicode_DecodeUTF8, PyUnicode_FromKindAndData
from libc.string cimport strcmp, strlen


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)

cimport lxml.includes.etreepublic as cetree
from lxml.includes.tree cimport (
    XML_CDATA_SECTION_NODE,
    XML_ELEMENT_NODE,
    XML_TEXT_NODE,
    xmlNode,
)

cetree.import_lxml__etree()

cdef enum TagKind:
    OTHER = 0
    BLOCK = 1
    BR = 2
    LINK = 3
    IMAGE = 4


cdef inline bint _is(const char* name, const char* other) noexcept nogil:
    return strcmp(name, other) == 0


cdef TagKind _kind(const char* n) noexcept nogil:
    # The seed's block tags plus BODY (segment.SEED_BLOCK_TAGS), BR, A, IMG.
    cdef char c = n[0]
    if c == 0:
        return OTHER
    if c == b'p':
        if n[1] == 0 or _is(n, "pre"):
            return BLOCK
    elif c == b'd':
        if _is(n, "div") or _is(n, "dd") or _is(n, "dl") or _is(n, "dt"):
            return BLOCK
    elif c == b't':
        if (_is(n, "td") or _is(n, "tr") or _is(n, "table") or _is(n, "th")
                or _is(n, "thead") or _is(n, "tfoot") or _is(n, "textarea")):
            return BLOCK
    elif c == b'a':
        if n[1] == 0:
            return LINK
    elif c == b'b':
        if n[1] == b'r' and n[2] == 0:
            return BR
        if _is(n, "body") or _is(n, "blockquote"):
            return BLOCK
    elif c == b'l':
        if _is(n, "li") or _is(n, "legend"):
            return BLOCK
    elif c == b'h':
        if b'1' <= n[1] <= b'6' and n[2] == 0:
            return BLOCK
    elif c == b'u':
        if _is(n, "ul"):
            return BLOCK
    elif c == b'i':
        if _is(n, "img"):
            return IMAGE
    elif c == b'c':
        if _is(n, "center") or _is(n, "caption") or _is(n, "col") or _is(n, "colgroup"):
            return BLOCK
    elif c == b'f':
        if _is(n, "form") or _is(n, "fieldset"):
            return BLOCK
    elif c == b'o':
        if _is(n, "option") or _is(n, "optgroup"):
            return BLOCK
    return OTHER


cdef inline str _text(xmlNode* node):
    cdef const char* content = <const char*>node.content
    if content == NULL:
        return ""
    return PyUnicode_DecodeUTF8(content, strlen(content), "replace")


cdef inline str _name(xmlNode* node):
    cdef const char* name = <const char*>node.name
    return PyUnicode_DecodeUTF8(name, strlen(name), "replace")


def block_text(str text):
    """`segment.block_text` in one pass: a whitespace run becomes LF if it holds
    CR or LF, else one space; no whitespace at either end (Py_UNICODE_ISSPACE is
    what str.isspace and the regex \\s use)."""
    cdef Py_ssize_t n = len(text)
    cdef Py_ssize_t i
    cdef Py_ssize_t size = 0
    cdef Py_UCS4 c
    cdef int pending = 0  # 0: no run, 1: space run, 2: run with a line break
    cdef Py_UCS4* out
    if n == 0:
        return ""
    out = <Py_UCS4*>PyMem_Malloc(n * sizeof(Py_UCS4))
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            c = text[i]
            if Py_UNICODE_ISSPACE(c):
                if c == 10 or c == 13:
                    pending = 2
                elif pending == 0:
                    pending = 1
            else:
                if pending and size:
                    out[size] = 10 if pending == 2 else 32
                    size += 1
                pending = 0
                out[size] = c
                size += 1
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, size)
    finally:
        PyMem_Free(out)


def walk(root_element, bint reference, long max_blocks=100_000):
    """Raw blocks: (text nodes, link characters, anchor node address, images).

    Stops after max_blocks + 1 blocks, like the Python walker.
    """
    cdef xmlNode* root = (<cetree._Element>root_element)._c_node
    cdef xmlNode* parent = root
    cdef xmlNode* cur
    cdef xmlNode* last
    cdef TagKind kind
    cdef size_t anchor = 0
    cdef long link_chars = 0
    cdef long images = 0
    cdef bint in_link = False
    cdef bint after_br = False
    cdef bint count_images = not reference
    cdef list raw = []
    cdef list nodes = []
    cdef str content

    # start of the root element
    kind = _kind(<const char*>root.name)
    if kind == BLOCK:
        anchor = <size_t>root
    elif kind == BR:
        after_br = True
        nodes.append(" ")
    else:
        if kind == LINK:
            in_link = True
        elif kind == IMAGE and count_images:
            images += 1
    cur = root.children
    while True:
        if cur == NULL:
            # end of `parent`
            kind = _kind(<const char*>parent.name)
            if kind == BLOCK:
                if nodes or images:
                    raw.append((nodes, link_chars, anchor, images))
                    nodes = []
                    link_chars = 0
                    images = 0
                    if len(raw) > max_blocks:
                        return raw
                anchor = 0 if parent == root else <size_t>parent.parent
            else:
                if kind == LINK:
                    in_link = False
                if not reference and anchor == <size_t>parent and not nodes and kind != BR:
                    # a block begun at </option> sits in its SELECT; text after
                    # </select> is not select content (jusText keeps the path)
                    anchor = 0 if parent == root else <size_t>parent.parent
            if parent == root:
                break
            cur = parent.next
            parent = parent.parent
            continue
        if cur.type == XML_ELEMENT_NODE:
            kind = _kind(<const char*>cur.name)
            if kind == BLOCK or (after_br and kind == BR):
                if nodes or images:
                    raw.append((nodes, link_chars, anchor, images))
                    nodes = []
                    link_chars = 0
                    images = 0
                    if len(raw) > max_blocks:
                        return raw
                anchor = <size_t>cur
            elif kind == BR:
                after_br = True
                nodes.append(" ")
            else:
                after_br = False
                if kind == LINK:
                    in_link = True
                elif kind == IMAGE and count_images:
                    images += 1
            parent = cur
            cur = cur.children
            continue
        if cur.type == XML_TEXT_NODE or cur.type == XML_CDATA_SECTION_NODE:
            # Adjacent text nodes are one `.text`/`.tail` for lxml, and for jusText.
            content = _text(cur)
            last = cur
            while last.next != NULL and (
                last.next.type == XML_TEXT_NODE or last.next.type == XML_CDATA_SECTION_NODE
            ):
                last = last.next
                content = content + _text(last)
            cur = last.next
            if content:
                if not content.isspace():
                    nodes.append(content)
                    if in_link:
                        link_chars += len(" ".join(content.split()))
                        if reference:
                            # jusText counts the link's edge spaces too (density can pass 1)
                            link_chars += (content[0].isspace()
                                           + content[len(content) - 1].isspace())
                    after_br = False
                elif not reference:
                    # the seed keeps blank text between inline elements (jusText drops it)
                    nodes.append(content)
            continue
        # comments, processing instructions: their text is not block text
        cur = cur.next
    if nodes or images:
        raw.append((nodes, link_chars, anchor, images))
    return raw


cdef dict _child_orders(xmlNode* parent):
    """Every element child's 1-based position among its same-name siblings."""
    cdef dict counts = {}
    cdef dict orders = {}
    cdef xmlNode* child = parent.children
    cdef str name
    while child != NULL:
        if child.type == XML_ELEMENT_NODE:
            name = _name(child)
            order = counts.get(name, 0) + 1
            counts[name] = order
            orders[<size_t>child] = order
        child = child.next
    return orders


def paths(root_element, list anchors):
    """(dom path, xpath) for each anchor address; 0 is the document itself.

    A parent's children are numbered in one pass (cached), so 100k sibling
    blocks cost linear time.
    """
    cdef xmlNode* root = (<cetree._Element>root_element)._c_node
    cdef xmlNode* node
    cdef dict cache = {0: ("", "/")}
    cdef dict orders_by_parent = {}
    cdef dict orders
    cdef list chain
    cdef list result = []
    cdef size_t address
    cdef str dom, xpath, name
    for address in anchors:
        found = cache.get(address)
        if found is not None:
            result.append(found)
            continue
        chain = []
        node = <xmlNode*>address
        while node != NULL and <size_t>node not in cache:
            chain.append(<size_t>node)
            if node == root:
                node = NULL
                break
            node = node.parent
        if node == NULL:
            dom, xpath = "", ""
        else:
            dom, xpath = cache[<size_t>node]
        for item in reversed(chain):
            node = <xmlNode*><size_t>item
            name = _name(node)
            if node == root or node.parent == NULL:
                order = 1
            else:
                orders = orders_by_parent.get(<size_t>node.parent)
                if orders is None:
                    orders = _child_orders(node.parent)
                    orders_by_parent[<size_t>node.parent] = orders
                order = orders[item]
            dom = dom + "." + name if dom else name
            xpath = f"{xpath}/{name}[{order}]"
            cache[item] = (dom, xpath)
        result.append(cache[address])
    return result

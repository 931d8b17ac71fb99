# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of `segment._segment_python`: the same blocks, read straight off
libxml2's nodes instead of through lxml's per-node Python proxies.

Why: at ~160 blocks and ~700 elements per page, the Python walk costs more
than parsing the page, and issue 2's goal (6x jusText 3.0.2, under 4x the
bare parse) leaves no room for it. One pass folds each block's whitespace and
keeps the open elements on a C stack with their sibling orders, so a block's
DOM path and XPath come from the stack instead of a second walk up the tree.
Only libxml2's node struct is read (via the headers lxml ships); nothing is
linked or modified. `tests/test_segment.py` checks that both walks give
identical output on every gold page and on generated pages.
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_4BYTE_KIND, PyUnicode_FromKindAndData
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from libc.string cimport memcpy, strcmp, strlen

from .elementmarks import ARTICLE, ENDED_BY_ARTICLE, MARKED_TAGS, RECORDED, UNENDED_ASIDES


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    int PyUnicode_KIND(object text)
    const void* PyUnicode_DATA(object text)
    Py_UCS4 PyUnicode_READ(int kind, const void* data, Py_ssize_t index) nogil
    ctypedef object (*allocfunc)(PyTypeObject* cls, Py_ssize_t items)
    ctypedef struct PyTypeObjectAlloc "PyTypeObject":
        allocfunc tp_alloc


#: elementmarks.RECORDED (NEGATIVE, BODY and the furniture), the marks listed per element
cdef int _RECORDED = RECORDED


cdef inline object _block(type block_type, str text, long link_chars, tuple path,
                          long images, int marks, tuple stated):
    """One block: a plain tuple, or an instance of a tuple subclass (segment.Segment)
    made as tuple.__new__ makes one, without the Python-level call per block."""
    if block_type is None:
        return (text, link_chars, path[0], path[1], images, marks, stated)
    cdef object block = (<PyTypeObjectAlloc*><PyObject*>block_type).tp_alloc(
        <PyTypeObject*><PyObject*>block_type, 7
    )
    _put(block, 0, text)
    _put(block, 1, link_chars)
    _put(block, 2, path[0])
    _put(block, 3, path[1])
    _put(block, 4, images)
    _put(block, 5, marks)
    _put(block, 6, stated)
    return block


cdef inline void _put(object block, Py_ssize_t index, object value):
    Py_INCREF(value)  # PyTuple_SET_ITEM steals a reference
    PyTuple_SET_ITEM(block, index, value)

cimport lxml.includes.etreepublic as cetree
from lxml.includes.tree cimport (
    XML_CDATA_SECTION_NODE,
    xmlAttr,
    XML_ELEMENT_NODE,
    XML_TEXT_NODE,
    xmlNode,
)

from ._libxml cimport attribute_text, find_attribute, node_name, text_run

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


cdef class _Folder:
    """Block text folded as it is read: a whitespace run becomes LF if it holds
    CR or LF, else one space; no whitespace at either end (Py_UNICODE_ISSPACE is
    what str.isspace, str.split and the regex \\s use). `segment.block_text`
    is the definition."""

    cdef Py_UCS4* buf
    cdef Py_ssize_t size, cap
    cdef int pending  # 0: no run, 1: space run, 2: run with a line break

    def __dealloc__(self):
        PyMem_Free(self.buf)

    cdef int feed(self, str text, Py_ssize_t* nonspace, Py_ssize_t* runs) except -1:
        """Append `text`; count its non-space characters and non-space runs."""
        cdef Py_ssize_t n = len(text), i, size, found = 0, words = 0
        cdef Py_UCS4 c
        cdef int pending = self.pending
        cdef bint after_space = True  # a word starts at the text's first non-space
        cdef Py_UCS4* out
        # read the code points straight from the str's own array (one kind test
        # per character, predictable), not through an item lookup per index
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        if self.size + n + 1 > self.cap:
            self._grow(self.size + n + 1)
        out = self.buf
        size = self.size
        for i in range(n):
            c = PyUnicode_READ(kind, data, i)
            if Py_UNICODE_ISSPACE(c):
                after_space = True
                if c == 10 or c == 13:
                    pending = 2
                elif pending == 0:
                    pending = 1
            else:
                if after_space:
                    words += 1
                    after_space = False
                if pending and size:
                    out[size] = 10 if pending == 2 else 32
                    size += 1
                pending = 0
                out[size] = c
                size += 1
                found += 1
        self.size = size
        self.pending = pending
        nonspace[0] = found
        runs[0] = words
        return 0

    cdef inline void feed_space(self) noexcept:
        if self.pending == 0:
            self.pending = 1

    cdef int _grow(self, Py_ssize_t needed) except -1:
        cdef Py_ssize_t cap = max(needed, 2 * self.cap, 256)
        cdef Py_UCS4* buf = <Py_UCS4*>PyMem_Realloc(self.buf, cap * sizeof(Py_UCS4))
        if buf == NULL:
            raise MemoryError()
        self.buf = buf
        self.cap = cap
        return 0

    cdef str take(self):
        """The folded text so far; the folder starts over."""
        cdef str text = (
            PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, self.buf, self.size)
            if self.size else ""
        )
        self.size = 0
        self.pending = 0
        return text


def block_text(str text):
    """`segment.block_text`, compiled."""
    cdef _Folder folder = _Folder()
    cdef Py_ssize_t nonspace, runs
    folder.feed(text, &nonspace, &runs)
    return folder.take()


cdef struct Frame:
    xmlNode* node
    int marks             # elementmarks bits of this element and its ancestors
    long order            # 1-based position among same-name element siblings
    Py_ssize_t names_at   # where this element's children's names begin in `_Walk.names`


cdef class _Walk:
    """The state of one walk: the stack of open elements, with what xpaths
    need, and the block being read.

    Each frame keeps its element's sibling order, counted when the walk enters
    it: a frame's children's names and counts sit on a shared name stack (a
    frame's region is always on top while its children are entered). A frame
    with many distinct child names moves its counts into a dict, so 100k
    differently named siblings stay linear. Paths are built only for the frames
    a block needs, and cached per frame.
    """

    cdef Frame* frames
    cdef Py_ssize_t depth, frames_cap
    cdef const char** names
    cdef long* counts
    cdef Py_ssize_t names_top, names_cap
    cdef list paths   # per depth: (dom path, xpath) or None
    cdef list stated  # per depth: Segment.stated of a block anchored there
    cdef list dicts   # per depth: name -> count once a frame has many child names
    # the block being read: its text so far, and whether it has any text node
    cdef _Folder text
    cdef bint has_nodes
    cdef long link_chars, images
    # the block's anchor frame: -1 is the document; -2 an element the walk has
    # left (a BR that began a block), whose path is kept in `anchor_path`
    cdef Py_ssize_t anchor_depth
    cdef tuple anchor_path
    # the blocks read so far
    cdef list blocks
    cdef long emitted, max_blocks
    # elementmarks.element_marks or furniture_marks, or None when marks are not wanted
    cdef object marker
    cdef int anchor_marks
    cdef tuple anchor_stated
    # the class of the blocks (a tuple subclass), or None for plain tuples
    cdef type block_type

    def __cinit__(self):
        self.frames_cap = 64
        self.names_cap = 256
        self.frames = <Frame*>PyMem_Malloc(self.frames_cap * sizeof(Frame))
        self.names = <const char**>PyMem_Malloc(self.names_cap * sizeof(const char*))
        self.counts = <long*>PyMem_Malloc(self.names_cap * sizeof(long))
        if self.frames == NULL or self.names == NULL or self.counts == NULL:
            raise MemoryError()
        self.depth = -1
        self.names_top = 0
        self.paths = []
        self.stated = []
        self.dicts = []
        self.text = _Folder()
        self.anchor_depth = -1
        self.blocks = []

    def __dealloc__(self):
        PyMem_Free(self.frames)
        PyMem_Free(self.names)
        PyMem_Free(self.counts)

    cdef long _order(self, const char* name) except -1:
        """Count `name` among the children of the top frame; its 1-based order."""
        cdef Py_ssize_t i, start = self.frames[self.depth].names_at
        cdef dict counts = self.dicts[self.depth]
        if counts is not None:
            key = <bytes>name
            order = counts.get(key, 0) + 1
            counts[key] = order
            return order
        for i in range(start, self.names_top):
            if self.names[i] == name or strcmp(self.names[i], name) == 0:
                self.counts[i] += 1
                return self.counts[i]
        if self.names_top - start >= 32:
            counts = {<bytes>self.names[i]: self.counts[i] for i in range(start, self.names_top)}
            self.dicts[self.depth] = counts
            self.names_top = start
            counts[<bytes>name] = 1
            return 1
        if self.names_top == self.names_cap:
            self._grow_names()
        self.names[self.names_top] = name
        self.counts[self.names_top] = 1
        self.names_top += 1
        return 1

    cdef int _grow_names(self) except -1:
        cdef Py_ssize_t cap = self.names_cap * 2
        cdef const char** names = <const char**>PyMem_Realloc(self.names, cap * sizeof(const char*))
        if names == NULL:
            raise MemoryError()
        self.names = names
        cdef long* counts = <long*>PyMem_Realloc(self.counts, cap * sizeof(long))
        if counts == NULL:
            raise MemoryError()
        self.counts = counts
        self.names_cap = cap
        return 0

    cdef int push(self, xmlNode* node) except -1:
        cdef long order = 1 if self.depth < 0 else self._order(<const char*>node.name)
        cdef Frame* frames
        cdef int own = 0
        cdef int parent
        cdef tuple stated
        self.depth += 1
        if self.depth == self.frames_cap:
            frames = <Frame*>PyMem_Realloc(self.frames, 2 * self.frames_cap * sizeof(Frame))
            if frames == NULL:
                raise MemoryError()
            self.frames = frames
            self.frames_cap *= 2
        self.frames[self.depth].node = node
        self.frames[self.depth].order = order
        if self.marker is None:
            self.frames[self.depth].marks = 0
        else:
            own = _own_marks(node, self.marker)
            parent = self.frames[self.depth - 1].marks if self.depth > 0 else 0
            if own & _ARTICLE and not parent & _UNENDED_ASIDES:
                # elementmarks.inherited: an article ends the aside above it
                parent &= ~_ASIDE_MARK
            self.frames[self.depth].marks = parent | own
        self.frames[self.depth].names_at = self.names_top
        stated = <tuple>self.stated[self.depth - 1] if self.depth > 0 else ()
        if self.depth < len(self.paths):
            self.paths[self.depth] = None
            self.dicts[self.depth] = None
            self.stated[self.depth] = stated
        else:
            self.paths.append(None)
            self.dicts.append(None)
            self.stated.append(stated)
        if own & _RECORDED:
            # the element's xpath, found once (elements stating a mark are few)
            self.stated[self.depth] = stated + ((self.path(self.depth)[1], own & _RECORDED),)
        return 0

    cdef void pop(self) noexcept:
        self.names_top = self.frames[self.depth].names_at
        self.depth -= 1

    cdef bint close_block(self) except -1:
        """End the block being read; True once there are more than max_blocks."""
        cdef str text
        cdef tuple path
        cdef int marks
        cdef tuple stated
        if not self.has_nodes and not self.images:
            return False
        self.emitted += 1
        if self.emitted > self.max_blocks:
            return True
        text = self.text.take()
        if text or self.images:
            if self.anchor_depth == -2:
                path = self.anchor_path
                marks = self.anchor_marks
                stated = self.anchor_stated
            else:
                path = self.path(self.anchor_depth)
                if self.anchor_depth >= 0:
                    marks = self.frames[self.anchor_depth].marks
                    stated = <tuple>self.stated[self.anchor_depth]
                else:
                    marks = 0
                    stated = ()
            self.blocks.append(
                _block(self.block_type, text, self.link_chars, path, self.images, marks, stated)
            )
        self.has_nodes = False
        self.link_chars = 0
        self.images = 0
        return False

    cdef int leave_anchor(self) except -1:
        """The walk leaves the top frame: if it is the anchor (a BR), keep its path."""
        if self.anchor_depth == self.depth:
            self.anchor_path = self.path(self.depth)
            self.anchor_marks = self.frames[self.depth].marks
            self.anchor_stated = <tuple>self.stated[self.depth]
            self.anchor_depth = -2
        return 0

    cdef tuple path(self, Py_ssize_t depth):
        """(dom path, xpath) of the frame at `depth`; -1 is the document."""
        cdef Py_ssize_t k = depth
        cdef str dom, xpath, name
        cdef tuple found
        if depth < 0:
            return ("", "/")
        while k >= 0 and self.paths[k] is None:
            k -= 1
        if k < 0:
            dom, xpath = "", ""
        else:
            found = <tuple>self.paths[k]
            dom, xpath = found
        for k in range(k + 1, depth + 1):
            name = node_name(self.frames[k].node)
            dom = dom + "." + name if dom else name
            xpath = f"{xpath}/{name}[{self.frames[k].order}]"
            self.paths[k] = (dom, xpath)
        return <tuple>self.paths[depth]


cdef inline bint _marked_tag(const char* name):
    cdef bytes tag
    if not _MARKED_FIRST[<unsigned char>name[0]]:
        return False  # most elements (div, p, span, td...): one lookup, no string compared
    for tag in _MARKED_TAGS:
        if strcmp(name, <const char*>tag) == 0:
            return True
    return False


#: The attributes `_own_marks` reads, in `elementmarks.element_marks`' argument order.
cdef tuple _MARKED = (
    b"class", b"id", b"role", b"hidden", b"aria-hidden", b"style", b"itemprop"
)
DEF N_MARKED = 7
#: elementmarks.MARKED_TAGS as bytes: marked by their tag alone.
cdef tuple _MARKED_TAGS = tuple(sorted(tag.encode() for tag in MARKED_TAGS))
#: The first bytes of _MARKED_TAGS: an element whose tag starts otherwise is not one.
cdef bint _MARKED_FIRST[256]
for _tag in _MARKED_TAGS:
    _MARKED_FIRST[(<bytes>_tag)[0]] = True

# Marks by the raw bytes of an element's tag and marked attributes. Template
# pages repeat the same attribute sets thousands of times; a hit costs one
# bytes object and a dict lookup instead of decoding seven strings and calling
# Python (which made reading the marks cost as much as the walk itself). One
# cache per marker (segment.py's two: with and without the stated marks), so
# that presets taking turns in one process do not empty each other's.
cdef dict _mark_caches = {}
cdef Py_ssize_t _MARK_CACHE_SIZE = 65536


def clear_mark_caches():
    """Forget every cached mark: the next page meets its template for the first time."""
    _mark_caches.clear()


cdef class _KeyBuffer:
    cdef char* data
    cdef Py_ssize_t size, cap

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef int add(self, const char* text, Py_ssize_t n) except -1:
        cdef Py_ssize_t cap
        cdef char* data
        if self.size + n + 1 > self.cap:
            cap = max(self.size + n + 1, 2 * self.cap, 256)
            data = <char*>PyMem_Realloc(self.data, cap)
            if data == NULL:
                raise MemoryError()
            self.data = data
            self.cap = cap
        memcpy(self.data + self.size, text, n)
        self.size += n
        # a separator no attribute value or tag name holds
        self.data[self.size] = 0
        self.size += 1
        return 0


cdef _KeyBuffer _key = _KeyBuffer()


cdef int _own_marks(xmlNode* node, object marker) except -1:
    """The marks of one element from its attributes (0 without a marked one)."""
    cdef xmlAttr* attr
    cdef xmlNode* child
    cdef const char* name
    cdef xmlAttr* found[N_MARKED]
    cdef bint any_found = False
    cdef Py_ssize_t i
    for i in range(N_MARKED):
        found[i] = NULL
    attr = node.properties
    while attr != NULL:
        name = <const char*>attr.name
        for i in range(N_MARKED):
            if strcmp(name, <const char*>(<bytes>_MARKED[i])) == 0:
                found[i] = attr
                any_found = True
                break
        attr = attr.next
    if not any_found and not _marked_tag(<const char*>node.name):
        return 0
    cdef dict cache = _mark_caches.get(marker)
    if cache is None:
        if len(_mark_caches) >= 4:
            _mark_caches.clear()
        cache = {}
        _mark_caches[marker] = cache
    _key.size = 0
    _key.add(<const char*>node.name, strlen(<const char*>node.name))
    for i in range(N_MARKED):
        if found[i] == NULL:
            _key.add("", 0)
            continue
        _key.add("=", 1)  # present, even when empty (`hidden`)
        child = found[i].children
        while child != NULL:
            if child.content != NULL:
                _key.add(<const char*>child.content, strlen(<const char*>child.content))
            child = child.next
    key = PyBytes_FromStringAndSize(_key.data, _key.size)
    cached = cache.get(key)
    if cached is not None:
        return cached
    values = [None if found[i] == NULL else attribute_text(found[i]) for i in range(N_MARKED)]
    marks = marker(node_name(node), *values)
    if len(cache) >= _MARK_CACHE_SIZE:
        cache.clear()
    cache[key] = marks
    return marks


#: elementmarks.HIDDEN
cdef int _HIDDEN = 1
#: elementmarks.ARTICLE, ENDED_BY_ARTICLE (an aside, a sidebar) and UNENDED_ASIDES
#: (elementmarks.inherited)
cdef int _ARTICLE = ARTICLE
cdef int _ASIDE_MARK = ENDED_BY_ARTICLE
cdef int _UNENDED_ASIDES = UNENDED_ASIDES


cdef bint _href_links_elsewhere(str href):
    # as elementmarks.links_elsewhere
    href = href.strip()
    if not href or href == "#":
        return False
    return href[:11].lower() != "javascript:"


cdef bint _links_elsewhere(xmlNode* node):
    """Does this <a> link to a page (an href that is not empty, not "#" and not
    a `javascript:` action)? Its text is link text only then (segment.py's
    `links_elsewhere` is the specification)."""
    cdef xmlAttr* attr = find_attribute(node, "href")
    return attr != NULL and _href_links_elsewhere(attribute_text(attr))


def walk(root_element, bint reference, long max_blocks=100_000, marker=None,
         type block_type=None, bint page_links_only=False, bint drop_hidden_inline=False):
    """Blocks in document order: (folded text, link characters, dom path, xpath,
    images, marks); marks are `marker(tag, class, id, role, hidden, aria-hidden,
    style)` of the block's element and its ancestors OR-ed (0 without a marker).
    With `block_type` (a tuple subclass of those six fields, segment.Segment) the
    blocks are made as its instances.

    Blocks whose text folds to nothing and that hold no image are left out.
    Returns None when the page has more than max_blocks blocks (counting those).

    `page_links_only`: only an <a> that links to a page makes link text
    (segment.links_elsewhere). `drop_hidden_inline` (needs `marker`): an inline
    element marked HIDDEN is left out with its text, its tail kept.
    """
    cdef xmlNode* root = (<cetree._Element>root_element)._c_node
    cdef xmlNode* parent = root
    cdef xmlNode* cur
    cdef TagKind kind
    cdef xmlNode* anchor = NULL
    cdef long elements = 0
    cdef bint in_link = False
    cdef bint after_br = False
    cdef bint count_images = not reference
    cdef bint after_root = False
    cdef str content
    cdef Py_ssize_t nonspace, runs
    cdef int pending
    cdef _Walk w = _Walk()
    w.max_blocks = max_blocks
    w.marker = marker
    if block_type is not None and not issubclass(block_type, tuple):
        raise TypeError(f"block_type must be a tuple subclass, got {block_type!r}")
    if drop_hidden_inline and marker is None:
        raise ValueError("drop_hidden_inline reads the elements' marks: pass a marker")
    w.block_type = block_type

    # start of the root element
    w.push(root)
    kind = _kind(<const char*>root.name)
    if kind == BLOCK:
        anchor = root
        w.anchor_depth = 0
    elif kind == BR:
        after_br = True
        w.text.feed_space()
        w.has_nodes = True
    else:
        if kind == LINK:
            in_link = not page_links_only or _links_elsewhere(root)
        elif kind == IMAGE and count_images:
            w.images += 1
    cur = root.children
    while True:
        if cur == NULL:
            if after_root:
                break
            # end of `parent`, the top frame
            kind = _kind(<const char*>parent.name)
            if kind == BLOCK:
                if w.close_block():
                    return None
                anchor = NULL if parent == root else parent.parent
                w.anchor_depth = w.depth - 1
            else:
                if kind == LINK:
                    in_link = False
                if not reference and anchor == parent and not w.has_nodes and kind != BR:
                    # a block begun at </option> sits in its SELECT; text after
                    # </select> is not select content (jusText keeps the path)
                    anchor = NULL if parent == root else parent.parent
                    w.anchor_depth = w.depth - 1
            w.leave_anchor()
            if parent == root:
                # jusText reads the tree as SAX events from the root, which end
                # with the root's tail: a fragment's text after its </body>
                after_root = True
                cur = root.next
                continue
            w.pop()
            cur = parent.next
            parent = parent.parent
            continue
        if after_root and cur.type != XML_TEXT_NODE and cur.type != XML_CDATA_SECTION_NODE:
            break  # the root's tail ends at its next sibling
        if cur.type == XML_ELEMENT_NODE:
            elements += 1
            if elements & 4095 == 0:
                # let a pending signal handler run (the crawl's per-page time cap)
                PyErr_CheckSignals()
            w.push(cur)
            kind = _kind(<const char*>cur.name)
            if (
                drop_hidden_inline
                and kind != BLOCK
                and kind != BR
                and w.frames[w.depth].marks & _HIDDEN
                and _own_marks(cur, marker) & _HIDDEN
            ):
                # a browser shows nothing of it; the text after it (its tail) stays
                w.pop()
                cur = cur.next
                continue
            if kind == BLOCK or (after_br and kind == BR):
                if w.close_block():
                    return None
                anchor = cur
                w.anchor_depth = w.depth
            elif kind == BR:
                after_br = True
                w.text.feed_space()
                w.has_nodes = True
            else:
                after_br = False
                if kind == LINK:
                    in_link = not page_links_only or _links_elsewhere(cur)
                elif kind == IMAGE and count_images:
                    w.images += 1
            parent = cur
            cur = cur.children
            continue
        if cur.type == XML_TEXT_NODE or cur.type == XML_CDATA_SECTION_NODE:
            # Adjacent text nodes are one `.text`/`.tail` for lxml, and for jusText.
            content = text_run(cur, &cur)
            if content:
                pending = w.text.pending
                w.text.feed(content, &nonspace, &runs)
                if nonspace:
                    w.has_nodes = True
                    if in_link:
                        # len(" ".join(content.split()))
                        w.link_chars += nonspace + runs - 1
                        if reference:
                            # jusText counts the link's edge spaces too (density can pass 1)
                            w.link_chars += (Py_UNICODE_ISSPACE(content[0])
                                             + Py_UNICODE_ISSPACE(content[len(content) - 1]))
                    after_br = False
                elif reference:
                    # jusText drops blank text between inline elements (the seed keeps it)
                    w.text.pending = pending
                else:
                    w.has_nodes = True
            continue
        # comments, processing instructions: their text is not block text
        cur = cur.next
    if w.close_block():
        return None
    return w.blocks

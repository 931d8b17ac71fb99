# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of `kimatu._segment.text_elements`: the same text elements, read
straight off libxml2's nodes instead of through `etree.iterwalk` events and lxml's
per-node Python proxies.

Why: Kimatu's walk was 39% of the combined extractor's time, and its floor in
Python was the event loop itself (~1 ms a page). The walk here keeps the open
elements and the text elements being collected on C stacks; what a text element
holds (its text, aspect, paths and counts) is built exactly as the Python walk
builds it, with the same helper functions for the text. `tests/test_kimatu_fast.py`
compares both walks, every field of every element, on every gold page and on
generated pages.
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject

cimport lxml.includes.etreepublic as cetree
from lxml.includes.tree cimport XML_ELEMENT_NODE, xmlAttr, xmlNode

from ._libxml cimport attribute_text, find_attribute, is_text, node_name, text_run

cetree.import_lxml__etree()

#: The most inline elements an aspect can name (kimatu._segment.MAX_INLINE_ASPECT,
#: passed in and checked against this capacity).
DEF MAX_INLINE = 8

cdef enum TagKind:
    OTHER = 0
    HEADING = 1
    SELECT = 2
    LINK = 3
    BR = 4
    KIND_MASK = 7
    BLOCK_FLAG = 8
    SKIP_FLAG = 16


cdef struct Frame:
    xmlNode* node
    PyObject* name     # its tag, borrowed from the walk's tag cache
    long position      # among its parent's children of the same tag
    bint block


cdef struct Pending:
    Py_ssize_t block_depth   # 1-based index into the blocks stack
    long link_count
    long link_chars
    int inline_count         # -1: no word yet (the Python walk's None)
    xmlNode* inline[MAX_INLINE]
    bint br_pending
    bint has_words


cdef class _Walk:
    """The Python walk's `_Walker`, with its stacks in C arrays."""

    cdef Frame* frames
    cdef Py_ssize_t depth, frames_cap      # depth: index of the top frame, -1 when none
    cdef Py_ssize_t* blocks
    cdef Pending* pending
    cdef Py_ssize_t nblocks                # the blocks and pending stacks have one size
    cdef Py_ssize_t blocks_cap
    cdef list parts                        # per pending: its text pieces
    cdef list counts                       # per frame: its children's counts by tag, or None
    cdef list paths                        # per frame: (dom_path, xpath), or None
    cdef dict looks                        # node address -> descriptor
    cdef dict tags                         # name pointer -> (name, flags); libxml2 interns names
    cdef frozenset block_tags, skip_tags, heading_tags, select_tags
    cdef list elements
    cdef long link_depth, heading_depth, select_depth
    # options
    cdef tuple attributes                  # (name as str, name as bytes)
    cdef bint aspect_inline
    cdef Py_ssize_t levels, max_path_steps, max_inline
    # kimatu._text and kimatu._segment.TextElement
    cdef object normalize_space, word_count, boundary_count, element_type

    def __cinit__(self):
        self.frames_cap = 64
        self.blocks_cap = 32
        self.frames = <Frame*>PyMem_Malloc(self.frames_cap * sizeof(Frame))
        self.blocks = <Py_ssize_t*>PyMem_Malloc(self.blocks_cap * sizeof(Py_ssize_t))
        self.pending = <Pending*>PyMem_Malloc(self.blocks_cap * sizeof(Pending))
        if self.frames == NULL or self.blocks == NULL or self.pending == NULL:
            raise MemoryError()
        self.depth = -1
        self.nblocks = 0
        self.parts = []
        self.counts = []
        self.paths = []
        self.looks = {}
        self.tags = {}
        self.elements = []

    def __dealloc__(self):
        PyMem_Free(self.frames)
        PyMem_Free(self.blocks)
        PyMem_Free(self.pending)

    # ------------------------------------------------------------------ frames
    cdef tuple tag_of(self, xmlNode* node):
        """(tag, flags) of an element: its name and what the walk does with it."""
        cdef size_t key = <size_t>node.name
        cdef tuple found = self.tags.get(key)
        cdef str name
        cdef int flags
        if found is None:
            name = node_name(node)
            if not name.islower():
                name = name.lower()  # lxml's HTML parser lower-cases; other builders may not
            flags = (
                (BLOCK_FLAG if name in self.block_tags else 0)
                | (SKIP_FLAG if name in self.skip_tags else 0)
                | (HEADING if name in self.heading_tags
                   else SELECT if name in self.select_tags
                   else LINK if name == "a"
                   else BR if name == "br"
                   else OTHER)
            )
            found = (name, flags)
            self.tags[key] = found
        return found

    cdef str descriptor(self, xmlNode* node):
        cdef size_t key = <size_t>node
        cdef str look = self.looks.get(key)
        cdef list parts
        cdef str value
        cdef xmlAttr* attr
        if look is None:
            parts = [self.tag_of(node)[0]]
            for name, raw in self.attributes:
                attr = find_attribute(node, <const char*>raw)
                value = None if attr == NULL else attribute_text(attr)
                if value:
                    parts.append(f"[{name}={self.normalize_space(value).lower()}]")
            look = "".join(parts)
            self.looks[key] = look
        return look

    cdef int push(self, xmlNode* node, str tag, bint is_block) except -1:
        cdef long position = 1
        cdef dict counts
        if self.depth >= 0:
            counts = self.counts[self.depth]
            if counts is None:
                counts = {}
                self.counts[self.depth] = counts
            position = counts.get(tag, 0) + 1
            counts[tag] = position
        else:
            is_block = True  # the root always collects text
        if self.depth + 1 == self.frames_cap:
            self._grow_frames()
        self.depth += 1
        self.frames[self.depth].node = node
        self.frames[self.depth].name = <PyObject*>tag
        self.frames[self.depth].position = position
        self.frames[self.depth].block = is_block
        if self.depth < len(self.counts):
            self.counts[self.depth] = None
            self.paths[self.depth] = None
        else:
            self.counts.append(None)
            self.paths.append(None)
        if is_block:
            self.flush()
            if self.nblocks == self.blocks_cap:
                self._grow_blocks()
            self.blocks[self.nblocks] = self.depth
            self._new_pending(self.nblocks, self.nblocks + 1)
            self.nblocks += 1
        return 0

    cdef void _new_pending(self, Py_ssize_t index, Py_ssize_t block_depth) noexcept:
        cdef Pending* p = &self.pending[index]
        p.block_depth = block_depth
        p.link_count = 0
        p.link_chars = 0
        p.inline_count = -1
        p.br_pending = False
        p.has_words = False
        if index < len(self.parts):
            self.parts[index] = []
        else:
            self.parts.append([])

    cdef int pop(self) except -1:
        if self.frames[self.depth].block:
            if self.pending[self.nblocks - 1].has_words:
                self.flush()
            self.nblocks -= 1
        self.depth -= 1
        return 0

    cdef int _grow_frames(self) except -1:
        cdef Py_ssize_t cap = self.frames_cap * 2
        cdef Frame* frames = <Frame*>PyMem_Realloc(self.frames, cap * sizeof(Frame))
        if frames == NULL:
            raise MemoryError()
        self.frames = frames
        self.frames_cap = cap
        return 0

    cdef int _grow_blocks(self) except -1:
        cdef Py_ssize_t cap = self.blocks_cap * 2
        cdef Py_ssize_t* blocks = <Py_ssize_t*>PyMem_Realloc(self.blocks, cap * sizeof(Py_ssize_t))
        if blocks == NULL:
            raise MemoryError()
        self.blocks = blocks
        cdef Pending* pending = <Pending*>PyMem_Realloc(self.pending, cap * sizeof(Pending))
        if pending == NULL:
            raise MemoryError()
        self.pending = pending
        self.blocks_cap = cap
        return 0

    # ------------------------------------------------------------------ text
    cdef int add_text(self, str text) except -1:
        cdef Pending* p
        if not text or self.nblocks == 0:
            return 0
        p = &self.pending[self.nblocks - 1]
        (<list>self.parts[self.nblocks - 1]).append(text)
        if not text.isspace():
            p.has_words = True
            p.br_pending = False
            if self.aspect_inline:
                self._narrow_inline(p)
            if self.link_depth:
                p.link_chars += len(self.normalize_space(text))
        return 0

    cdef void _narrow_inline(self, Pending* p) noexcept:
        cdef Py_ssize_t start = self.blocks[p.block_depth - 1] + 1
        cdef Py_ssize_t stop = min(self.depth + 1, start + self.max_inline)
        cdef Py_ssize_t i, common
        if p.inline_count < 0:
            p.inline_count = <int>max(0, stop - start)
            for i in range(p.inline_count):
                p.inline[i] = self.frames[start + i].node
            return
        common = 0
        while common < p.inline_count and start + common < stop:
            if p.inline[common] != self.frames[start + common].node:
                break
            common += 1
        p.inline_count = <int>common

    cdef int line_break(self) except -1:
        cdef Pending* p
        if self.nblocks == 0:
            return 0
        p = &self.pending[self.nblocks - 1]
        if p.br_pending:
            self.flush()
        else:
            (<list>self.parts[self.nblocks - 1]).append(" ")
            p.br_pending = True
        return 0

    cdef int flush(self) except -1:
        """End the current text element (if it has text) and start a new one."""
        cdef Pending* p
        cdef Pending done
        cdef Py_ssize_t top, block_index, i, first
        cdef list parts
        cdef str text, aspect
        if self.nblocks == 0:
            return 0
        top = self.nblocks - 1
        p = &self.pending[top]
        if not p.has_words:
            # Only whitespace so far (the common case between blocks): reuse it.
            parts = self.parts[top]
            if parts:
                del parts[:]
            p.link_count = 0
            p.br_pending = False
            return 0
        done = p[0]
        parts = self.parts[top]
        self._new_pending(top, done.block_depth)
        text = self.normalize_space("".join(parts))
        if not text:
            return 0
        block_index = self.blocks[done.block_depth - 1]
        first = max(0, block_index - self.levels)
        aspect = "/".join([self.descriptor(self.frames[i].node) for i in range(first, block_index)])
        aspect += "/" + self.descriptor(self.frames[block_index].node)
        if done.inline_count > 0:
            aspect += "".join([">" + self.descriptor(done.inline[i])
                               for i in range(done.inline_count)])
        dom_path, xpath = self.paths_of(block_index)
        length = len(text)
        # positional: TextElement is a named tuple, fields in this order
        self.elements.append(
            self.element_type(
                len(self.elements),
                text,
                <str>self.frames[block_index].name,
                aspect,
                length,
                self.word_count(text),
                self.boundary_count(text),
                done.link_count,
                min(done.link_chars, length),
                dom_path,
                xpath,
                self.heading_depth > 0,
                self.select_depth > 0,
            )
        )
        return 0

    cdef tuple paths_of(self, Py_ssize_t index):
        """kimatu._segment._Walker.paths: built once per frame from its parent's."""
        cdef Py_ssize_t start, i
        cdef str dom_path, xpath, tag
        if index >= self.max_path_steps:
            start = index + 1 - self.max_path_steps
            return (
                ".".join([<str>self.frames[i].name for i in range(start, index + 1)]),
                "/" + "".join([f"/{<str>self.frames[i].name}[{self.frames[i].position}]"
                               for i in range(start, index + 1)]),
            )
        start = index
        while start >= 0 and self.paths[start] is None:
            start -= 1
        if start < 0:
            dom_path, xpath = "", ""
        else:
            dom_path, xpath = self.paths[start]
        for i in range(start + 1, index + 1):
            tag = <str>self.frames[i].name
            dom_path = f"{dom_path}.{tag}" if dom_path else tag
            xpath = f"{xpath}/{tag}[{self.frames[i].position}]"
            self.paths[i] = (dom_path, xpath)
        return (dom_path, xpath)


def text_elements(root_element, tuple aspect_attributes, bint aspect_inline,
                  Py_ssize_t levels, Py_ssize_t max_path_steps, Py_ssize_t max_inline,
                  frozenset block_tags,
                  frozenset skip_tags, frozenset heading_tags, frozenset select_tags,
                  normalize_space, word_count, boundary_count, element_type):
    """`kimatu._segment.text_elements` on the tree under `root_element`, its
    constants and helpers passed in (so that they are defined once, there)."""
    cdef xmlNode* root = (<cetree._Element>root_element)._c_node
    cdef xmlNode* parent
    cdef xmlNode* cur
    cdef long elements = 0
    cdef _Walk w = _Walk()
    cdef str tag
    cdef int flags
    w.block_tags = block_tags
    w.skip_tags = skip_tags
    w.heading_tags = heading_tags
    w.select_tags = select_tags
    w.attributes = tuple((name, name.encode()) for name in aspect_attributes)
    w.aspect_inline = aspect_inline
    if not 0 <= max_inline <= MAX_INLINE:
        raise ValueError(f"max_inline must be 0..{MAX_INLINE}, got {max_inline}")
    w.levels = levels
    w.max_path_steps = max_path_steps
    w.max_inline = max_inline
    w.normalize_space = normalize_space
    w.word_count = word_count
    w.boundary_count = boundary_count
    w.element_type = element_type

    if root.type != XML_ELEMENT_NODE:
        return ()
    tag, flags = w.tag_of(root)
    if flags & SKIP_FLAG:
        return ()
    # the root's start
    w.push(root, tag, flags & BLOCK_FLAG)
    _start(w, root, flags & KIND_MASK)
    parent = root
    cur = root.children
    while True:
        if cur == NULL:
            # the end of `parent`, the top frame
            _end(w, (<tuple>w.tag_of(parent))[1] & KIND_MASK, parent)
            if parent == root:
                break
            cur = parent.next
            parent = parent.parent
            continue
        if cur.type == XML_ELEMENT_NODE:
            elements += 1
            if elements & 4095 == 0:
                # let a pending signal handler run (the crawl's per-page time cap)
                PyErr_CheckSignals()
            tag, flags = w.tag_of(cur)
            if flags & SKIP_FLAG:
                cur = cur.next  # its text is no page text; its tail is read next
                continue
            w.push(cur, tag, flags & BLOCK_FLAG)
            _start(w, cur, flags & KIND_MASK)
            parent = cur
            cur = cur.children
            continue
        if is_text(cur):
            # Adjacent text nodes are one `.text`/`.tail` for lxml.
            w.add_text(text_run(cur, &cur))
            continue
        # comments, processing instructions: invisible; the text after them is read next
        cur = cur.next
    w.flush()
    return tuple(w.elements)


cdef int _start(_Walk w, xmlNode* node, int kind) except -1:
    if kind == HEADING:
        w.heading_depth += 1
    elif kind == SELECT:
        w.select_depth += 1
    elif kind == LINK and find_attribute(node, "href") != NULL:
        w.link_depth += 1
        if w.nblocks:
            w.pending[w.nblocks - 1].link_count += 1
    elif kind == BR:
        w.line_break()
    return 0


cdef int _end(_Walk w, int kind, xmlNode* node) except -1:
    # Pop first: the element's text is flushed while its heading/select flags hold.
    w.pop()
    if kind == HEADING:
        w.heading_depth -= 1
    elif kind == SELECT:
        w.select_depth -= 1
    elif kind == LINK and find_attribute(node, "href") != NULL:
        w.link_depth -= 1
    return 0

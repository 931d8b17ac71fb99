# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of `extract.classify_segments`: block features, the four
classification phases of `classify.classify`, and the frozen `Paragraph`s.

Why: at ~160 blocks a page, the Python version costs about as much as parsing
the page (features ~0.3 ms, the phases ~0.1 ms, building the frozen
Paragraphs ~0.25 ms), and issue 2's goal (6x jusText 3.0.2) leaves no room for
it. The rules are the ones in classify.py, over C arrays;
tests/test_classify_fast.py checks that both versions give equal Paragraphs on
every gold page and on generated blocks, and tests/test_classify.py runs every
rule test against both.

Paragraphs are filled through their slot descriptors (`PyMember_SetOne`,
what `object.__setattr__` ends in for a slot) instead of the frozen dataclass
`__init__`, which calls `object.__setattr__` once per field. The slot layout
is checked when the module is imported; if it is not the expected one,
`FAST_PARAGRAPHS` is False and the ordinary constructor is used.
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject

import dataclasses
import types

from .model import Paragraph, ParagraphClass

cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        const char* name
        int type
        Py_ssize_t offset
        int flags
    int PyMember_SetOne(char* addr, PyMemberDef* member, PyObject* value) except -1
    int T_OBJECT_EX
    int READONLY

cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)

# class codes; the order does not matter, only identity
cdef enum:
    C_BAD = 0
    C_SHORT = 1
    C_NEAR_GOOD = 2
    C_GOOD = 3

cdef object _LIMIT = 2**62

cdef tuple _CLASSES = (
    ParagraphClass.BAD,
    ParagraphClass.SHORT,
    ParagraphClass.NEAR_GOOD,
    ParagraphClass.GOOD,
)

#: Paragraph's fields in constructor order; the fast path fills all of them.
cdef tuple _FIELDS = (
    "text", "cf_class", "final_class", "length", "word_count", "link_chars",
    "link_density", "stopword_count", "stopword_density", "dom_path", "xpath",
    "heading", "headline", "in_select", "image", "kind", "scores",
)
cdef enum:
    N_FIELDS = 17
cdef PyMemberDef* _members[N_FIELDS]


cdef bint _find_members() except -1:
    names = tuple(f.name for f in dataclasses.fields(Paragraph))
    if names != _FIELDS or not hasattr(Paragraph, "__slots__"):
        return False
    cdef PyMemberDef* member
    for i, name in enumerate(_FIELDS):
        descriptor = Paragraph.__dict__.get(name)
        if type(descriptor) is not types.MemberDescriptorType:
            return False
        member = (<PyMemberDescrObject*><PyObject*>descriptor).d_member
        if member.type != T_OBJECT_EX or member.flags & READONLY:
            return False
        _members[i] = member
    return True


FAST_PARAGRAPHS = _find_members()
cdef bint _fast_paragraphs = FAST_PARAGRAPHS


cdef inline void _set(object paragraph, Py_ssize_t field, object value) except *:
    PyMember_SetOne(<char*><PyObject*>paragraph, _members[field], <PyObject*>value)


cdef class _StopTable:
    """A stoplist as an open-addressing table over code points, so a word is
    looked up straight from the lowered block text, without making a str of it.

    Same answers as `word in stoplist`: str equality is code-point equality.
    """

    cdef Py_ssize_t mask
    cdef unsigned long long* hashes
    cdef Py_ssize_t* starts  # -1: empty slot
    cdef Py_ssize_t* lengths
    cdef Py_UCS4* chars

    def __cinit__(self, frozenset stoplist):
        cdef Py_ssize_t size = 8, total = 0, i, slot, at = 0
        cdef unsigned long long h
        cdef str word
        words = [w for w in stoplist if isinstance(w, str) and w]
        while size < 2 * len(words) + 2:
            size *= 2
        for word in words:
            total += len(word)
        self.mask = size - 1
        self.hashes = <unsigned long long*>PyMem_Malloc(size * sizeof(unsigned long long))
        self.starts = <Py_ssize_t*>PyMem_Malloc(size * sizeof(Py_ssize_t))
        self.lengths = <Py_ssize_t*>PyMem_Malloc(size * sizeof(Py_ssize_t))
        self.chars = <Py_UCS4*>PyMem_Malloc((total + 1) * sizeof(Py_UCS4))
        if not (self.hashes and self.starts and self.lengths and self.chars):
            raise MemoryError()
        for slot in range(size):
            self.starts[slot] = -1
        for word in words:
            h = _hash(word, 0, len(word))
            slot = h & self.mask
            while self.starts[slot] >= 0:
                slot = (slot + 1) & self.mask
            self.hashes[slot] = h
            self.starts[slot] = at
            self.lengths[slot] = len(word)
            for i in range(len(word)):
                self.chars[at + i] = word[i]
            at += len(word)

    def __dealloc__(self):
        PyMem_Free(self.hashes)
        PyMem_Free(self.starts)
        PyMem_Free(self.lengths)
        PyMem_Free(self.chars)

    cdef bint contains(self, str text, Py_ssize_t start, Py_ssize_t end) noexcept:
        cdef unsigned long long h = _hash(text, start, end)
        cdef Py_ssize_t slot = h & self.mask, i, at, n = end - start
        while self.starts[slot] >= 0:
            if self.hashes[slot] == h and self.lengths[slot] == n:
                at = self.starts[slot]
                for i in range(n):
                    if self.chars[at + i] != text[start + i]:
                        break
                else:
                    return True
            slot = (slot + 1) & self.mask
        return False


cdef inline unsigned long long _hash(str text, Py_ssize_t start, Py_ssize_t end) noexcept:
    # FNV-1a over code points
    cdef unsigned long long h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(start, end):
        h = (h ^ <unsigned long long>text[i]) * 1099511628211ULL
    return h


cdef dict _tables = {}


cdef _StopTable _table(frozenset stoplist):
    table = _tables.get(stoplist)
    if table is None:
        if len(_tables) >= 64:
            _tables.clear()
        table = _tables[stoplist] = _StopTable(stoplist)
    return <_StopTable>table


cdef inline void _count_words(
    str lowered, _StopTable table, Py_ssize_t* words, Py_ssize_t* stops
) noexcept:
    """`len(lowered.split())` and how many of those words are in the table."""
    cdef Py_ssize_t n = len(lowered), i = 0, start
    cdef Py_ssize_t count = 0, found = 0
    while True:
        while i < n and Py_UNICODE_ISSPACE(lowered[i]):
            i += 1
        if i >= n:
            break
        start = i
        while i < n and not Py_UNICODE_ISSPACE(lowered[i]):
            i += 1
        count += 1
        if table is not None and table.contains(lowered, start, i):
            found += 1
    words[0] = count
    stops[0] = found


cdef bint _followed_by_good(
    Py_ssize_t i, const int* classes, const long* lengths, Py_ssize_t n, long max_distance
) noexcept:
    """Is a GOOD block after block i with at most max_distance characters in between?"""
    cdef long distance = 0
    cdef Py_ssize_t j = i + 1
    while j < n and distance <= max_distance:
        if classes[j] == C_GOOD:
            return True
        distance += lengths[j]
        j += 1
    return False


cdef void _context_sensitive(int* result, Py_ssize_t n) noexcept:
    """classify.classify_context_sensitive in place."""
    cdef Py_ssize_t i = 0, start, end, k, delimiter
    cdef int before, after
    while i < n:
        if result[i] == C_GOOD or result[i] == C_BAD:
            i += 1
            continue
        start = i
        while i < n and result[i] != C_GOOD and result[i] != C_BAD:
            i += 1
        end = i
        before = result[start - 1] if start > 0 else C_BAD
        after = result[end] if end < n else C_BAD
        if before == after:
            for k in range(start, end):
                result[k] = before
            continue
        delimiter = -1
        if before == C_BAD:
            for k in range(start, end):  # the first NEAR_GOOD
                if result[k] == C_NEAR_GOOD:
                    delimiter = k
                    break
        else:
            for k in range(end - 1, start - 1, -1):  # the last NEAR_GOOD
                if result[k] == C_NEAR_GOOD:
                    delimiter = k
                    break
        if delimiter < 0:
            for k in range(start, end):
                result[k] = C_BAD
        elif before == C_BAD:
            for k in range(start, end):
                result[k] = C_BAD if k < delimiter else C_GOOD
        else:
            for k in range(start, end):
                result[k] = C_BAD if k > delimiter else C_GOOD


cdef struct Block:
    Py_ssize_t length
    Py_ssize_t words
    Py_ssize_t stops
    double link_density
    double stop_density
    bint heading
    bint headline
    bint in_select
    bint image
    int cf
    int revised
    int final


def paragraphs(
    list segments,
    frozenset stoplist,
    params,
    bint reference,
    flags_of,
):
    """classify_segments: Segment tuples -> a tuple of Paragraphs.

    `flags_of(dom_path)` gives (heading, headline, in_select) for a dom path;
    it is called once per distinct path.
    """
    cdef Py_ssize_t n = len(segments)
    # Thresholds past any real length are clamped to what a C long holds.
    cdef long length_low = min(params.length_low, _LIMIT)
    cdef long length_high = min(params.length_high, _LIMIT)
    cdef double stopwords_low = params.stopwords_low
    cdef double stopwords_high = params.stopwords_high
    cdef double max_link_density = params.max_link_density
    cdef long max_distance = min(params.max_heading_distance, _LIMIT)
    cdef bint no_headings = params.no_headings
    cdef bint headlines_good = not reference and not params.no_headlines
    cdef _StopTable table = _table(stoplist) if stoplist else None
    cdef str copyright_code = "&copy" if reference else "&copy;"
    cdef str copyright_char = "\u00a9"
    if n == 0:
        return ()
    cdef Block* blocks = <Block*>PyMem_Malloc(n * sizeof(Block))
    cdef int* classes = <int*>PyMem_Malloc(n * sizeof(int))
    cdef long* lengths = <long*>PyMem_Malloc(n * sizeof(long))
    if blocks == NULL or classes == NULL or lengths == NULL:
        PyMem_Free(blocks)
        PyMem_Free(classes)
        PyMem_Free(lengths)
        raise MemoryError()

    cdef dict flag_cache = {}
    cdef tuple seg, flags
    cdef str text, dom_path
    cdef Py_ssize_t i, length
    cdef long link_chars
    cdef Block* b
    cdef int cls
    cdef list result
    try:
        for i in range(n):
            if i & 4095 == 4095:
                # let a pending signal handler run (the crawl's per-page time cap)
                PyErr_CheckSignals()
            seg = <tuple>segments[i]
            text = <str>seg[0]
            link_chars = seg[1]
            dom_path = <str>seg[2]
            b = &blocks[i]
            length = len(text)
            b.length = length
            _count_words(text.lower(), table, &b.words, &b.stops)
            b.link_density = link_chars / <double>length if length else 0.0
            b.stop_density = b.stops / <double>b.words if b.words else 0.0
            found = flag_cache.get(dom_path)
            if found is None:
                found = tuple(flags_of(dom_path))
                flag_cache[dom_path] = found
            flags = <tuple>found
            b.heading = flags[0] and not no_headings
            b.headline = flags[1]
            b.in_select = flags[2]
            b.image = seg[4] > 0 and length == 0

            # classify.classify_context_free
            if (b.image or b.link_density > max_link_density
                    or copyright_char in text or copyright_code in text):
                cls = C_BAD
            elif headlines_good and b.headline:
                cls = C_GOOD
            elif b.in_select:
                cls = C_BAD
            elif length < length_low:
                cls = C_BAD if link_chars > 0 else C_SHORT
            elif b.stop_density >= stopwords_high:
                cls = C_GOOD if length > length_high else C_NEAR_GOOD
            elif b.stop_density >= stopwords_low:
                cls = C_NEAR_GOOD
            else:
                cls = C_BAD
            b.cf = cls
            classes[i] = cls
            lengths[i] = length

        # classify.headings_pre_pass; jusText 3.0.2 (reference) has no effective one
        if not reference and not no_headings:
            for i in range(n):
                b = &blocks[i]
                if (b.cf == C_SHORT and b.heading
                        and _followed_by_good(i, classes, lengths, n, max_distance)):
                    b.revised = C_NEAR_GOOD
                else:
                    b.revised = b.cf
            for i in range(n):
                classes[i] = blocks[i].revised
        _context_sensitive(classes, n)
        # classify.headings_post_pass: it looks ahead in the context-sensitive classes
        for i in range(n):
            b = &blocks[i]
            b.final = classes[i]
            if (not no_headings and b.final == C_BAD and b.heading and b.cf != C_BAD
                    and _followed_by_good(i, classes, lengths, n, max_distance)):
                b.final = C_GOOD

        result = [None] * n
        for i in range(n):
            if i & 4095 == 4095:
                PyErr_CheckSignals()
            b = &blocks[i]
            seg = <tuple>segments[i]
            if not _fast_paragraphs:
                result[i] = Paragraph(
                    seg[0], _CLASSES[b.cf], _CLASSES[b.final], b.length, b.words, seg[1],
                    b.link_density, b.stops, b.stop_density, seg[2], seg[3], b.heading,
                    b.headline, b.in_select, b.image, "h" if b.heading else "p", {},
                )
                continue
            paragraph = Paragraph.__new__(Paragraph)
            _set(paragraph, 0, seg[0])
            _set(paragraph, 1, _CLASSES[b.cf])
            _set(paragraph, 2, _CLASSES[b.final])
            _set(paragraph, 3, b.length)
            _set(paragraph, 4, b.words)
            _set(paragraph, 5, seg[1])
            _set(paragraph, 6, b.link_density)
            _set(paragraph, 7, b.stops)
            _set(paragraph, 8, b.stop_density)
            _set(paragraph, 9, seg[2])
            _set(paragraph, 10, seg[3])
            _set(paragraph, 11, b.heading)
            _set(paragraph, 12, b.headline)
            _set(paragraph, 13, b.in_select)
            _set(paragraph, 14, b.image)
            _set(paragraph, 15, "h" if b.heading else "p")
            _set(paragraph, 16, {})
            result[i] = paragraph
        return tuple(result)
    finally:
        PyMem_Free(blocks)
        PyMem_Free(classes)
        PyMem_Free(lengths)

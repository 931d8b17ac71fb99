# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of `extract.classify_segments`: block features, the four
classification phases of `classify.classify`, and the frozen `Paragraph`s; and
of `container.container_pass`, the `corpus` and `article` presets' main-container
evidence (at the end of this file).

Why: at ~160 blocks a page, the Python version costs about as much as parsing
the page (features ~0.3 ms, the phases ~0.1 ms, building the frozen
Paragraphs ~0.25 ms), and issue 2's goal (6x jusText 3.0.2) leaves no room for
it. The rules are the ones in classify.py and container.py, over C arrays;
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
from cpython.mem cimport PyMem_Calloc, PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject

import dataclasses
import types

from .elementmarks import ASIDE, BODY, CLASS_WEIGHT, NEGATIVE, WEIGHED_TAGS
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
    bint Py_UNICODE_ISALPHA(Py_UCS4 ch)
    bint Py_UNICODE_ISDIGIT(Py_UCS4 ch)
    bint Py_UNICODE_ISNUMERIC(Py_UCS4 ch)
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch)

# class codes; the order does not matter, only identity
cdef enum:
    C_BAD = 0
    C_SHORT = 1
    C_NEAR_GOOD = 2
    C_GOOD = 3

cdef object _LIMIT = 2**62
#: elementmarks.ASIDE, the bit of a block in a comment section, sidebar or footer
cdef int _ASIDE = ASIDE

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


cdef void _later_phases(
    int* classes,
    const bint* headings,
    const long* lengths,
    int* finals,
    Py_ssize_t n,
    long max_distance,
    bint pre_pass,
    bint post_pass,
) noexcept:
    """classify.headings_pre_pass, classify_context_sensitive and
    headings_post_pass: `classes` holds the context-free classes on entry and
    the context-sensitive ones on return; `finals` gets the final classes."""
    cdef Py_ssize_t i
    cdef int* context_free = finals  # borrowed until the post-pass fills it
    for i in range(n):
        context_free[i] = classes[i]
    if pre_pass:
        # the look-ahead reads the context-free classes, not the revised ones
        for i in range(n):
            if (context_free[i] == C_SHORT and headings[i]
                    and _followed_by_good(i, context_free, lengths, n, max_distance)):
                classes[i] = C_NEAR_GOOD
    _context_sensitive(classes, n)
    # the post-pass looks ahead in the context-sensitive classes
    for i in range(n):
        if (post_pass and classes[i] == C_BAD and headings[i] and context_free[i] != C_BAD
                and _followed_by_good(i, classes, lengths, n, max_distance)):
            finals[i] = C_GOOD
        else:
            finals[i] = classes[i]


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
    cdef int* finals = <int*>PyMem_Malloc(n * sizeof(int))
    cdef long* lengths = <long*>PyMem_Malloc(n * sizeof(long))
    cdef bint* headings = <bint*>PyMem_Malloc(n * sizeof(bint))
    if (blocks == NULL or classes == NULL or finals == NULL or lengths == NULL
            or headings == NULL):
        PyMem_Free(blocks)
        PyMem_Free(classes)
        PyMem_Free(finals)
        PyMem_Free(lengths)
        PyMem_Free(headings)
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
            headings[i] = b.heading

        # jusText 3.0.2 (reference) has no effective heading pre-pass
        _later_phases(classes, headings, lengths, finals, n, max_distance,
                      not reference and not no_headings, not no_headings)
        for i in range(n):
            blocks[i].final = finals[i]

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
        PyMem_Free(finals)
        PyMem_Free(lengths)
        PyMem_Free(headings)


# --------------------------------------------------------------------------- main container
#
# Compiled twin of container.container_pass (with _Subtrees, main_containers,
# main_region and inside_containers). Why: in Python the pass cost half of the
# bare parse per page (dicts keyed by xpath strings, summed bottom-up through
# string slicing), which kept the `corpus` and `article` presets above issue
# 13's bound of 4x the parse. Here each distinct xpath becomes a node once (its
# parent made before it, so a node's id is above its parent's), and the sums,
# the choice and the class moves run over C arrays. The arithmetic is the
# Python version's, in the same order, so the scores are equal to the last bit;
# tests/test_container_fast.py compares the two on every gold page.

#: The ContainerOptions fields this pass reads. container.container_pass uses it
#: only for options whose other fields (flags added later) are at their defaults.
CONTAINER_FIELDS = frozenset((
    "min_block_length", "length_per_point", "max_length_points", "grandparent_share",
    "sibling_share", "sibling_min_score", "max_link_density", "region_share",
    "inside_shift", "region_shift", "outside_shift", "drop_hidden", "skip_unlikely",
    "min_container_chars", "tag_scores", "template_shift", "template_min_blocks",
    "container_link_density", "region_link_density", "function_max_length",
    # issue 13, corpus5: readability's conditional cleaning, its ad labels and
    # photo credits in the container (the `corpus` preset; `article` too)
    "clean_conditionally", "clean_link_density", "drop_ad_labels", "credits_inside",
    "linked_prose_inside",
    # a list's items move with the container when the list as a whole is within the
    # link limit (container.whole_list_items; 2026-11-30)
    "lists_weighed_whole",
    # issue 13, article5: the furniture retry keeps asides (comments, sidebars, footers) out
    "retry_keeps_asides_out",
    # readability.js: when no attempt reaches the threshold, the longest wins
    "retry_takes_longest",
    # ...both attempts weighed by their blocks within max_link_density
    "retry_weighs_prose",
    # the region stops below a portal's lists of teasers (repeated templates too:
    # the teasers are teasers.teaser_blocks', passed in)
    "region_stops_at_teasers", "repeated_teasers", "described_teasers",
    # and below a reader thread that nothing names (threads.adds_a_thread, passed in)
    "region_stops_at_threads",
    # readability's conditional cleaning in the region too (article, 2026-11-29)
    "clean_region",
    # a <select>'s options score no container points, nor a <dl>'s terms and descriptions
    "select_scores_nothing", "description_lists_score_nothing",
    # the `article` preset's readability rules (issue 13, article1-6): segments of
    # one template, sibling paragraphs one or more levels up, the semantic <main>
    # and <article>, list items' link density, furniture outside the container,
    # the fallback when nothing is kept, and what the page states about itself
    "join_segments", "segment_link_density", "article_segment_share",
    "join_sibling_paragraphs", "paragraph_levels", "article_region",
    "linked_paragraphs_inside", "item_link_density", "semantic_main",
    "furniture_outside", "fallback_to_container", "article_body", "clean_negative_names",
    # furniture the container holds keeps its class (`corpus`, 2026-11-30)
    "furniture_unlifted",
    # comment sections and other furniture outside the container move their own steps
    # (container.outside_steps: the `article-comments` and `corpus` presets)
    "comment_shift", "furniture_shift",
))

#: elementmarks.NEGATIVE and BODY, what an element states about itself
cdef int _NEGATIVE = NEGATIVE
cdef int _BODY = BODY
#: container.NEGATIVE_KEEP_SCORE: the score that keeps a negative element in
cdef double _NEGATIVE_KEEP = 2 * CLASS_WEIGHT
#: container._BODY_LINK_DENSITY
cdef double _BODY_LINK_DENSITY = 0.1

# what a node's tag is, as the rules ask (xpaths.last_tag compares whole tags)
cdef enum:
    K_P = 1
    K_DIV = 2
    K_ARTICLE = 4
    K_MAIN = 8
    K_CLEANED = 16      # container._CLEANED_TAGS (readability's `sanitize`)
    K_LIST = 32         # container._LIST_TAGS
    K_TRIM = 64         # container._ARTICLE_TRIM: a header, footer or aside step
    K_ITEM = 128        # a list item (container.whole_list_items)

cdef dict _KINDS = {
    "p": K_P,
    "div": K_DIV,
    "article": K_ARTICLE,
    "main": K_MAIN,
    "ul": K_LIST,
    "ol": K_LIST,
    "li": K_ITEM,
    "aside": K_TRIM,
    "header": K_TRIM,
    "footer": K_TRIM,
}
for _name in WEIGHED_TAGS:
    # the tags readability cleans, defined once (container._CLEANED_TAGS is this set)
    _KINDS[_name] = _KINDS.get(_name, 0) | K_CLEANED

cdef enum:
    F_TEXT = 0
    F_CF_CLASS = 1
    F_FINAL_CLASS = 2
    F_LENGTH = 3
    F_LINK_CHARS = 5
    F_LINK_DENSITY = 6
    F_STOPWORD_DENSITY = 8
    F_XPATH = 10
    F_HEADING = 11
    F_IN_SELECT = 13
    F_IMAGE = 14

cdef inline object _field(object paragraph, Py_ssize_t field, bint direct):
    """A Paragraph's field, read from its slot when the layout is the known one
    (what PyMember_GetOne does for a T_OBJECT_EX slot, without its checks of
    the member's type on every read: _find_members checked them once)."""
    cdef PyObject* value
    if direct:
        value = (<PyObject**>(<char*><PyObject*>paragraph + _members[field].offset))[0]
        if value == NULL:
            raise AttributeError(_FIELDS[field])
        return <object>value
    return getattr(paragraph, _FIELDS[field])


cdef inline int _code(object cls) except -1:
    """A ParagraphClass as its C_* code."""
    cdef int code
    for code in range(4):
        if cls is _CLASSES[code]:
            return code
    raise TypeError(f"not a ParagraphClass: {cls!r}")


cdef inline bint _is_comma(Py_UCS4 c) noexcept:
    # container._COMMAS: readability.js's REGEXPS.commas. Called for every character
    # of a scored block: below the Arabic comma, only "," is one.
    if c < 0x060C:
        return c == 0x2C
    return (
        c == 0x060C or c == 0xFF0C or c == 0xFE50 or c == 0xFE10 or c == 0xFE11
        or c == 0x2E41 or c == 0x2E34 or c == 0x2E32
    )


cdef class _Nodes:
    """The elements above the blocks, one node per distinct xpath, with the
    per-subtree sums of `container._Subtrees`."""

    cdef Py_ssize_t count, cap
    cdef Py_ssize_t* parent       # -1: no parent (the xpath has one step)
    cdef long long* chars
    cdef long long* links
    cdef double* points
    cdef double* score
    cdef double* final_score
    cdef Py_ssize_t* scored       # node ids in the order they first got a score
    cdef Py_ssize_t scored_count
    cdef bint* has_score
    cdef bint* chosen
    cdef bint* inside
    cdef bint* in_region
    cdef long long* commas        # commas in the subtree (conditional cleaning only)
    cdef long long* listed        # characters in lists below the node (the same)
    cdef bint* cleaned            # the node or an ancestor is cleaned out of the container
    cdef bint* region_cleaned     # the node or an ancestor is cleaned out of the region
    cdef bint* prose              # a block of prose lies at or below it (clean_region)
    cdef int* kinds               # K_* bits of the node's tag
    cdef int* marks               # elementmarks.STATED bits the element states
    cdef bint* counted            # a scored-over block lies at or below it (_Subtrees.chars)
    cdef bint* wraps              # a counted node lies directly below it
    cdef bint* extra              # a sibling paragraph joined above the container's parent
    cdef char* framed             # 1: in the <article> frame, 2: in its header/footer/aside
    cdef double held              # the containers' points, as container.main_region sums them
    cdef dict ids                 # xpath -> node id
    cdef list paths               # node id -> xpath

    def __cinit__(self):
        self.ids = {}
        self.paths = []

    def __dealloc__(self):
        PyMem_Free(self.parent)
        PyMem_Free(self.chars)
        PyMem_Free(self.links)
        PyMem_Free(self.points)
        PyMem_Free(self.score)
        PyMem_Free(self.final_score)
        PyMem_Free(self.scored)
        PyMem_Free(self.has_score)
        PyMem_Free(self.chosen)
        PyMem_Free(self.inside)
        PyMem_Free(self.in_region)
        PyMem_Free(self.commas)
        PyMem_Free(self.listed)
        PyMem_Free(self.cleaned)
        PyMem_Free(self.region_cleaned)
        PyMem_Free(self.prose)
        PyMem_Free(self.kinds)
        PyMem_Free(self.marks)
        PyMem_Free(self.counted)
        PyMem_Free(self.wraps)
        PyMem_Free(self.extra)
        PyMem_Free(self.framed)

    cdef int _grow(self) except -1:
        cdef Py_ssize_t cap = max(64, 2 * self.cap)
        cdef Py_ssize_t* parent = <Py_ssize_t*>PyMem_Realloc(self.parent, cap * sizeof(Py_ssize_t))
        if parent == NULL:
            raise MemoryError()
        self.parent = parent
        self.cap = cap
        return 0

    cdef Py_ssize_t node(self, str xpath) except -2:
        """The node of `xpath`, made (with its missing ancestors) on first sight.

        The parent of an xpath is its text up to the last "/", as in
        xpaths.parent_of; an xpath with one step has none."""
        found = self.ids.get(xpath)
        if found is not None:
            return <Py_ssize_t>found
        cdef list missing = [xpath]
        cdef Py_ssize_t parent = -1, cut
        cdef str path = xpath
        while True:
            cut = path.rfind("/")
            if cut <= 0:
                break
            path = path[:cut]
            found = self.ids.get(path)
            if found is not None:
                parent = <Py_ssize_t>found
                break
            missing.append(path)
        for k in range(len(missing) - 1, -1, -1):
            path = <str>missing[k]
            if self.count == self.cap:
                self._grow()
            self.parent[self.count] = parent
            self.ids[path] = self.count
            self.paths.append(path)
            parent = self.count
            self.count += 1
        return parent

    cdef int allocate(self) except -1:
        """Room for the sums, once every node is made; each node's kind."""
        cdef Py_ssize_t n = max(self.count, 1), node
        cdef str step
        self.chars = <long long*>PyMem_Malloc(n * sizeof(long long))
        self.links = <long long*>PyMem_Malloc(n * sizeof(long long))
        self.points = <double*>PyMem_Malloc(n * sizeof(double))
        self.score = <double*>PyMem_Malloc(n * sizeof(double))
        self.final_score = <double*>PyMem_Malloc(n * sizeof(double))
        self.scored = <Py_ssize_t*>PyMem_Malloc(n * sizeof(Py_ssize_t))
        self.has_score = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.chosen = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.inside = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.in_region = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.commas = <long long*>PyMem_Malloc(n * sizeof(long long))
        self.listed = <long long*>PyMem_Malloc(n * sizeof(long long))
        self.cleaned = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.region_cleaned = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.prose = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.kinds = <int*>PyMem_Malloc(n * sizeof(int))
        self.marks = <int*>PyMem_Malloc(n * sizeof(int))
        self.counted = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.wraps = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.extra = <bint*>PyMem_Malloc(n * sizeof(bint))
        self.framed = <char*>PyMem_Malloc(n * sizeof(char))
        if not (self.chars and self.links and self.points and self.score and self.final_score
                and self.scored and self.has_score and self.chosen and self.inside
                and self.in_region and self.commas and self.listed and self.cleaned
                and self.region_cleaned and self.prose
                and self.kinds and self.marks and self.counted and self.wraps and self.extra
                and self.framed):
            raise MemoryError()
        for node in range(self.count):
            step = <str>self.paths[node]
            step = step[step.rfind("/") + 1:]
            bracket = step.find("[")
            kind = _KINDS.get(step[:bracket] if bracket >= 0 else step, 0)
            if bracket < 0:
                # container._in_trim looks for "/header[": a step without an index is none
                kind &= ~K_TRIM
            self.kinds[node] = kind
            self.marks[node] = 0
            self.extra[node] = False
            self.region_cleaned[node] = False
            self.prose[node] = False
            self.framed[node] = 0
        return 0

    cdef inline void add_score(self, Py_ssize_t node, double value) noexcept:
        if not self.has_score[node]:
            self.has_score[node] = True
            self.score[node] = 0.0
            self.scored[self.scored_count] = node
            self.scored_count += 1
        self.score[node] = self.score[node] + value

    cdef inline bint below(self, Py_ssize_t node, Py_ssize_t ancestor) noexcept:
        """Is `ancestor` strictly above `node`? (path.startswith(ancestor + "/"))"""
        node = self.parent[node]
        while node >= 0:
            if node == ancestor:
                return True
            node = self.parent[node]
        return False

    cdef inline Py_ssize_t above(self, Py_ssize_t node, int kinds) noexcept:
        """The nearest node strictly above `node` of one of `kinds` (-1: none)."""
        node = self.parent[node]
        while node >= 0 and not self.kinds[node] & kinds:
            node = self.parent[node]
        return node


cdef struct Candidate:
    # what container scoring reads of one block
    Py_ssize_t node
    long long length
    long long link_chars
    long long points     # readability's points; 0: the block scores nothing
    bint low_links       # link density <= max_link_density
    bint skipped         # page furniture, left out of the scoring when asked
    bint aside           # in an aside (elementmarks.ASIDE), left out of the retry too
    long long commas     # its commas (counted for the conditional cleaning only)
    Py_ssize_t list_top  # the node above its outermost list (-1: none; cleaning only)
    bint sibling         # readability's sibling-paragraph test (container.sibling_paragraphs)
    bint prose           # context-free good or near-good, no heading, within jusText's links


cdef struct Rules:
    # what the choice of the container reads of ContainerOptions
    double share
    bint tag_scores
    double sibling_share
    double sibling_min_score
    bint article_body
    bint semantic_main
    bint join_segments
    double segment_link_density
    double article_segment_share
    bint join_paragraphs


cdef enum:
    # which blocks _subtrees leaves out
    SKIP_NONE = 0
    SKIP_FURNITURE = 1
    SKIP_ASIDES = 2


cdef int _subtrees(
    _Nodes nodes, const Candidate* blocks, Py_ssize_t n, int skips, const Rules* rules,
    dict tag_table,
) except -1:
    """container._Subtrees: characters, link characters and points per subtree,
    and each candidate's score (from its children and grandchildren); `skips`
    leaves out no block, the furniture, or the asides (elementmarks.ASIDE) only."""
    cdef Py_ssize_t i, node, parent, count = nodes.count
    cdef const Candidate* b
    cdef double share = rules.share
    for node in range(count):
        nodes.chars[node] = 0
        nodes.links[node] = 0
        nodes.points[node] = 0.0
        nodes.has_score[node] = False
        nodes.commas[node] = 0
        nodes.listed[node] = 0
        nodes.counted[node] = False
        nodes.wraps[node] = False
    nodes.scored_count = 0
    for i in range(n):
        b = &blocks[i]
        if (skips == SKIP_FURNITURE and b.skipped) or (skips == SKIP_ASIDES and b.aside):
            continue
        node = b.node
        nodes.counted[node] = True
        nodes.chars[node] += b.length
        nodes.links[node] += b.link_chars
        nodes.commas[node] += b.commas
        # characters in lists, counted for the elements above the outermost list
        parent = b.list_top
        while parent >= 0:
            nodes.listed[parent] += b.length
            parent = nodes.parent[parent]
        if b.points == 0:
            continue
        if b.low_links:
            nodes.points[node] = nodes.points[node] + <double>b.points
        parent = nodes.parent[node]
        if parent >= 0:
            nodes.add_score(parent, <double>b.points)
            if nodes.parent[parent] >= 0:
                nodes.add_score(nodes.parent[parent], <double>b.points * share)
    # children have higher ids than their parents: one pass upwards
    for node in range(count - 1, -1, -1):
        parent = nodes.parent[node]
        if parent >= 0:
            nodes.chars[parent] += nodes.chars[node]
            nodes.links[parent] += nodes.links[node]
            nodes.commas[parent] += nodes.commas[node]
            nodes.points[parent] = nodes.points[parent] + nodes.points[node]
            if nodes.counted[node]:
                nodes.counted[parent] = True
                nodes.wraps[parent] = True
    if rules.tag_scores:
        for i in range(nodes.scored_count):
            node = nodes.scored[i]
            nodes.score[node] = nodes.score[node] + <double>tag_table.get(
                _tag(<str>nodes.paths[node]), 0
            )
    return 0


cdef str _tag(str xpath):
    """xpaths.last_tag: the tag of an xpath's last step."""
    cdef str step = xpath[xpath.rfind("/") + 1:]
    cdef Py_ssize_t bracket = step.find("[")
    return step[:bracket] if bracket >= 0 else step


cdef bint _same_template(str best, str other) except -1:
    """container._same_template: the same tags below the point where the paths part
    (a template of bare <div>s only at the same depth)."""
    cdef list best_steps = best.split("/")
    cdef list other_steps = other.split("/")
    cdef Py_ssize_t common = 0, k, deeper
    cdef Py_ssize_t shorter = min(len(best_steps), len(other_steps))
    while common < shorter and best_steps[common] == other_steps[common]:
        common += 1
    cdef list own = [_tag(<str>step) for step in best_steps[common + 1:]]
    deeper = len(other_steps) - len(best_steps)
    if not own or deeper < 0:
        return False
    if deeper:
        for tag in own:
            if tag != "div":
                break
        else:
            return False
    cdef Py_ssize_t start = len(other_steps) - len(own)
    for k in range(len(own)):
        if _tag(<str>other_steps[start + k]) != own[k]:
            return False
    return True


cdef Py_ssize_t _semantic_main(_Nodes nodes, Py_ssize_t best) noexcept:
    """container.semantic_main: the <main> above the best candidate when the
    candidate is in no <article> and the <main> holds at least 500 characters,
    twice the candidate's, with link density <= 0.15."""
    cdef Py_ssize_t node = best, main
    cdef long long length, needed
    while node >= 0:
        if nodes.kinds[node] & K_ARTICLE:
            return best
        node = nodes.parent[node]
    main = nodes.above(best, K_MAIN)
    if main < 0:
        return best
    length = nodes.chars[main]
    needed = 2 * nodes.chars[best]
    if needed < 500:
        needed = 500
    if length < needed:
        return best
    if <double>nodes.links[main] > 0.15 * <double>length:
        return best
    return main


cdef Py_ssize_t _main_containers(
    _Nodes nodes, const Rules* rules, list bodies, const Candidate* blocks, Py_ssize_t n
) except -2:
    """container.main_containers: marks the chosen nodes and sums their points into
    `nodes.held` (a sibling paragraph's node once per block, as the Python list of
    containers holds it); the best one (-1: none)."""
    cdef Py_ssize_t i, node, best = -1, parent, frame, body
    cdef double value, threshold, segment_threshold, chars, best_score
    for node in range(nodes.count):
        nodes.chosen[node] = False
    for i in range(nodes.scored_count):
        node = nodes.scored[i]
        chars = <double>nodes.chars[node]
        value = nodes.score[node]
        if nodes.chars[node]:
            value = value * (1.0 - <double>nodes.links[node] / chars)
        nodes.final_score[node] = value
        # the first of equal scores wins, as max() over the dict does
        if best < 0 or value > nodes.final_score[best]:
            best = node
    if best < 0:
        return -1
    if rules.article_body and bodies:
        # container.article_body: the first best-scoring body, in the page's order
        body = -1
        for item in bodies:
            node = <Py_ssize_t>item
            if nodes.has_score[node] and (
                <double>nodes.links[node] <= _BODY_LINK_DENSITY * <double>nodes.chars[node]
            ):
                if body < 0 or nodes.final_score[node] > nodes.final_score[body]:
                    body = node
        if body >= 0:
            best = body
    if rules.semantic_main:
        best = _semantic_main(nodes, best)
    best_score = nodes.final_score[best] if nodes.has_score[best] else 0.0
    threshold = best_score * rules.sibling_share
    if not threshold > rules.sibling_min_score:
        threshold = rules.sibling_min_score
    parent = nodes.parent[best]
    nodes.chosen[best] = True
    nodes.held = nodes.points[best]
    for i in range(nodes.scored_count):
        node = nodes.scored[i]
        if node != best and nodes.final_score[node] >= threshold and nodes.parent[node] == parent:
            nodes.chosen[node] = True
            nodes.held = nodes.held + nodes.points[node]
    if rules.join_segments:
        # container.article_segments
        frame = nodes.above(best, K_ARTICLE | K_MAIN)
        segment_threshold = threshold
        if frame >= 0 and nodes.kinds[frame] & K_ARTICLE:
            segment_threshold = best_score * rules.article_segment_share
            if not segment_threshold > rules.sibling_min_score:
                segment_threshold = rules.sibling_min_score
        for i in range(nodes.scored_count):
            node = nodes.scored[i]
            if (
                nodes.final_score[node] < segment_threshold
                or node == best
                or nodes.parent[node] == parent
            ):
                continue
            if frame >= 0 and not nodes.below(node, frame):
                continue
            if nodes.chars[node] and (
                <double>nodes.links[node] / <double>nodes.chars[node] > rules.segment_link_density
            ):
                continue
            if not _same_template(<str>nodes.paths[best], <str>nodes.paths[node]):
                continue
            nodes.chosen[node] = True
            nodes.held = nodes.held + nodes.points[node]
    if rules.join_paragraphs and parent >= 0:
        # container.sibling_paragraphs: tested against the containers chosen so
        # far; two blocks of one element are two entries of the Python list
        for i in range(n):
            node = blocks[i].node
            if blocks[i].sibling and nodes.parent[node] == parent and not nodes.chosen[node]:
                nodes.extra[node] = True
                nodes.held = nodes.held + nodes.points[node]
        for node in range(nodes.count):
            if nodes.extra[node]:
                nodes.chosen[node] = True
                nodes.extra[node] = False
    return best


cdef void _mark_inside(_Nodes nodes) noexcept:
    """container.inside_containers per node: chosen, or below a chosen node."""
    cdef Py_ssize_t node, parent
    for node in range(nodes.count):
        parent = nodes.parent[node]
        nodes.inside[node] = nodes.chosen[node] or (parent >= 0 and nodes.inside[parent])


cdef void _mark_region(_Nodes nodes, Py_ssize_t region) noexcept:
    """inside_containers([region]) per node: the region or below it."""
    cdef Py_ssize_t node, parent
    for node in range(nodes.count):
        parent = nodes.parent[node]
        nodes.in_region[node] = node == region or (parent >= 0 and nodes.in_region[parent])


cdef void _mark_frame(_Nodes nodes, Py_ssize_t frame) noexcept:
    """container.container_pass's article_region per node: 1 for the <article>
    frame and what lies below it, 2 below a header, footer or aside inside it."""
    cdef Py_ssize_t node, parent
    cdef char state
    for node in range(nodes.count):
        parent = nodes.parent[node]
        if node == frame:
            state = 1
        elif parent < 0 or nodes.framed[parent] == 0:
            state = 0
        elif nodes.framed[parent] == 2 or nodes.kinds[node] & K_TRIM:
            state = 2
        else:
            state = 1
        nodes.framed[node] = state


cdef void _mark_paragraphs_above(
    _Nodes nodes, Py_ssize_t best, const Candidate* blocks, Py_ssize_t n, long long levels
) noexcept:
    """container.ancestor_paragraphs: `nodes.extra` for the sibling paragraphs of
    the container's grandparent and `levels` - 2 elements above it."""
    cdef Py_ssize_t i, node, above = nodes.parent[best]
    cdef long long level
    if above >= 0:
        above = nodes.parent[above]
    for level in range(levels - 1):
        if above < 0:
            break
        for i in range(n):
            node = blocks[i].node
            if blocks[i].sibling and nodes.parent[node] == above and not nodes.chosen[node]:
                nodes.extra[node] = True
        above = nodes.parent[above]


cdef int _mark_cleaned(_Nodes nodes, bint clean, double limit, bint negative) except -1:
    """container.cleaned_elements and negative_elements per node (with its
    subtree): below a chosen node, a table/ul/div/aside/header/footer/section
    with fewer than 10 commas, not a list nor over 90% lists, and link density
    above `limit`; or (`negative`) an element whose class and id weigh under
    zero, scoring under twice their weight, that is not a <div> of phrasing
    content alone."""
    cdef Py_ssize_t node, parent
    cdef long long length
    cdef int kind
    cdef double score
    for node in range(nodes.count):
        parent = nodes.parent[node]
        if parent >= 0 and nodes.cleaned[parent]:
            nodes.cleaned[node] = True
            continue
        nodes.cleaned[node] = False
        if parent < 0 or not nodes.inside[parent]:
            continue
        length = nodes.chars[node]
        if not length:
            continue
        kind = nodes.kinds[node]
        if negative and nodes.marks[node] & _NEGATIVE:
            score = nodes.score[node] if nodes.has_score[node] else 0.0
            if score < _NEGATIVE_KEEP and (not kind & K_DIV or nodes.wraps[node]):
                nodes.cleaned[node] = True
                continue
        if clean and _too_linked(nodes, node, limit):
            nodes.cleaned[node] = True
    return 0


cdef inline bint _too_linked(_Nodes nodes, Py_ssize_t node, double limit) noexcept:
    """container.cleaned_elements' test of one node of some text: a table, list
    wrapper, div, aside, header, footer or section with fewer than 10 commas, not
    a list nor over 90% lists, whose link density is above `limit`."""
    cdef long long length = nodes.chars[node]
    cdef int kind = nodes.kinds[node]
    if nodes.commas[node] >= 10 or not kind & K_CLEANED or kind & K_LIST:
        return False
    if <double>nodes.listed[node] > 0.9 * <double>length:
        return False
    return <double>nodes.links[node] / <double>length > limit


cdef int _mark_region_cleaned(
    _Nodes nodes, const Candidate* blocks, Py_ssize_t n, Py_ssize_t region, Py_ssize_t best,
    double limit,
) except -1:
    """container.container_pass's clean_region per node (with its subtree): when
    a block of prose lies in the container, an element strictly below the region
    that neither holds the container nor a block of prose, and that
    cleaned_elements would drop (as in _mark_cleaned), leaves the region."""
    cdef Py_ssize_t node, parent, i
    for i in range(n):
        if blocks[i].prose:
            node = blocks[i].node
            while node >= 0 and not nodes.prose[node]:
                nodes.prose[node] = True
                node = nodes.parent[node]
    if not nodes.prose[best]:
        return 0
    # the container and its ancestors are never cleaned out of the region
    node = best
    while node >= 0:
        nodes.prose[node] = True
        node = nodes.parent[node]
    for node in range(nodes.count):
        parent = nodes.parent[node]
        if parent < 0:
            continue
        if nodes.region_cleaned[parent]:
            nodes.region_cleaned[node] = True
            continue
        if not nodes.in_region[parent] or nodes.prose[node] or not nodes.chars[node]:
            continue
        if _too_linked(nodes, node, limit):
            nodes.region_cleaned[node] = True
    return 0


cdef bint _ruled_bad(object paragraph, bint direct) except -1:
    """container._ruled_bad: the seed's hard rules, which no container outweighs."""
    if _field(paragraph, F_IN_SELECT, direct) or _field(paragraph, F_IMAGE, direct):
        return True
    cdef str text = <str>_field(paragraph, F_TEXT, direct)
    return "\u00a9" in text or "&copy" in text


cdef bint _fallback_keeps(object paragraph, double limit, bint direct) except -1:
    """container._fallback_kept for one block of the candidate: text, not a link
    list, not ruled bad."""
    return (
        bool(_field(paragraph, F_TEXT, direct))
        and <double>_field(paragraph, F_LINK_DENSITY, direct) <= limit
        and not _ruled_bad(paragraph, direct)
    )


cdef object _reclassified(object paragraph, int cf, int final, bint direct):
    """model.reclassified: the same Paragraph with two classes changed."""
    cdef Py_ssize_t k
    if not (direct and _fast_paragraphs):
        values = [getattr(paragraph, name) for name in _FIELDS]
        values[F_CF_CLASS] = _CLASSES[cf]
        values[F_FINAL_CLASS] = _CLASSES[final]
        return Paragraph(*values)
    result = Paragraph.__new__(Paragraph)
    for k in range(N_FIELDS):
        if k == F_CF_CLASS:
            _set(result, k, _CLASSES[cf])
        elif k == F_FINAL_CLASS:
            _set(result, k, _CLASSES[final])
        else:
            _set(result, k, _field(paragraph, k, True))
    return result


cdef Py_ssize_t _main_region(
    _Nodes nodes, Py_ssize_t best, double region_share, const Candidate* blocks,
    Py_ssize_t n, object teasers, object threads,
) except -2:
    """container.main_region: the region's node. `teasers`: teasers.teaser_blocks'
    (flags, linked items) when the region stops at teasers, else None; `threads`:
    threads.adds_a_thread bound to the page, called with (containers, region,
    parent) at each step of the climb (a few a page), when the region stops at
    reader threads, else None."""
    cdef Py_ssize_t top = best, region = best, node, i, parent
    cdef double needed, held = nodes.held
    cdef long long* teaser_chars = NULL
    cdef long long* other_chars = NULL
    cdef long long added_teaser, added_other
    cdef list flags
    cdef object linked
    cdef list containers = None
    if threads is not None:
        # container.main_region's containers: the main one first, then those joined
        containers = [nodes.paths[best]] + [
            nodes.paths[node] for node in range(nodes.count) if nodes.chosen[node] and node != best
        ]
    while nodes.parent[top] >= 0:
        top = nodes.parent[top]
    needed = region_share * nodes.points[top]
    if teasers is not None and held < needed:
        flags, linked = teasers
        node = best
        while node >= 0:
            if nodes.paths[node] in linked:
                teasers = None  # the container lies in a linked item: a section front
                break
            node = nodes.parent[node]
    if teasers is not None and held < needed:
        # the prose below each node, teasers and the rest (teasers.mostly_teasers)
        teaser_chars = <long long*>PyMem_Calloc(nodes.count, sizeof(long long))
        other_chars = <long long*>PyMem_Calloc(nodes.count, sizeof(long long))
        if teaser_chars == NULL or other_chars == NULL:
            PyMem_Free(teaser_chars)
            PyMem_Free(other_chars)
            raise MemoryError()
        for i in range(n):
            if blocks[i].low_links:
                if flags[i]:
                    teaser_chars[blocks[i].node] += blocks[i].length
                else:
                    other_chars[blocks[i].node] += blocks[i].length
        # a node's id is above its parent's: children are summed into parents last first
        for node in range(nodes.count - 1, -1, -1):
            parent = nodes.parent[node]
            if parent >= 0:
                teaser_chars[parent] += teaser_chars[node]
                other_chars[parent] += other_chars[node]
    try:
        while held < needed and nodes.parent[region] >= 0:
            parent = nodes.parent[region]
            if teaser_chars != NULL:
                added_teaser = teaser_chars[parent] - teaser_chars[region]
                added_other = other_chars[parent] - other_chars[region]
                if 2 * added_teaser > added_teaser + added_other:
                    break
            if threads is not None and threads(
                containers, nodes.paths[region], nodes.paths[parent]
            ):
                break
            region = parent
            held = nodes.points[region]
    finally:
        PyMem_Free(teaser_chars)
        PyMem_Free(other_chars)
    return region


cdef bint _sentence_end(str text):
    # container._SENTENCE_END: "\.( |$)", where $ also matches before a final newline
    return text.find(". ") >= 0 or text.endswith(".") or text.endswith(".\n")


cdef Py_ssize_t _choose(
    _Nodes nodes, const Rules* rules, list bodies, const Candidate* blocks, Py_ssize_t n,
    int skips, dict tag_table,
) except -2:
    """The sums without the blocks `skips` leaves out, the chosen nodes and who
    is inside them: container._chosen_container's one attempt."""
    _subtrees(nodes, blocks, n, skips, rules, tag_table)
    cdef Py_ssize_t best = _main_containers(nodes, rules, bodies, blocks, n)
    _mark_inside(nodes)
    return best


def container_pass(tuple paragraphs, params, options, unlikely, dict tag_scores,
                   templated=None, relaxed=None, functional=None, ad_labels=None,
                   credited=None, stated=None, bint furniture=False, outside=None,
                   teasers=None, threads=None):
    """container.container_pass for a non-empty tuple of Paragraphs and options
    with at least one shift; `unlikely` is the furniture flags only when they are
    used for scoring (skip_unlikely and some block is furniture), else None;
    `templated` is container.template_groups' flags when options.template_shift
    is on, else None (the grouping is a dict pass, as cheap in Python); `relaxed` is container.relaxed_classes'
    list when container_link_density or region_link_density is on, else None;
    `functional` is container.function_blocks' flags when options.function_max_length
    is on, else None; `ad_labels` is container._AD_OR_LOADING when
    options.drop_ad_labels is on, else None; `credited` is container.credit_classes'
    list when options.credits_inside is on, else None; `stated` is
    segment.stated_elements' map (xpath -> elementmarks.STATED bits) or None;
    `furniture`: whether any block is page furniture (the fallback keeps
    nothing on such a page when no container scores); `outside` is
    container.outside_steps' list (per block, its steps outside the container and
    region) or None (every block moves options.outside_shift); `teasers` is
    teasers.teaser_blocks' (flags, linked items) when options.region_stops_at_teasers
    is on, else None; `threads` is threads.adds_a_thread with the paragraphs and
    max_link_density bound, called with (containers, region, parent) paths, when
    options.region_stops_at_threads is on, else None."""
    cdef Py_ssize_t n = len(paragraphs)
    # whole-number options past any real length are clamped to what a C long holds
    cdef long long min_length = min(options.min_block_length, _LIMIT)
    cdef long long per_point = min(options.length_per_point, _LIMIT)
    cdef long long max_length_points = min(options.max_length_points, _LIMIT)
    cdef Rules rules
    rules.share = options.grandparent_share
    rules.tag_scores = options.tag_scores
    rules.sibling_share = options.sibling_share
    rules.sibling_min_score = options.sibling_min_score
    rules.article_body = options.article_body
    rules.semantic_main = options.semantic_main
    rules.join_segments = options.join_segments
    rules.segment_link_density = options.segment_link_density
    rules.article_segment_share = options.article_segment_share
    rules.join_paragraphs = options.join_sibling_paragraphs
    cdef double max_link_density = options.max_link_density
    cdef double item_link_density = options.item_link_density
    cdef double region_share = options.region_share
    cdef int inside_shift = options.inside_shift
    cdef int region_shift = options.region_shift
    cdef int outside_shift = options.outside_shift
    cdef int template_shift = options.template_shift
    cdef bint use_outside = outside is not None
    cdef bint use_templates = templated is not None and template_shift != 0
    cdef bint relax_inside = relaxed is not None and options.container_link_density
    cdef bint relax_region = relaxed is not None and options.region_link_density
    cdef bint use_functions = functional is not None and options.function_max_length != 0
    cdef bint clean = options.clean_conditionally
    cdef bint clean_region = options.clean_conditionally and options.clean_region
    cdef double clean_limit = options.clean_link_density
    cdef bint clean_negative = options.clean_negative_names and bool(stated)
    cdef bint use_credits = credited is not None and options.credits_inside
    cdef bint linked_prose = options.linked_prose_inside
    cdef bint linked_paragraphs = options.linked_paragraphs_inside
    cdef bint whole_lists = options.lists_weighed_whole
    cdef long long* item_chars = NULL
    cdef long long* item_links = NULL
    cdef Py_ssize_t item_list
    cdef bint furniture_outside = options.furniture_outside
    cdef bint furniture_unlifted = options.furniture_unlifted
    cdef bint fallback = options.fallback_to_container
    cdef bint article_region = options.article_region
    cdef long long levels = min(options.paragraph_levels, _LIMIT)
    cdef long long length_high = min(params.length_high, _LIMIT)
    cdef double stopwords_high = params.stopwords_high
    cdef double link_density
    cdef bint prose
    cdef bint is_inside, is_region
    cdef Py_ssize_t cut, cut_ol
    cdef str xpath
    cdef double params_max_link_density = params.max_link_density
    cdef long long min_container_chars = min(options.min_container_chars, _LIMIT)
    cdef bint use_skips = unlikely is not None
    cdef bint skips_left = False
    cdef bint keep_asides_out = options.retry_keeps_asides_out
    cdef bint asides_out = False
    cdef bint takes_longest = options.retry_takes_longest
    cdef bint weighs_prose = options.retry_weighs_prose
    cdef bint no_select_points = options.select_scores_nothing
    cdef bint no_description_points = options.description_lists_score_nothing
    cdef bint linked_item
    cdef Py_ssize_t step
    cdef bint framed = False
    cdef Py_ssize_t first_best, frame
    cdef long long retried_held
    cdef object mark
    cdef list bodies = []
    cdef bint no_headings = params.no_headings
    cdef long max_distance = min(params.max_heading_distance, _LIMIT)
    cdef bint direct = _fast_paragraphs
    cdef Py_ssize_t i, best, region
    cdef long long length, count, held
    cdef Py_UCS4 c
    cdef str text
    cdef Candidate* b
    cdef int steps, cls
    cdef bint changed = False
    if n == 0:
        return ()
    if direct:
        for p in paragraphs:
            if type(p) is not Paragraph:
                direct = False
                break
    if use_skips and len(unlikely) != n:
        raise ValueError(f"{len(unlikely)} furniture flags for {n} paragraphs")
    if use_templates and len(templated) != n:
        raise ValueError(f"{len(templated)} template flags for {n} paragraphs")
    if relaxed is not None and len(relaxed) != n:
        raise ValueError(f"{len(relaxed)} relaxed classes for {n} paragraphs")
    if use_functions and len(functional) != n:
        raise ValueError(f"{len(functional)} function flags for {n} paragraphs")
    if use_credits and len(credited) != n:
        raise ValueError(f"{len(credited)} credit classes for {n} paragraphs")

    cdef _Nodes nodes = _Nodes()
    cdef Candidate* blocks = <Candidate*>PyMem_Malloc(n * sizeof(Candidate))
    cdef int* classes = <int*>PyMem_Malloc(n * sizeof(int))
    cdef int* finals = <int*>PyMem_Malloc(n * sizeof(int))
    cdef int* old_finals = <int*>PyMem_Malloc(n * sizeof(int))
    cdef int* old_cf = <int*>PyMem_Malloc(n * sizeof(int))
    cdef int* moved = <int*>PyMem_Malloc(n * sizeof(int))
    cdef long* lengths = <long*>PyMem_Malloc(n * sizeof(long))
    cdef bint* headings = <bint*>PyMem_Malloc(n * sizeof(bint))
    try:
        if not (blocks and classes and finals and old_finals and old_cf and moved and lengths
                and headings):
            raise MemoryError()
        for i in range(n):
            if i & 4095 == 4095:
                PyErr_CheckSignals()
            p = paragraphs[i]
            b = &blocks[i]
            xpath = <str>_field(p, F_XPATH, direct)
            b.node = nodes.node(xpath)
            b.commas = 0
            b.list_top = -1
            b.sibling = False
            if clean:
                cut = xpath.find("/ul[")
                cut_ol = xpath.find("/ol[")
                if cut_ol >= 0 and (cut < 0 or cut_ol < cut):
                    cut = cut_ol
                if cut > 0:
                    # container._outermost_list: its parent's node, made with the block's
                    b.list_top = <Py_ssize_t>nodes.ids[xpath[:cut]]
            length = _field(p, F_LENGTH, direct)
            b.length = length
            b.link_chars = _field(p, F_LINK_CHARS, direct)
            link_density = _field(p, F_LINK_DENSITY, direct)
            b.low_links = link_density <= max_link_density
            if use_skips:
                mark = unlikely[i]
                b.skipped = bool(mark)
                b.aside = keep_asides_out and (mark & _ASIDE) != 0
            else:
                b.skipped = False
                b.aside = False
            headings[i] = _field(p, F_HEADING, direct)
            lengths[i] = <long>length
            old_cf[i] = _code(_field(p, F_CF_CLASS, direct))
            old_finals[i] = _code(_field(p, F_FINAL_CLASS, direct))
            b.prose = (
                (old_cf[i] == C_GOOD or old_cf[i] == C_NEAR_GOOD)
                and not headings[i]
                and link_density <= params_max_link_density
            )
            b.points = 0
            if clean or (length >= min_length and not headings[i]):
                count = 0
                text = <str>_field(p, F_TEXT, direct)
                for c in text:
                    if _is_comma(c):
                        count += 1
                b.commas = count
                if length >= min_length and not headings[i] and not (
                    no_select_points and _field(p, F_IN_SELECT, direct)
                ):
                    # the last step's tag, looked up only when a rule reads it
                    linked_item = link_density > item_link_density
                    step = xpath.rfind("/") + 1 if linked_item or no_description_points else 0
                    if not (
                        # container._Subtrees: a list item with too many links scores nothing
                        linked_item and xpath.startswith("li[", step)
                    ) and not (
                        # ...nor a description list's term or description
                        no_description_points
                        and (xpath.startswith("dt[", step) or xpath.startswith("dd[", step))
                    ):
                        b.points = 1 + min(length // per_point, max_length_points) + count
            if rules.join_paragraphs:
                # container.sibling_paragraphs' test, which does not depend on the choice
                if length > 80:
                    b.sibling = link_density < 0.25
                else:
                    b.sibling = b.link_chars == 0 and _sentence_end(
                        <str>_field(p, F_TEXT, direct)
                    )
        nodes.allocate()
        if rules.join_paragraphs:
            for i in range(n):
                if blocks[i].sibling and not nodes.kinds[blocks[i].node] & (K_P | K_DIV):
                    blocks[i].sibling = False
        if stated:
            for path, bits in stated.items():
                found = nodes.ids.get(path)
                if found is not None:
                    nodes.marks[<Py_ssize_t>found] = bits
                    if bits & _BODY:
                        bodies.append(found)

        best = _choose(
            nodes, &rules, bodies, blocks, n, SKIP_FURNITURE if use_skips else SKIP_NONE,
            tag_scores,
        )
        skips_left = use_skips
        if use_skips:
            # readability's retry: too little text chosen without the furniture
            held = 0
            for i in range(n):
                if (
                    nodes.inside[blocks[i].node] and not blocks[i].skipped
                    and (blocks[i].low_links or not weighs_prose)
                ):
                    held += blocks[i].length
            if held < min_container_chars:
                skips_left = False
                # container.container_pass: asides stay out when asked
                asides_out = False
                if keep_asides_out:
                    for i in range(n):
                        if blocks[i].aside:
                            asides_out = True
                            break
                first_best = best
                best = _choose(
                    nodes, &rules, bodies, blocks, n, SKIP_ASIDES if asides_out else SKIP_NONE,
                    tag_scores,
                )
                if takes_longest and first_best >= 0:
                    retried_held = 0
                    for i in range(n):
                        if (
                            nodes.inside[blocks[i].node] and not (asides_out and blocks[i].aside)
                            and (blocks[i].low_links or not weighs_prose)
                        ):
                            retried_held += blocks[i].length
                    if retried_held < held:
                        # container.container_pass: the longest attempt wins
                        asides_out = False
                        skips_left = True
                        best = _choose(
                            nodes, &rules, bodies, blocks, n, SKIP_FURNITURE, tag_scores,
                        )
        if best < 0:
            if fallback and not furniture:
                return _kept_without_container(paragraphs, old_finals, max_link_density, direct)
            return paragraphs
        region = _main_region(nodes, best, region_share, blocks, n, teasers, threads)

        _mark_region(nodes, region)
        if article_region:
            frame = nodes.above(best, K_ARTICLE)
            if frame >= 0 and nodes.below(region, frame):
                # the author's <article> around the container is the article's region
                _mark_frame(nodes, frame)
                framed = True
        if levels > 1 and rules.join_paragraphs:
            _mark_paragraphs_above(nodes, best, blocks, n, levels)
        # what readability's cleaning drops from its article is outside it here
        _mark_cleaned(nodes, clean, clean_limit, clean_negative)
        if clean_region and region != best:
            _mark_region_cleaned(nodes, blocks, n, region, best, clean_limit)
        if whole_lists:
            # container.whole_list_items: each list's items' characters and links
            item_chars = <long long*>PyMem_Calloc(nodes.count, sizeof(long long))
            item_links = <long long*>PyMem_Calloc(nodes.count, sizeof(long long))
            if not (item_chars and item_links):
                raise MemoryError()
            for i in range(n):
                item_list = _item_list(nodes, &blocks[i])
                if item_list >= 0:
                    item_chars[item_list] += blocks[i].length
                    item_links[item_list] += blocks[i].link_chars
        for i in range(n):
            b = &blocks[i]
            is_inside = (nodes.inside[b.node] or nodes.extra[b.node]) and not nodes.cleaned[b.node]
            is_region = (
                nodes.in_region[b.node]
                or (framed and nodes.framed[b.node] == 1 and not headings[i])
            ) and not nodes.cleaned[b.node] and not nodes.region_cleaned[b.node]
            if (asides_out and b.aside) or (furniture_outside and skips_left and b.skipped):
                # container.container_pass: readability removed these before it
                # chose, or the container chosen again keeps them out
                is_inside = False
                is_region = False
            if is_inside and furniture_unlifted and skips_left and b.skipped:
                # container.container_pass: furniture the container holds, chosen
                # without it, is not lifted
                steps = 0
            elif is_inside:
                # container._linked_prose
                prose = (
                    linked_prose
                    and b.length >= length_high
                    and <double>_field(paragraphs[i], F_STOPWORD_DENSITY, direct) >= stopwords_high
                )
                steps = (
                    inside_shift
                    if b.low_links
                    or (whole_lists and _in_whole_list(nodes, b, item_chars, item_links,
                                                       max_link_density))
                    or prose
                    or (linked_paragraphs and nodes.kinds[b.node] & K_P)
                    else 0
                )
            elif is_region:
                steps = region_shift
            elif use_outside:
                steps = <int>outside[i]
            else:
                steps = outside_shift
            if (
                use_templates
                and templated[i]
                and (is_inside or is_region)
                and not headings[i]
                and old_cf[i] != C_GOOD
                and <double>_field(paragraphs[i], F_LINK_DENSITY, direct)
                <= params_max_link_density
            ):
                steps += template_shift
            if steps > 0 and ((use_functions and functional[i]) or _ruled_bad(paragraphs[i], direct)):
                steps = 0
            cls = old_cf[i]
            if (
                ad_labels is not None
                and is_inside
                and ad_labels.match((<str>_field(paragraphs[i], F_TEXT, direct)).strip())
            ):
                # readability.js removes an element whose whole text is such a label
                moved[i] = C_BAD
                classes[i] = C_BAD
                changed = changed or old_cf[i] != C_BAD
                continue
            if (
                (relax_inside and is_inside)
                or (relax_region and is_region and not is_inside)
            ) and relaxed[i] is not None:
                # jusText's test again with the container's link limit
                cls = _code(relaxed[i])
            if use_credits and is_inside and cls == C_BAD and credited[i] is not None:
                # a photo credit in a long block of the article, not a footer
                cls = _code(credited[i])
                steps = inside_shift
            if steps:
                cls = max(C_BAD, min(C_GOOD, cls + steps))
            # as the Python pass: a change is a class that ends up moved (a relaxed
            # class that a negative shift takes back is none)
            changed = changed or cls != old_cf[i]
            moved[i] = cls
            classes[i] = cls
        if changed:
            _later_phases(classes, headings, lengths, finals, n, max_distance,
                          not no_headings, not no_headings)
        else:
            for i in range(n):
                finals[i] = old_finals[i]
        if fallback and _none_good(finals, n):
            # container.container_pass: nothing kept, the container's blocks are
            count = 0
            for i in range(n):
                # before readability's cleaning, the furniture left out
                if (
                    nodes.inside[blocks[i].node] and not blocks[i].skipped
                    and _fallback_keeps(paragraphs[i], max_link_density, direct)
                ):
                    moved[i] = C_GOOD
                    finals[i] = C_GOOD
                    count += 1
            changed = changed or count > 0
        if not changed:
            return paragraphs
        result = [None] * n
        for i in range(n):
            p = paragraphs[i]
            if moved[i] == old_cf[i] and finals[i] == old_finals[i]:
                result[i] = p
            else:
                result[i] = _reclassified(p, moved[i], finals[i], direct)
        return tuple(result)
    finally:
        PyMem_Free(blocks)
        PyMem_Free(classes)
        PyMem_Free(finals)
        PyMem_Free(old_finals)
        PyMem_Free(old_cf)
        PyMem_Free(moved)
        PyMem_Free(lengths)
        PyMem_Free(headings)
        PyMem_Free(item_chars)
        PyMem_Free(item_links)


cdef inline Py_ssize_t _item_list(_Nodes nodes, const Candidate* b) noexcept:
    """The list (an <ol> or <ul>) whose item the block is (-1: none)."""
    cdef Py_ssize_t parent
    if not nodes.kinds[b.node] & K_ITEM:
        return -1
    parent = nodes.parent[b.node]
    if parent < 0 or not nodes.kinds[parent] & K_LIST:
        return -1
    return parent


cdef inline bint _in_whole_list(
    _Nodes nodes, const Candidate* b, const long long* item_chars,
    const long long* item_links, double limit,
) noexcept:
    """container.whole_list_items for one block: an item of a list whose items
    together are within `limit` link density."""
    cdef Py_ssize_t list_node = _item_list(nodes, b)
    if list_node < 0 or item_chars[list_node] <= 0:
        return False
    return <double>item_links[list_node] <= limit * <double>item_chars[list_node]


cdef bint _none_good(const int* finals, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i
    for i in range(n):
        if finals[i] == C_GOOD:
            return False
    return True


cdef tuple _kept_without_container(
    tuple paragraphs, const int* old_finals, double limit, bint direct
):
    """container._kept_without_container, on a page with no furniture: when
    nothing is kept and nothing scored, every block with text is, unless some
    block is a link list or ruled bad."""
    cdef Py_ssize_t i, n = len(paragraphs)
    if not _none_good(old_finals, n):
        return paragraphs
    for p in paragraphs:
        if _field(p, F_TEXT, direct) and (
            <double>_field(p, F_LINK_DENSITY, direct) > limit or _ruled_bad(p, direct)
        ):
            return paragraphs
    return tuple(
        _reclassified(p, C_GOOD, C_GOOD, direct) if _fallback_keeps(p, limit, direct) else p
        for p in paragraphs
    )


# --------------------------------------------------------------------------- function blocks


cdef inline bint _is_letter(Py_UCS4 c) noexcept:
    # container._LETTER_WORD's [^\W\d_]: a word character (re's \w: alphabetic,
    # decimal, digit or numeric, or "_") that is neither a decimal digit nor "_"
    return (
        Py_UNICODE_ISALPHA(c) or Py_UNICODE_ISDIGIT(c) or Py_UNICODE_ISNUMERIC(c)
    ) and not Py_UNICODE_ISDECIMAL(c)


cdef struct WordSlot:
    unsigned long long key   # the word's hash; 0: empty
    Py_ssize_t blocks        # in how many blocks of the template it occurs
    Py_ssize_t last          # the last block that counted it (once per block)


cdef Py_ssize_t _letter_words(str lowered, unsigned long long* out) noexcept:
    """The hashes of a lowered text's letter words (container._LETTER_WORD.findall),
    in order; returns how many. `out` has room for len(lowered) // 1 + 1."""
    cdef Py_ssize_t i = 0, n = len(lowered), count = 0, start
    cdef unsigned long long h
    while i < n:
        if not _is_letter(lowered[i]):
            i += 1
            continue
        start = i
        while i < n and _is_letter(lowered[i]):
            i += 1
        h = _hash(lowered, start, i)
        out[count] = h if h != 0 else 1
        count += 1
    return count


cdef WordSlot* _slot(WordSlot* table, Py_ssize_t mask, unsigned long long key) noexcept:
    cdef Py_ssize_t at = <Py_ssize_t>(key & <unsigned long long>mask)
    while table[at].key != 0 and table[at].key != key:
        at = (at + 1) & mask
    return &table[at]


def function_blocks(paragraphs, Py_ssize_t length_high, max_length, Py_ssize_t min_blocks,
                    double shared_share):
    """container.function_blocks over C arrays: the words of a template's blocks
    are 64-bit hashes of their letters (FNV-1a, as the stoplist table's) in an
    open-addressing table instead of str objects in a dict."""
    cdef long long limit = min(max_length, _LIMIT)
    cdef Py_ssize_t n = len(paragraphs), count, recurring, i, k, j, words, total, size
    cdef Py_ssize_t own_start, own_count, shared, short_count
    cdef unsigned long long* hashes = NULL
    cdef Py_ssize_t* starts = NULL
    cdef Py_ssize_t* counts = NULL
    cdef WordSlot* table = NULL
    cdef WordSlot* slot
    cdef str lowered
    cdef list members, lowered_texts
    found = [False] * n
    templates = {}
    for index in range(n):
        p = paragraphs[index]
        members = templates.get(p.dom_path)
        if members is None:
            templates[p.dom_path] = [index]
        else:
            members.append(index)
    try:
        for members in templates.values():
            count = len(members)
            if count < min_blocks:
                continue
            recurring = max(3, -(-count // 4))
            short_count = 0
            for k in range(count):
                p = paragraphs[<Py_ssize_t>members[k]]
                if p.length <= limit and not p.heading:
                    short_count += 1
            if short_count < recurring:
                continue
            # the words of the members up to length_high (the short ones' context)
            lowered_texts = [None] * count
            total = 0
            for k in range(count):
                p = paragraphs[<Py_ssize_t>members[k]]
                if p.length <= length_high:
                    lowered = p.text.lower()
                    lowered_texts[k] = lowered
                    total += len(lowered) + 1
            PyMem_Free(hashes)
            PyMem_Free(starts)
            PyMem_Free(counts)
            PyMem_Free(table)
            hashes = <unsigned long long*>PyMem_Malloc(max(total, 1) * sizeof(unsigned long long))
            starts = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
            counts = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
            size = 16
            while size < 2 * total:
                size *= 2
            table = <WordSlot*>PyMem_Malloc(size * sizeof(WordSlot))
            if not (hashes and starts and counts and table):
                raise MemoryError()
            for j in range(size):
                table[j].key = 0
            words = 0
            for k in range(count):
                starts[k] = words
                counts[k] = 0
                if lowered_texts[k] is None:
                    counts[k] = -1  # not read (past length_high)
                    continue
                counts[k] = _letter_words(<str>lowered_texts[k], hashes + words)
                for j in range(words, words + counts[k]):
                    slot = _slot(table, size - 1, hashes[j])
                    if slot.key == 0:
                        slot.key = hashes[j]
                        slot.blocks = 0
                        slot.last = -1
                    if slot.last != k:
                        slot.last = k
                        slot.blocks += 1
                words += counts[k]
            for k in range(count):
                p = paragraphs[<Py_ssize_t>members[k]]
                if not (p.length <= limit and not p.heading):
                    continue
                own_count = counts[k]
                if own_count <= 0:
                    continue
                own_start = starts[k]
                shared = 0
                for j in range(own_start, own_start + own_count):
                    if _slot(table, size - 1, hashes[j]).blocks >= recurring:
                        shared += 1
                if <double>shared >= shared_share * <double>own_count:
                    found[<Py_ssize_t>members[k]] = True
    finally:
        PyMem_Free(hashes)
        PyMem_Free(starts)
        PyMem_Free(counts)
        PyMem_Free(table)
    return found

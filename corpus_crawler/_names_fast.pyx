# cython: language_level=3, boundscheck=False, wraparound=False
"""Which word lists have a word inside a class or id name, in one pass over its bytes.

elementmarks reads the names of every element with a class or id against six lists
of words (readability's unlikely, maybe-content, negative and positive words, the
lead and picture words), each a plain substring test. In Python that is ~60 `in`
tests of ~60 ns a name; a page of a template nothing has seen yet asks it for every
element, and it was most of what such a page costs over a known one. Here each
position of the name's UTF-8 bytes is tried against only the words that begin with
its byte. elementmarks makes two: one for an element's names, one for a value's
weight. Their pure-Python twins are elementmarks._python_name_bits and
_python_weight_bits, which give the same bits (the first reads the picture words only
where a lead word is, as elementmarks does: tests/test_names_fast.py).

The words are ASCII, so a match in the UTF-8 bytes is a match in the text: a byte
under 0x80 is never part of a longer character's encoding.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcmp, memcpy


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL


cdef class WordBits:
    """`WordBits(((words, bit), ...))(text)`: the OR of the bits of the lists that
    have a word in `text` (a substring, case as given: the caller lowers)."""

    cdef char* _bytes           # every word, back to back, in order of first byte
    cdef Py_ssize_t* _offsets   # word k: _bytes[_offsets[k]:_offsets[k] + _lengths[k]]
    cdef Py_ssize_t* _lengths
    cdef int* _bits             # the bits of the lists that hold word k
    cdef Py_ssize_t _first[257] # words beginning with byte c: _first[c] .. _first[c + 1]

    def __cinit__(self, lists):
        cdef dict owned = {}
        cdef Py_ssize_t k, total = 0, count, c
        for words, bit in lists:
            for word in words:
                encoded = (<str>word).encode("ascii")
                if not encoded:
                    raise ValueError("an empty word is in every text")
                owned[encoded] = owned.get(encoded, 0) | <int>bit
        ordered = sorted(owned)
        count = len(ordered)
        for word in ordered:
            total += len(<bytes>word)
        self._bytes = <char*>PyMem_Malloc(max(total, 1))
        self._offsets = <Py_ssize_t*>PyMem_Malloc(max(count, 1) * sizeof(Py_ssize_t))
        self._lengths = <Py_ssize_t*>PyMem_Malloc(max(count, 1) * sizeof(Py_ssize_t))
        self._bits = <int*>PyMem_Malloc(max(count, 1) * sizeof(int))
        if not (self._bytes and self._offsets and self._lengths and self._bits):
            raise MemoryError()
        total = 0
        for k in range(257):
            self._first[k] = count
        for k in range(count):
            word = ordered[k]
            memcpy(self._bytes + total, <const char*>(<bytes>word), len(<bytes>word))
            self._offsets[k] = total
            self._lengths[k] = len(<bytes>word)
            self._bits[k] = owned[word]
            total += len(<bytes>word)
            c = (<bytes>word)[0]
            if self._first[c] == count:
                self._first[c] = k
        # a byte no word begins with: an empty range starting where the next one does
        for c in range(255, -1, -1):
            if self._first[c] == count:
                self._first[c] = self._first[c + 1]

    def __dealloc__(self):
        PyMem_Free(self._bytes)
        PyMem_Free(self._offsets)
        PyMem_Free(self._lengths)
        PyMem_Free(self._bits)

    def __call__(self, str text):
        cdef Py_ssize_t size, i, k, end, length
        cdef const unsigned char* data
        cdef bytes encoded
        cdef int bits = 0
        try:
            data = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
        except UnicodeEncodeError:  # a lone surrogate: its bytes are all over 0x7f
            encoded = text.encode("utf-8", "surrogatepass")
            data = <const unsigned char*>(<const char*>encoded)
            size = len(encoded)
        for i in range(size):
            end = self._first[data[i] + 1]
            for k in range(self._first[data[i]], end):
                length = self._lengths[k]
                if length <= size - i and memcmp(
                    data + i, self._bytes + self._offsets[k], length
                ) == 0:
                    bits |= self._bits[k]
        return bits

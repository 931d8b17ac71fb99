# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of the probes of `state.SeenFilter` (a Bloom filter of the campaign's
seen keys): `maybe_held` runs for every new link's key (~0.25 us a key in Python, a
quarter of what the seen set costs a page of 100 new links), `add_all` for the 65,536
keys the seen log moves at once (~17 ms in Python). Same bits, same answers:
tests/test_frontier_fast.py compares them with the Python loops.
"""

from libc.stdint cimport int64_t, uint64_t


cdef inline bint _held(const unsigned char[::1] table, uint64_t mask, uint64_t key) noexcept:
    cdef uint64_t low = key & mask
    cdef uint64_t high = (key >> 32) & mask
    return (table[low >> 3] >> (low & 7)) & 1 and (table[high >> 3] >> (high & 7)) & 1


def maybe_held(const unsigned char[::1] table, uint64_t mask, keys):
    """`SeenFilter.maybe_held`: the keys of `keys` (64-bit signed integers) whose two
    bits are set in `table`."""
    cdef list held = []
    cdef int64_t key
    for item in keys:
        key = item
        if _held(table, mask, <uint64_t>key):
            held.append(item)
    return held


def add_all(unsigned char[::1] table, uint64_t mask, keys):
    """`SeenFilter.add_all`: set the two bits of each key."""
    cdef int64_t key
    cdef uint64_t low, high
    for item in keys:
        key = item
        low = (<uint64_t>key) & mask
        high = ((<uint64_t>key) >> 32) & mask
        table[low >> 3] |= 1 << (low & 7)
        table[high >> 3] |= 1 << (high & 7)

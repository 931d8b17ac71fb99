# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled twin of the campaign scheduler's per-link work (`pipelines/scheduler.py`):
the seen key of a link (`link_key`), the compact JSON text of a link (`link_json`)
and the columns a page's held links go to the store in (`link_columns`).

Why: a page of 100 new links cost ~0.93 ms of state work against a 1 ms limit
(issue 8, benchmarks/campaign_state.py); of it, per link, ~1.6 us went to the JSON
text and ~0.9 us to the seen key (Scrapy's fingerprint text built, encoded, hashed
by hashlib and cut to 64 bits), mostly interpreter work around a few bytes. Here
the fingerprint text is written into a C buffer and hashed by OpenSSL's SHA-1, and
the JSON text is assembled from C-escaped parts.

The rules are the ones of the Python functions in scheduler.py;
tests/test_frontier_fast.py checks that both give the same keys, texts and columns
on random requests (non-ASCII URLs, odd meta, POST bodies, unserialisable meta).
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_DecodeASCII
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.math cimport isfinite
from libc.string cimport memcpy

import orjson
from scrapy import Request

from corpus_crawler.exact_json import MAX_DEPTH

# -- SHA-1 ----------------------------------------------------------------------------------

# OpenSSL's low-level SHA-1 (libcrypto, which Python's hashlib is built on): its
# SHA-NI/AVX2 code hashes a link's fingerprint text (2 blocks) in ~0.065 us, against
# ~0.36 us for a portable C SHA-1 (FIPS 180-4, tried here first) and ~0.37 us for
# OpenSSL 3's one-shot SHA1(), which fetches a provider on every call. Deprecated in
# OpenSSL 3.0 (OPENSSL_SUPPRESS_DEPRECATED in setup.py), still exported.
cdef extern from "openssl/sha.h":
    ctypedef struct SHA_CTX:
        pass
    int SHA1_Init(SHA_CTX* context) nogil
    int SHA1_Update(SHA_CTX* context, const void* data, size_t length) nogil
    int SHA1_Final(unsigned char* digest, SHA_CTX* context) nogil


cdef uint64_t _sha1_first64(const uint8_t* data, Py_ssize_t length) noexcept nogil:
    """The first 64 bits of the SHA-1 digest of `data`, big-endian (the digest's first
    eight bytes read as one number)."""
    cdef uint8_t digest[20]
    cdef uint64_t first = 0
    cdef int i
    cdef SHA_CTX context
    SHA1_Init(&context)
    SHA1_Update(&context, data, length)
    SHA1_Final(digest, &context)
    for i in range(8):
        first = (first << 8) | digest[i]
    return first


# -- JSON strings as json.dumps writes them by default (ensure_ascii) --------------------------

cdef const char* _HEX = b"0123456789abcdef"


cdef inline Py_ssize_t _escape_unit(uint8_t* out, uint32_t unit) noexcept nogil:
    out[0] = 92  # backslash
    out[1] = 117  # u
    out[2] = _HEX[(unit >> 12) & 15]
    out[3] = _HEX[(unit >> 8) & 15]
    out[4] = _HEX[(unit >> 4) & 15]
    out[5] = _HEX[unit & 15]
    return 6


cdef Py_ssize_t _json_ascii_size(str text):
    """Bytes `_write_json_ascii` writes for `text` (at most 12 a character, quotes aside)."""
    return 2 + 12 * len(text)


cdef Py_ssize_t _write_json_ascii(uint8_t* out, str text):
    """`text` as `json.encoder.encode_basestring_ascii` writes it (quotes included): `"`,
    `\\` and the five short escapes, other characters outside ' '..'~' as \\uXXXX
    (two, a surrogate pair, above U+FFFF). Returns the bytes written."""
    cdef Py_ssize_t size = 1
    cdef Py_UCS4 code
    cdef uint32_t rest
    out[0] = 34
    for code in text:
        if 32 <= code <= 126:
            if code == 34 or code == 92:
                out[size] = 92
                size += 1
            out[size] = <uint8_t>code
            size += 1
        elif code == 8:
            out[size] = 92
            out[size + 1] = 98
            size += 2
        elif code == 12:
            out[size] = 92
            out[size + 1] = 102
            size += 2
        elif code == 10:
            out[size] = 92
            out[size + 1] = 110
            size += 2
        elif code == 13:
            out[size] = 92
            out[size + 1] = 114
            size += 2
        elif code == 9:
            out[size] = 92
            out[size + 1] = 116
            size += 2
        elif code >= 0x10000:
            rest = <uint32_t>code - 0x10000
            size += _escape_unit(out + size, 0xD800 | ((rest >> 10) & 0x3FF))
            size += _escape_unit(out + size, 0xDC00 | (rest & 0x3FF))
        else:
            size += _escape_unit(out + size, <uint32_t>code)
    out[size] = 34
    return size + 1


cdef str _json_ascii(str text):
    cdef Py_ssize_t capacity = _json_ascii_size(text)
    cdef uint8_t small[512]
    cdef uint8_t* buffer = small
    cdef Py_ssize_t size
    if capacity > 512:
        buffer = <uint8_t*>PyMem_Malloc(capacity)
        if buffer == NULL:
            raise MemoryError()
    try:
        size = _write_json_ascii(buffer, text)
        return PyUnicode_DecodeASCII(<char*>buffer, size, NULL)
    finally:
        if buffer != small:
            PyMem_Free(buffer)


# -- the seen key of a link -------------------------------------------------------------------

#: Scrapy's default fingerprint text of a GET without a body, up to its URL
#: (`scrapy.utils.request.fingerprint`: the request as JSON with sorted keys).
cdef bytes _PLAIN_GET = b'{"body": "", "headers": {}, "method": "GET", "url": '


cdef int64_t _link_key(str seen_url) except? -1:
    cdef Py_ssize_t prefix = len(_PLAIN_GET)
    cdef Py_ssize_t capacity = prefix + _json_ascii_size(seen_url) + 1
    cdef uint8_t small[1024]
    cdef uint8_t* buffer = small
    cdef Py_ssize_t size
    cdef uint64_t first
    if capacity > 1024:
        buffer = <uint8_t*>PyMem_Malloc(capacity)
        if buffer == NULL:
            raise MemoryError()
    try:
        memcpy(buffer, <const char*>_PLAIN_GET, prefix)
        size = prefix + _write_json_ascii(buffer + prefix, seen_url)
        buffer[size] = 125  # }
        first = _sha1_first64(buffer, size + 1)
    finally:
        if buffer != small:
            PyMem_Free(buffer)
    return <int64_t>first


def link_key(str seen_url):
    """`state.fingerprint_key(scheduler._link_fingerprint(seen_url))`: the seen set's key
    of a GET without a body whose fingerprint is Scrapy's default of `seen_url`."""
    return _link_key(seen_url)


# -- the compact JSON text of a link ----------------------------------------------------------

cdef int _MAX_DEPTH = MAX_DEPTH


cdef bint _plain_json(object value, int depth):
    """`corpus_crawler.exact_json.is_plain_json` (see there): run on every link's meta."""
    cdef type kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return isfinite(<double>value)
    if depth >= _MAX_DEPTH:
        return False
    if kind is dict:
        for key, item in (<dict>value).items():
            if type(key) is not str or not _plain_json(item, depth + 1):
                return False
        return True
    if kind is list:
        for item in <list>value:
            if not _plain_json(item, depth + 1):
                return False
        return True
    return False


def plain_json(value):
    """`exact_json.is_plain_json`, compiled (for the tests' comparison)."""
    return _plain_json(value, 0)



#: Scrapy's Request keeps these attributes in slots behind properties (Python
#: functions: ~50 ns a call, 8 a link); the functions below read the slots of a
#: Request (never of a subclass, whose properties may differ) when the class has them,
#: as the properties would return them (None where a property makes an empty dict or
#: list: the same truth value), else the properties.
_LINK_SLOTS = ("_url", "_body", "_encoding", "_cookies", "_flags", "_cb_kwargs", "_meta", "_headers")
cdef bint _READ_SLOTS = all(name in getattr(Request, "__slots__", ()) for name in _LINK_SLOTS)
READS_SLOTS = _READ_SLOTS


cpdef str link_json(request, spider, dict method_names, callback_pair_json):
    """`scheduler._link_json`: the compact form of a link as the spider yields it, or None
    for any other request. `callback_pair_json`: `scheduler._callback_pair_json`, which
    finds and caches the callbacks' part on the first link of a callback pair."""
    if type(request) is not Request:
        return None
    if _READ_SLOTS:
        url, body, encoding = request._url, request._body, request._encoding
        cookies, flags, cb_kwargs = request._cookies, request._flags, request._cb_kwargs
        meta, headers = request._meta, request._headers
    else:
        url, body, encoding = request.url, request.body, request.encoding
        cookies, flags, cb_kwargs = request.cookies, request.flags, request.cb_kwargs
        meta, headers = request.meta, request.headers
    if (
        request.method != "GET"
        or request.dont_filter
        or body
        or encoding != "utf-8"
        or cookies
        or flags
        or cb_kwargs
        or headers is None
        or len(headers) != 1
    ):
        return None
    referers = dict.get(headers, b"Referer")
    if referers is None or len(referers) != 1:
        return None
    callback = request.callback
    errback = request.errback
    try:
        callbacks = method_names[
            (getattr(callback, "__func__", callback), getattr(errback, "__func__", errback))
        ]
    except KeyError:
        callbacks = callback_pair_json(callback, errback, spider, method_names)
    except TypeError:  # an unhashable callable
        return None
    if callbacks is None:
        return None
    cdef str meta_json = None
    if meta:
        if not _plain_json(meta, 0):
            return None  # (`inf`, a tuple...: the typed form)
        try:
            meta_json = orjson.dumps(meta).decode()
        except TypeError:
            return None
    if not (<str>url).isascii():
        return None
    cdef str referer = _json_ascii((<bytes>referers[0]).decode("latin-1"))
    priority = request.priority
    cdef str text
    if priority:
        text = f'{{"u":{_json_ascii(url)},"p":{int(priority)}{callbacks},"h":{{"Referer":[{referer}]}}'
    else:
        text = f'{{"u":{_json_ascii(url)}{callbacks},"h":{{"Referer":[{referer}]}}'
    if meta_json is None:
        return text + "}"
    return f'{text},"m":{meta_json}}}'


cdef class LinkText:
    """`scheduler.request_to_json(request, spider, method_names)` as one callable of the
    request (what the store renders a queued link with): `link_json`, or `other` (the
    scheduler's `_request_json`) for a request of any other shape."""

    cdef object spider, callback_pair_json, other
    cdef dict method_names

    def __init__(self, spider, dict method_names, callback_pair_json, other):
        self.spider = spider
        self.method_names = method_names
        self.callback_pair_json = callback_pair_json
        self.other = other

    def __call__(self, request):
        text = link_json(request, self.spider, self.method_names, self.callback_pair_json)
        if text is None:
            return self.other(request, self.spider, self.method_names)
        return text


# -- a page's held links as the store's columns -------------------------------------------------


def link_columns(list held, budget_key, dict sites_by_origin, fingerprint_key_of):
    """`scheduler._link_columns`: (keys, priorities, budgets, sites) of the held links
    (request, recent-set key, counts against the budgets)."""
    cdef list keys = [], priorities = [], budgets = [], sites = []
    cdef str url, origin
    cdef Py_ssize_t separator, end
    for request, recent_key, budget in held:
        # (a subclass may serve its URL otherwise: its property then)
        url = request._url if _READ_SLOTS and type(request) is Request else request.url
        separator = url.find("://")
        if 0 < separator <= 5:
            # (budget_key reads the host from this part alone: cached by it)
            end = url.find("/", separator + 3)
            origin = url if end < 0 else url[:end]
            site = sites_by_origin.get(origin)
            if site is None:
                if len(sites_by_origin) >= 65536:
                    sites_by_origin.clear()
                site = sites_by_origin[origin] = budget_key(url)
        else:
            site = budget_key(url)
        keys.append(fingerprint_key_of(request) if recent_key is None else _link_key(recent_key))
        priorities.append(request.priority)
        budgets.append(site if budget else None)
        sites.append(site)
    return keys, priorities, budgets, sites


# -- the recently seen links --------------------------------------------------------------------


cdef class RecentlySeen:
    """`scheduler.RecentlySeen` (see there), compiled: `key` and `met` are called for
    every link the spider yields, most of which a site's menu repeats."""

    cdef bint _enabled
    cdef Py_ssize_t _capacity
    cdef set _newer, _older
    cdef object _seen_key

    def __init__(self, bint enabled, Py_ssize_t capacity=16384, *, seen_key):
        self._enabled = enabled
        self._capacity = capacity
        self._newer = set()
        self._older = set()
        #: `corpus_crawler.traps.seen_key`, for a URL with a fragment, ';' or '?'
        self._seen_key = seen_key

    cpdef str key(self, request):
        """The key `request` is remembered by, or None if it cannot take part."""
        if not self._enabled:
            return None
        if _READ_SLOTS and type(request) is Request:
            body, meta, url = request._body, request._meta, request._url
        else:
            body, meta, url = request.body, request.meta, request.url
        if request.method != "GET" or body:
            return None
        if not meta or not (<dict>meta).get("verbatim_url"):
            return None
        if "#" in url or ";" in url or "?" in url:
            return self._seen_key(url)
        return url  # (what seen_key returns for it)

    def __contains__(self, str key):
        if key in self._newer:
            return True
        if key in self._older:
            self.add(key)
            return True
        return False

    cpdef bint met(self, str key):
        """Whether `key` was met before (`in`); it is remembered from now on either way."""
        if key in self._newer:
            return True
        cdef bint known = key in self._older
        self.add(key)
        return known

    cpdef add(self, str key):
        self._newer.add(key)
        if len(self._newer) >= self._capacity:
            self._older = self._newer
            self._newer = set()

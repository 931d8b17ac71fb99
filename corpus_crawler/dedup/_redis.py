"""The dedup stores of a distributed crawl, in the campaign's Redis: `RedisDeduplicator`.

The same stages and verdicts as `Deduplicator` (exact digest -> near-duplicate ->
seen paragraphs -> paragraph language; the paragraph decisions are the same pure
`judge_paragraphs`), with every store shared by all the crawl's processes:

* ``dd:exact`` (hash: digest -> document id), ``dd:name`` (id -> URL),
  ``dd:owner`` (id -> the worker that kept it), ``dd:seq`` (the last id);
* ``dd:sig`` (id -> MinHash signature, ``array("I")`` bytes) and ``dd:band``
  (LSH band key -> ids, comma-separated): the bands of `band_keys`, the same as
  the SQLite index's, candidates verified against their signatures;
* ``dd:ng:<chunk>``: the paragraph n-gram Bloom filter as bitmaps of 2**20 bits
  each (the same positions as `NgramSet`'s: k = 3, Kirsch-Mitzenmacher), so Redis
  allocates it as it fills instead of all at once.

**One verdict at a time over all processes.** A document is looked up in one Lua
script (it returns what the stages need: the exact match, the band candidates
and their signatures, which n-grams were seen, and a digest of that state; a
document with an exact or a verified near match is not looked up in the n-gram
filter, which is most of the work); the verdict is decided here; a kept document
is added by a second script that, if any document was added anywhere since the
lookup (``dd:seq`` moved), recomputes the state digest and refuses (the lookup
is redone) when it changed. So two copies judged at the same moment by two
processes never both stay: of each duplicate group exactly one document is kept
over all processes, as in a single-process crawl (which one depends on arrival
order, as there). A dropped document costs one round trip, a kept one two (plus
a retry on a conflict).

**A killed worker.** Additions are made at once, before the worker's output
commit, so that the other processes judge against them; with them the add script
keeps, per request (``dd:pend:<request>``), what to undo: the document's id,
digest and bands, and the n-gram filter bits it was the first to set. The
campaign's commit script drops that entry with the request's lease. A worker
killed in between never commits: when its requests return to the frontier (its
restart, or the lease timeout) the campaign store takes those documents back
out (`corpus_crawler.redis_state.FORGET_DOCUMENT_LUA`), and its restart cuts its
uncommitted output back. So a refetch is judged against what the committed files
hold, as if the killed fetch never happened: kept once whether or not its text
changed, and a later copy of the old text at another URL is not dropped as a
duplicate of a text no file holds. The limit of a Bloom filter: a bit cleared
this way may also be one of the three bits of an n-gram another document added
meanwhile (about 3 x the old text's bits / the filter's bits per such n-gram,
~2 x 10**-6 for a page of 500 n-grams in the default 256 MiB filter); that n-gram
is then not seen once more. Nor can an undo reach a document another process
judged against the killed fetch's text before the request returned: it keeps its
verdict (if the refetch's text changed, what it was dropped for is in no file).
A worker presumed dead but still running (fenced) may add a document after its
requests were returned: the refetch then finds its own entry, and the
`keep_same_name` rule (also the SQLite store's) keeps it again, as a replay,
with the paragraph verdicts of the first time (``dd:replay``).

"Why not datasketch's `MinHashLSH` with its Redis storage (`DatasketchNearIndex`)?"
Its query and insert are separate calls, so two processes can both miss and
both insert (a duplicate kept twice); it keeps the signatures it verifies
candidates with in the process that inserted them; and it cannot join the exact
set and the n-gram filter in one atomic step. The banding itself is a few lines.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ..model import DropReason
from ._config import DedupConfig, MarkAction
from ._fingerprint import DocumentFingerprint, fingerprint
from ._near import similarity
from ._stages import (
    DedupCounts,
    ParagraphVerdict,
    Verdict,
    _check_matches,
    judge_paragraphs,
    language_only,
    paragraphs_verdict,
)
from ._text import NgramHashes

__all__ = ["RedisDeduplicator", "RedisLink", "filter_positions"]

T = TypeVar("T")

#: Bits per Redis key of the n-gram filter (128 KiB strings).
CHUNK_BITS_LOG2 = 20
#: Hash functions of the n-gram filter (`NgramSet`'s default).
HASH_COUNT = 3


class RedisLink(Protocol):
    """What the stores need of the campaign's Redis (`RedisCampaignStore` is one)."""

    @property
    def client(self) -> Any: ...
    @property
    def key_prefix(self) -> str: ...
    @property
    def worker(self) -> str: ...
    def retrying(self, call: Callable[[], T]) -> T: ...


def filter_positions(
    hashes: NgramHashes, bits: int, hash_count: int = HASH_COUNT
) -> npt.NDArray[np.uint32]:
    """Per n-gram, its `hash_count` filter bits as (chunk, offset) pairs: uint32 array
    of shape (n-grams, hash_count, 2), n-gram major. The positions are `NgramSet`'s."""
    low = hashes
    step = (hashes >> np.uint64(32)) | np.uint64(1)
    rounds = np.arange(hash_count, dtype=np.uint64)[None, :]
    positions = (low[:, None] + rounds * step[:, None]) & np.uint64(bits - 1)
    chunk = positions >> np.uint64(CHUNK_BITS_LOG2)
    offset = positions & np.uint64((1 << CHUNK_BITS_LOG2) - 1)
    return np.stack([chunk, offset], axis=-1).astype("<u4")


# -- Lua ------------------------------------------------------------------------------------
# ARGV[1] is the campaign's key prefix; then digest ('' for none), hash count, the
# n-gram positions (packed little-endian uint32 chunk/offset pairs), the signature ('' for
# none), the near threshold, band count, band keys. The state digest covers everything a
# verdict depends on.

_STATE = """
local ns = ARGV[1]
local digest, hash_count, packed = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local signature, threshold = ARGV[5], tonumber(ARGV[6])
local band_count = tonumber(ARGV[7])
local pairs_count = #packed / 8
local ngrams = pairs_count / hash_count
-- The share of equal MinHash values, as `similarity` computes it (the same doubles).
local function similar(stored)
  if #stored ~= #signature then return false end
  local equal = 0
  for at = 1, #signature, 4 do
    if string.sub(stored, at, at + 3) == string.sub(signature, at, at + 3) then
      equal = equal + 1
    end
  end
  return equal / (#signature / 4) >= threshold
end
-- What a verdict depends on: the exact match, the band candidates, the n-grams seen.
-- A document with an exact match or a verified near match is dropped (or replayed) on
-- those alone: its n-gram bits are not read (most of the work, for a duplicate).
local function current_state()
  local exact = false
  if digest ~= '' then exact = redis.call('HGET', ns .. 'dd:exact', digest) end
  local candidates = {}
  local listed = {}
  for b = 1, band_count do
    local docs = redis.call('HGET', ns .. 'dd:band', ARGV[7 + b])
    if docs then
      for doc in string.gmatch(docs, '[^,]+') do
        if not listed[doc] then
          listed[doc] = true
          table.insert(candidates, doc)
        end
      end
    end
  end
  table.sort(candidates, function(a, b) return tonumber(a) < tonumber(b) end)
  local matched = exact and true or false
  if not matched and signature ~= '' then
    for _, doc in ipairs(candidates) do
      if similar(redis.call('HGET', ns .. 'dd:sig', doc) or '') then
        matched = true
        break
      end
    end
  end
  local seen = {}
  if not matched then
    local at = 1
    for n = 1, ngrams do
      local all = '1'
      for _ = 1, hash_count do
        if all == '1' then
          local chunk, offset = struct.unpack('<I4I4', packed, at)
          if redis.call('GETBIT', ns .. 'dd:ng:' .. chunk, offset) == 0 then all = '0' end
        end
        at = at + 8
      end
      seen[n] = all
    end
  end
  local seen_text = table.concat(seen)
  local state = (exact or '') .. '|' .. table.concat(candidates, ',') .. '|' .. seen_text
  return exact, candidates, seen_text, redis.sha1hex(state)
end
-- documents added so far (by any process): while it stands still, so does every state
local function additions()
  return redis.call('GET', ns .. 'dd:seq') or '0'
end
"""

# ARGV after the bands: the request's frontier id ('' for none).
# -> {token, exact id or '', exact name or '', seen ('0'/'1' per n-gram), the request's
#     replay entry or '', id, name, signature, id, name, signature...}
_LOOKUP = (
    _STATE
    + """
local request = ARGV[8 + band_count]
local exact, candidates, seen_text, digest_of_state = current_state()
local out = {additions() .. '|' .. digest_of_state, exact or '', '', seen_text, ''}
if exact then out[3] = redis.call('HGET', ns .. 'dd:name', exact) or '' end
if request ~= '' then out[5] = redis.call('HGET', ns .. 'dd:replay', request) or '' end
for _, doc in ipairs(candidates) do
  table.insert(out, doc)
  table.insert(out, redis.call('HGET', ns .. 'dd:name', doc) or '')
  table.insert(out, redis.call('HGET', ns .. 'dd:sig', doc) or '')
end
return out
"""
)

# ARGV after the bands: request id ('' for none), the lookup's token and seen n-grams,
# name, signature ('' for none), worker, call token. -> the new id; 0 when the state
# changed since the lookup (judge again). When no document was added anywhere since the
# lookup the state cannot have changed and is not read again. The replay entry
# (``dd:replay``: request id -> "doc|seen") lets a refetch of the request give the same
# paragraph verdicts; the campaign's commit script deletes it with the request's lease
# (`corpus_crawler.redis_state`), so only uncommitted ones stay.
_ADD = (
    _STATE
    + """
local request = ARGV[8 + band_count]
local i = 9 + band_count
local expected, seen_text, name = ARGV[i], ARGV[i + 1], ARGV[i + 2]
local worker, call = ARGV[i + 3], ARGV[i + 4]
local call_key = ns .. 'dd:call:' .. worker
local previous = redis.call('GET', call_key)
if previous then
  local bar = string.find(previous, '|', 1, true)
  -- a retry of an add whose answer was lost: the same id again
  if string.sub(previous, 1, bar - 1) == call then
    return tonumber(string.sub(previous, bar + 1))
  end
end
local bar = string.find(expected, '|', 1, true)
if string.sub(expected, 1, bar - 1) ~= additions() then
  local _, _, seen_now, digest_of_state = current_state()
  if digest_of_state ~= string.sub(expected, bar + 1) then return 0 end
  seen_text = seen_now
end
local doc = redis.call('INCR', ns .. 'dd:seq')
redis.call('HSET', ns .. 'dd:name', doc, name)
redis.call('HSET', ns .. 'dd:owner', doc, worker)
if digest ~= '' then redis.call('HSETNX', ns .. 'dd:exact', digest, doc) end
if signature ~= '' then
  redis.call('HSET', ns .. 'dd:sig', doc, signature)
  for b = 1, band_count do
    local key = ARGV[7 + b]
    local docs = redis.call('HGET', ns .. 'dd:band', key)
    redis.call('HSET', ns .. 'dd:band', key, docs and (docs .. ',' .. doc) or tostring(doc))
  end
end
-- the n-grams seen before have every bit set already
local at = 1
local first_set = {}
for n = 1, ngrams do
  if string.byte(seen_text, n) ~= 49 then
    for _ = 1, hash_count do
      local chunk, offset = struct.unpack('<I4I4', packed, at)
      if redis.call('SETBIT', ns .. 'dd:ng:' .. chunk, offset, 1) == 0 then
        table.insert(first_set, string.sub(packed, at, at + 7))
      end
      at = at + 8
    end
  else
    at = at + 8 * hash_count
  end
end
if request ~= '' then
  redis.call('HSET', ns .. 'dd:replay', request, doc .. '|' .. seen_text)
  -- what the campaign store undoes if the request's fetch never reaches a commit
  local bands = {}
  if signature ~= '' then
    for b = 1, band_count do table.insert(bands, ARGV[7 + b]) end
  end
  redis.call('HSET', ns .. 'dd:pend:' .. request, 'doc', doc, 'digest', digest,
    'bands', table.concat(bands, ','), 'bits', table.concat(first_set))
end
redis.call('SET', call_key, call .. '|' .. doc, 'EX', 3600)
return doc
"""
)


class RedisDeduplicator:
    """`Deduplicator`'s interface on the campaign's Redis; one instance per process,
    one thread. Nothing to commit or close on the Redis side: additions are made at once."""

    def __init__(
        self, config: DedupConfig, link: RedisLink, *, keep_same_name: bool = True
    ) -> None:
        self.config = config
        self.keep_same_name = keep_same_name
        self.counts = DedupCounts()
        self._link = link
        self._ns = link.key_prefix
        self._lookup = link.client.register_script(_LOOKUP)
        self._add = link.client.register_script(_ADD)
        self._bits = config.paragraph_filter_bits
        #: Redis calls made (`round_trips` / documents: the cost per page).
        self.round_trips = 0
        #: Kept documents judged again because another process added something their
        #: verdict depends on between the lookup and the add.
        self.conflicts = 0
        self._ngrams_added = 0

    # -- the stages --------------------------------------------------------------------

    def check(self, name: str, paragraphs: list[str], language: str | None = None) -> Verdict:
        return self.check_fingerprint(name, fingerprint(paragraphs, language, self.config))

    def check_fingerprint(
        self, name: str, print_: DocumentFingerprint, *, request: int | None = None
    ) -> Verdict:
        """`Deduplicator.check_fingerprint`; `request`: the campaign's frontier id of the
        page (a refetch of it after a killed worker then gets its first verdict again)."""
        config = self.config
        _check_matches(print_, config)
        self.counts.documents += 1
        self.counts.paragraphs += print_.paragraph_count
        digest = print_.digest if config.exact and print_.digest is not None else b""
        use_near = config.near_documents and print_.signature is not None
        keys = [str(key) for key in print_.band_keys or ()] if use_near else []
        signature = print_.signature if use_near and print_.signature is not None else b""
        hashes = print_.hashes() if config.paragraphs is not MarkAction.OFF else None
        packed = (
            filter_positions(hashes, self._bits).tobytes()
            if hashes is not None and len(hashes)
            else b""
        )
        state = [
            self._ns, digest, HASH_COUNT, packed, signature, repr(config.near_threshold),
            len(keys), *keys,
        ]  # fmt: skip
        row = "" if request is None else str(request)
        call = uuid.uuid4().hex
        while True:
            reply = self._call(functools.partial(self._lookup, args=[*state, row]))
            verdict, fates = self._judge(name, print_, reply, hashes)
            if verdict is not None:
                return verdict
            # kept: add it, unless the state it was judged on changed meanwhile
            add = [*state, row, reply[0], reply[3], name, self._link.worker, call]
            if int(self._call(functools.partial(self._add, args=add))) > 0:
                break
            self.conflicts += 1
        return self._kept(fates, hashes)

    def _call(self, call: Callable[[], T]) -> T:
        self.round_trips += 1
        return self._link.retrying(call)

    def _judge(
        self,
        name: str,
        print_: DocumentFingerprint,
        reply: list[bytes],
        hashes: NgramHashes | None,
    ) -> tuple[Verdict | None, tuple[ParagraphVerdict, ...]]:
        """The verdict from a lookup's answer (None: the document is to be kept) and
        its paragraphs' fates."""
        config, counts = self.config, self.counts
        if reply[1]:
            original = reply[2].decode("utf-8")
            if self.keep_same_name and original == name:
                # the same text kept before under this URL: a page fetched again after
                # its worker was killed before its output commit
                return self._replayed(print_, reply[1], reply[4], hashes), ()
            counts.exact += 1
            return Verdict(DropReason.DUPLICATE, f"same text as {original}", original), ()
        signature = print_.signature_values()
        if signature is not None:
            for index in range(5, len(reply), 3):
                stored = np.frombuffer(reply[index + 2], dtype=np.uint32)
                if len(stored) != len(signature):
                    continue  # written with other settings: cannot match
                if similarity(signature, stored.tolist()) >= config.near_threshold:
                    original = reply[index + 1].decode("utf-8")
                    if self.keep_same_name and original == name:
                        # itself again with a small change (a date, a counter)
                        return self._replayed(print_, reply[index], reply[4], hashes), ()
                    counts.near += 1
                    verdict = Verdict(DropReason.NEAR_DUPLICATE, f"similar to {original}", original)
                    return verdict, ()
        seen_before = None
        if hashes is not None:
            seen_before = np.frombuffer(reply[3], dtype=np.uint8) == ord("1")
            if len(seen_before) != len(hashes):
                # the script skips the bits only for a match this code finds too
                raise RuntimeError(
                    f"dedup: Redis judged {name} a duplicate and this process did not:"
                    " the crawlers of one campaign must run the same corpus_crawler version"
                )
        fates, seen, total, _ = judge_paragraphs(print_, config, seen_before)
        return paragraphs_verdict(fates, seen, total, config, counts), fates

    def _kept(self, fates: tuple[ParagraphVerdict, ...], hashes: NgramHashes | None) -> Verdict:
        if hashes is not None:
            self._ngrams_added += len(np.unique(hashes))
        self.counts.count_kept(fates)
        return Verdict(None, "", None, fates)

    def _replayed(
        self, print_: DocumentFingerprint, doc: bytes, entry: bytes, hashes: NgramHashes | None
    ) -> Verdict:
        """Kept again as itself. With the request's replay entry for that document, its
        paragraphs get the verdicts of the first time (the filter holds their own n-grams
        now); else only their languages are judged, as `Deduplicator` does."""
        self.counts.replayed += 1
        first, _, seen = entry.partition(b"|")
        if first == doc and hashes is not None and len(seen) == len(hashes):
            seen_before = np.frombuffer(seen, dtype=np.uint8) == ord("1")
            fates, _, _, _ = judge_paragraphs(print_, self.config, seen_before)
        else:
            fates = language_only(print_, self.config)
        if fates and all(p.removed for p in fates):
            self.counts.emptied += 1
            return Verdict(DropReason.WRONG_LANGUAGE, "every paragraph in another language")
        self.counts.kept += 1
        return Verdict(None, "", None, fates)

    # -- bookkeeping -------------------------------------------------------------------

    @property
    def stored_documents(self) -> int:
        return int(self._call(lambda: self._link.client.hlen(self._ns + "dd:name")))

    def filter_false_positive_rate(self) -> float | None:
        """The n-gram filter's false-positive rate counting this process's additions
        only (a lower bound: the other processes add to the same filter)."""
        if self.config.paragraphs is MarkAction.OFF:
            return None
        from ._ngramset import false_positive_rate

        return false_positive_rate(self._bits, HASH_COUNT, self._ngrams_added)

    def commit(self) -> None:
        """Nothing to do: additions are made at once (see the module docstring)."""

    def close(self) -> None:
        """Nothing to do: the campaign store owns the connection."""

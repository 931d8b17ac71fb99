"""The CPU-heavy half of the dedup stages, as plain data: a document's fingerprint.

`fingerprint` reads a document's paragraph texts once and computes everything
the stages look up in their stores: the exact digest, the MinHash signature,
the paragraph n-gram hashes and each paragraph's language difference. It needs
no store, so a crawl runs it in its extraction workers (``pipelines/worker.py``)
and only the lookups and inserts (`Deduplicator.check_fingerprint`) run in the
crawl process; measured with ``benchmarks/dedup_speed.py`` this is most of the
stages' CPU time.

A fingerprint pickles small: bytes for the digest, the signature and the
n-gram hashes, tuples of numbers for the rest.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..paralang import foreign_language
from ._config import DedupConfig, MarkAction
from ._near import band_keys, minhash
from ._text import NgramHashes, document_digest, document_ngram_hashes, words

__all__ = ["DocumentFingerprint", "fingerprint"]


@dataclass(frozen=True, slots=True)
class DocumentFingerprint:
    """What the dedup stages need of one document (its paragraphs in order), no text."""

    #: Paragraphs fingerprinted (the stages judge exactly these, in this order).
    paragraph_count: int
    #: Words of each paragraph (`words`).
    word_counts: tuple[int, ...]
    #: `document_digest` (exact stage on), else None.
    digest: bytes | None = None
    #: MinHash signature as ``array("I")`` bytes (near stage on, some words), else None ...
    signature: bytes | None = None
    #: ... and its LSH band keys (`SqliteNearIndex`'s).
    band_keys: tuple[int, ...] | None = None
    #: Paragraph n-gram hashes as uint64 bytes (paragraph stage on), else None ...
    ngram_hashes: bytes | None = None
    #: ... and paragraph i's hashes are ``[ngram_offsets[i]:ngram_offsets[i + 1]]``.
    ngram_offsets: tuple[int, ...] = ()
    #: Per paragraph, SpiderLing-style ``langdiff``: the identifier's confidence that it
    #: is in another language than the document (0.0: the same language); None where not
    #: judged (too short, no document language, or the language stage off).
    lang_diffs: tuple[float | None, ...] = ()
    #: Per paragraph, the other language (when its confidence reached the threshold).
    foreign_languages: tuple[str | None, ...] = ()

    def signature_values(self) -> list[int] | None:
        if self.signature is None:
            return None
        values = array("I")
        values.frombytes(self.signature)
        return values.tolist()

    def hashes(self) -> NgramHashes | None:
        if self.ngram_hashes is None:
            return None
        return np.frombuffer(self.ngram_hashes, dtype=np.uint64)


def fingerprint(
    paragraphs: Sequence[str], language: str | None, config: DedupConfig
) -> DocumentFingerprint:
    """The fingerprint of a document given as its paragraphs' texts (pure; no store)."""
    paragraph_words = [words(text) for text in paragraphs]
    digest = document_digest(paragraph_words) if config.exact else None
    signature: bytes | None = None
    keys: tuple[int, ...] | None = None
    if config.near_documents:
        all_words = [w for ws in paragraph_words for w in ws]
        if all_words:
            values = minhash(all_words, config.num_perm, config.shingle_size)
            signature = array("I", values).tobytes()
            keys = tuple(band_keys(values, config.near_threshold, config.num_perm))
    hashes: bytes | None = None
    offsets: tuple[int, ...] = ()
    if config.paragraphs is not MarkAction.OFF:
        ngram_hashes, ngram_offsets = document_ngram_hashes(paragraph_words, config.paragraph_ngram)
        hashes, offsets = ngram_hashes.astype(np.uint64).tobytes(), tuple(ngram_offsets)
    lang_diffs: list[float | None] = []
    foreign: list[str | None] = []
    if config.paragraph_language is not MarkAction.OFF:
        for text, tokens in zip(paragraphs, paragraph_words, strict=True):
            diff, other = _lang_diff(text, len(tokens), language, config)
            lang_diffs.append(diff)
            foreign.append(other)
    return DocumentFingerprint(
        paragraph_count=len(paragraphs),
        word_counts=tuple(len(tokens) for tokens in paragraph_words),
        digest=digest,
        signature=signature,
        band_keys=keys,
        ngram_hashes=hashes,
        ngram_offsets=offsets,
        lang_diffs=tuple(lang_diffs),
        foreign_languages=tuple(foreign),
    )


def _lang_diff(
    text: str, word_count: int, language: str | None, config: DedupConfig
) -> tuple[float | None, str | None]:
    """(langdiff, the other language if it counts as foreign) of one paragraph."""
    if language is None or word_count < config.paragraph_language_min_words:
        return None, None
    # confidence 0 here: any other language is reported with the identifier's
    # confidence, which is the paragraph's langdiff; the threshold decides foreign
    other = foreign_language(
        text,
        language,
        word_count=word_count,
        min_words=config.paragraph_language_min_words,
        min_confidence=0.0,
    )
    if other is None:
        return 0.0, None
    if other.confidence >= config.paragraph_language_min_confidence:
        return other.confidence, other.language
    return other.confidence, None

"""Duplicates out of the corpus: exact and near-duplicate documents, seen paragraphs,
paragraphs in another language (issue 9).

One entry point, `Deduplicator`, used by the crawl (``pipelines/dedup.py``) and
by ``corpus-crawler dedup`` over existing corpus files alike. No Scrapy here.

`DedupConfig` and `MarkAction` import nothing heavy (the profile loader uses
them); the stages (numpy, rensa, SQLite) load on first use of the other names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._config import DedupConfig, MarkAction

if TYPE_CHECKING:
    from ._fingerprint import DocumentFingerprint, fingerprint
    from ._near import (
        DatasketchNearIndex,
        NearIndex,
        SqliteNearIndex,
        band_keys,
        lsh_bands,
        minhash,
    )
    from ._ngramset import NgramSet, false_positive_rate
    from ._redis import RedisDeduplicator, RedisLink
    from ._stages import (
        DedupCounts,
        Deduplicator,
        ParagraphFate,
        ParagraphVerdict,
        SharedDatabase,
        Verdict,
    )
    from ._text import document_digest, ngram_hashes, words

_LAZY = {
    "DocumentFingerprint": "._fingerprint",
    "fingerprint": "._fingerprint",
    "SharedDatabase": "._stages",
    "DatasketchNearIndex": "._near",
    "NearIndex": "._near",
    "SqliteNearIndex": "._near",
    "band_keys": "._near",
    "lsh_bands": "._near",
    "minhash": "._near",
    "NgramSet": "._ngramset",
    "false_positive_rate": "._ngramset",
    "Deduplicator": "._stages",
    "RedisDeduplicator": "._redis",
    "RedisLink": "._redis",
    "DedupCounts": "._stages",
    "ParagraphFate": "._stages",
    "ParagraphVerdict": "._stages",
    "Verdict": "._stages",
    "document_digest": "._text",
    "ngram_hashes": "._text",
    "words": "._text",
}

__all__ = [
    "DatasketchNearIndex",
    "DedupConfig",
    "DedupCounts",
    "Deduplicator",
    "DocumentFingerprint",
    "MarkAction",
    "NearIndex",
    "NgramSet",
    "ParagraphFate",
    "ParagraphVerdict",
    "RedisDeduplicator",
    "RedisLink",
    "SharedDatabase",
    "SqliteNearIndex",
    "Verdict",
    "band_keys",
    "document_digest",
    "false_positive_rate",
    "fingerprint",
    "lsh_bands",
    "minhash",
    "ngram_hashes",
    "words",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)

"""The dedup stages' settings: one frozen value, checked once."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..config import ConfigError

__all__ = ["MAX_NGRAM", "DedupConfig", "MarkAction"]

#: The longest paragraph n-gram supported (`_text.ngram_hashes` has this many multipliers).
MAX_NGRAM = 12


class MarkAction(str, enum.Enum):
    """What happens to a paragraph a stage rejects."""

    #: The paragraph leaves the document.
    REMOVE = "remove"
    #: The paragraph stays, with an attribute saying why it would have gone.
    MARK = "mark"
    #: The stage does not run.
    OFF = "off"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: MarkAction | str, key: str) -> MarkAction:
        if isinstance(value, MarkAction):
            return value
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(a.value for a in cls)
            raise ConfigError(f"{key}: unknown value {value!r}: use one of {names}") from None


@dataclass(frozen=True, slots=True)
class DedupConfig:
    """Which stages run and their thresholds (the profile's ``dedup:`` section)."""

    #: Drop a document whose normalised text was seen before.
    exact: bool = True
    #: Drop a document at least `near_threshold` similar to a kept one (MinHash + LSH).
    near_documents: bool = True
    #: Estimated Jaccard similarity of word shingles at which a document is a near-duplicate.
    near_threshold: float = 0.8
    #: Share of a document's paragraph n-grams seen before (in kept documents) from
    #: which it is a near-duplicate too: containment, which catches a full text
    #: arriving after a shortened copy (needs the paragraph stage).
    near_seen_share: float = 0.9
    #: MinHash permutations (signature length).
    num_perm: int = 128
    #: Words per shingle of the near-duplicate signature.
    shingle_size: int = 5
    #: Paragraphs whose word n-grams were mostly seen before: removed, marked or kept.
    paragraphs: MarkAction = MarkAction.REMOVE
    #: Words per n-gram of the paragraph stage (onion's default is 7).
    paragraph_ngram: int = 7
    #: Share of a paragraph's n-grams seen before at which it is a duplicate.
    paragraph_threshold: float = 0.5
    #: Size of the paragraph stage's n-gram filter in MiB (fixed; see `NgramSet`).
    paragraph_filter_mib: int = 256
    #: Paragraphs in another language than their document: removed, marked or kept.
    paragraph_language: MarkAction = MarkAction.REMOVE
    #: Words a paragraph needs before its language is judged (short ones are unreliable).
    paragraph_language_min_words: int = 12
    #: Confidence the paragraph's other language needs before the paragraph goes.
    paragraph_language_min_confidence: float = 0.2
    #: Documents between two commits of the stores (1: every document, crash-safe).
    commit_every: int = 1

    def __post_init__(self) -> None:
        for key in ("paragraphs", "paragraph_language"):
            object.__setattr__(self, key, MarkAction.parse(getattr(self, key), f"dedup.{key}"))
        for key in ("near_threshold", "near_seen_share", "paragraph_threshold"):
            value = getattr(self, key)
            if not 0.0 < value <= 1.0:
                raise ConfigError(f"dedup.{key}: must be in (0, 1], got {value}")
        if not 0.0 <= self.paragraph_language_min_confidence <= 1.0:
            raise ConfigError(
                "dedup.paragraph_language_min_confidence: must be in [0, 1],"
                f" got {self.paragraph_language_min_confidence}"
            )
        if not 16 <= self.num_perm <= 1024:
            raise ConfigError(f"dedup.num_perm: must be 16..1024, got {self.num_perm}")
        if not 1 <= self.shingle_size <= 20:
            raise ConfigError(f"dedup.shingle_size: must be 1..20, got {self.shingle_size}")
        if not 1 <= self.paragraph_ngram <= MAX_NGRAM:
            raise ConfigError(
                f"dedup.paragraph_ngram: must be 1..{MAX_NGRAM}, got {self.paragraph_ngram}"
            )
        mib = self.paragraph_filter_mib
        if mib < 1 or mib & (mib - 1):
            raise ConfigError(
                f"dedup.paragraph_filter_mib: must be a power of two >= 1 (e.g. 256), got {mib}"
            )
        if self.paragraph_language_min_words < 1:
            raise ConfigError("dedup.paragraph_language_min_words: must be >= 1")
        if self.commit_every < 1:
            raise ConfigError(f"dedup.commit_every: must be >= 1, got {self.commit_every}")

    @property
    def paragraph_filter_bits(self) -> int:
        return self.paragraph_filter_mib * 8 * 1024 * 1024

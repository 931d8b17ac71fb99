"""Kimatu's weights and thresholds, read strictly from configs/extractors/kimatu.yaml.

The seed (003, Saralegi and Leturia) fixes the relevance formula's weights and
the 0.32, 0.1 and 0.5 thresholds; it leaves open its "manual constants" (the
punctuation and link normalisers, the cap on the highest average element
length) and what counts as "near". Those were chosen by measuring on the gold
sets; the measurement is written next to each value in the YAML file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .._configfiles import extractor_config_path, read_yaml
from ..config import ConfigError
from ..option_checks import built, check_keys, check_switches, number, whole_number

#: Attributes that describe how an element looks (seed 003, 3.2: "all attributes
#: and tag names related to the aspect –or class– of the text").
_DEFAULT_ASPECT_ATTRIBUTES = (
    "class",
    "style",
    "align",
    "valign",
    "face",
    "size",
    "color",
    "bgcolor",
)


@dataclass(frozen=True, slots=True)
class KimatuOptions:
    """Every constant of the Kimatu extractor; defaults equal configs/extractors/kimatu.yaml."""

    # --- block detection (seed 3.2)
    aspect_attributes: tuple[str, ...] = _DEFAULT_ASPECT_ATTRIBUTES
    #: How many enclosing elements' tag and aspect attributes join an element's own
    #: (CSS cascades: `#sidebar p` and `#content p` look different).
    aspect_ancestor_levels: int = 2
    #: Inline formatting that wraps all of an element's words (`<p><b>`) is part of its aspect.
    aspect_inline: bool = True
    #: Two elements of one aspect are in the same block when at most this many
    #: other text elements lie between them.
    block_gap: int = 20

    # --- the four ratios and the relevance (seed 3.3)
    length_weight: float = 0.5
    average_length_weight: float = 0.5
    #: Characters; the highest average element length is taken as at most this.
    average_length_cap: int = 300
    #: Phrase-boundary punctuation signs per word that give a punctuation ratio of 1.
    punctuation_per_word: float = 0.08
    #: Link tags per element that give a link density ratio of 1.
    links_per_element: float = 3.0
    #: Link tags per word that give a link density ratio of 1; the ratio is the
    #: smaller of the two, so a long paragraph with many links (Wikipedia's) is
    #: not taken for a link list (issue 13). 0 turns the per-word bound off.
    links_per_word: float = 0.15

    # --- the steps (seed 3.4)
    sure_candidate_relevance: float = 0.32
    #: Function blocks: an aspect whose elements average at most this many characters ...
    function_max_average_length: int = 60
    #: ... with at least this many elements ...
    function_min_elements: int = 2
    #: ... and where at least this share of the words are common (in half the elements).
    function_shared_words: float = 0.7
    #: Quotes: a block needs this many words to be compared with the sure blocks before it.
    quote_min_words: int = 10
    #: Share of a block's words that must form a common subsequence with a sure block.
    quote_lcs_ratio: float = 0.8
    #: Share of an aspect's compared blocks that must be quotes for all its candidates to go.
    quote_class_share: float = 0.5
    #: LCS inputs are cut to this many words (quote) and 10x as many (reference).
    quote_max_words: int = 400
    #: Total word comparisons allowed for quote detection on one page.
    quote_budget: int = 2_000_000
    #: Dispersed blocks: minimum relevance relative to the best sure block of the same
    #: aspect ("a minimum ratio with respect to the reference blocks", > 0.1).
    dispersed_min_ratio: float = 0.1
    #: Text elements allowed between a dispersed block and its reference block.
    dispersed_max_distance: int = 50
    #: A candidate whose distance to its nearest candidate (plus one) exceeds this
    #: factor times the geometric mean of those distances (plus one) is pruned ...
    prune_far_factor: float = 4.0
    #: ... unless its relevance exceeds this.
    prune_keep_relevance: float = 0.5
    #: Near candidates: text elements allowed between a block and a candidate block.
    near_max_distance: int = 0
    #: ... and the minimum relevance such a block needs.
    near_min_relevance: float = -1.2

    # --- output tags (seed 3.4, last paragraph)
    #: An element this short (characters) without a final punctuation sign is a header.
    heading_max_length: int = 45

    def __post_init__(self) -> None:
        attributes = self.aspect_attributes
        if isinstance(attributes, str) or not all(isinstance(a, str) for a in attributes):
            raise ConfigError(
                f"aspect_attributes must be a list of attribute names, got {attributes!r}"
            )
        object.__setattr__(self, "aspect_attributes", tuple(a.lower() for a in attributes))
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.type == "int":
                whole_number(spec.name, value, at_least=0)
            elif spec.type == "float":
                object.__setattr__(self, spec.name, number(spec.name, value))
        check_switches(self)
        for name in ("punctuation_per_word", "links_per_element", "prune_far_factor"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be greater than 0, got {getattr(self, name)}")
        if self.links_per_word < 0:
            raise ConfigError(f"links_per_word must be >= 0 (0: off), got {self.links_per_word}")
        for name in ("function_shared_words", "quote_lcs_ratio", "quote_class_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        if self.average_length_cap < 1:
            raise ConfigError(
                f"average_length_cap must be at least 1 character, got {self.average_length_cap}"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> KimatuOptions:
        """Build from a YAML mapping; an unknown key names the closest known one."""
        check_keys(data, [spec.name for spec in fields(cls)], source)
        values = dict(data)
        if isinstance(values.get("aspect_attributes"), list):
            values["aspect_attributes"] = tuple(values["aspect_attributes"])
        return built(cls, values, source)

    def merged(self, overrides: Mapping[str, Any], source: str) -> KimatuOptions:
        """These options with `overrides` applied, checked as strictly as `from_mapping`."""
        values = {spec.name: getattr(self, spec.name) for spec in fields(self)}
        values.update(overrides)
        return KimatuOptions.from_mapping(values, source)


DEFAULT_KIMATU_OPTIONS = KimatuOptions()


def default_options_path() -> Path:
    return extractor_config_path("kimatu")


def load_kimatu_options(path: Path | None = None) -> KimatuOptions:
    """Options from `path` (default configs/extractors/kimatu.yaml); missing keys keep defaults."""
    path = default_options_path() if path is None else Path(path)
    data = read_yaml(path, "Kimatu options")
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{path} must hold a mapping of option names to values, got {type(data).__name__}"
        )
    return KimatuOptions.from_mapping(data, str(path))

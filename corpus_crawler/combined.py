"""The combined extractor (issue 4): jusText's blocks, with declutter's and Kimatu's
decisions as extra evidence in jusText's context-free stage.

One parse, three extractors: jusText segments and classifies the tree, declutter
runs on a copy (it deletes subtrees) and Kimatu on the tree itself. Their
paragraphs are cut differently, so each other extractor's decisions are mapped
onto jusText's blocks by aligning the three texts character by character
(whitespace left out, so `foo<section>bar` matches whether it was cut or not).
Each block's context-free class then moves up or down by the other two votes
and jusText's heading and context-sensitive passes run on the result.
configs/extractors/combined.yaml holds the measured steps. The language,
stoplist and thresholds are chosen by extract()'s own helpers, so jusText's
part classifies exactly as `extractor="justext"` does.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple

from lxml import etree

from . import classify as _classify
from ._configfiles import extractor_config_path, read_yaml
from .classify import classify_segments, revise
from .config import DEFAULT_CONFIG, ConfigError, ExtractConfig, JustextParams, Preset
from .container import preset_passes
from .declutter import DEFAULT_DECLUTTER_OPTIONS, DeclutterOptions, declutter
from .declutter import load_declutter_options as _load_declutter_options
from .elementmarks import HIDDEN
from .kimatu import DEFAULT_KIMATU_OPTIONS, KimatuOptions, kimatu
from .kimatu import load_kimatu_options as _load_kimatu_options
from .language_setup import choose_language, stoplist_and_params
from .model import Paragraph, ParagraphClass, reclassified
from .option_checks import built, check_keys, check_switches, class_steps
from .presets import container_options
from .segment import lead_elements, segment, stated_elements
from .wrappers import page_furniture

GOOD = ParagraphClass.GOOD
NEAR_GOOD = ParagraphClass.NEAR_GOOD
SHORT = ParagraphClass.SHORT
BAD = ParagraphClass.BAD

#: jusText's classes from worst to best: a vote moves a block along this scale.
CLASS_SCALE = (BAD, SHORT, NEAR_GOOD, GOOD)
_RANK = {cls: rank for rank, cls in enumerate(CLASS_SCALE)}

#: Characters of one stream looked up in the other to resynchronise after a
#: difference: the first long enough to be unique on a page, the shorter ones
#: for differences a few characters apart (Kimatu leaves out <math> inside a
#: sentence). Each is tried in a window before the window grows.
PROBE_CHARS = (24, 12, 6, 3)
#: The first resynchronisation window, in characters (it grows eightfold).
FIRST_WINDOW = 64

#: The declutter options the combined extractor changes from declutter's own
#: defaults (see combined.yaml for the measurement).
_DECLUTTER_CHANGES: Mapping[str, Any] = {"blessed_words": []}

_SHIFT_NAMES = ("both_keep", "both_drop", "kimatu_only", "declutter_only")


# --------------------------------------------------------------------------- options


def _combined_declutter_defaults() -> DeclutterOptions:
    return DEFAULT_DECLUTTER_OPTIONS.merged(_DECLUTTER_CHANGES, "combined defaults")


@dataclass(frozen=True, slots=True)
class CombinedOptions:
    """How the other two extractors' votes move a jusText block's class.

    A shift is a number of steps on BAD < SHORT < NEAR_GOOD < GOOD (clipped at
    the ends). A block "kept" by an extractor has at least `keep_share` of its
    aligned characters in that extractor's GOOD paragraphs.
    """

    #: Declutter and Kimatu both keep the block.
    both_keep: int = 3
    #: Neither keeps it.
    both_drop: int = -2
    #: Only Kimatu keeps it.
    kimatu_only: int = 1
    #: Only declutter keeps it.
    declutter_only: int = 0
    keep_share: float = 0.5
    #: Whether votes may lift a block jusText's copyright rule made BAD.
    promote_copyright: bool = False
    #: A page the vote leaves without running text takes Kimatu's decisions.
    kimatu_fallback: bool = True
    #: With the `corpus` preset: whether its main-container shifts (inside,
    #: region) move the voted classes too. The votes already carry declutter's
    #: main-content subtree and Kimatu's blocks, and stacking the container on
    #: them drops CleanEval's lists and comments; its template evidence
    #: (ContainerOptions.template_shift) and its link limit for the container
    #: and region (container_link_density, region_link_density) apply either way.
    corpus_container_shifts: bool = False
    declutter: DeclutterOptions = field(default_factory=_combined_declutter_defaults)
    kimatu: KimatuOptions = DEFAULT_KIMATU_OPTIONS

    def __post_init__(self) -> None:
        for name in _SHIFT_NAMES:
            class_steps(name, getattr(self, name))
        keep = self.keep_share
        if isinstance(keep, bool) or not isinstance(keep, (int, float)) or not 0 < keep <= 1:
            raise ConfigError(f"keep_share must be a number in (0, 1], got {keep!r}")
        object.__setattr__(self, "keep_share", float(keep))
        check_switches(self)
        if not isinstance(self.declutter, DeclutterOptions):
            raise ConfigError("declutter must be DeclutterOptions: pass overrides to merged()")
        if not isinstance(self.kimatu, KimatuOptions):
            raise ConfigError("kimatu must be KimatuOptions: pass overrides to merged()")

    def merged(self, overrides: Mapping[str, Any], source: str) -> CombinedOptions:
        """These options with `overrides` applied; `declutter:` and `kimatu:` hold
        mappings of those extractors' own options."""
        if not isinstance(overrides, Mapping):
            raise ConfigError(
                f"{source}: expected a mapping of combined options, got {type(overrides).__name__}"
            )
        check_keys(overrides, [spec.name for spec in fields(self)], source)
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            if key == "declutter":
                changes[key] = self.declutter.merged(_mapping(value, key, source), source)
            elif key == "kimatu":
                changes[key] = self.kimatu.merged(_mapping(value, key, source), source)
            else:
                changes[key] = value
        return built(functools.partial(replace, self), changes, source)


def _mapping(value: object, key: str, source: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key} in {source} must map {key} option names to values,"
            f" e.g. `{key}: {{...}}`, got {value!r}"
        )
    return value


DEFAULT_COMBINED_OPTIONS = CombinedOptions()


def default_options_path() -> Path:
    """configs/extractors/combined.yaml (next to declutter.yaml and kimatu.yaml)."""
    return extractor_config_path("combined")


def load_combined_options(path: Path | str | None = None) -> CombinedOptions:
    """combined.yaml on top of declutter.yaml and kimatu.yaml (the shipped files by default)."""
    path = default_options_path() if path is None else Path(path)
    data = read_yaml(path, "combined options")
    base = CombinedOptions(declutter=_load_declutter_options(), kimatu=_load_kimatu_options())
    return base.merged(data, str(path))


@functools.lru_cache(maxsize=1)
def shipped_combined_options() -> CombinedOptions:
    """`load_combined_options()`, read once per process (the extractor asks on every page)."""
    return load_combined_options()


# --------------------------------------------------------------------------- alignment


class Run(NamedTuple):
    """`a[a_start : a_start + length] == b[b_start : b_start + length]`."""

    a_start: int
    b_start: int
    length: int


def squeeze(texts: Iterable[str]) -> tuple[str, list[int]]:
    """The texts without whitespace, concatenated, and where each one ends in it."""
    parts = ["".join(text.split()) for text in texts]
    ends = []
    total = 0
    for part in parts:
        total += len(part)
        ends.append(total)
    return "".join(parts), ends


def _common_prefix(a: str, i: int, b: str, j: int) -> int:
    """len of the common prefix of a[i:] and b[j:], by slices compared in C.

    Galloping then bisecting keeps a long run at O(length) characters compared,
    where comparing the whole rest at each run would be quadratic.
    """
    limit = min(len(a) - i, len(b) - j)
    equal = 0
    step = 64
    while equal < limit:
        upto = min(limit, equal + step)
        if a[i + equal : i + upto] != b[j + equal : j + upto]:
            differs = upto
            break
        equal = upto
        step *= 2
    else:
        return equal
    while differs - equal > 1:
        middle = (equal + differs) // 2
        if a[i + equal : i + middle] == b[j + equal : j + middle]:
            equal = middle
        else:
            differs = middle
    return equal


def matching_runs(a: str, b: str, *, budget: int | None = None) -> list[Run]:
    """Runs of text common to `a` and `b`, in order in both.

    The streams are the same page as cut by two extractors, so they differ only
    where one left text out (Kimatu skips <noscript>, declutter's paragraphs
    put a removed inline element after its parent's text): at a difference,
    whichever stream resumes sooner in the other is skipped ahead. `budget`
    bounds the characters searched while resynchronising (default eight times
    the input), so two unrelated texts cost linear time; what is left when it
    runs out stays unaligned.
    """
    if budget is None:
        budget = 8 * (len(a) + len(b)) + 4096
    runs: list[Run] = []
    i = j = 0
    len_a, len_b = len(a), len(b)
    while i < len_a and j < len_b and budget > 0:
        same = _common_prefix(a, i, b, j)
        if same:
            runs.append(Run(i, j, same))
            i += same
            j += same
            continue
        i, j, searched = _resync(a, i, b, j, max(budget // 2, PROBE_CHARS[0]))
        budget -= searched
    return runs


def _resync(a: str, i: int, b: str, j: int, limit: int) -> tuple[int, int, int]:
    """Where to go on after `a[i] != b[j]`, and how many characters were searched.

    The side whose next characters reappear sooner in the other skips ahead to
    them. The search window grows from a few characters up to `limit`, so a
    short difference costs little however long the rest of the page is.
    """
    after = PROBE_CHARS[1]
    if i + 1 < len(a) and a[i + 1 : i + 1 + after] == b[j + 1 : j + 1 + after]:
        # One character differs in both (a replaced symbol): step over it.
        return i + 1, j + 1, after
    searched = 0
    window = FIRST_WINDOW
    rest = max(len(a) - i, len(b) - j)
    while True:
        window = min(window, limit)
        for probe in PROBE_CHARS:
            in_a = a.find(b[j : j + probe], i + 1, i + 1 + window + probe)
            in_b = b.find(a[i : i + probe], j + 1, j + 1 + window + probe)
            searched += 2 * min(window + probe, rest)
            if in_b >= 0 and (in_a < 0 or in_b - j < in_a - i):
                return i, in_b, searched
            if in_a >= 0:
                return in_a, j, searched
        if window >= limit or window >= rest:
            # Nothing found ahead: step over the differing characters and try again.
            return i + 1, j + 1, searched
        window *= 8


class Evidence(NamedTuple):
    """What one other extractor said about one jusText block."""

    #: Characters of the block found in that extractor's text.
    aligned: int
    #: Of those, characters in its GOOD paragraphs.
    kept: int
    #: Index of its paragraph sharing the most characters with the block (-1: none).
    source: int

    @property
    def share(self) -> float | None:
        """Share of the aligned characters it keeps; None when it has none of the block."""
        return self.kept / self.aligned if self.aligned else None


def block_evidence(blocks: Sequence[str], other: Sequence[Paragraph]) -> list[Evidence]:
    """Map `other`'s paragraphs (and their classes) onto the `blocks` texts."""
    a, a_ends = squeeze(blocks)
    b, b_ends = squeeze(p.text for p in other)
    good = [p.final_class is GOOD for p in other]
    aligned = [0] * len(blocks)
    kept = [0] * len(blocks)
    overlap: dict[tuple[int, int], int] = {}
    block = para = 0
    for start_a, start_b, length in matching_runs(a, b):
        while length:
            while a_ends[block] <= start_a:
                block += 1
            while b_ends[para] <= start_b:
                para += 1
            step = min(length, a_ends[block] - start_a, b_ends[para] - start_b)
            aligned[block] += step
            if good[para]:
                kept[block] += step
            key = (block, para)
            overlap[key] = overlap.get(key, 0) + step
            start_a += step
            start_b += step
            length -= step
    best = [(-1, 0)] * len(blocks)
    for (block, para), chars in overlap.items():
        if chars > best[block][1]:
            best[block] = (para, chars)
    return [Evidence(aligned[k], kept[k], best[k][0]) for k in range(len(blocks))]


# --------------------------------------------------------------------------- voting


def keeps(evidence: Evidence, options: CombinedOptions) -> bool | None:
    """Whether the extractor keeps the block; None when it has none of its text."""
    share = evidence.share
    return None if share is None else share >= options.keep_share


def vote_shift(
    declutter_keeps: bool | None, kimatu_keeps: bool | None, options: CombinedOptions
) -> int:
    """Class steps for a block from the other two votes (no text of it seen by either: 0)."""
    if declutter_keeps is None and kimatu_keeps is None:
        return 0
    if declutter_keeps and kimatu_keeps:
        return options.both_keep
    if kimatu_keeps:
        return options.kimatu_only
    if declutter_keeps:
        return options.declutter_only
    return options.both_drop


def _copyright_bad(paragraph: Paragraph) -> bool:
    # The seed's copyright rule; "&copy" also covers the reference preset's form.
    text = paragraph.text
    return paragraph.cf_class is BAD and (_classify.COPYRIGHT_CHAR in text or "&copy" in text)


def shifted(cls: ParagraphClass, steps: int) -> ParagraphClass:
    return CLASS_SCALE[max(0, min(len(CLASS_SCALE) - 1, _RANK[cls] + steps))]


def _has_running_text(classes: Sequence[ParagraphClass], headings: Sequence[bool]) -> bool:
    # extract() drops a page whose only GOOD blocks are headings.
    return any(cls is GOOD and not heading for cls, heading in zip(classes, headings, strict=True))


def vote(
    justext: Sequence[Paragraph],
    decluttered: Sequence[Paragraph],
    kimatu_paragraphs: Sequence[Paragraph],
    params: JustextParams,
    options: CombinedOptions = DEFAULT_COMBINED_OPTIONS,
    *,
    reference: bool = False,
) -> tuple[Paragraph, ...]:
    """jusText's paragraphs reclassified with the other two extractors' votes.

    Each paragraph's `cf_class` is the voted context-free class and its
    `scores` hold the evidence: jusText's own classes, each extractor's kept
    share and aligned share of the block, declutter's DOM score and Kimatu's
    relevance for the paragraph that covers most of it, and the shift applied.
    """
    if not justext:
        return ()
    texts = [p.text for p in justext]
    from_declutter = block_evidence(texts, decluttered)
    from_kimatu = block_evidence(texts, kimatu_paragraphs)
    declutter_votes = [keeps(e, options) for e in from_declutter]
    kimatu_votes = [keeps(e, options) for e in from_kimatu]
    shifts = [vote_shift(d, k, options) for d, k in zip(declutter_votes, kimatu_votes, strict=True)]
    if not options.promote_copyright:
        shifts = [
            min(shift, 0) if _copyright_bad(p) else shift
            for p, shift in zip(justext, shifts, strict=True)
        ]
    cf_classes = [shifted(p.cf_class, s) for p, s in zip(justext, shifts, strict=True)]
    headings = [p.heading for p in justext]
    lengths = [p.length for p in justext]
    final = revise(cf_classes, headings, lengths, params, reference=reference)
    fallback = False
    if options.kimatu_fallback and not _has_running_text(final, headings):
        by_kimatu = [GOOD if keep else BAD for keep in kimatu_votes]
        if _has_running_text(by_kimatu, headings):
            final, fallback = by_kimatu, True
    paragraphs = []
    for index, paragraph in enumerate(justext):
        scores = _scores(
            paragraph, from_declutter[index], decluttered, from_kimatu[index], kimatu_paragraphs
        )
        scores["shift"] = float(shifts[index])
        scores["kimatu_fallback"] = 1.0 if fallback else 0.0
        paragraphs.append(reclassified(paragraph, cf_classes[index], final[index], scores))
    return tuple(paragraphs)


def _scores(
    paragraph: Paragraph,
    declutter_evidence: Evidence,
    decluttered: Sequence[Paragraph],
    kimatu_evidence: Evidence,
    kimatu_paragraphs: Sequence[Paragraph],
) -> dict[str, float]:
    length = len("".join(paragraph.text.split()))
    scores = {
        "justext_cf": float(_RANK[paragraph.cf_class]),
        "justext_final": float(_RANK[paragraph.final_class]),
    }
    for name, evidence, source_key, others in (
        ("declutter", declutter_evidence, "score", decluttered),
        ("kimatu", kimatu_evidence, "relevance", kimatu_paragraphs),
    ):
        scores[f"{name}_aligned"] = evidence.aligned / length if length else 0.0
        share = evidence.share
        if share is not None:
            scores[f"{name}_share"] = share
        if evidence.source >= 0:
            value = others[evidence.source].scores.get(source_key)
            if value is not None:
                scores[f"{name}_{source_key}"] = float(value)
    return scores


# --------------------------------------------------------------------------- entry point


def combined(
    root: etree._Element,
    config: ExtractConfig = DEFAULT_CONFIG,
    options: CombinedOptions = DEFAULT_COMBINED_OPTIONS,
) -> tuple[Paragraph, ...]:
    """Classify the blocks of a preprocessed tree by the three extractors' votes.

    The tree is changed (Kimatu runs on it last); jusText's language, stoplist
    and thresholds come from `config` as for `extractor="justext"`.
    """
    reference = config.preset is Preset.REFERENCE
    container = container_options(config.preset)
    segments = segment(
        root,
        reference=reference,
        marked=container is not None and container.uses_marks,
        stated=container is not None and container.uses_stated,
        page_links_only=container is not None and container.page_links_only,
        drop_hidden_inline=container is not None and container.drop_hidden_inline,
    )
    if container is not None and container.drop_hidden:
        segments = [s for s in segments if not s.marks & HIDDEN]
    if not segments:
        return ()
    language, _ = choose_language([s.text for s in segments], config)
    stoplist, params = stoplist_and_params(language, config)
    justext = classify_segments(segments, stoplist, params, reference=reference)
    decluttered = declutter(copy.deepcopy(root), options.declutter).paragraphs
    kimatu_paragraphs = kimatu(root, options.kimatu).paragraphs
    voted = vote(justext, decluttered, kimatu_paragraphs, params, options, reference=reference)
    if container is None:
        return voted
    # The corpus and article presets add the main-container evidence to the votes.
    # The furniture step stays either way (combined.yaml: corpus_container_shifts).
    if config.preset is Preset.CORPUS and not options.corpus_container_shifts:
        container = replace(container, inside_shift=0, region_shift=0, outside_shift=0)
    stated = stated_elements(segments) if container.uses_stated else None
    marks = page_furniture(segments, justext, container.unwrap_layouts)
    leads = lead_elements(segments) if container.standfirst_named else None
    return preset_passes(voted, params, container, marks, stated, leads)

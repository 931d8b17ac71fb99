"""Which language is a page in? The choice behind `--lang auto`.

Both methods get the texts of all blocks of a page, boilerplate included, and
look at a sample: the longest blocks first, at most MAX_BLOCK_CHARS of each,
MAX_SAMPLE_CHARS in all (menus and buttons are short blocks; one giant block of
code or of markup shown as text must not fill the sample alone).

- ``stopwords`` (the default): every stoplist of configs/languages scores the
  sample's lower-cased whitespace tokens it holds, a hit in an N-word list
  worth log(1e6 / N) (naive Bayes, see `_build_index`); one dict lookup per
  token. A page mostly written in a script without spaces and without a
  stoplist (Chinese, Japanese, Thai...) is named from its script.
- ``cld2``: Google's Compact Language Detector 2 through the `pycld2` package,
  whose model is compiled into its extension (nothing is downloaded).
- ``combined``: cld2 when it is sure of a language that has a stoplist, else
  whichever of the two is more confident.

Measured on the 245 gold pages (tests/data/gold.tar.xz; 244 have a language:
CLD2 on the gold text, five pages labelled by hand) with
``python benchmarks/langid_compare.py --rounds 5`` on the blocks `extract()`
segments; CPU time per page on a shared 2-core machine, and the same as a
multiple of `lxml.html.fromstring` on those pages; shingle F1 of the jusText
extractor (seed preset) with each page in the language chosen (no stoplist:
language-independent). Libraries marked * are not dependencies; they were
measured with ``--extra-site`` (wheel sizes for CPython 3.11, x86-64):

    method           accuracy  us/page  x parse  F1 cleaneval cleanportal readability
    stopwords        243/244       223     0.17        0.851       0.818       0.849
    cld2 (pycld2)    242/244       253     0.19        0.851       0.818       0.849
    combined         243/244       271     0.20        0.851       0.818       0.849
    *py3langid       242/244      1387     1.03        0.851       0.818       0.849
      (4.6 MB wheel + numpy)
    *cld3-py         239/244       635     0.47        0.851       0.818       0.851
      (0.7 MB; takes zh for mr/hi: nothing kept, which this F1 happens to reward)
    *lingua          242/244     10143     7.52        0.851       0.818       0.849
      (96 MB wheel)
    *langdetect      214/244      6246     4.63        0.851       0.818       0.692
      (lorem ipsum as ca/fr)
    en (fixed)       201/244         -        -        0.851       0.818       0.643
    reference        244/244         -        -        0.851       0.818       0.849

The stop-word method is as accurate as the best library (its one miss is a
page reading "Test Case 1 / Test Case 2"), as fast as CLD2, needs no
dependency and knows exactly the languages that have a stoplist, so it is
DEFAULT_METHOD. CLD2 (pycld2, a 9.9 MB wheel) stays available for users who
need the languages without a stoplist named (about 160), e.g. in accept-lists.
"""

from __future__ import annotations

import enum
import functools
import gc
import marshal
import math
import re
import threading
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .config import ConfigError
from .stoplists import all_stoplists


class IdMethod(str, enum.Enum):
    """How `identify()` chooses; the value is what `LanguageGuess.method` records."""

    STOPWORDS = "stopwords"
    CLD2 = "cld2"
    #: cld2 when it is sure of a language with a stoplist, else the more confident of the two.
    COMBINED = "combined"

    def __str__(self) -> str:
        return self.value


DEFAULT_METHOD = IdMethod.STOPWORDS


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    """A page's language.

    code: the configs/languages code (ISO 639-1, else ISO 639-3) when the
    language has a stoplist, otherwise the language's ISO 639-1 code all the
    same (``ja``, ``th``...), or None when nothing could be decided.
    confidence: 0..1; 0 whenever `code` is None.
    """

    code: str | None
    confidence: float
    method: str


#: Text looked at per page: the longest blocks first, up to this many characters.
#: Boilerplate comes in short blocks (menus, buttons), running text in long ones.
MAX_SAMPLE_CHARS = 3000

#: Characters one block may give to the sample.
MAX_BLOCK_CHARS = 300

#: Stop-word tokens after which a guess is taken at face value (fewer scale the confidence).
_FULL_EVIDENCE_HITS = 20
#: Stop-word density at which jusText calls a paragraph good (its stopwords_low).
_GOOD_DENSITY = 0.30
#: Words of a language's vocabulary, for the stop-word likelihoods (see _build_index).
_VOCABULARY = 1e6
#: Bytes of letters cld2 must see before its guess is taken at face value.
_FULL_EVIDENCE_BYTES = 200
#: Share of a page's units (whitespace tokens, characters of scripts without spaces) in
#: a no-stoplist script above which that script names the page's language.
_SCRIPT_SHARE = 0.5
#: Stop-word confidence above which the scripts of a page are not looked at (saves
#: a third of the time; on the gold pages no Chinese or Japanese one gets over 0.1).
_SURE_WITHOUT_SCRIPTS = 0.5
#: Characters of a page scanned for scripts.
_SCRIPT_SCAN_CHARS = 100_000
#: Share of kana among CJK characters above which CJK text is Japanese, not Chinese.
_KANA_SHARE = 0.1

#: Lists of a language that has another, primary list: compared only when asked for.
_VARIANTS = {"en-x-simple": "en", "be-tarask": "be"}

_STOPWORDS = IdMethod.STOPWORDS.value


def _guess(code: str | None, confidence: float, method: str) -> LanguageGuess:
    """A guess with its confidence rounded; one that rounds to 0 is no guess."""
    confidence = round(min(1.0, max(0.0, confidence)), 4)
    if code is None or confidence <= 0.0:
        return LanguageGuess(None, 0.0, method)
    return LanguageGuess(code, confidence, method)


def _undetermined(method: str) -> LanguageGuess:
    return LanguageGuess(None, 0.0, method)


# ---------------------------------------------------------------------------------------
# Sampling


def _sample(texts: Sequence[str] | str, max_chars: int | None = None) -> str:
    """Up to `max_chars` characters of the page, from its longest blocks first.

    Each block gives at most MAX_BLOCK_CHARS, so that one giant block (a code
    listing, a table, markup shown as text) cannot fill the sample alone.
    """
    if max_chars is None:
        max_chars = MAX_SAMPLE_CHARS
    if isinstance(texts, str):
        return texts[:max_chars]
    per_block = MAX_BLOCK_CHARS
    chosen: list[str] = []
    total = 0
    for block in sorted(texts, key=len, reverse=True):
        if not block:
            break
        if len(block) > per_block:
            block = block[:per_block]
        chosen.append(block)
        total += len(block) + 1
        if total >= max_chars:
            break
    return "\n".join(chosen)[:max_chars]


def _head(texts: Sequence[str] | str, max_chars: int) -> str:
    """The page's first `max_chars` characters, blocks joined by newlines."""
    if isinstance(texts, str):
        return texts[:max_chars]
    parts: list[str] = []
    total = 0
    for block in texts:
        parts.append(block[: max_chars - total])
        total += len(parts[-1]) + 1
        if total >= max_chars:
            break
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------
# Scripts


_LETTER = re.compile(r"[^\W\d_]")


@functools.lru_cache(maxsize=8192)
def _char_script(char: str) -> str:
    try:
        return unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return ""


def _word_script(word: str) -> str | None:
    """The script of a word's first letter; None for numbers and punctuation."""
    if word.isascii():
        return "LATIN" if word.upper() != word.lower() else None
    letter = _LETTER.search(word)
    return _char_script(letter.group()) if letter else None


#: Scripts written without spaces between words, or used by one language only, whose
#: languages have no stoplist: the script alone names the language.
_SCRIPT_LANGUAGES: tuple[tuple[str, str], ...] = (
    ("\u0e00-\u0e7f", "th"),
    ("\u0e80-\u0eff", "lo"),
    ("\u1780-\u17ff\u19e0-\u19ff", "km"),
    ("\u1000-\u109f", "my"),
    ("\u0d80-\u0dff", "si"),
    ("\u1200-\u139f", "am"),
    ("\u0f00-\u0fff", "bo"),
    ("\u0a00-\u0a7f", "pa"),
    ("\u0b00-\u0b7f", "or"),
    ("\u0780-\u07bf", "dv"),
)
_KANA = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


class _ScriptPatterns(NamedTuple):
    kana: re.Pattern[str]
    cjk: re.Pattern[str]
    no_stoplist: re.Pattern[str]
    scripts: tuple[tuple[re.Pattern[str], str], ...]


@functools.cache
def _script_patterns() -> _ScriptPatterns:
    """The script classes, compiled when a page first needs them: their ranges cost
    ~6 ms to compile, a twentieth of a one-page `extract`'s start-up, and a page
    that its stop words settle never reads them."""
    return _ScriptPatterns(
        re.compile(f"[{_KANA}]"),
        re.compile(f"[{_KANA}{_HAN}]"),
        re.compile(f"[{_KANA}{_HAN}" + "".join(r for r, _ in _SCRIPT_LANGUAGES) + "]"),
        tuple((re.compile(f"[{r}]"), code) for r, code in _SCRIPT_LANGUAGES),
    )


def _identify_by_script(
    texts: Sequence[str] | str, candidates: Collection[str] | None
) -> LanguageGuess | None:
    """A language named by its script, when most of the page is in such a script.

    Looks at the whole page (up to _SCRIPT_SCAN_CHARS), not the sample: markup
    shown as text can outweigh a Japanese article in characters. Each character
    of a script written without spaces counts as one unit, as does each
    whitespace token; on the gold pages the share of such characters is below
    0.04 on every other page and above 0.83 on every Chinese or Japanese one.
    """
    text = _head(texts, _SCRIPT_SCAN_CHARS)
    if text.isascii():
        return None
    patterns = _script_patterns()
    if patterns.no_stoplist.search(text) is None:
        return None
    found = len(patterns.no_stoplist.findall(text))
    units = found + len(text.split())
    if found < _SCRIPT_SHARE * units:
        return None
    cjk = len(patterns.cjk.findall(text))
    if cjk * 2 >= found:
        kana = len(patterns.kana.findall(text))
        code, count = ("ja" if kana >= _KANA_SHARE * cjk else "zh"), cjk
    else:
        count, code = max((len(pattern.findall(text)), code) for pattern, code in patterns.scripts)
    if candidates is not None and code not in candidates:
        return None
    # A character of these scripts is about a word or a syllable: 20 are as good as 20
    # stop words.
    evidence = min(1.0, count / _FULL_EVIDENCE_HITS)
    return _guess(code, count / units * evidence, _STOPWORDS)


# ---------------------------------------------------------------------------------------
# Stop-word density


#: Shards of the prebuilt word index (a power of two): a page's sample of at most
#: MAX_SAMPLE_CHARS holds a few hundred distinct words, so it reads about one shard in
#: twenty and a one-page `corpus-crawler extract --lang auto` unpacks ~8 k of the 153 k
#: words instead of all of them.
_WORD_SHARDS = 4096


def _shard_of(word: str, mask: int = _WORD_SHARDS - 1) -> int:
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) & mask


class _ShardedWords:
    """word -> group, unpacked one shard at a time on first use.

    The whole index as one dict took 57 ms of CPU to unmarshal, a fifth of a
    one-page `corpus-crawler extract --lang auto`; its shards are marshalled one by
    one and each is unpacked when a word falls in it (crc32 of the UTF-8 bytes, the
    same in every process). A lookup through the shards is a Python call, several
    times a dict lookup in C: once a quarter of the shards are unpacked (a process
    that reads more than a few pages) the rest are unpacked too and all are merged
    into one dict, whose own `get` `lookup()` then hands out.
    """

    __slots__ = ("_lock", "_merged", "_missing", "_packed", "_shards")

    def __init__(self, packed: Sequence[bytes]) -> None:
        if len(packed) & (len(packed) - 1) or not packed:
            raise ValueError("the shard count must be a power of two")
        self._packed: Sequence[bytes] | None = packed
        self._shards: list[dict[str, int] | None] = [None] * len(packed)
        self._missing = len(packed)
        self._merged: dict[str, int] | None = None
        # page workers may share the index: a shard is counted once however many
        # threads unpack it at the same time
        self._lock = threading.Lock()

    def lookup(self) -> Callable[[str], int | None]:
        """The fastest `get` now: the merged dict's own, once there is one."""
        merged = self._merged
        return self.get if merged is None else merged.get

    def merged(self) -> bool:
        return self._merged is not None

    def get(self, word: str, default: int | None = None) -> int | None:
        merged = self._merged
        if merged is not None:
            return merged.get(word, default)
        key = _shard_of(word, len(self._shards) - 1)
        shard = self._shards[key]
        if shard is None:
            shard = self._unpack(key)
        return shard.get(word, default)

    def _unpack(self, key: int) -> dict[str, int]:
        with self._lock:
            shard = self._shards[key]
            if shard is not None:  # another thread was first
                return shard
            assert self._packed is not None
            shard = marshal.loads(self._packed[key])
            self._shards[key] = shard
            self._missing -= 1
            if self._missing <= len(self._shards) * 3 // 4:
                self._merge()
            return shard

    def _merge(self) -> None:
        """Unpack the shards not read yet and merge all into one dict (lock held)."""
        assert self._packed is not None
        merged: dict[str, int] = {}
        for key, part in enumerate(self._shards):
            merged.update(marshal.loads(self._packed[key]) if part is None else part)
        self._merged, self._packed = merged, None
        self._shards = [merged] * len(self._shards)
        self._missing = 0

    def unpacked_shards(self) -> int:
        return len(self._shards) - self._missing


def _pack_words(words: Mapping[str, int], shards: int = _WORD_SHARDS) -> tuple[bytes, ...]:
    parts: list[dict[str, int]] = [{} for _ in range(shards)]
    for word, group in words.items():
        parts[_shard_of(word, shards - 1)][word] = group
    return tuple(marshal.dumps(part) for part in parts)


@dataclass(frozen=True, slots=True)
class _StopwordIndex:
    codes: tuple[str, ...]
    #: word -> its group: the index in `groups` of the set of stoplists holding it
    #: (a dict when built, _ShardedWords when read prebuilt: only `get` is used)
    words: Mapping[str, int] | _ShardedWords
    #: group -> indexes into `codes` of the stoplists holding its words
    groups: tuple[tuple[int, ...], ...]
    #: log-likelihood a stop-word token adds to each language (see _build_index)
    weights: tuple[float, ...]


def _build_index(stoplists: Mapping[str, frozenset[str]]) -> _StopwordIndex:
    """One dict for all stoplists, so that scoring costs one lookup per token.

    Scoring is naive Bayes with each list's words equally likely: jusText made
    every list from the words covering half of a Wikipedia's tokens, so a word
    of an N-word list has probability about 0.5 / N in that language and the
    rest share the other half of a vocabulary of about _VOCABULARY words. A hit
    thus adds log(_VOCABULARY / N): a hit in a long list is weaker evidence.
    Without it, long lists that picked up English words from their Wikipedia
    (Finnish, Uzbek: "your", "my", "brown") beat the 453-word English list.

    Words held by the same set of lists share a group, so a page's tokens are
    counted per group in C (Counter over dict lookups) before the per-language
    sums, which then run once per group instead of once per word.
    """
    codes = tuple(sorted(stoplists))
    holders: dict[str, list[int]] = {}
    sizes = [0] * len(codes)
    for position, code in enumerate(codes):
        word_scripts = {word: _word_script(word) for word in stoplists[code]}
        scripts = Counter(word_scripts.values())
        scripts.pop(None, None)
        if not scripts:
            continue
        main_script = scripts.most_common(1)[0][0]
        for word, script in word_scripts.items():
            # Numbers identify no language, and the Latin words of a Devanagari list are
            # English that leaked from its Wikipedia.
            if script != main_script:
                continue
            holders.setdefault(word, []).append(position)
            sizes[position] += 1
    weights = tuple(math.log(_VOCABULARY / max(size, 1)) for size in sizes)
    group_of: dict[tuple[int, ...], int] = {}
    words = {}
    for word, held in holders.items():
        words[word] = group_of.setdefault(tuple(held), len(group_of))
    return _StopwordIndex(codes, words, tuple(group_of), weights)


@functools.cache
def _stopword_index() -> _StopwordIndex:
    # Kept prebuilt between runs (corpus_crawler._prebuilt): parsing every stoplist and
    # indexing it is most of a second, paid before the first page of every
    # `corpus-crawler extract --lang auto`.
    from ._prebuilt import load_or_build
    from .stoplists import language_files

    # ~300 k small acyclic objects: the cyclic GC would run dozens of times for nothing
    # (half the build time, measured).
    collecting = gc.isenabled()
    gc.disable()
    try:
        codes, packed, groups, weights = load_or_build(
            "langid-index", f"2-{_WORD_SHARDS}", language_files(), _build_index_fields
        )
        return _StopwordIndex(codes, _ShardedWords(packed), groups, weights)
    finally:
        if collecting:
            gc.enable()


def _build_index_fields() -> tuple[Any, ...]:
    index = _build_index(all_stoplists())
    assert isinstance(index.words, dict)
    return (index.codes, _pack_words(index.words), index.groups, index.weights)


def _allowed(codes: Iterable[str], candidates: Collection[str] | None) -> list[bool]:
    if candidates is None:
        return [code not in _VARIANTS for code in codes]
    return [code in candidates for code in codes]


def identify_by_stopwords(
    texts: Sequence[str] | str, candidates: Collection[str] | None = None
) -> LanguageGuess:
    """The stoplist that best explains the page's tokens, or the script's language.

    texts: the page's block texts (or one string). candidates: codes allowed;
    None means every stoplist except variants (en-x-simple, be-tarask).

    Confidence multiplies four shares in 0..1: the stop-word density of the
    chosen list over 0.30 (jusText's stopwords_low: text that dense reads as
    good text in that language); its purity, the chosen list's stop-word
    tokens over those plus the runner-up's tokens that the chosen list lacks
    (0.99 in the median on the gold pages, 0.6 for half English, half
    German); how surely it beats the runner-up (1 - exp(-log-likelihood
    margin)); and the evidence (stop-word tokens seen, over 20).
    """
    sample = _sample(texts)
    if not sample or sample.isspace():
        return _undetermined(_STOPWORDS)
    by_stopwords = _score_stopwords(sample, _stopword_index(), candidates)
    if by_stopwords.confidence >= _SURE_WITHOUT_SCRIPTS:
        # a page mostly in Chinese or Thai has no such density of one stoplist's words
        return by_stopwords
    by_script = _identify_by_script(texts, candidates)
    return by_stopwords if by_script is None else by_script


def _score_stopwords(
    sample: str, index: _StopwordIndex, candidates: Collection[str] | None
) -> LanguageGuess:
    tokens = sample.lower().split()
    if not tokens:
        return _undetermined(_STOPWORDS)
    # one dict lookup per token, counted in C; the Python loops run per group and
    # language. Through the index's shards (a process's first pages) a lookup is a
    # Python call: then each distinct word is looked up once.
    words = index.words
    if isinstance(words, _ShardedWords) and not words.merged():
        lookup = words.lookup()
        group_counts: Counter[int | None] = Counter()
        for word, count in Counter(tokens).items():
            group_counts[lookup(word)] += count
    else:
        get = words.lookup() if isinstance(words, _ShardedWords) else words.get
        group_counts = Counter(map(get, tokens))
    hits = [0] * len(index.codes)
    groups = index.groups
    for group, count in group_counts.items():
        if group is not None:
            for position in groups[group]:
                hits[position] += count
    allowed = _allowed(index.codes, candidates)
    weights = index.weights
    best = second = 0.0
    best_position = second_position = -1
    for position, count in enumerate(hits):
        if count and allowed[position]:
            score = count * weights[position]
            if score > best:
                second, second_position = best, best_position
                best, best_position = score, position
            elif score > second:
                second, second_position = score, position
    if best_position < 0 or best <= second:
        return _undetermined(_STOPWORDS)
    best_hits = hits[best_position]
    # stop words of the runner-up that the chosen list lacks: text in another language
    unexplained = sum(
        count
        for group, count in group_counts.items()
        if group is not None
        and second_position in groups[group]
        and best_position not in groups[group]
    )
    confidence = (
        min(1.0, best_hits / len(tokens) / _GOOD_DENSITY)
        * best_hits
        / (best_hits + unexplained)
        * -math.expm1(second - best)
        * min(1.0, best_hits / _FULL_EVIDENCE_HITS)
    )
    return _guess(index.codes[best_position], confidence, _STOPWORDS)


# ---------------------------------------------------------------------------------------
# CLD2 (pycld2)

#: CLD2 codes that differ from ours.
_CLD2_CODES = {"iw": "he", "jw": "jv", "no": "nb", "zh-Hant": "zh", "sr-ME": "sr", "in": "id"}
#: Codes CLD2 uses for "no language" and its joke languages.
_CLD2_NONE = frozenset({"un", "xxx", "zzb", "zze", "zzh", "zzp", "tlh"})

#: Characters CLD2 rejects as invalid UTF-8: controls, surrogates, noncharacters.
_CLD2_REJECTS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
    + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(1, 17))
    + "]"
)


def _cld2_code(code: str) -> str | None:
    if code in _CLD2_NONE or code.startswith("xx-"):
        return None
    return _CLD2_CODES.get(code, code)


def _pycld2() -> Any:
    try:
        import pycld2
    except ImportError:
        raise ConfigError(
            "language identification method 'cld2' needs the pycld2 package:"
            " pip install pycld2 (or use the 'stopwords' method)"
        ) from None
    return pycld2


def identify_by_model(text: str, candidates: Collection[str] | None = None) -> LanguageGuess:
    """CLD2's guess for `text` (plain text, not HTML).

    candidates: codes allowed; the first of CLD2's three best languages that is
    allowed wins, else the result is undetermined. Confidence is CLD2's share
    of the text in that language, halved when CLD2 calls it unreliable and
    scaled down below 200 bytes of letters.
    """
    pycld2 = _pycld2()
    method = IdMethod.CLD2.value
    clean = _CLD2_REJECTS.sub(" ", _sample(text))
    if not clean or clean.isspace():
        return _undetermined(method)
    try:
        reliable, text_bytes, details = pycld2.detect(clean, isPlainText=True)
    except (pycld2.error, ValueError):
        return _undetermined(method)
    for _name, raw_code, percent, _score in details:
        code = _cld2_code(raw_code)
        if code is None or (candidates is not None and code not in candidates):
            continue
        evidence = min(1.0, text_bytes / _FULL_EVIDENCE_BYTES)
        return _guess(code, percent / 100.0 * evidence * (1.0 if reliable else 0.5), method)
    return _undetermined(method)


# ---------------------------------------------------------------------------------------
# The entry point

#: Below this cld2 confidence the combined method asks the stop words too.
_COMBINED_TRUST = 0.5


def identify(
    texts: Sequence[str] | str,
    method: IdMethod | str = DEFAULT_METHOD,
    candidates: Collection[str] | None = None,
) -> LanguageGuess:
    """The language of a page given its block texts (all blocks, boilerplate included).

    Never raises on any text; undetermined pages get code None and confidence 0.
    """
    chosen = _parse_method(method)
    if chosen is IdMethod.STOPWORDS:
        return identify_by_stopwords(texts, candidates)
    sample = _sample(texts)
    by_model = identify_by_model(sample, candidates)
    if chosen is IdMethod.CLD2:
        return by_model
    has_stoplist = by_model.code is not None and by_model.code in _stopword_index().codes
    if has_stoplist and by_model.confidence >= _COMBINED_TRUST:
        return LanguageGuess(by_model.code, by_model.confidence, IdMethod.COMBINED.value)
    by_stopwords = identify_by_stopwords(texts, candidates)
    best = by_stopwords if by_stopwords.confidence > by_model.confidence else by_model
    return LanguageGuess(best.code, best.confidence, IdMethod.COMBINED.value)


def _parse_method(method: IdMethod | str) -> IdMethod:
    if isinstance(method, IdMethod):
        return method
    try:
        return IdMethod(method)
    except ValueError:
        names = ", ".join(m.value for m in IdMethod)
        raise ConfigError(
            f"unknown language identification method {method!r}: use one of {names}"
        ) from None


def is_accepted(
    guess: LanguageGuess, accept_languages: Collection[str] | None, min_confidence: float = 0.0
) -> bool:
    """Whether a page in `guess`'s language passes an accept-list (None accepts all).

    A variant list counts as its language (en-x-simple as en). An undetermined
    page, or one below `min_confidence`, is not accepted by a non-empty list.
    """
    if accept_languages is None:
        return True
    if guess.code is None or guess.confidence < min_confidence:
        return False
    return guess.code in accept_languages or _VARIANTS.get(guess.code) in accept_languages

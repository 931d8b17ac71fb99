"""Stop-word lists: the 100 shipped languages, users' own lists, and building new ones.

The shipped lists live in ``configs/languages/<code>.yaml`` (jusText 3.0.2's lists,
see that folder's README.md). A file is parsed only when its language is first asked
for; names, codes and aliases come from the small ``index.yaml`` beside them.

Scalars in a ``stoplist:`` are read as the text written, so ``- no`` is the word "no"
(plain YAML would make it ``false``) and no stop word needs quoting except for YAML
syntax itself (``'#'``, ``'"the'``...).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import hashlib
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import yaml
from yaml.constructor import SafeConstructor

from .config import ConfigError, JustextParams

__all__ = [
    "DEFAULT_COVERAGE",
    "DEFAULT_MIN_COUNT",
    "LanguageConfig",
    "StopwordFrequency",
    "WordCounts",
    "accept_code",
    "all_stoplists",
    "available_languages",
    "build_stoplist",
    "clear_caches",
    "config_dir",
    "count_words",
    "get_stoplist",
    "load_language",
    "load_stoplist_file",
    "render_language_yaml",
    "resolve_language",
    "select_stopwords",
    "stopword_index",
]

#: jusText's lists are the most frequent words of a Wikipedia dump that together make up
#: half of all its tokens (CORPUS_COVERAGE = 0.5 in jusText's
#: tools/stopwords/freqlist2stoplist.py), so a new list built the same way gives the
#: stop-word densities the default stopwords_low/high thresholds were tuned for.
DEFAULT_COVERAGE = 0.5
#: jusText had no minimum: its Wikipedia dumps reach 50% coverage long before words seen
#: once. A user's sample is much smaller, and there a word seen once is a content word.
DEFAULT_MIN_COUNT = 2

_LIST_HINT = "run `corpus-crawler stoplist list` to see the available languages"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_SPACE = re.compile(r"\s")

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
#: libyaml parses ~5x faster than the pure-Python loader, which stays as a fallback.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BaseLoader):
    """Safe loader whose tag resolution skips the regexes for plain words.

    Resolving implicit tags is Python code run once per scalar: with 178 k stop words it
    was about a third of the time of loading every language (measured). A scalar whose
    first character starts no implicit type (bool, int, float, null...) is a string;
    others go the usual way, so the tags are exactly those of yaml.SafeLoader.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and (
            not implicit[0] or (value and value[0] not in self.yaml_implicit_resolvers)
        ):
            return _STR_TAG
        return super().resolve(kind, value, implicit)


@dataclass(frozen=True, slots=True)
class LanguageConfig:
    """One ``configs/languages/<code>.yaml`` file."""

    code: str
    name: str
    stoplist: frozenset[str]
    #: Overrides of `JustextParams` fields for this language (validated on load).
    parameters: Mapping[str, Any] = field(default_factory=dict, hash=False)
    iso639_3: str | None = None
    #: Other codes that name this language (Wikipedia codes, ISO 639-2/B, deprecated ones).
    aliases: tuple[str, ...] = ()

    def justext_params(self, base: JustextParams | None = None) -> JustextParams:
        """`base` (default: the seed's defaults) with this language's overrides."""
        return (base or JustextParams()).merged(self.parameters, source=f"{self.code}.yaml")


# --------------------------------------------------------------------------- locations


def _find_config_dir(package_dir: Path) -> Path:
    """``configs/`` next to the package in a checkout, else the copy inside a wheel."""
    checkout = package_dir.parent / "configs"
    if (checkout / "languages").is_dir():
        return checkout
    return package_dir / "_configs"


def config_dir() -> Path:
    """The folder holding ``languages/`` (and the other config folders)."""
    return _find_config_dir(Path(__file__).resolve().parent)


def _languages_dir() -> Path:
    return config_dir() / "languages"


# --------------------------------------------------------------------------- names


def _normalise(name: str) -> str:
    """``Norwegian Bokmål`` == ``norwegian_bokmal``; ``be_x_old`` == ``be-x-old``."""
    decomposed = unicodedata.normalize("NFKD", name.strip())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return re.sub(r"[\s_-]+", "-", plain.casefold())


class _Entry(NamedTuple):
    name: str
    iso639_3: str | None
    aliases: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _index() -> Mapping[str, _Entry]:
    """code -> entry for every language file, from index.yaml plus any unindexed file."""
    folder = _languages_dir()
    index_path = folder / "index.yaml"
    entries: dict[str, _Entry] = {}
    if index_path.exists():
        data = _read_yaml(index_path)
        languages = data.get("languages") if isinstance(data, dict) else None
        if not isinstance(languages, dict):
            raise ConfigError(f"{index_path}: expected a mapping under `languages:`")
        for code, entry in languages.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ConfigError(f"{index_path}: entry {code!r} needs a `name:`")
            entries[str(code)] = _Entry(
                entry["name"],
                entry.get("iso639_3"),
                tuple(str(a) for a in entry.get("aliases") or ()),
            )
    on_disk = {p.stem for p in folder.glob("*.yaml") if p.name != "index.yaml"}
    for code in sorted(on_disk - entries.keys()):
        # a user dropped in a new language: read just that file
        config = load_language_file(folder / f"{code}.yaml")
        entries[code] = _Entry(config.name, config.iso639_3, config.aliases)
    return MappingProxyType({code: entries[code] for code in sorted(entries) if code in on_disk})


@functools.lru_cache(maxsize=1)
def _lookup() -> Mapping[str, str]:
    """normalised code / name / ISO 639-3 / alias -> file code (codes win over aliases)."""
    table: dict[str, str] = {}
    index = _index()
    for code, entry in index.items():
        for key in (*entry.aliases, entry.iso639_3, entry.name):
            if key:
                table.setdefault(_normalise(key), code)
    for code in index:
        table[_normalise(code)] = code
    return MappingProxyType(table)


def available_languages() -> dict[str, str]:
    """code -> jusText language name, sorted by code."""
    return {code: entry.name for code, entry in _index().items()}


def has_language(code: str) -> bool:
    """Is there a configs/languages/<code>.yaml (a code as resolve_language returns it)?"""
    return code in _index()


def resolve_language(name_or_code: str) -> str:
    """The file code for ``en``, ``EN``, ``eng``, ``English``, ``en-US``, ``Norwegian Bokmål``..."""
    if not isinstance(name_or_code, str) or not name_or_code.strip():
        raise ConfigError(f"empty language name {name_or_code!r}: {_LIST_HINT}")
    table = _lookup()
    key = _normalise(name_or_code)
    while key:
        if key in table:
            return table[key]
        # BCP 47 tags: en-US -> en, be-tarask-1959 -> be-tarask
        key = key.rpartition("-")[0]
    index = _index()
    choices = {_normalise(e.name): e.name for e in index.values()}
    choices.update({_normalise(c): c for c in index})
    close = difflib.get_close_matches(_normalise(name_or_code), list(choices), n=1, cutoff=0.6)
    hint = ""
    if close:
        code = table[close[0]]
        hint = f" (did you mean {index[code].name!r}, code {code!r}?)"
    raise ConfigError(f"unknown language {name_or_code!r}{hint}: {_LIST_HINT}")


def accept_code(name_or_code: str) -> str:
    """The code a language accept-list holds for ``name_or_code``: a stoplist language's
    file code (``Czech``, ``ces``, ``cs-CZ`` -> ``cs``), or a plain ISO 639 code that
    language identification can name without a stoplist (``ja``, ``zh``, lower-cased).

    Raises ConfigError (with a did-you-mean) for anything else, so that an accept-list
    naming no language fails at once instead of dropping every document.
    """
    try:
        return resolve_language(name_or_code)
    except ConfigError:
        code = name_or_code.strip()
        if code.isascii() and code.isalpha() and len(code) in (2, 3):
            return code.lower()
        raise


# --------------------------------------------------------------------------- YAML files

_KNOWN_KEYS = ("code", "name", "iso639_3", "aliases", "parameters", "stoplist")


def _read_yaml(path: Path) -> Any:
    try:
        with path.open("rb") as stream:
            return yaml.load(stream, Loader=_Loader)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small acyclic objects.

    A word list is ~2 k YAML nodes and as many strings; with the GC running it is
    triggered dozens of times per file for nothing (a quarter of the load time, measured).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _compose(path: Path) -> yaml.Node | None:
    try:
        with path.open("rb") as stream:
            return yaml.compose(stream, Loader=_Loader)
    except FileNotFoundError:
        raise ConfigError(f"stoplist file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None


def _where(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}"


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node.tag == _NULL_TAG:
        return "nothing (null)"
    return f"the scalar {node.value!r}"


def _text(path: Path, key: str, node: yaml.Node) -> str:
    """A scalar as the text written; `code: no` stays "no"."""
    if not isinstance(node, yaml.ScalarNode) or node.tag == _NULL_TAG or not node.value.strip():
        raise ConfigError(
            f"{_where(path, node)}: `{key}` must be a non-empty string, got {_kind(node)}"
        )
    return str(node.value).strip()


def _words(path: Path, node: yaml.Node) -> frozenset[str]:
    if not isinstance(node, yaml.SequenceNode):
        raise ConfigError(
            f"{_where(path, node)}: `stoplist` must be a list of words (one `- word` per line),"
            f" got {_kind(node)}"
        )
    items = node.value
    if not items:
        raise ConfigError(f"{_where(path, node)}: `stoplist` is empty: add at least one word")
    # checks run over the whole list at C speed; the per-item loop only names a culprit
    scalar = yaml.ScalarNode
    if any([item.__class__ is not scalar or item.tag == _NULL_TAG for item in items]):
        for number, item in enumerate(items, start=1):
            if not isinstance(item, yaml.ScalarNode) or item.tag == _NULL_TAG:
                raise ConfigError(
                    f"{_where(path, item)}: stoplist item {number} must be a word,"
                    f" got {_kind(item)}"
                )
    words = [item.value.strip() for item in items]
    if _SPACE.search("".join(words)) or not all(words):
        for number, (item, word) in enumerate(zip(items, words, strict=True), start=1):
            if not word or _SPACE.search(word):
                raise ConfigError(
                    f"{_where(path, item)}: stoplist item {number} {item.value!r} must be one"
                    " word without spaces (text is split at spaces before stop words are counted)"
                )
    # one lower() call for the whole list; safe to split as no word holds whitespace
    return frozenset("\n".join(words).lower().split("\n"))


def _parameters(path: Path, node: yaml.Node) -> Mapping[str, Any]:
    if isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG:
        return MappingProxyType({})
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"{_where(path, node)}: `parameters` must be a mapping such as"
            f" `{{stopwords_low: 0.25}}`, got {_kind(node)}"
        )
    value = SafeConstructor().construct_object(node, deep=True)
    # validates names (with a suggestion) and types, and catches low > high
    JustextParams().merged(value, source=f"{path} `parameters`")
    return MappingProxyType(dict(value))


def _parse_language(path: Path, *, require_identity: bool) -> LanguageConfig:
    with _gc_paused():
        return _parse_language_gc_paused(path, require_identity=require_identity)


def _parse_language_gc_paused(path: Path, *, require_identity: bool) -> LanguageConfig:
    root = _compose(path)
    if root is None:
        raise ConfigError(f"{path} is empty: it needs at least a `stoplist:` list")
    if not isinstance(root, yaml.MappingNode):
        raise ConfigError(
            f"{_where(path, root)}: expected a mapping with `code`, `name` and `stoplist` keys,"
            f" got {_kind(root)}"
        )
    nodes: dict[str, yaml.Node] = {}
    for key_node, value_node in root.value:
        key = str(key_node.value)
        if key not in _KNOWN_KEYS:
            close = difflib.get_close_matches(key, _KNOWN_KEYS, n=1)
            known = ", ".join(_KNOWN_KEYS)
            hint = f": did you mean `{close[0]}`?" if close else f" (known keys: {known})"
            raise ConfigError(f"unknown key `{key}` in {_where(path, key_node)}{hint}")
        if key in nodes:
            raise ConfigError(f"{_where(path, key_node)}: key `{key}` appears twice")
        nodes[key] = value_node
    required = ("code", "name", "stoplist") if require_identity else ("stoplist",)
    for key in required:
        if key not in nodes:
            raise ConfigError(f"{path}: missing key `{key}`")

    code = _text(path, "code", nodes["code"]) if "code" in nodes else path.stem
    name = _text(path, "name", nodes["name"]) if "name" in nodes else code
    iso639_3 = _text(path, "iso639_3", nodes["iso639_3"]) if "iso639_3" in nodes else None
    aliases: tuple[str, ...] = ()
    if "aliases" in nodes:
        alias_node = nodes["aliases"]
        if not isinstance(alias_node, yaml.SequenceNode):
            raise ConfigError(
                f"{_where(path, alias_node)}: `aliases` must be a list of codes, got"
                f" {_kind(alias_node)}"
            )
        aliases = tuple(_text(path, "aliases", item) for item in alias_node.value)
    parameters: Mapping[str, Any] = MappingProxyType({})
    if "parameters" in nodes:
        parameters = _parameters(path, nodes["parameters"])
    return LanguageConfig(
        code=code,
        name=name,
        stoplist=_words(path, nodes["stoplist"]),
        parameters=parameters,
        iso639_3=iso639_3,
        aliases=aliases,
    )


def load_language_file(path: Path) -> LanguageConfig:
    """Parse and validate one language file (any path); its `code` must match its name."""
    config = _parse_language(path, require_identity=True)
    if config.code != path.stem:
        raise ConfigError(
            f"{path}: `code: {config.code}` does not match the file name: rename the file to"
            f" {config.code}.yaml or change `code:` to {path.stem}"
        )
    return config


@functools.cache
def _load_code(code: str) -> LanguageConfig:
    return load_language_file(_languages_dir() / f"{code}.yaml")


def load_language(name_or_code: str) -> LanguageConfig:
    """The language's config, parsed on first use and cached for the process."""
    return _load_code(resolve_language(name_or_code))


@functools.cache
def get_stoplist(name_or_code: str) -> frozenset[str]:
    """The lower-cased stop words of a shipped language (``"en"``, ``"English"``...)."""
    return load_language(name_or_code).stoplist


@functools.lru_cache(maxsize=1)
def _all_stoplists() -> Mapping[str, frozenset[str]]:
    with _gc_paused():
        return MappingProxyType({code: _load_code(code).stoplist for code in _index()})


def all_stoplists() -> dict[str, frozenset[str]]:
    """code -> stop words of every shipped language (all files parsed once, then cached)."""
    return dict(_all_stoplists())


def clear_caches() -> None:
    """Forget every list read so far, e.g. after editing configs/ in a running process."""
    for cached in (
        _index,
        _lookup,
        _load_code,
        get_stoplist,
        _all_stoplists,
        stopword_index,
        stop_words_within,
    ):
        cached.cache_clear()
    _load_stoplist_file.cache_clear()


@functools.lru_cache(maxsize=1)
def stopword_index() -> Mapping[str, tuple[str, ...]]:
    """word -> sorted codes of the languages whose stoplist has it (for language guessing).

    Equal tuples are shared, so the ~120 k entries cost little beyond the words themselves.
    Kept prebuilt between runs (corpus_crawler._prebuilt): parsing every language file
    is most of a second.
    """
    from ._prebuilt import load_or_build

    with _gc_paused():
        index = load_or_build("stopword-index", "1", language_files(), _build_stopword_index)
    return MappingProxyType(index)


@functools.lru_cache(maxsize=4)
def stop_words_within(alphabet: str) -> frozenset[str]:
    """The stop words of every language that hold a non-ASCII character and are written
    in `alphabet`'s characters only.

    Telling Latin code pages apart (corpus_crawler.decode) looks up accented words only,
    and only words its code pages can spell: about 21 k of the index's 154 k words.
    Kept prebuilt as the index is; loading it costs 4 ms of CPU against 56 ms for the
    whole index, which a run with a fixed `--lang` never needs otherwise.
    """
    from ._prebuilt import load_or_build

    chars = frozenset(alphabet)

    def build() -> frozenset[str]:
        return frozenset(w for w in stopword_index() if not w.isascii() and chars.issuperset(w))

    digest = hashlib.sha256(alphabet.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    with _gc_paused():
        return load_or_build("stop-words-within", f"1-{digest}", language_files(), build)


def language_files() -> list[Path]:
    """Every file under configs/languages/ that stoplists are read from."""
    return sorted(_languages_dir().glob("*.yaml"))


def _build_stopword_index() -> dict[str, tuple[str, ...]]:
    languages: dict[str, list[str]] = {}
    for code, words in sorted(_all_stoplists().items()):
        for word in words:
            languages.setdefault(word, []).append(code)
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    index = {}
    for word, codes in languages.items():
        key = tuple(codes)
        index[word] = shared.setdefault(key, key)
    return index


def load_stoplist_file(path: str | Path) -> frozenset[str]:
    """A user's stoplist: YAML in the language layout, or plain text, one word per line.

    In plain text, lines starting with ``#`` are comments and blank lines are skipped.
    The result is cached until the file's size or modification time changes, so calling
    this once per page costs a `stat`.
    """
    path = Path(path)
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ConfigError(f"stoplist file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read stoplist file {path}: {exc.strerror or exc}") from None
    return _load_stoplist_file(path.resolve(), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _load_stoplist_file(path: Path, size: int, mtime_ns: int) -> frozenset[str]:
    if path.is_dir():
        raise ConfigError(f"stoplist file {path} is a directory: give the file inside it")
    if path.suffix.lower() in (".yaml", ".yml"):
        return _parse_language(path, require_identity=False).stoplist
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"stoplist file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read stoplist file {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"stoplist file {path} is not UTF-8 (bad byte at offset {exc.start}):"
            " convert it, e.g. `iconv -f latin1 -t utf-8`"
        ) from None
    words = frozenset(
        word.lower()
        for line in text.splitlines()
        if not line.lstrip().startswith("#")
        for word in line.split()
    )
    if not words:
        raise ConfigError(f"stoplist file {path} has no words (one word per line expected)")
    return words


def render_language_yaml(config: LanguageConfig, header: str = "") -> str:
    """`config` in the language layout, words sorted; loads back to an equal config."""
    lines = [header] if header else []
    lines.append(f"code: {_scalar(config.code)}\n")
    lines.append(f"name: {_scalar(config.name)}\n")
    if config.iso639_3:
        lines.append(f"iso639_3: {_scalar(config.iso639_3)}\n")
    if config.aliases:
        lines.append(f"aliases: [{', '.join(_scalar(a) for a in config.aliases)}]\n")
    if config.parameters:
        lines.append("parameters:\n")
        lines.extend(f"  {key}: {_scalar(value)}\n" for key, value in config.parameters.items())
    else:
        lines.append("parameters: {}\n")
    lines.append("stoplist:\n")
    lines.extend(f"  - {_scalar(word)}\n" for word in sorted(config.stoplist))
    return "".join(lines)


_RESOLVER = yaml.resolver.Resolver()


@functools.lru_cache(maxsize=1)
def _plain_word() -> re.Pattern[str]:
    return re.compile(rf"[^\W\d_](?:[\w.'-]|[{_marks_class()}])*")


def _scalar(value: Any) -> str:
    """One flow scalar, quoted only where YAML syntax needs it."""
    if (
        isinstance(value, str)
        and _plain_word().fullmatch(value)
        and (
            value[0] not in _RESOLVER.yaml_implicit_resolvers
            or _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG
        )
    ):
        # a letter first, then no indicator, no space: plain and read back as this string
        # (a dumper per word made writing 100 lists take seconds)
        return value
    text: str = yaml.dump(value, Dumper=_Dumper, allow_unicode=True, width=1_000_000)
    return text.removesuffix("\n").removesuffix("\n...")


# --------------------------------------------------------------------------- building


class StopwordFrequency(NamedTuple):
    word: str
    #: occurrences in the sample
    frequency: int
    #: share of all sample tokens covered by this word and every more frequent one
    cumulative: float


@dataclass(frozen=True, slots=True)
class WordCounts:
    counts: Mapping[str, int]
    #: every token, numbers included: the denominator of coverage, as in jusText's tool
    tokens: int


@functools.lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    r"""Letters and digits plus combining marks.

    Python's ``\w`` has no combining marks, so it would cut हिन्दी into ह न द; the
    marks are added as a character class.
    """
    return re.compile(rf"(?:[^\W_]|[{_marks_class()}])+")


@functools.lru_cache(maxsize=1)
def _marks_class() -> str:
    """The body of a regex character class of all combining marks (computed in ~0.1 s)."""
    ranges: list[tuple[int, int]] = []
    for point in range(sys.maxunicode + 1):
        if unicodedata.category(chr(point)).startswith("M"):
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


def count_words(lines: Iterable[str]) -> WordCounts:
    """Lower-cased word tokens of `lines`, counted; the input is read once, streaming."""
    pattern = _token_pattern()
    counts: Counter[str] = Counter()
    for line in lines:
        counts.update(pattern.findall(line.lower()))
    return WordCounts(counts=counts, tokens=sum(counts.values()))


def _check_selection(coverage: float, max_words: int | None, min_count: int) -> None:
    if isinstance(coverage, bool) or not 0.0 < float(coverage) <= 1.0:
        raise ConfigError(f"coverage must be in (0, 1], got {coverage!r} (jusText used 0.5)")
    if max_words is not None and max_words < 1:
        raise ConfigError(f"max_words must be at least 1, got {max_words}")
    if min_count < 1:
        raise ConfigError(f"min_count must be at least 1, got {min_count}")


def select_stopwords(
    counts: WordCounts,
    coverage: float = DEFAULT_COVERAGE,
    max_words: int | None = None,
    min_count: int = DEFAULT_MIN_COUNT,
) -> list[StopwordFrequency]:
    """Most frequent words first, until together they cover `coverage` of all tokens.

    Tokens without a letter (numbers) count in the total but are never stop words, as in
    jusText's tool; the word that reaches `coverage` is kept. Ties go alphabetically.
    Stops early at `max_words` words or at words seen fewer than `min_count` times.
    """
    _check_selection(coverage, max_words, min_count)
    total = counts.tokens
    kept: list[StopwordFrequency] = []
    covered = 0
    for word, count in sorted(counts.counts.items(), key=lambda item: (-item[1], item[0])):
        if total == 0 or covered / total >= coverage:
            break
        if count < min_count or (max_words is not None and len(kept) >= max_words):
            break
        if not any(ch.isalpha() for ch in word):
            continue
        covered += count
        kept.append(StopwordFrequency(word, count, covered / total))
    return kept


def build_stoplist(
    lines: Iterable[str],
    coverage: float = DEFAULT_COVERAGE,
    max_words: int | None = None,
    min_count: int = DEFAULT_MIN_COUNT,
) -> list[StopwordFrequency]:
    """A stoplist from sample text, made the way jusText's lists were (see `select_stopwords`)."""
    _check_selection(coverage, max_words, min_count)
    return select_stopwords(count_words(lines), coverage, max_words, min_count)

"""What `corpus-crawler extract` loads before its first page (issue 13: start-up).

Two loads were most of a fixed-language run's start-up and are now cheaper with the
same result: the configuration files read through libyaml, and the Latin code pages
told apart with the stop words those code pages can spell instead of the whole index.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from conftest import GoldPageTuple

from corpus_crawler import _configfiles, decode, langid, stoplists
from corpus_crawler.config import ConfigError
from corpus_crawler.profile import ProfileError, load_profile

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
LATIN = ("cp1252", "cp1250", "iso8859-2", "cp1257", "cp1254")


@pytest.mark.parametrize(
    "path", sorted(CONFIGS.rglob("*.yaml")), ids=lambda p: str(p.relative_to(CONFIGS))
)
def test_every_config_file_loads_as_the_python_loader_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert _configfiles.safe_load(text) == yaml.safe_load(text)


def test_configs_are_read_through_libyaml_when_pyyaml_has_it() -> None:
    # PyYAML's wheels ship libyaml; without it the pure-Python loader is the fallback
    expected = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    assert _configfiles._SafeLoader is expected


def test_invalid_yaml_still_names_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "presets.yaml"
    broken.write_text("corpus:\n  in_shift: [1, 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"presets\.yaml is not valid YAML"):
        _configfiles.read_yaml(broken, "extractor settings")


def test_an_invalid_profile_still_names_its_line_and_column(tmp_path: Path) -> None:
    broken = tmp_path / "crawl.yaml"
    broken.write_text("name: x\nseeds:\n  urls: [http://a.test/\n", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"crawl\.yaml:\d+:\d+: not valid YAML"):
        load_profile(broken)


def _full_index_scores(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """The scores as they were computed before: looked up in the whole index."""
    with monkeypatch.context() as patch:
        patch.setattr(stoplists, "stop_words_within", lambda alphabet: stoplists.stopword_index())
        return decode._latin_code_page_scores(data, "cp1252")


def _latin_samples(gold_dir: Path) -> Iterator[bytes]:
    """Pages in Latin code pages: the bundled pages that are not UTF-8 as served, and
    accented stop words of several languages encoded in each code page."""
    for path in sorted(gold_dir.glob("*/html/*.html")):
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            yield data
    rng = random.Random(13)
    accented = sorted(w for w in stoplists.stopword_index() if not w.isascii())
    for codec in LATIN:
        spelled = [w for w in accented if w.encode(codec, "ignore").decode(codec) == w]
        for _ in range(20):
            words = rng.sample(spelled, 12) + [w.upper() for w in rng.sample(spelled, 4)]
            text = " ".join(words) + " the end, " + "".join(rng.sample(accented, 3))
            yield f"<p>{text}</p>".encode(codec, "replace")


def test_latin_scores_are_those_of_the_whole_index(
    gold_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = list(_latin_samples(gold_dir))
    assert len(samples) > 100
    decided = set()
    for data in samples:
        scores = decode._latin_code_page_scores(data, "cp1252")
        assert scores == _full_index_scores(data, monkeypatch)
        decided.add(scores[0])
    assert decided >= {"cp1252", "cp1250", "cp1257"}  # the samples tell code pages apart


def test_every_stop_word_a_latin_code_page_spells_is_in_the_subset() -> None:
    subset = stoplists.stop_words_within(decode._latin_alphabet())
    index = stoplists.stopword_index()
    assert 0 < len(subset) < len(index) / 3
    for word in index:
        spelled = any(word.encode(codec, "ignore").decode(codec) == word for codec in LATIN)
        assert (not word.isascii() and spelled) <= (word in subset), word
    assert all(not w.isascii() and w in index for w in subset)


def test_the_alphabet_holds_what_lowering_a_decoded_letter_gives() -> None:
    alphabet = set(decode._latin_alphabet())
    for codec in LATIN:
        for ch in bytes(range(256)).decode(codec, "replace"):
            assert ch in alphabet and set(ch.lower()) <= alphabet
    assert "\u0307" in alphabet  # "İ".lower() (cp1254) is "i" and a combining dot


def test_the_subset_is_kept_prebuilt(
    fresh_stoplist_caches: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (fresh_stoplist_caches first: it clears the caches again after monkeypatch undoes)
    monkeypatch.setenv("CORPUS_CRAWLER_CACHE", str(tmp_path))
    built = stoplists.stop_words_within(decode._latin_alphabet())
    assert len(list(tmp_path.glob("stop-words-within-*.marshal"))) == 1
    stoplists.clear_caches()
    monkeypatch.setattr(stoplists, "stopword_index", _never)
    again = stoplists.stop_words_within(decode._latin_alphabet())
    assert again == built and isinstance(again, frozenset)


def _never() -> None:
    raise AssertionError("the prebuilt subset was built again from the whole index")


@pytest.fixture
def fresh_stoplist_caches() -> Iterator[None]:
    stoplists.clear_caches()
    yield
    stoplists.clear_caches()


# --------------------------------------------------------------------------------------
# Language guessing reads the prebuilt word index shard by shard


def _plain_index() -> langid._StopwordIndex:
    return langid._build_index(stoplists.all_stoplists())


def test_sharded_words_give_every_word_its_group() -> None:
    plain = _plain_index().words
    assert isinstance(plain, dict)
    sharded = langid._ShardedWords(langid._pack_words(plain))
    rng = random.Random(7)
    words = rng.sample(sorted(plain), 150)
    strangers = ["".join(rng.sample(sorted(w), len(w))) + "q" for w in words[:100]]
    for word in [*words, *strangers, "", "\udcff", "İ"]:
        assert sharded.get(word) == plain.get(word), word
    # a page's worth of words leaves most shards packed, and lookups go through them
    assert 0 < sharded.unpacked_shards() < langid._WORD_SHARDS / 4
    assert not sharded.merged() and sharded.lookup() == sharded.get
    for word in plain:
        assert sharded.get(word) == plain[word]
    # past a quarter of the shards all are merged into one dict, whose get is handed out
    assert sharded.merged() and sharded.unpacked_shards() == langid._WORD_SHARDS
    assert sharded._merged == plain and sharded._packed is None
    assert sharded.lookup() == sharded._merged.get


def test_shards_merge_once_a_quarter_is_unpacked() -> None:
    plain = _plain_index().words
    assert isinstance(plain, dict)
    sharded = langid._ShardedWords(langid._pack_words(plain, shards=64))
    by_shard: dict[int, str] = {}
    for word in plain:
        by_shard.setdefault(langid._shard_of(word, 63), word)
    for count, key in enumerate(sorted(by_shard), start=1):
        sharded.get(by_shard[key])
        assert sharded.merged() == (count >= 16), count
        if sharded.merged():
            break
    assert sharded._merged == plain


def test_threads_unpacking_the_same_shards_count_each_once() -> None:
    import threading

    plain = _plain_index().words
    assert isinstance(plain, dict)
    sharded = langid._ShardedWords(langid._pack_words(plain, shards=64))
    words = sorted(plain)
    start = threading.Barrier(4)
    failures: list[str] = []

    def look_up(offset: int) -> None:
        start.wait()
        for word in words[offset:] + words[:offset]:
            if sharded.get(word) != plain[word]:
                failures.append(word)

    threads = [threading.Thread(target=look_up, args=(i * 997,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    assert sharded._merged == plain


def test_the_shard_count_is_a_power_of_two() -> None:
    with pytest.raises(ValueError, match="power of two"):
        langid._ShardedWords([b"0"] * 3)
    with pytest.raises(ValueError, match="power of two"):
        langid._ShardedWords([])


def test_guesses_from_the_sharded_index_are_those_of_the_plain_one(
    gold_pages: Callable[[str], Iterator[GoldPageTuple]],
) -> None:
    from corpus_crawler import ExtractConfig, extract

    plain = _plain_index()
    assert isinstance(plain.words, dict)
    sharded = langid._StopwordIndex(
        plain.codes,
        langid._ShardedWords(langid._pack_words(plain.words)),
        plain.groups,
        plain.weights,
    )
    pages = 0
    for set_name in ("readability", "cleanportaleval", "cleaneval-dev"):
        for _, html, _, _ in gold_pages(set_name):
            paragraphs = extract(html, config=ExtractConfig(language="en")).paragraphs
            texts = [p.text for p in paragraphs]
            sample = langid._sample(texts)
            if sample.strip():
                pages += 1
                assert langid._score_stopwords(sample, sharded, None) == langid._score_stopwords(
                    sample, plain, None
                )
    assert pages > 200


def test_one_page_unpacks_a_small_share_of_the_prebuilt_index(
    fresh_langid_index: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORPUS_CRAWLER_CACHE", str(tmp_path))
    langid._stopword_index()  # built and written
    langid._stopword_index.cache_clear()
    index = langid._stopword_index()  # read prebuilt
    assert isinstance(index.words, langid._ShardedWords)
    text = "This is the text of a page, and it is written in the English language. " * 40
    assert langid.identify(text).code == "en"
    assert 0 < index.words.unpacked_shards() < langid._WORD_SHARDS / 10


@pytest.fixture
def fresh_langid_index() -> Iterator[None]:
    langid._stopword_index.cache_clear()
    stoplists.clear_caches()
    yield
    langid._stopword_index.cache_clear()
    stoplists.clear_caches()


# What a one-page run never needs is not loaded at import: the script classes of
# language guessing (~6 ms to compile) and email.utils (~8 ms to import, for the rare
# RFC 2822 date). Asked in a fresh interpreter, as a shell loop runs the command.
_ONE_PAGE = """
import sys
from corpus_crawler import ExtractConfig, Preset, extract, langid
page = b"<html><head><title>t</title></head><body><p>" + (
    b"This is the text of a page, and it is written in the English language. " * 20
) + b"</p></body></html>"
doc = extract(page, None, ExtractConfig(preset=Preset.CORPUS))
assert doc.language == "en", doc
print(langid._script_patterns.cache_info().currsize, "email.utils" in sys.modules)
"""


def test_a_one_page_run_loads_neither_script_classes_nor_email() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _ONE_PAGE], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.split() == ["0", "False"]


def test_the_script_classes_are_compiled_when_a_page_needs_them() -> None:
    assert langid.identify("这是一个用中文写的网页，它的文字没有空格。" * 10).code == "zh"
    assert langid._script_patterns.cache_info().currsize == 1


def test_an_rfc_2822_date_is_still_read() -> None:
    from datetime import date

    from corpus_crawler.pagedate import parse_date

    assert parse_date("Tue, 01 Dec 2026 10:00:00 +0000", date(2026, 12, 2)) == date(2026, 12, 1)

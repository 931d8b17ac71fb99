"""Stoplists: the 100 shipped languages against jusText 3.0.2, strict YAML, building lists."""

from __future__ import annotations

import importlib.util
import io
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import justext
import pytest
import yaml

from corpus_crawler import stoplists
from corpus_crawler.cli import main
from corpus_crawler.config import ConfigError, JustextParams
from corpus_crawler.stoplists import (
    LanguageConfig,
    StopwordFrequency,
    all_stoplists,
    available_languages,
    build_stoplist,
    config_dir,
    count_words,
    get_stoplist,
    load_language,
    load_language_file,
    load_stoplist_file,
    render_language_yaml,
    resolve_language,
    stopword_index,
)

REPO = Path(__file__).resolve().parent.parent
JUSTEXT_NAMES = sorted(justext.get_stoplists())


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    stoplists.clear_caches()
    yield
    stoplists.clear_caches()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("en", "en"),
        ("EN", "en"),
        ("English", "en"),
        ("english", "en"),
        ("eng", "en"),
        ("ces", "cs"),
        ("Czech", "cs"),
        ("cze", "cs"),
        ("ger", "de"),
        ("Norwegian_Bokmal", "nb"),
        ("Norwegian Bokmål", "nb"),
        ("no", "nb"),
        ("nn", "nn"),
        ("en-US", "en"),
        ("pt_BR", "pt"),
        ("be-x-old", "be-tarask"),
        ("Belarusian_Taraskievica", "be-tarask"),
        ("bel", "be"),
        ("simple", "en-x-simple"),
        ("Simple English", "en-x-simple"),
        ("sh", "hbs"),
        ("Serbo-Croatian", "hbs"),
        ("ast", "ast"),
        ("pnb", "pnb"),
        ("bat-smg", "sgs"),
        ("  Welsh ", "cy"),
    ],
)
def test_resolve_language(query: str, code: str) -> None:
    assert resolve_language(query) == code


def test_unknown_language_suggests_and_says_how_to_list() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_language("Englsh")
    message = str(caught.value)
    assert "'Englsh'" in message
    assert "did you mean 'English', code 'en'" in message
    assert "corpus-crawler stoplist list" in message


@pytest.mark.parametrize("query", ["", "   ", "xx", "klingon"])
def test_unresolvable_names(query: str) -> None:
    with pytest.raises(ConfigError, match="stoplist list"):
        resolve_language(query)


def test_available_languages_are_justexts_100() -> None:
    languages = available_languages()
    assert len(languages) == 100
    assert sorted(languages.values()) == JUSTEXT_NAMES
    assert list(languages) == sorted(languages)
    assert languages["en"] == "English"
    assert languages["ast"] == "Asturian"


def test_every_name_and_code_resolves_to_itself() -> None:
    for code, name in available_languages().items():
        assert resolve_language(code) == code
        assert resolve_language(name) == code
        assert resolve_language(name.upper()) == code


# --------------------------------------------------------------------------- shipped data


@pytest.mark.parametrize("name", JUSTEXT_NAMES)
def test_language_file_equals_justext_list(name: str) -> None:
    config = load_language(name)
    assert config.name == name
    assert config.stoplist == justext.get_stoplist(name)
    assert (config_dir() / "languages" / f"{config.code}.yaml").is_file()
    # Only languages whose tuning is measured in configs/languages/README.md differ.
    assert config.justext_params() == JustextParams(**TUNED_PARAMETERS.get(config.code, {}))


TUNED_PARAMETERS: dict[str, dict[str, float]] = {
    "en": {"stopwords_low": 0.28, "stopwords_high": 0.30},
}


@pytest.mark.parametrize("code", ["en", "nb", "hu", "ar"])
def test_files_read_the_same_in_plain_yaml(code: str) -> None:
    """Sorted, lower-cased strings even for a YAML reader that turns `no` into false."""
    text = (config_dir() / "languages" / f"{code}.yaml").read_text(encoding="utf-8")
    words = yaml.safe_load(text)["stoplist"]
    assert all(isinstance(word, str) for word in words)
    assert words == sorted(set(words))
    assert words == [word.lower() for word in words]
    assert set(words) == get_stoplist(code)


def test_index_matches_the_files() -> None:
    folder = config_dir() / "languages"
    index = stoplists._index()
    assert len(index) == 100
    for code, entry in index.items():
        config = load_language_file(folder / f"{code}.yaml")
        assert (config.code, config.name, config.iso639_3, config.aliases) == (
            code,
            entry.name,
            entry.iso639_3,
            entry.aliases,
        )


def test_get_stoplist_is_lower_cased_and_cached() -> None:
    words = get_stoplist("English")
    assert "the" in words and "The" not in words
    assert get_stoplist("English") is words
    assert load_language("en") is load_language("eng")


def test_all_stoplists_and_stopword_index_agree() -> None:
    lists = all_stoplists()
    assert sorted(lists) == sorted(available_languages())
    assert lists["cs"] == get_stoplist("cs")
    index = stopword_index()
    for code, words in lists.items():
        for word in words:
            assert code in index[word]
    # every (word, code) pair above is in the index and the index holds no others
    assert sum(len(codes) for codes in index.values()) == sum(len(w) for w in lists.values())
    assert all(list(codes) == sorted(codes) for codes in index.values())
    assert "de" in index["und"] and "en" not in index["und"]
    assert "xyzzy" not in index


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_language_configs", REPO / "tools" / "make_language_configs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_reproduces_the_committed_files() -> None:
    assert _generator().main(["--check", "--out", str(config_dir() / "languages")]) == 0


def test_generator_keeps_tuned_parameters(tmp_path: Path) -> None:
    committed = config_dir() / "languages"
    for path in committed.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    tuned = (committed / "cs.yaml").read_text(encoding="utf-8")
    tuned = tuned.replace("parameters: {}", "parameters:\n  stopwords_low: 0.25")
    write(tmp_path / "cs.yaml", tuned.replace("  - a\n", ""))  # a word lost by hand
    generator = _generator()
    assert generator.main(["--check", "--out", str(tmp_path)]) == 1
    assert generator.main(["--out", str(tmp_path)]) == 0
    assert (tmp_path / "cs.yaml").read_text(encoding="utf-8") == tuned
    assert load_language_file(tmp_path / "cs.yaml").parameters == {"stopwords_low": 0.25}
    assert generator.main(["--check", "--out", str(tmp_path)]) == 0


# --------------------------------------------------------------------------- strict YAML

GOOD = "code: xx\nname: Xish\nparameters: {}\nstoplist:\n  - a\n  - b\n"


def test_valid_file_loads(tmp_path: Path) -> None:
    text = (
        "code: xx\nname: Xish\niso639_3: xxx\naliases: [xq]\n"
        "parameters: {stopwords_low: 0.2, length_low: 50}\n"
        "stoplist:\n  - The\n  - 'no'\n  - no\n  - on\n  - '1'\n  - \"(born\"\n"
    )
    config = load_language_file(write(tmp_path / "xx.yaml", text))
    # plain `no`/`on` are words, not booleans; words are lower-cased
    assert config.stoplist == frozenset({"the", "no", "on", "1", "(born"})
    assert config.iso639_3 == "xxx" and config.aliases == ("xq",)
    assert dict(config.parameters) == {"stopwords_low": 0.2, "length_low": 50}
    params = config.justext_params()
    assert (params.stopwords_low, params.length_low, params.length_high) == (0.2, 50, 200)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD + "stoplst: []\n", "unknown key `stoplst`.*did you mean `stoplist`"),
        (GOOD.replace("name:", "nmae:"), "unknown key `nmae`.*did you mean `name`"),
        (GOOD + "colour: red\n", "unknown key `colour`.*known keys: code, name"),
        (
            GOOD.replace("{}", "{stopwords_hi: 0.5}"),
            "unknown key 'stopwords_hi'.*did you mean 'stopwords_high'",
        ),
        (GOOD.replace("{}", "{length_low: many}"), "length_low must be a whole number"),
        (GOOD.replace("{}", "{stopwords_low: 0.9}"), "stopwords_low .* must not exceed"),
        (GOOD.replace("{}", "[1, 2]"), "`parameters` must be a mapping.* got a list"),
        (GOOD.replace("name: Xish", "name: [a, b]"), "`name` must be a non-empty string"),
        (GOOD.replace("name: Xish", "name:"), "`name` must be a non-empty string.*null"),
        (GOOD.replace("code: xx", "code: {a: 1}"), "`code` must be a non-empty string"),
        ("code: xx\nname: X\nstoplist: hello\n", "`stoplist` must be a list of words"),
        ("code: xx\nname: X\nstoplist: []\n", "`stoplist` is empty"),
        ("code: xx\nname: X\nstoplist:\n  - a\n  - [b]\n", "stoplist item 2 must be a word"),
        ("code: xx\nname: X\nstoplist:\n  - a\n  -\n", "stoplist item 2 must be a word"),
        ("code: xx\nname: X\nstoplist:\n  - a b\n", "item 1 'a b' must be one word"),
        ("code: xx\nname: X\naliases: xq\nstoplist: [a]\n", "`aliases` must be a list"),
        ("code: xx\nname: X\n", "missing key `stoplist`"),
        ("name: X\nstoplist: [a]\n", "missing key `code`"),
        ("code: yy\nname: X\nstoplist: [a]\n", "does not match the file name"),
        (GOOD + "name: again\n", "key `name` appears twice"),
        ("- a\n- b\n", "expected a mapping"),
        ("", "is empty"),
        ("code: xx\nname: [unclosed\n", "not valid YAML"),
    ],
)
def test_invalid_file_is_a_config_error_naming_the_file(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path / "xx.yaml", text)
    with pytest.raises(ConfigError, match=expected) as caught:
        load_language_file(path)
    assert str(path) in str(caught.value)


def test_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "xx.yaml", "code: xx\nname: X\nstoplist:\n  - a\n  - {b: 1}\n")
    with pytest.raises(ConfigError, match=rf"{path}:5: stoplist item 2"):
        load_language_file(path)


def test_missing_language_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_language_file(tmp_path / "zz.yaml")


def test_render_round_trips(tmp_path: Path) -> None:
    config = LanguageConfig(
        code="xx",
        name="Xish",
        stoplist=frozenset({"no", "yes", "#", "a:b", "'q", "null", "3", "ǆ"}),
        parameters={"stopwords_high": 0.4},
        iso639_3="xxx",
        aliases=("on",),
    )
    path = write(tmp_path / "xx.yaml", render_language_yaml(config, header="# hi\n"))
    loaded = load_language_file(path)
    assert loaded.stoplist == config.stoplist
    assert (loaded.code, loaded.name, loaded.iso639_3, loaded.aliases) == (
        "xx",
        "Xish",
        "xxx",
        ("on",),
    )
    assert dict(loaded.parameters) == {"stopwords_high": 0.4}


# --------------------------------------------------------------------------- user files


def test_plain_text_stoplist(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    path.write_bytes(
        "\ufeff# my words\nThe\n\n  of  \nand # kept\n   # indented comment\n".encode()
    )
    assert load_stoplist_file(path) == frozenset({"the", "of", "and", "#", "kept"})
    assert load_stoplist_file(str(path)) == load_stoplist_file(path)


def test_plain_text_stoplist_is_reread_when_changed(tmp_path: Path) -> None:
    path = write(tmp_path / "words.txt", "a\n")
    assert load_stoplist_file(path) == {"a"}
    write(path, "b\nc\n")
    assert load_stoplist_file(path) == {"b", "c"}


def test_yaml_stoplist_needs_no_code_or_name(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.yml", "stoplist:\n  - Ein\n  - der\n")
    assert load_stoplist_file(path) == {"ein", "der"}
    with pytest.raises(ConfigError, match="unknown key `stopwords`"):
        load_stoplist_file(write(tmp_path / "bad.yaml", "stopwords: [a]\n"))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"# only a comment\n\n", "has no words"),
        (b"", "has no words"),
        (b"caf\xe9\n", r"is not UTF-8 \(bad byte at offset 3\).*iconv"),
    ],
)
def test_bad_plain_text_stoplist(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "words.txt"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=expected):
        load_stoplist_file(path)


def test_missing_or_directory_stoplist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_stoplist_file(tmp_path / "nope.txt")
    with pytest.raises(ConfigError, match="is a directory"):
        load_stoplist_file(tmp_path)


# --------------------------------------------------------------------------- config folder


def test_config_dir_prefers_the_checkout(tmp_path: Path) -> None:
    package = tmp_path / "corpus_crawler"
    (package / "_configs" / "languages").mkdir(parents=True)
    assert stoplists._find_config_dir(package) == package / "_configs"
    (tmp_path / "configs" / "languages").mkdir(parents=True)
    assert stoplists._find_config_dir(package) == tmp_path / "configs"


def test_config_dir_of_this_checkout() -> None:
    assert config_dir() == REPO / "configs"


def test_packaged_copy_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed wheel: no configs/ beside the package, the copy in _configs/ is used."""
    package = tmp_path / "site-packages" / "corpus_crawler"
    languages = package / "_configs" / "languages"
    languages.mkdir(parents=True)
    for name in ("en.yaml", "cs.yaml", "index.yaml"):
        shutil.copy(REPO / "configs" / "languages" / name, languages / name)
    # a language the user added without an index entry is found too
    write(languages / "xx.yaml", "code: xx\nname: Xish\nstoplist: [ab, cd]\n")
    monkeypatch.setattr(stoplists, "config_dir", lambda: stoplists._find_config_dir(package))
    assert available_languages() == {"cs": "Czech", "en": "English", "xx": "Xish"}
    assert resolve_language("Xish") == "xx"
    assert get_stoplist("xish") == {"ab", "cd"}
    assert get_stoplist("English") == justext.get_stoplist("English")
    with pytest.raises(ConfigError, match="unknown language 'German'"):
        resolve_language("German")


# --------------------------------------------------------------------------- building

# the 6, a 4, of 3, 2024 3 (a number), cat 2, हिन्दी 2, dog 1: 21 tokens
SAMPLE = [
    "The cat, the dog: A 2024 हिन्दी!\n",
    "THE (the) a, a of 2024\n",
    "of of the the; A cat 2024 हिन्दी.\n",
]


def test_count_words() -> None:
    counts = count_words(SAMPLE)
    assert counts.tokens == 21
    assert dict(counts.counts) == {
        "the": 6,
        "a": 4,
        "of": 3,
        "2024": 3,
        "cat": 2,
        "हिन्दी": 2,  # combining marks stay inside the word
        "dog": 1,
    }


@pytest.mark.parametrize(
    ("coverage", "options", "expected"),
    [
        # the word that reaches the coverage is kept, as in jusText's tool
        (0.5, {}, [("the", 6, 6 / 21), ("a", 4, 10 / 21), ("of", 3, 13 / 21)]),
        (0.3, {}, [("the", 6, 6 / 21), ("a", 4, 10 / 21)]),
        (0.2, {}, [("the", 6, 6 / 21)]),
        # the number 2024 is skipped but counted; a tie goes alphabetically
        (0.7, {}, [("the", 6, 6 / 21), ("a", 4, 10 / 21), ("of", 3, 13 / 21), ("cat", 2, 15 / 21)]),
        (1.0, {}, [("the", 6, 6 / 21), ("a", 4, 10 / 21), ("of", 3, 13 / 21),
                   ("cat", 2, 15 / 21), ("हिन्दी", 2, 17 / 21)]),
        (1.0, {"min_count": 1}, [("the", 6, 6 / 21), ("a", 4, 10 / 21), ("of", 3, 13 / 21),
                                 ("cat", 2, 15 / 21), ("हिन्दी", 2, 17 / 21), ("dog", 1, 18 / 21)]),
        (0.9, {"max_words": 2}, [("the", 6, 6 / 21), ("a", 4, 10 / 21)]),
        (0.9, {"min_count": 4}, [("the", 6, 6 / 21), ("a", 4, 10 / 21)]),
    ],
)  # fmt: skip
def test_build_stoplist(
    coverage: float, options: dict[str, int], expected: list[tuple[str, int, float]]
) -> None:
    result = build_stoplist(iter(SAMPLE), coverage=coverage, **options)
    assert result == [StopwordFrequency(*entry) for entry in expected]
    assert [entry.word for entry in result] == [word for word, _, _ in expected]


def test_build_stoplist_streams_a_generator_once() -> None:
    consumed = []

    def lines() -> Iterator[str]:
        for line in SAMPLE * 1000:
            consumed.append(line)
            yield line

    assert [e.word for e in build_stoplist(lines())] == ["the", "a", "of"]
    assert len(consumed) == 3000


@pytest.mark.parametrize(
    "options",
    [{"coverage": 0.0}, {"coverage": 1.5}, {"max_words": 0}, {"min_count": 0}],
)
def test_build_stoplist_rejects_bad_settings(options: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        build_stoplist(SAMPLE, **options)  # type: ignore[arg-type]


def test_build_stoplist_of_nothing() -> None:
    assert build_stoplist([]) == []
    assert build_stoplist(["2024 1999 ..."]) == []


# --------------------------------------------------------------------------- CLI


def test_cli_build_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = write(tmp_path / "sample.txt", "".join(SAMPLE))
    out = tmp_path / "xx.yaml"
    argv = ["stoplist", "build", str(sample), "--code", "xx", "--name", "Xish", "-o", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "21 tokens read, 7 distinct words, 3 words kept" in err
    assert "coverage 61.9%" in err
    config = load_language_file(out)
    assert (config.code, config.name, config.stoplist) == ("xx", "Xish", {"the", "a", "of"})
    assert load_stoplist_file(out) == {"the", "a", "of"}
    # written through a temporary file that was renamed: nothing else is left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.txt", "xx.yaml"]


def test_cli_build_text_in_frequency_order(tmp_path: Path) -> None:
    sample = write(tmp_path / "sample.txt", "".join(SAMPLE))
    out = tmp_path / "words.txt"
    assert (
        main(["stoplist", "build", str(sample), str(sample), "--coverage", "0.7", "-o", str(out)])
        == 0
    )
    assert out.read_text(encoding="utf-8") == "the\na\nof\ncat\n"
    assert load_stoplist_file(out) == {"the", "a", "of", "cat"}


def test_cli_build_stdin_and_max_words(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO("".join(SAMPLE).encode()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["stoplist", "build", "-", "--max-words", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "the\n"
    assert "coverage 50% not reached (--max-words stopped it)" in captured.err


def test_cli_build_replaces_bad_bytes_and_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = tmp_path / "latin1.txt"
    sample.write_bytes(b"caf\xe9 caf\xe9 the\nthe the\n")
    assert main(["stoplist", "build", str(sample)]) == 0
    captured = capsys.readouterr()
    assert "1 line(s) were not valid UTF-8" in captured.err
    assert captured.out == "the\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        (b"", "contain no words"),
        (b"12 34 -- !!\n", "contain no words"),
        (b"all words differ here\n", "no word occurs 2 times"),
    ],
)
def test_cli_build_bad_samples_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, expected: str
) -> None:
    sample = tmp_path / "sample.txt"
    if content is not None:
        sample.write_bytes(content)
    out = tmp_path / "out.txt"
    assert main(["stoplist", "build", str(sample), "-o", str(out)]) == 2
    assert expected in capsys.readouterr().err
    assert not out.exists()


def test_cli_build_bad_coverage_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["stoplist", "build", str(tmp_path / "x.txt"), "--coverage", "2"])
    assert caught.value.code == 2


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stoplist", "list"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 100
    assert ["en", "English", str(len(justext.get_stoplist("English")))] in rows
    assert rows[[r[0] for r in rows].index("be-tarask")][:2] == [
        "be-tarask",
        "Belarusian_Taraskievica",
    ]


def test_cli_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stoplist", "show", "Czech"]) == 0
    words = capsys.readouterr().out.splitlines()
    assert words == sorted(justext.get_stoplist("Czech"))
    assert main(["stoplist", "show", "Czeck"]) == 2
    assert "did you mean 'Czech'" in capsys.readouterr().err


# ---------------------------------------------------------------- prebuilt index (issue 13)


def test_prebuilt_data_is_built_once_and_rebuilt_when_a_source_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corpus_crawler import _prebuilt

    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, str(tmp_path / "cache"))
    source = tmp_path / "xx.yaml"
    source.write_text("stoplist: [a, b]\n", encoding="utf-8")
    builds: list[int] = []

    def build() -> dict[str, tuple[str, ...]]:
        builds.append(1)
        return {"word": ("xx",), "count": (str(len(builds)),)}

    first = _prebuilt.load_or_build("test-index", "1", [source], build)
    again = _prebuilt.load_or_build("test-index", "1", [source], build)
    assert first == again == {"word": ("xx",), "count": ("1",)}
    assert len(builds) == 1
    source.write_text("stoplist: [a, b, c]\n", encoding="utf-8")
    changed = _prebuilt.load_or_build("test-index", "1", [source], build)
    assert changed["count"] == ("2",)
    # a new builder version is a new key too
    _prebuilt.load_or_build("test-index", "2", [source], build)
    assert len(builds) == 3


def test_a_corrupt_or_unwritable_cache_only_costs_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corpus_crawler import _prebuilt

    cache = tmp_path / "cache"
    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, str(cache))
    source = tmp_path / "xx.yaml"
    source.write_text("x\n", encoding="utf-8")
    assert _prebuilt.load_or_build("idx", "1", [source], lambda: {"a": 1}) == {"a": 1}
    (written,) = cache.glob("idx-*.marshal")
    written.write_bytes(b"\x00garbage")
    assert _prebuilt.load_or_build("idx", "1", [source], lambda: {"a": 2}) == {"a": 2}
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, str(blocked / "cache"))
    assert _prebuilt.load_or_build("idx", "1", [source], lambda: {"a": 3}) == {"a": 3}
    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, "off")
    assert _prebuilt.cache_folder() is None


def test_a_new_prebuilt_file_removes_those_of_its_name_not_read_for_a_month(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import time

    from corpus_crawler import _prebuilt

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, str(cache))
    source = tmp_path / "xx.yaml"
    source.write_text("x\n", encoding="utf-8")
    month_ago = time.time() - 31 * 86_400
    stale = cache / "idx-0123456789abcdef01234567.marshal"  # an older version's
    recent = cache / "idx-89abcdef0123456789abcdef.marshal"  # another checkout's, in use
    other_name = cache / "idx-more-0123456789abcdef01234567.marshal"
    for path in (stale, recent, other_name):
        path.write_bytes(b"\x00")
    for path in (stale, other_name):
        os.utime(path, (month_ago, month_ago))
    read_last_month = _prebuilt.load_or_build("idx", "1", [source], lambda: {"a": 1})
    assert read_last_month == {"a": 1}
    (written,) = set(cache.glob("idx-*.marshal")) - {recent, other_name}
    assert not stale.exists() and recent.exists() and other_name.exists()
    # reading a file keeps it: its mtime says when it was last used
    os.utime(written, (month_ago, month_ago))
    assert _prebuilt.load_or_build("idx", "1", [source], lambda: {"a": 2}) == {"a": 1}
    assert written.stat().st_mtime > month_ago + 86_400


def test_language_guess_is_the_same_from_the_prebuilt_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cached stopword indexes give the same answers as ones built from the YAML."""
    from corpus_crawler import _prebuilt, langid

    texts = [
        "Der Hund läuft schnell über die Straße und bellt, weil er nicht allein sein will.",
        "The quick brown fox jumps over the lazy dog because it wants to be with the others.",
        "Le chien court vite dans la rue et il aboie parce qu'il ne veut pas être seul.",
    ]

    def answers() -> tuple[list[tuple[str | None, float]], dict[str, tuple[str, ...]]]:
        langid._stopword_index.cache_clear()
        stoplists.stopword_index.cache_clear()
        guesses = [langid.identify_by_stopwords(t) for t in texts]
        index = stoplists.stopword_index()
        return [(g.code, round(g.confidence, 9)) for g in guesses], {
            w: index[w] for w in ("die", "the", "für", "très", "že")
        }

    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, "off")
    built = answers()
    monkeypatch.setenv(_prebuilt.ENVIRONMENT_VARIABLE, str(tmp_path / "cache"))
    answers()  # writes the cache
    assert len(list((tmp_path / "cache").glob("*.marshal"))) == 2
    cached = answers()
    assert cached == built
    assert [code for code, _ in built[0]] == ["de", "en", "fr"]
    langid._stopword_index.cache_clear()
    stoplists.stopword_index.cache_clear()


def test_auto_language_reads_one_language_file_once_the_index_is_prebuilt(tmp_path: Path) -> None:
    """Issue 13's start-up: with the prebuilt index, `--lang auto` parses the YAML of the
    page's language only, not the 100 stoplists (which took a second per run)."""
    import os
    import subprocess

    page = tmp_path / "page.html"
    page.write_text(
        "<html><body><p>"
        + "This is a sentence that has enough of the words which English uses all the time. " * 5
        + "</p></body></html>",
        encoding="utf-8",
    )
    probe = (
        "import sys\n"
        "from corpus_crawler import extract, ExtractConfig, stoplists\n"
        "doc = extract(open(sys.argv[1], 'rb').read(), config=ExtractConfig())\n"
        "print(doc.language, stoplists._load_code.cache_info().currsize)\n"
    )
    env = dict(os.environ, CORPUS_CRAWLER_CACHE=str(tmp_path / "cache"))
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe, str(page)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][0] == runs[1][0] == "en"
    assert int(runs[0][1]) >= 100  # the first run builds the index from every file
    assert int(runs[1][1]) == 1  # later runs read only English's file

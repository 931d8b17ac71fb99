"""Crawl profiles: strict loading, messages that name the file, the key and the fix,
and the Scrapy settings a profile becomes."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from scrapy.settings import Settings

from corpus_crawler.config import ExtractConfig, JustextParams, Preset
from corpus_crawler.profile import Profile, ProfileError, load_profile, parse_profile
from corpus_crawler.setting_keys import NO_LIMIT
from pipelines.bridge import profile_settings

ROOT = Path(__file__).resolve().parent.parent
CRAWLS = ROOT / "configs" / "crawls"


def _keys(cls: type[Any], prefix: str = "") -> set[str]:
    """Every key path a profile section accepts, e.g. `output.warc.prefix`."""
    keys: set[str] = set()
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name == "source":
            continue
        # a field named after a Python keyword (yield_) is the YAML key without the "_"
        name = f.name.removesuffix("_")
        keys.add(prefix + name)
        if isinstance(hints[f.name], type) and dataclasses.is_dataclass(hints[f.name]):
            keys |= _keys(hints[f.name], f"{prefix}{name}.")
    return keys


def _yaml_keys(data: dict[str, Any], prefix: str = "", leaves: bool = False) -> set[str]:
    keys: set[str] = set()
    for key, value in data.items():
        keys.add(prefix + key)
        if isinstance(value, dict) and prefix + key not in {
            "settings",
            "extraction.parameters",
            "extraction.extractor_options",
        }:
            keys |= _yaml_keys(value, f"{prefix}{key}.")
    return keys


@pytest.mark.parametrize("path", sorted(CRAWLS.glob("*.yaml")), ids=lambda p: p.name)
def test_bundled_profiles_load(path: Path) -> None:
    profile = load_profile(path)
    assert profile.source == str(path)
    assert profile_settings(profile)["CORPUS_PROFILE_NAME"] == profile.name


def test_example_profile_documents_every_key() -> None:
    data = yaml.safe_load((CRAWLS / "example.yaml").read_text(encoding="utf-8"))
    assert _yaml_keys(data) == _keys(Profile)


def test_example_profile_values_are_the_defaults_except_the_marked_examples() -> None:
    profile = load_profile(CRAWLS / "example.yaml")
    default = Profile()
    assert dataclasses.replace(
        profile,
        name=default.name,
        seeds=dataclasses.replace(profile.seeds, urls=()),
        scope=dataclasses.replace(profile.scope, deny_patterns=()),
        settings={},
    ) == dataclasses.replace(default, source=profile.source)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "scope:\n  max_depht: 3\n",
            "x.yaml: scope.max_depht: unknown key; did you mean `max_depth`?",
        ),
        ("sedes: {}\n", "x.yaml: sedes: unknown key; did you mean `seeds`?"),
        (
            "output:\n  warc:\n    prefx: a\n",
            "x.yaml: output.warc.prefx: unknown key; did you mean `prefix`?",
        ),
        (
            "scope:\n  max_depth: five\n",
            "x.yaml: scope.max_depth: must be a whole number, got string 'five'",
        ),
        ("scope:\n  max_depth: -1\n", "x.yaml: scope.max_depth: must be >= 0 or null, got -1"),
        ("seeds:\n  urls: https://a.org/\n", "x.yaml: seeds.urls: must be a list of strings"),
        ("seeds:\n  urls: [a.org]\n", "is not an http(s) URL: write it with its scheme"),
        (
            "politeness:\n  obey_robots_txt: yes please\n",
            "politeness.obey_robots_txt: must be true or false",
        ),
        ("politeness:\n  download_delay: fast\n", "politeness.download_delay: must be a number"),
        ("network:\n  allowed_networks: [127.0.0.1/33]\n", "write e.g. `127.0.0.1/32`"),
        (
            "scope:\n  deny_patterns: ['(unclosed']\n",
            "scope.deny_patterns: '(unclosed' is not a valid",
        ),
        ("scope:\n  allowed_domains: [https://a.org/]\n", "write it lower-case without scheme"),
        ("extraction:\n  preset: refrence\n", "did you mean 'reference'?"),
        ("extraction:\n  extractor: jusText\n", "extraction.extractor: unknown extractor"),
        (
            "extraction:\n  parameters: {length_lo: 5}\n",
            "extraction.parameters: unknown key 'length_lo'",
        ),
        (
            "extraction:\n  parameters: {stopwords_low: 2}\n",
            "stopwords_low must be between 0 and 1",
        ),
        ("limits:\n  max_page_bytes: 0\n", "limits.max_page_bytes: must be > 0"),
        (
            "output:\n  crawl_log_max_file_bytes: 0\n",
            "x.yaml: output.crawl_log_max_file_bytes: must be > 0 bytes, got 0",
        ),
        ("settings:\n  log_level: INFO\n", "settings: 'log_level' is not a Scrapy setting name"),
        ("- a\n- b\n", "x.yaml: a crawl profile is a YAML mapping of sections"),
    ],
)
def test_errors_name_the_file_the_key_and_the_fix(text: str, expected: str) -> None:
    with pytest.raises(ProfileError) as error:
        parse_profile(yaml.safe_load(text), "x.yaml")
    assert expected in str(error.value)


def test_yaml_syntax_errors_give_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nscope:\n  max_depth: 3\n   follow_links: true\n", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"broken\.yaml:4:\d+: not valid YAML"):
        load_profile(path)


def test_missing_file_is_a_profile_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="cannot read crawl profile"):
        load_profile(tmp_path / "nope.yaml")


def test_empty_profile_is_all_defaults() -> None:
    assert parse_profile(None, "empty.yaml") == Profile()


def test_integers_are_accepted_where_numbers_are_expected() -> None:
    profile = parse_profile({"politeness": {"download_delay": 2}})
    assert profile.politeness.download_delay == 2.0
    assert isinstance(profile.politeness.download_delay, float)


def test_seed_files_are_read_relative_to_the_profile(tmp_path: Path) -> None:
    (tmp_path / "seeds.txt").write_text(
        "# news sites\nhttps://a.example/\n\nhttps://b.example/  # trailing comment\n"
        "https://a.example/\n",
        encoding="utf-8",
    )
    path = tmp_path / "p.yaml"
    path.write_text(
        "seeds:\n  urls: [https://c.example/]\n  files: [seeds.txt]\n", encoding="utf-8"
    )
    profile = load_profile(path)
    assert profile.seed_urls() == ("https://c.example/", "https://a.example/", "https://b.example/")
    assert profile_settings(profile)["CORPUS_SEEDS_FILES"] == [str(tmp_path / "seeds.txt")]


def test_a_bad_line_in_a_seed_file_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "seeds.txt").write_text("https://a.example/\nb.example\n", encoding="utf-8")
    path = tmp_path / "p.yaml"
    path.write_text("seeds:\n  files: [seeds.txt]\n", encoding="utf-8")
    with pytest.raises(
        ProfileError,
        match=r"seeds\.txt:2: 'b\.example' is not a URL \(write it with its scheme, e\.g\."
        r" https://b\.example\)",
    ):
        load_profile(path).seed_urls()


def test_profiles_are_frozen() -> None:
    profile = Profile()
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.name = "changed"  # type: ignore[misc]


def test_extract_config_follows_the_extraction_section() -> None:
    profile = parse_profile(
        {
            "extraction": {
                "preset": "reference",
                "language": "cs",
                "accept_languages": ["cs", "sk"],
                "parameters": {"length_low": 50},
                "max_bytes": 1000,
            }
        }
    )
    config = profile.extraction.extract_config(max_page_bytes=5000)
    assert config == ExtractConfig(
        preset=Preset.REFERENCE,
        language="cs",
        accept_languages=frozenset({"cs", "sk"}),
        params=JustextParams(length_low=50),
        max_bytes=1000,
    )
    assert parse_profile({}).extraction.extract_config(5000).max_bytes == 5000


def test_profile_settings_map_sections_to_scrapy_settings() -> None:
    profile = parse_profile(
        {
            "scope": {"max_depth": None, "max_pages": 10},
            "politeness": {"download_delay": 0.5, "randomize_delay": False},
            "limits": {"max_run_time": 60, "max_page_bytes": 1000, "warn_page_bytes": 5000},
            "output": {"progress_interval": 0, "warc": {"enabled": False}},
            "settings": {"LOG_LEVEL": "DEBUG"},
        }
    )
    settings = profile_settings(profile)
    assert settings["CORPUS_SCOPE_MAX_DEPTH"] == NO_LIMIT
    assert settings["CORPUS_SCOPE_MAX_PAGES"] == 10
    assert settings["DOWNLOAD_DELAY"] == 0.5 and settings["DOWNLOAD_DELAY_JITTER"] == 0.0
    assert settings["CLOSESPIDER_TIMEOUT"] == 60
    assert settings["DOWNLOAD_MAXSIZE"] == 1000 and settings["DOWNLOAD_WARNSIZE"] == 1000
    assert settings["CORPUS_PROGRESS_ENABLED"] is False
    assert settings["CORPUS_WARC_ENABLED"] is False
    assert settings["LOG_LEVEL"] == "DEBUG"


def test_command_line_settings_win_over_the_profile() -> None:
    # what `corpus-crawler crawl -s` and `scrapy crawl -s` do: cmdline beats spider priority
    settings = Settings()
    settings.setmodule("pipelines.settings", priority="project")
    settings.set("DOWNLOAD_DELAY", "3", priority="cmdline")
    settings.setdict(
        profile_settings(parse_profile({"politeness": {"download_delay": 0.25}})),
        priority="spider",
    )
    assert settings.getfloat("DOWNLOAD_DELAY") == 3.0
    assert settings.getbool("CORPUS_WARC_ENABLED") is True


def _alias_bomb(levels: int, indent: str = "  ") -> str:
    """YAML whose aliases expand to 10**levels strings (it loads as a small graph)."""
    lines = [f"{indent}A0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        items = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"{indent}A{level}: &a{level} [{items}]")
    return "\n".join(lines) + "\n"


def test_a_profile_whose_aliases_expand_past_a_million_values_is_refused(tmp_path: Path) -> None:
    """A "billion laughs" profile loaded in a moment and then hung the crawl's start
    (its settings were walked, summarised and copied whole): refused at load."""
    path = tmp_path / "bomb.yaml"
    path.write_text(
        "name: bomb\nseeds:\n  urls: ['http://127.0.0.1:9/']\nsettings:\n" + _alias_bomb(8),
        encoding="utf-8",
    )
    with pytest.raises(ProfileError, match=r"more than 1,000,000 values once its YAML aliases"):
        load_profile(path)
    # a large profile without aliases loads: 20,000 seed URLs written inline
    urls = "".join(f"    - http://example.org/{i}\n" for i in range(20_000))
    path.write_text(f"name: big\nseeds:\n  urls:\n{urls}", encoding="utf-8")
    assert len(load_profile(path).seeds.urls) == 20_000


def test_an_extractor_options_file_whose_aliases_explode_is_refused(tmp_path: Path) -> None:
    from corpus_crawler._configfiles import read_yaml
    from corpus_crawler.config import ConfigError

    path = tmp_path / "options.yaml"
    path.write_text("x:\n" + _alias_bomb(7), encoding="utf-8")
    with pytest.raises(ConfigError, match="YAML aliases"):
        read_yaml(path, "declutter options")

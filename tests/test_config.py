"""Parameter validation: every error names the parameter and says how to fix it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from corpus_crawler.combined import CombinedOptions
from corpus_crawler.config import ConfigError, ExtractConfig, JustextParams, Preset
from corpus_crawler.container import ContainerOptions
from corpus_crawler.declutter._options import DeclutterOptions
from corpus_crawler.extract import extract
from corpus_crawler.kimatu._options import KimatuOptions


def error(**values: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        JustextParams(**values)
    return str(caught.value)


def test_defaults_are_the_seeds() -> None:
    params = JustextParams()
    assert (params.length_low, params.length_high) == (70, 200)
    assert (params.stopwords_low, params.stopwords_high) == (0.30, 0.32)
    assert params.max_link_density == 0.2
    assert params.max_heading_distance == 200
    assert params.no_headings is False and params.no_headlines is False


def test_params_are_frozen() -> None:
    params = JustextParams()
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.length_low = 5  # type: ignore[misc]


@pytest.mark.parametrize("name", ["length_low", "length_high", "max_heading_distance"])
def test_negative_lengths(name: str) -> None:
    values: dict[str, Any] = {name: -1}
    if name == "length_high":
        values["length_low"] = 0
    message = error(**values)
    assert name in message
    assert ">= 0" in message and "-1" in message


@pytest.mark.parametrize("name", ["stopwords_low", "stopwords_high", "max_link_density"])
@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan"), float("inf")])
def test_shares_outside_zero_to_one(name: str, value: float) -> None:
    values: dict[str, Any] = {name: value}
    if name == "stopwords_low" and value > 0:
        values["stopwords_high"] = 1.0
    message = error(**values)
    assert name in message
    assert "between 0 and 1" in message


@pytest.mark.parametrize("value", ["70", 70.5, None, [70]])
def test_lengths_must_be_whole_numbers(value: object) -> None:
    message = error(length_low=value)
    assert "length_low" in message
    assert "whole number" in message
    assert repr(value) in message


@pytest.mark.parametrize("value", ["0.3", None, (0.3,)])
def test_shares_must_be_numbers(value: object) -> None:
    message = error(stopwords_low=value)
    assert "stopwords_low" in message
    assert "number between 0 and 1" in message


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("length_low", True),
        ("max_heading_distance", False),
        ("stopwords_high", True),
        ("max_link_density", False),
    ],
)
def test_bools_are_not_numbers(name: str, value: bool) -> None:
    message = error(**{name: value})
    assert name in message


@pytest.mark.parametrize("name", ["no_headings", "no_headlines"])
@pytest.mark.parametrize("value", ["yes", 1, 0, None, "false"])
def test_switches_must_be_bools(name: str, value: object) -> None:
    message = error(**{name: value})
    assert name in message
    assert "true or false" in message


def test_length_low_above_length_high() -> None:
    message = error(length_low=300, length_high=200)
    assert "length_low (300)" in message and "length_high (200)" in message
    assert "raise length_high or lower length_low" in message


def test_stopwords_low_above_stopwords_high() -> None:
    message = error(stopwords_low=0.5, stopwords_high=0.4)
    assert "stopwords_low (0.5)" in message and "stopwords_high (0.4)" in message
    assert "raise stopwords_high or lower stopwords_low" in message


def test_edge_values_are_accepted() -> None:
    JustextParams(
        length_low=0,
        length_high=0,
        stopwords_low=0.0,
        stopwords_high=0.0,
        max_link_density=0.0,
        max_heading_distance=0,
    )
    JustextParams(
        length_low=5, length_high=5, stopwords_low=1, stopwords_high=1, max_link_density=1
    )


def test_from_mapping() -> None:
    params = JustextParams.from_mapping({"stopwords_low": 0.25, "no_headings": True})
    assert params == JustextParams(stopwords_low=0.25, no_headings=True)


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("stopwords_hi", "stopwords_high"),
        ("length_lo", "length_low"),
        ("max_link_dens", "max_link_density"),
        ("no_headline", "no_headlines"),
    ],
)
def test_from_mapping_unknown_key_suggests_the_closest(key: str, suggestion: str) -> None:
    with pytest.raises(ConfigError) as caught:
        JustextParams.from_mapping({key: 1}, source="configs/languages/cs.yaml")
    message = str(caught.value)
    assert f"unknown key {key!r}" in message
    assert "configs/languages/cs.yaml" in message
    assert f"did you mean {suggestion!r}" in message


def test_from_mapping_unknown_key_without_a_close_match() -> None:
    with pytest.raises(ConfigError) as caught:
        JustextParams.from_mapping({"colour": "blue"})
    assert "unknown key 'colour'" in str(caught.value)
    assert "did you mean" not in str(caught.value)


def test_from_mapping_bad_value_names_the_source() -> None:
    with pytest.raises(ConfigError) as caught:
        JustextParams.from_mapping({"length_low": -5}, source="cs.yaml")
    assert str(caught.value).startswith("cs.yaml: length_low")


def test_merged_validates_like_from_mapping() -> None:
    base = JustextParams(length_low=50)
    assert base.merged({"length_high": 100}) == JustextParams(length_low=50, length_high=100)
    with pytest.raises(ConfigError, match="did you mean 'length_high'"):
        base.merged({"length_hight": 100}, source="--param")
    with pytest.raises(ConfigError, match=r"--param: length_low .* must not exceed length_high"):
        base.merged({"length_low": 500}, source="--param")


def test_extract_config_defaults() -> None:
    config = ExtractConfig()
    assert config.extractor == "justext"
    assert config.preset is Preset.SEED
    assert config.params is None


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("justtext", "justext"), ("kimatoo", "kimatu"), ("declutr", "declutter")],
)
def test_unknown_extractor(name: str, suggestion: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ExtractConfig(extractor=name)
    message = str(caught.value)
    assert f"unknown extractor {name!r}" in message
    assert "justext, declutter, kimatu, combined" in message
    assert f"did you mean {suggestion!r}" in message


def test_preset_given_as_text() -> None:
    config = ExtractConfig(preset="reference")  # type: ignore[arg-type]
    assert config.preset is Preset.REFERENCE
    assert Preset.parse("language-independent") is Preset.LANGUAGE_INDEPENDENT


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("referense", "reference"), ("sed", "seed"), ("language_independent", "language-independent")],
)
def test_unknown_preset(name: str, suggestion: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ExtractConfig(preset=name)  # type: ignore[arg-type]
    message = str(caught.value)
    assert f"unknown preset {name!r}" in message
    assert "seed, reference, language-independent" in message
    assert f"did you mean {suggestion!r}" in message


def test_unknown_preset_without_a_close_match() -> None:
    with pytest.raises(ConfigError) as caught:
        Preset.parse("xyzzy")
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize("size", [0, -1])
def test_max_bytes_must_be_positive(size: int) -> None:
    with pytest.raises(ConfigError, match="max_bytes must be positive"):
        ExtractConfig(max_bytes=size)


def test_unknown_language_is_a_config_error() -> None:
    """A typo in the language must fail where the settings are read (`checked()`, which
    the CLI and the crawl profile call) and, if a caller skipped that, on the first page,
    never turn every page of a crawl into an EXTRACTOR_ERROR drop (issue 13 wants
    building the config itself to read no file, so the check moved out of the constructor)."""
    config = ExtractConfig(language="englsh")
    with pytest.raises(ConfigError, match="unknown language 'englsh'"):
        config.checked()
    with pytest.raises(ConfigError, match="unknown language 'englsh'"):
        extract(b"<html><body><p>Some text here.</p></body></html>", config=config)


def test_checked_resolves_the_language_name() -> None:
    assert ExtractConfig(language="English").checked().language == "en"
    assert ExtractConfig(language="auto").checked().language == "auto"
    assert ExtractConfig(language=None).checked().language is None


def test_building_a_config_reads_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13: ExtractConfig does no file I/O when it is constructed."""
    import builtins
    import io
    import pathlib

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"file read while building an ExtractConfig: {args!r}")

    from corpus_crawler import stoplists

    stoplists.clear_caches()
    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(io, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "read_text", refuse)
    monkeypatch.setattr(pathlib.Path, "read_bytes", refuse)
    monkeypatch.setattr(pathlib.Path, "open", refuse)
    for preset in Preset:
        ExtractConfig(language="Czech", preset=preset)
    ExtractConfig(extractor="combined", extractor_options={"both_keep": 2}, language="de")


#: Every frozen option class a configs/extractors/ section becomes.
_OPTION_CLASSES = (
    JustextParams,
    ContainerOptions,
    CombinedOptions,
    KimatuOptions,
    DeclutterOptions,
)


#: A value of the wrong type for each scalar field type the option classes declare.
_WRONG = {"bool": "yes", "int": "3", "float": "0.5"}


@pytest.mark.parametrize(
    ("cls", "name", "kind"),
    [
        pytest.param(cls, f.name, f.type, id=f"{cls.__name__}.{f.name}")
        for cls in _OPTION_CLASSES
        for f in dataclasses.fields(cls)
        if f.type in _WRONG
    ],
)
def test_every_scalar_option_rejects_a_value_of_the_wrong_type(
    cls: type, name: str, kind: str
) -> None:
    """Every switch and number of every option class (each the frozen form of a
    configs/extractors/ section) is checked, so a YAML typo ("yes" quoted, "3" as
    text) is an error that names the option, never a setting silently read as
    true. Options added later are covered as they are declared: ContainerOptions
    once checked its switches from a hand-kept list that four of them missed."""
    with pytest.raises(ConfigError, match=rf"\b{name}\b"):
        cls(**{name: _WRONG[kind]})


# Each option class's way in from a YAML mapping, and its fields.
_FROM_MAPPING = {
    JustextParams: lambda data: JustextParams.from_mapping(data, "x.yaml"),
    ContainerOptions: lambda data: ContainerOptions.from_mapping(data, "x.yaml"),
    CombinedOptions: lambda data: CombinedOptions().merged(data, "x.yaml"),
    DeclutterOptions: lambda data: DeclutterOptions.from_mapping(data, "x.yaml"),
    KimatuOptions: lambda data: KimatuOptions.from_mapping(data, "x.yaml"),
}


@pytest.mark.parametrize("cls", list(_FROM_MAPPING), ids=lambda cls: cls.__name__)
def test_an_unknown_key_names_the_closest_one_or_lists_them(cls: type) -> None:
    make = _FROM_MAPPING[cls]
    name = next(spec.name for spec in dataclasses.fields(cls) if spec.init)
    typo = name[:-2] + name[-1] + name[-2]
    with pytest.raises(
        ConfigError, match=rf"unknown key '{typo}' in x\.yaml \(did you mean '{name}'\?\)"
    ):
        make({typo: 1})
    with pytest.raises(ConfigError, match=rf"unknown key 'qqqq' in x\.yaml; known: {name}, "):
        make({"qqqq": 1})


@pytest.mark.parametrize("cls", list(_FROM_MAPPING), ids=lambda cls: cls.__name__)
def test_a_bad_value_from_a_mapping_names_its_source(cls: type) -> None:
    make = _FROM_MAPPING[cls]
    numeric = next(
        spec.name for spec in dataclasses.fields(cls) if spec.init and spec.type in ("int", "float")
    )
    with pytest.raises(ConfigError, match=rf"^x\.yaml: {numeric} must be "):
        make({numeric: "many"})

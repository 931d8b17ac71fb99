"""Which language a page gets, and which stoplist and thresholds go with it.

Shared by every extractor (jusText's blocks are classified the same way
whether `extract()` runs jusText alone or the combined extractor runs it), so
it sits below them all: it imports none of extract.py, extractors.py or
combined.py.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .config import ConfigError, ExtractConfig, JustextParams, Preset, UnknownLanguage

if TYPE_CHECKING:
    from .stoplists import LanguageConfig

_LANGUAGE_INDEPENDENT = JustextParams(stopwords_low=0.0, stopwords_high=0.0)


@functools.lru_cache(maxsize=64)
def resolved_language(language: str | None) -> str | None:
    """A config's language as a stoplist code ("English" -> "en"); "auto" and None pass.

    Raises ConfigError naming the unknown language: a wrong setting, not a bad page.
    """
    if language is None or language == "auto":
        return language
    from .stoplists import resolve_language

    try:
        return resolve_language(language)
    except ConfigError as exc:
        raise UnknownLanguage(str(exc)) from None


def choose_language(texts: Sequence[str], config: ExtractConfig) -> tuple[str | None, float | None]:
    language = resolved_language(config.language)
    if language is None:
        return None, None
    if language != "auto":
        return language, 1.0
    from .langid import identify

    guess = identify(texts)
    return guess.code, guess.confidence


def accepted(language: str | None, confidence: float | None, config: ExtractConfig) -> bool:
    if config.accept_languages is None:
        return True
    from .langid import LanguageGuess, is_accepted

    guess = LanguageGuess(language, confidence or 0.0, "recorded")
    return is_accepted(guess, config.accept_languages)


def stoplist_and_params(
    language: str | None, config: ExtractConfig
) -> tuple[frozenset[str], JustextParams]:
    if config.preset is Preset.LANGUAGE_INDEPENDENT:
        return frozenset(), without_stopwords(config.params)
    if config.stoplist_path is not None:
        from .stoplists import load_stoplist_file

        return load_stoplist_file(config.stoplist_path), config.params or JustextParams()
    setup = _language_setup(language) if language is not None else None
    if setup is None:
        # No language (none asked for, none recognised, or one without a
        # stoplist such as Japanese): jusText's `-s None`.
        params = without_stopwords(config.params)
        if config.params is None and config.preset is Preset.SEED and language is not None:
            from .presets import unspaced_script_params

            unspaced = unspaced_script_params().get(language)
            if unspaced is not None:
                params = unspaced
        return frozenset(), params
    stoplist, language_params = setup
    if config.params is not None:
        return stoplist, config.params
    # jusText 3.0.2 has one set of thresholds for every language.
    return stoplist, JustextParams() if config.preset is Preset.REFERENCE else language_params


def _language_setup(code: str) -> tuple[frozenset[str], JustextParams] | None:
    """A language's stoplist and tuned thresholds (None: no stoplist for it).

    The merged, validated thresholds are kept per LanguageConfig object, which
    stoplists caches (and replaces on clear_caches), so a page pays a lookup.
    """
    from .stoplists import has_language, load_language

    if not has_language(code):
        return None
    lang = load_language(code)
    params = _tuned_params(lang)
    return lang.stoplist, params


@functools.lru_cache(maxsize=256)
def _tuned_params(lang: LanguageConfig) -> JustextParams:
    return JustextParams().merged(lang.parameters, f"configs/languages/{lang.code}.yaml")


def without_stopwords(params: JustextParams | None) -> JustextParams:
    """jusText's `-s None`: stop-word thresholds 0 whatever else was given."""
    if params is None:
        return _LANGUAGE_INDEPENDENT
    return replace(params, stopwords_low=0.0, stopwords_high=0.0)

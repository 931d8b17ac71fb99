"""The tuned constants of the presets, read once from configs/extractors/presets.yaml.

Below every extractor (extractors.py and combined.py both read it), and read on
first use, never when an ExtractConfig is built.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from .config import ConfigError, JustextParams, Preset
from .container import ContainerOptions

#: The presets whose blocks take the main-container evidence, by their section.
CONTAINER_PRESETS = (Preset.CORPUS, Preset.ARTICLE, Preset.ARTICLE_COMMENTS)


@functools.lru_cache(maxsize=1)
def _preset_file() -> tuple[str, Mapping[str, Any]]:
    from ._configfiles import extractor_config_path, read_yaml

    path = extractor_config_path("presets")
    data = read_yaml(path, "preset options")
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: expected a mapping of preset names to their options")
    return str(path), data


@functools.lru_cache(maxsize=len(Preset))
def container_options(preset: Preset) -> ContainerOptions | None:
    """The main-container options of a preset (None for presets without it)."""
    if preset not in CONTAINER_PRESETS:
        return None
    path, data = _preset_file()
    section = data.get(preset.value)
    if not isinstance(section, Mapping):
        raise ConfigError(f"{path}: add a `{preset.value}:` mapping of container options")
    return ContainerOptions.from_mapping(section, f"{path} {preset.value}")


@functools.lru_cache(maxsize=1)
def unspaced_script_params() -> dict[str, JustextParams]:
    """Thresholds of the seed preset for languages written without spaces between
    words (`unspaced_scripts` in presets.yaml), stop-word thresholds at 0.

    They have no stoplist, so jusText judges their blocks by length alone, and
    its length thresholds count characters of text written with spaces: about
    six per word. A Chinese or Japanese character carries about a word's worth
    of text, so the same block looks a third as long as it reads.
    """
    path, data = _preset_file()
    section = data.get("unspaced_scripts")
    if not isinstance(section, Mapping):
        raise ConfigError(f"{path}: add an `unspaced_scripts:` mapping (languages, parameters)")
    languages = section.get("languages")
    if not isinstance(languages, list) or not all(isinstance(c, str) for c in languages):
        raise ConfigError(f"{path}: unspaced_scripts.languages must be a list of language codes")
    overrides = section.get("parameters") or {}
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"{path}: unspaced_scripts.parameters must map jusText parameters")
    params = JustextParams().merged(overrides, f"{path} unspaced_scripts.parameters")
    params = params.merged({"stopwords_low": 0.0, "stopwords_high": 0.0})
    return dict.fromkeys(languages, params)

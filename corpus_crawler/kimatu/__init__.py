"""Kimatu boilerplate removal (seed 003, Saralegi and Leturia): see `kimatu()`."""

from __future__ import annotations

from ._extractor import KimatuResult, kimatu, output_kind
from ._options import (
    DEFAULT_KIMATU_OPTIONS,
    KimatuOptions,
    default_options_path,
    load_kimatu_options,
)
from ._steps import Admission, Rejection

__all__ = [
    "DEFAULT_KIMATU_OPTIONS",
    "Admission",
    "KimatuOptions",
    "KimatuResult",
    "Rejection",
    "default_options_path",
    "kimatu",
    "load_kimatu_options",
    "output_kind",
]

"""Checks the subcommands make before any work: one line saying what to fix.

A folder that cannot be written, found only when the first output file is
opened, costs the user a traceback (and, for a summary written at the end, the
whole run); asked up front, it costs one line.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

from .seeds import looks_like_url

__all__ = [
    "finite_float",
    "output_file_problem",
    "output_folder_problem",
    "recrawl_problem",
    "url_argument_problem",
]


def finite_float(text: str) -> float:
    """An argparse `type` for a number option: `nan` and `inf` are refused with the
    option named (as a float they pass every range check after it, or crash one)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def output_folder_problem(
    folder: Path, option: str = "-o OUTDIR", what: str = "the output folder"
) -> str | None:
    """Why `folder` cannot be made or written to (it is created if missing), or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        reason = "it is a file" if folder.is_file() else (exc.strerror or str(exc))
        return f"cannot write to {what} {folder}: {reason} (choose another with {option})"
    return None


def recrawl_problem(
    folder: Path,
    campaign_file: str,
    switch: str = "--recrawl",
    undo: str | None = None,
) -> str | None:
    """Why a recrawl pass cannot run into `folder`, or None: a recrawl pass revisits the
    URLs of an earlier crawl's campaign (`campaign_file` in the folder), and without one
    it would silently run a first crawl instead (checked before the folder is made).
    `switch` names what asked for the pass as the user wrote it (``--recrawl``, or the
    setting on Scrapy's command line or in the profile), `undo` how to leave it out (the
    switch itself by default)."""
    if (folder / campaign_file).is_file():
        return None
    where = "does not exist" if not folder.exists() else f"holds no campaign ({campaign_file})"
    return (
        f"{switch}: {folder} {where}, so there is nothing to recrawl: run the first crawl"
        f" without {undo or switch} (or give the campaign's folder with -o OUTDIR)"
    )


def output_file_problem(path: Path, option: str) -> str | None:
    """Why a file at `path` could not be written later (its folder must exist), or None."""
    if path.is_dir():
        return f"{option} {path}: is a folder; name a file"
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"{option} {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{option} {path}: not writable"
    return None


def url_argument_problem(name: str, reads: str) -> str | None:
    """What is wrong when a command that reads local files was given a URL, else None.

    `reads` says what the command reads instead ("files and WARCs"). Without this the
    user saw "https:/example.org/x: No such file" (a Path folds the two slashes).
    """
    if not looks_like_url(name) or Path(name).exists():
        return None
    return (
        f"{name}: a URL, not a file: this command reads {reads} and never fetches;"
        " crawl with `corpus-crawler crawl URL` (or a profile), or download it first"
        " (curl -O URL)"
    )

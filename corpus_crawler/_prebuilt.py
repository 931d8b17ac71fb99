"""Derived data kept in a compact prebuilt form between runs (issue 13: start-up).

Guessing a page's language needs an index of every shipped stoplist: parsing
100 YAML files and indexing 180 k words took a second before the first page,
which a user running `corpus-crawler extract` per file in a shell loop paid on
every call. The index is built once and kept as a `marshal` file in the user's
cache folder, keyed by the source files' names, sizes and modification times
(an edited stoplist makes a new key) and by the Python version (marshal's
format is per version). Loading it costs one `marshal.loads`.

The cache is an optimisation only: a missing, unreadable, corrupt or
unwritable cache means building the data as before, never an error.
`CORPUS_CRAWLER_CACHE` names the folder; `off` turns the cache off.

Every new key (an upgrade, an edited stoplist, another checkout) writes a new file of
up to a few MB. A file read is touched, and writing one removes the files of the same
name not read for STALE_DAYS days, so the folder does not grow with every upgrade while
two checkouts in use keep their own files.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ENVIRONMENT_VARIABLE = "CORPUS_CRAWLER_CACHE"

#: A prebuilt file of the same name not read for this long is removed by the next write.
STALE_DAYS = 30


def cache_folder() -> Path | None:
    """Where prebuilt files go (None: the cache is off)."""
    chosen = os.environ.get(ENVIRONMENT_VARIABLE)
    if chosen is not None:
        if chosen.strip().lower() in ("", "off", "0", "no", "false"):
            return None
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "corpus-crawler"


def source_key(name: str, version: str, sources: Iterable[Path]) -> str:
    """A digest of what the data is built from: the files' names, sizes and mtimes."""
    digest = hashlib.sha256()
    digest.update(f"{name}\0{version}\0{sys.version_info[:2]}\0{marshal.version}\0".encode())
    for path in sorted(sources):
        stat = path.stat()
        digest.update(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:24]


def load_or_build(name: str, version: str, sources: Iterable[Path], build: Callable[[], T]) -> T:
    """`build()`'s value, read from the cache when the sources have not changed.

    The value must be made of what marshal stores (dicts, tuples, lists, str,
    numbers, frozensets); `version` must change whenever `build` does.
    """
    folder = cache_folder()
    if folder is None:
        return build()
    try:
        path = folder / f"{name}-{source_key(name, version, sources)}.marshal"
    except OSError:
        return build()
    try:
        value: T = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass
    else:
        _touch(path)
        return value
    value = build()
    _write(path, value)
    _remove_stale(folder, name, keep=path)
    return value


def _touch(path: Path) -> None:
    """Mark a file as read now (its mtime: access times are often not kept)."""
    with contextlib.suppress(OSError):  # a read-only cache is still a cache
        os.utime(path)


def _remove_stale(folder: Path, name: str, keep: Path, days: float = STALE_DAYS) -> None:
    """Remove `name`'s other prebuilt files not read or written for `days` days."""
    oldest = time.time() - days * 86_400
    try:
        candidates = list(folder.glob(f"{name}-*.marshal"))
    except OSError:
        return
    for candidate in candidates:
        # another name that begins like this one ("x" and "x-y") has more dashes
        if candidate == keep or candidate.name.count("-") != keep.name.count("-"):
            continue
        try:
            if candidate.stat().st_mtime < oldest:
                candidate.unlink()
        except OSError:  # gone already, or not ours to remove
            continue


def _write(path: Path, value: Any) -> None:
    """Write atomically (a reader sees the old file, no file, or the whole new one)."""
    try:
        data = marshal.dumps(value)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=path.name, suffix=".open", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, ValueError):
        # a read-only home or a full disk: run without the cache
        return

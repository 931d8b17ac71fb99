"""Seed files: one URL per line, every bad line named by file and line number.

A seed list of 100,000 lines holds typos. One bad line does not stop a crawl: it is
skipped, and every skipped line is reported as ``seeds.txt:17: <what is wrong> (<the
fix>)``, with the count, so the list can be mended while the crawl runs. A file
with no usable line at all is an error: that is a wrong file, not a typo.

Format: UTF-8 (a BOM is allowed), blank lines and ``#`` comments (a whole line or the
rest of one) ignored, each other line one absolute ``http://`` or ``https://`` URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["SeedFile", "SeedProblem", "looks_like_url", "read_seed_file"]

#: The longest seed line read as a URL when no limit is given (the scope's default
#: `max_url_length`, Internet Explorer's old limit that most sites still keep to).
DEFAULT_MAX_LENGTH = 2083


_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://")


def looks_like_url(value: str) -> bool:
    """Whether a command-line argument is a URL (``scheme://...``), not a file's path."""
    return _SCHEME.match(value) is not None


@dataclass(frozen=True, slots=True)
class SeedProblem:
    """One bad line of a seed file."""

    path: str
    line: int
    #: A stable name, counted in the crawl's stats (``corpus/seeds/bad/<reason>``).
    reason: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem} ({self.fix})"


@dataclass(frozen=True, slots=True)
class SeedFile:
    path: str
    #: (url, line number), in file order.
    urls: tuple[tuple[str, int], ...]
    problems: tuple[SeedProblem, ...]


def _show(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _check(text: str, max_length: int | None) -> tuple[str, str, str] | None:
    """(reason, problem, fix) for a seed line that is not a usable URL, else None."""
    if max_length is not None and len(text) > max_length:
        return (
            "too-long",
            f"the line is {len(text):,} characters long, over the limit of {max_length:,}",
            "two URLs run together, or a trap URL: split or drop it, or raise scope.max_url_length",
        )
    if any(character.isspace() for character in text):
        return (
            "space",
            f"{_show(text)} holds a space",
            "write one URL per line; encode a space inside a URL as %20",
        )
    scheme, has_scheme, _ = text.partition("://")
    if not has_scheme:
        guess = f"https://{text}" if "." in text and ":" not in text else "https://example.org/"
        return (
            "not-a-url",
            f"{_show(text)} is not a URL",
            f"write it with its scheme, e.g. {guess}",
        )
    if scheme.lower() not in ("http", "https"):
        return (
            "scheme",
            f"{_show(text)} has the scheme {scheme!r}",
            "only http:// and https:// pages are crawled: drop the line",
        )
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        return ("not-a-url", f"{_show(text)} is not a valid URL: {exc}", "correct the URL")
    if not host:
        return ("no-host", f"{_show(text)} names no host", "write https://HOST/PATH")
    return None


def read_seed_file(path: str | Path, *, max_length: int | None = DEFAULT_MAX_LENGTH) -> SeedFile:
    """The URLs of a seed file and its bad lines. Raises OSError if it cannot be read."""
    name = str(path)
    data = Path(path).read_bytes()
    data = data.removeprefix(b"\xef\xbb\xbf")
    urls: list[tuple[str, int]] = []
    problems: list[SeedProblem] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                SeedProblem(
                    name,
                    number,
                    "encoding",
                    f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1} is not UTF-8",
                    "save the file as UTF-8, e.g. with iconv -f latin1 -t utf-8",
                )
            )
            continue
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        found = _check(text, max_length)
        if found is None:
            urls.append((text, number))
        else:
            problems.append(SeedProblem(name, number, *found))
    return SeedFile(name, tuple(urls), tuple(problems))

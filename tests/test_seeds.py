"""Seed files: every bad line named as FILE:LINE with what is wrong and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_crawler.seeds import read_seed_file


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_bytes(data)
    return path


def test_good_lines_are_read_with_their_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        b"\xef\xbb\xbfhttps://a.example/\n\n# a comment\nHTTP://b.example/x  # why\r\n"
        b"  https://c.example:8080/p?q=1  \n",
    )
    found = read_seed_file(path)
    assert found.urls == (
        ("https://a.example/", 1),
        ("HTTP://b.example/x", 4),
        ("https://c.example:8080/p?q=1", 5),
    )
    assert found.problems == ()


@pytest.mark.parametrize(
    ("line", "reason", "message"),
    [
        (b"b.example/page", "not-a-url", "'b.example/page' is not a URL (write it with its scheme,"
         " e.g. https://b.example/page)"),
        (b"ftp://files.example/", "scheme", "has the scheme 'ftp' (only http:// and https://"),
        (b"https://a.example/ https://b.example/", "space", "holds a space (write one URL per"),
        (b"https:///path", "no-host", "names no host (write https://HOST/PATH)"),
        (b"https://a.example:port/", "not-a-url", "is not a valid URL"),
        (b"https://a.example/" + b"x" * 100, "too-long", "the line is 118 characters long, over"
         " the limit of 50 (two URLs run together"),
        (b"https://caf\xe9.example/", "encoding", "byte 0xe9 at column 12 is not UTF-8 (save the"
         " file as UTF-8"),
    ],
)  # fmt: skip
def test_each_bad_line_says_where_what_and_the_fix(
    tmp_path: Path, line: bytes, reason: str, message: str
) -> None:
    path = write(tmp_path, b"https://good.example/\n# two\n" + line + b"\nhttps://after.example/\n")
    found = read_seed_file(path, max_length=50)
    assert [url for url, _ in found.urls] == ["https://good.example/", "https://after.example/"]
    [problem] = found.problems
    assert problem.reason == reason
    assert str(problem).startswith(f"{path}:3: ")
    assert message in str(problem)
    assert str(problem).endswith(")")


def test_every_bad_line_is_listed_not_only_the_first(tmp_path: Path) -> None:
    lines = [f"https://ok{n}.example/" if n % 1000 else f"typo{n}" for n in range(1, 10_001)]
    found = read_seed_file(write(tmp_path, "\n".join(lines).encode()))
    assert [problem.line for problem in found.problems] == list(range(1000, 10_001, 1000))
    assert len(found.urls) == 9_990


def test_an_unreadable_file_raises_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_seed_file(tmp_path / "missing.txt")

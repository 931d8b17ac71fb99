"""Progress: a tqdm bar on a real pseudo-terminal, plain lines elsewhere, and the crawl's bar."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

from corpus_crawler.progress import Progress, progress_bar

ROOT = Path(__file__).resolve().parent.parent


def _terminal() -> tuple[int, int]:
    """A pseudo-terminal with a size, as a real terminal window has."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    return leader, follower


def _read_all(fd: int, process: subprocess.Popen[bytes] | None = None) -> bytes:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 60 if process is None else 1)
        if not ready:
            if process is None or process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_bar_on_a_terminal() -> None:
    leader, follower = _terminal()
    with (
        open(follower, "w", encoding="utf-8", closefd=True) as terminal,
        Progress(total=200, description="dedup", unit="docs", stream=terminal) as bar,
    ):
        assert bar.tty
        for number in range(200):
            bar.update(1, kept=number // 2)
    output = _read_all(leader).decode("utf-8", "replace")
    os.close(leader)
    assert "dedup" in output and "200/200" in output and "kept 99" in output
    assert "\r" in output  # redrawn in place, not one line per update


def test_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with progress_bar(
        total=3, description="process", unit="files", stream=stream, interval=0
    ) as bar:
        for _ in range(3):
            bar.update(1, words=10)
    lines = stream.getvalue().splitlines()
    # one line per update (interval 0) and one at the end; no carriage returns
    assert len(lines) == 4 and "\r" not in stream.getvalue()
    assert lines[-1].startswith("process: 3/3 files (") and lines[-1].endswith("| words 10")


def test_disabled_shows_nothing() -> None:
    stream = io.StringIO()
    with Progress(stream=stream, enabled=False, interval=0) as bar:
        bar.update(5)
    assert stream.getvalue() == "" and bar.count == 5


def test_the_crawl_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    leader, follower = _terminal()
    process = subprocess.Popen(
        [sys.executable, "-m", "corpus_crawler.cli", "demo", "-o", str(tmp_path / "out"),
         "-s", "CORPUS_REPORT_ENABLED=False"],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower,
    )  # fmt: skip
    os.close(follower)
    output = _read_all(leader, process).decode("utf-8", "replace")
    process.wait(timeout=180)
    os.close(leader)
    assert process.returncode == 0, output[-3000:]
    assert "crawl:" in output and "pages" in output and "kept" in output
    assert "| pages " not in output  # the bar replaced the periodic log line

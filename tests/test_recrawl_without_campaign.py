"""``crawl --recrawl`` into a folder without a campaign is refused in one line, exit 2,
nothing written: a recrawl pass revisits an earlier crawl's URLs, and without a
campaign it used to run a first crawl silently (the newcomer walk of session 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # a guard against a hang, not a speed assertion

PROFILE = """\
name: recrawl-first
seeds:
  urls: ["http://127.0.0.1:9/"]
network:
  allowed_networks: [127.0.0.1/32]
"""


def _crawl(profile: Path, out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
        "--recrawl",
    ]  # fmt: skip
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.mark.parametrize("folder", ["missing", "empty", "other files"])
def test_recrawl_without_a_campaign_is_refused_and_writes_nothing(
    tmp_path: Path, folder: str
) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE, encoding="utf-8")
    out = tmp_path / "out"
    if folder != "missing":
        out.mkdir()
    if folder == "other files":
        (out / "notes.txt").write_text("kept as it is\n", encoding="utf-8")
    before = sorted(path.name for path in tmp_path.rglob("*"))
    result = _crawl(profile, out, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"corpus-crawler: --recrawl: {out} ")
    assert "run the first crawl without --recrawl" in lines[0]
    assert ("does not exist" in lines[0]) == (folder == "missing")
    assert "Traceback" not in result.stderr and not result.stdout
    assert sorted(path.name for path in tmp_path.rglob("*")) == before

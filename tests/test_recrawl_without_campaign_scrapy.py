"""`scrapy crawl corpus` asked for a recrawl pass (``-s CORPUS_RECRAWL_ENABLED=True``,
or the profile's `settings:`) into a folder without a campaign is refused as
``crawl --recrawl`` is: one line naming what asked for the pass, exit 2, nothing
written (it would otherwise run a first crawl silently)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120  # a guard against a hang, not a speed assertion

SEEDS = 'name: p\nseeds:\n  urls: ["http://127.0.0.1:9/"]\n'


def _message_lines(stderr: str) -> list[str]:
    """stderr without Scrapy's start-up log (its lines, and the settings dicts it prints)."""
    return [
        line
        for line in stderr.splitlines()
        if line.strip() and "[scrapy." not in line and not line.startswith(("{", " '", "[]"))
    ]


@pytest.mark.parametrize("folder", ["missing", "empty"])
@pytest.mark.parametrize("asked_by", ["command line", "profile"])
def test_scrapy_recrawl_without_a_campaign_is_refused_and_writes_nothing(
    tmp_path: Path, folder: str, asked_by: str
) -> None:
    profile = tmp_path / "p.yaml"
    recrawl_setting = "settings:\n  CORPUS_RECRAWL_ENABLED: true\n" if asked_by == "profile" else ""
    profile.write_text(SEEDS + recrawl_setting, encoding="utf-8")
    out = tmp_path / "out"
    if folder == "empty":
        out.mkdir()
    command = [
        sys.executable, "-m", "scrapy", "crawl", "corpus", "-a", f"profile={profile}",
        "-s", f"CORPUS_OUTPUT_DIR={out}",
    ]  # fmt: skip
    if asked_by == "command line":
        command += ["-s", "CORPUS_RECRAWL_ENABLED=True"]
    before = sorted(path.name for path in tmp_path.rglob("*"))
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    lines = _message_lines(result.stderr)
    assert len(lines) == 1, result.stderr[-3000:]
    switch = (
        "-s CORPUS_RECRAWL_ENABLED=True"
        if asked_by == "command line"
        else f"{profile}: settings.CORPUS_RECRAWL_ENABLED is true"
    )
    assert lines[0].startswith(f"scrapy crawl corpus: {switch}: {out} "), lines[0]
    assert ("does not exist" in lines[0]) == (folder == "missing")
    # the fixes name what Scrapy's user writes (its -o is a feed export)
    assert "--recrawl" not in lines[0] and "-s CORPUS_OUTPUT_DIR=OUTDIR" in lines[0]
    assert sorted(path.name for path in tmp_path.rglob("*")) == before

"""What stops a crawl before it starts, said in one line, from either command.

`scrapy crawl corpus` on a campaign folder another crawl holds exits 4 with the same
line as `corpus-crawler crawl`; the preflight of `corpus-crawler crawl` checks setting
values with the one checker the spider uses (`pipelines.settingtypes`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpus_crawler.profile import parse_profile
from corpus_crawler.state import FolderLock
from pipelines.cli import ExitCode, PreflightError, preflight

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hang, not a speed assertion.
TIMEOUT = 120


def _message_lines(stderr: str) -> list[str]:
    """stderr without Scrapy's start-up log (its lines, and the settings dicts it prints)."""
    return [
        line
        for line in stderr.splitlines()
        if line.strip() and "[scrapy." not in line and not line.startswith(("{", " '", "[]"))
    ]


def test_scrapy_crawl_on_a_locked_campaign_folder_says_so_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    lock = FolderLock(out)  # as a running crawl holds it
    lock.acquire()
    try:
        result = subprocess.run(
            [
                sys.executable, "-m", "scrapy", "crawl", "corpus",
                "-s", f"CORPUS_OUTPUT_DIR={out}", "-s", "CORPUS_SEEDS_URLS=http://127.0.0.1:9/",
            ],
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
    finally:
        lock.release()
    assert result.returncode == ExitCode.LOCKED, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    # the CLI's preflight line, with the fix Scrapy's entry takes (its -o is a feed)
    assert _message_lines(result.stderr) == [
        f"scrapy crawl corpus: another crawl is using {out}: wait for it to finish, or give"
        " this one its own output folder (-s CORPUS_OUTPUT_DIR=OUTDIR)"
    ]
    # nothing of the folder's state was touched
    assert not (out / "campaign.sqlite").exists()


def _profile(tmp_path: Path, settings: str = "") -> object:
    text = "name: p\nseeds:\n  urls: ['http://127.0.0.1:9/']\n" + settings
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    import yaml

    return parse_profile(yaml.safe_load(text), source=str(path))


@pytest.mark.parametrize(
    ("settings", "overrides", "message"),
    [
        ("", {"DOWNLOAD_DELAY": "fast"}, "-s DOWNLOAD_DELAY: must be a number, got 'fast'"),
        ("", {"CONCURRENT_REQUESTS": "2.5"}, "-s CONCURRENT_REQUESTS: must be a whole number"),
        (
            "",
            {"ROBOTSTXT_OBEY": "yes"},
            "-s ROBOTSTXT_OBEY: must be true or false (or 1 / 0), got 'yes'",
        ),
        # a mapping setting: the old preflight check knew only bool, int and float
        ("", {"ITEM_PIPELINES": "pipelines"}, "-s ITEM_PIPELINES: must be a mapping"),
        (
            "",
            {"CORPUS_CRAWL_LOG_MAX_FILE_BYTES": "0"},
            "bad setting: CORPUS_CRAWL_LOG_MAX_FILE_BYTES (output.crawl_log_max_file_bytes)"
            " must be a number of bytes > 0, got 0",
        ),
        (
            "settings:\n  RETRY_TIMES: often\n",
            {},
            "p.yaml: settings.RETRY_TIMES: must be a whole number, got 'often'",
        ),
    ],
)
def test_the_preflight_checks_setting_values_with_the_spiders_checker(
    tmp_path: Path, settings: str, overrides: dict[str, str], message: str
) -> None:
    profile = _profile(tmp_path, settings)
    with pytest.raises(PreflightError) as raised:
        preflight(profile, str(tmp_path / "out"), overrides)  # type: ignore[arg-type]
    assert raised.value.code is ExitCode.CANNOT_START
    assert message in str(raised.value)


def test_the_preflight_takes_good_values_as_scrapy_reads_them(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "settings:\n  RETRY_TIMES: 3\n")
    good = {"DOWNLOAD_DELAY": "0.5", "ROBOTSTXT_OBEY": "False", "CONCURRENT_REQUESTS": "8"}
    preflight(profile, str(tmp_path / "out"), good)  # type: ignore[arg-type]

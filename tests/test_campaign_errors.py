"""What stops a crawl before it starts, said in one line, from either command.

`scrapy crawl corpus` on a campaign folder another crawl holds exits 4 with the same
line as `corpus-crawler crawl`; the preflight of `corpus-crawler crawl` checks setting
values with the one checker the spider uses (`pipelines.settingtypes`).
"""

from __future__ import annotations

import os
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
            "bad setting: -s CORPUS_CRAWL_LOG_MAX_FILE_BYTES (output.crawl_log_max_file_bytes):"
            " must be > 0 bytes, got 0",
        ),
        (
            "settings:\n  RETRY_TIMES: often\n",
            {},
            "p.yaml: settings.RETRY_TIMES: must be a whole number, got 'often'",
        ),
        # values of the right type, refused by the rules of the profile key they stand for
        # a whole number of the right type, out of the key's range: refused at start, not
        # a Twisted error as the extraction pool starts (the crawl ended with no message)
        (
            "",
            {"CORPUS_EXTRACT_WORKERS": "-1"},
            "-s CORPUS_EXTRACT_WORKERS (extraction.workers): must be >= 0, got -1",
        ),
        (
            "",
            {"CORPUS_SCOPE_MAX_DEPTH": "-5"},
            "-s CORPUS_SCOPE_MAX_DEPTH (scope.max_depth): must be >= 0 or null, got -5;"
            " -1: no limit",
        ),
        (
            "",
            {"CONCURRENT_REQUESTS": "0"},
            "-s CONCURRENT_REQUESTS (politeness.concurrent_requests): must be >= 1, got 0",
        ),
        # nan passes every `>= 0` check; inf waits forever
        (
            "",
            {"CORPUS_RETRY_AFTER_MAX": "nan"},
            "-s CORPUS_RETRY_AFTER_MAX (politeness.max_retry_after): must be a finite number",
        ),
        (
            "",
            {"CORPUS_SCHEDULE_MIN_INTERVAL": "inf"},
            "CORPUS_SCHEDULE_MIN_INTERVAL must be 0 or more seconds (finite), got inf",
        ),
        (
            "",
            {"CORPUS_WARC_PREFIX": "a/b"},
            "-s CORPUS_WARC_PREFIX (output.warc.prefix): 'a/b' must be letters, digits",
        ),
        (
            "",
            {"CORPUS_ROBOTS_UNREACHABLE": "sometimes"},
            "(politeness.robots_unreachable): must be defer or allow, got 'sometimes'",
        ),
        (
            "",
            {"CORPUS_SEEDS_URLS": "example.com"},
            "-s CORPUS_SEEDS_URLS (seeds.urls): 'example.com' is not an http(s) URL",
        ),
        # read by components the preflight did not build: the crawl died without a word
        ("", {"CORPUS_YIELD_PRESET": "bogus"}, "yield.preset: unknown preset 'bogus'"),
        (
            "",
            {"CORPUS_EXTRACT_START_METHOD": "bogus"},
            "CORPUS_EXTRACT_START_METHOD: 'bogus' is not available here",
        ),
        # settings no profile key stands for, bounded where their component reads them
        # (MAX_WAITING=-1 hung the crawl: the scheduler never leased a request)
        ("", {"CORPUS_EXTRACT_MAX_WAITING": "-1"}, "CORPUS_EXTRACT_MAX_WAITING must be a"),
        ("", {"CORPUS_CAMPAIGN_COMMIT_INTERVAL": "nan"}, "COMMIT_INTERVAL must be a number > 0"),
        ("", {"CORPUS_OUTPUT_QUEUE_SIZE": "0"}, "CORPUS_OUTPUT_QUEUE_SIZE must be a number >= 1"),
        # counts: a fraction was truncated without a word (2.5 ran as 2)
        (
            "",
            {"CORPUS_OUTPUT_QUEUE_SIZE": "2.5"},
            "CORPUS_OUTPUT_QUEUE_SIZE must be a whole number >= 1, got 2.5",
        ),
        (
            "",
            {"CORPUS_EXTRACT_MAX_WAITING": "0.5"},
            "CORPUS_EXTRACT_MAX_WAITING must be a whole number >= 0, got 0.5",
        ),
        (
            "",
            {"CORPUS_NETWORK_DNS_TIMEOUT": "0"},
            "CORPUS_NETWORK_DNS_TIMEOUT must be a number > 0",
        ),
        # the profile's own settings: section, named as such
        (
            "settings:\n  CORPUS_EXTRACT_MIN_WORDS: -3\n",
            {},
            "p.yaml: settings.CORPUS_EXTRACT_MIN_WORDS (extraction.min_words): must be >= 0",
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
    good |= {"CORPUS_OUTPUT_QUEUE_SIZE": "500.0", "CORPUS_EXTRACT_MAX_WAITING": "0"}
    preflight(profile, str(tmp_path / "out"), good)  # type: ignore[arg-type]


# -- raw values meet the rules of the profile key they stand for -----------------------------


@pytest.mark.parametrize(
    "overrides",
    [
        {"CORPUS_SCOPE_MAX_DEPTH": "-1"},  # NO_LIMIT
        {"CORPUS_SCOPE_MAX_DEPTH": "0", "CORPUS_SCOPE_MAX_PAGES": "10"},
        {"CORPUS_EXTRACT_LANGUAGE": "Czech"},  # a name, resolved as the profile's
        {"CORPUS_EXTRACT_LANGUAGE": ""},  # no stoplist
        {"CORPUS_EXTRACT_WORKERS": "1", "CORPUS_EXTRACT_PAGE_TIMEOUT": "2.5"},
        {"DOWNLOAD_DELAY": "0", "USER_AGENT": "my-crawler/1.0 (+mailto:me@example.org)"},
    ],
)
def test_raw_values_the_profile_keys_allow_pass(tmp_path: Path, overrides: dict[str, str]) -> None:
    preflight(_profile(tmp_path), str(tmp_path / "out"), overrides)  # type: ignore[arg-type]


#: Another valid value of the keys whose values are constrained.
_ALTERNATIVES: dict[str, object] = {
    "politeness.robots_unreachable": "allow",
    "extraction.language": "en",
    "extraction.preset": "article",
    "extraction.extractor": "declutter",
    "dedup.paragraphs": "mark",
    "dedup.paragraph_language": "mark",
    "dedup.paragraph_filter_mib": 64,
    "dedup.near_threshold": 0.7,
    "dedup.near_seen_share": 0.8,
    "dedup.paragraph_threshold": 0.6,
    "dedup.paragraph_ngram": 5,
    "seeds.urls": ["https://example.org/"],
    "seeds.sitemaps": ["https://example.org/sitemap.xml"],
    "scope.allowed_domains": ["example.org"],
    "scope.allowed_tlds": ["cz"],
    "scope.deny_patterns": ["/login"],
    "network.allowed_networks": ["10.0.0.0/8"],
    "network.dns_servers": ["192.0.2.53"],
    "extraction.parameters": {"length_low": 50},
    "extraction.extractor_options": {},  # options need another extractor: own tests
}


def test_every_setting_of_the_table_carries_its_profile_key() -> None:
    """`FIELD_SETTINGS` and `LIMIT_SETTINGS` fill profile_settings and check raw values:
    each names a real key, and a changed key changes its setting to the new value."""
    from corpus_crawler.profile import Profile
    from corpus_crawler.setting_keys import FIELD_SETTINGS, LIMIT_SETTINGS, NO_LIMIT
    from pipelines.bridge import profile_settings

    base = profile_settings(Profile())
    for name, key in {**FIELD_SETTINGS, **LIMIT_SETTINGS}.items():
        value = base[name]
        if key in _ALTERNATIVES:
            new = _ALTERNATIVES[key]
        elif name in LIMIT_SETTINGS:
            new = 9 if value == NO_LIMIT else value + 7
        elif isinstance(value, bool):
            new = not value
        elif isinstance(value, (int, float)):
            new = value + (7 if isinstance(value, int) else 7.5)
        else:
            new = f"x{value}" if isinstance(value, str) else pytest.fail(f"{name}: {value!r}")
        if new == value:
            continue
        after = profile_settings(Profile().with_values({key: new}))
        assert after[name] == new, (name, key)


def _crawl(tmp_path: Path, *arguments: str, scrapy: bool = False) -> subprocess.CompletedProcess:
    out = tmp_path / "out"
    if scrapy:
        seeds = "CORPUS_SEEDS_URLS=http://127.0.0.1:9/"
        command = [sys.executable, "-m", "scrapy", "crawl", "corpus",
                   "-s", f"CORPUS_OUTPUT_DIR={out}", "-s", seeds]  # fmt: skip
    else:
        command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", "http://127.0.0.1:9/",
                   "-o", str(out)]  # fmt: skip
    return subprocess.run(
        [*command, *arguments], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.mark.parametrize("scrapy", [False, True], ids=["corpus-crawler", "scrapy"])
def test_an_out_of_range_setting_stops_either_command_in_one_line(
    tmp_path: Path, scrapy: bool
) -> None:
    result = _crawl(tmp_path, "-s", "CORPUS_EXTRACT_WORKERS=-1", scrapy=scrapy)
    assert result.returncode == ExitCode.CANNOT_START, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    program = "scrapy crawl corpus" if scrapy else "corpus-crawler"
    assert [line for line in _message_lines(result.stderr) if line.startswith(program)] == [
        f"{program}: bad setting: -s CORPUS_EXTRACT_WORKERS (extraction.workers): must be >= 0,"
        " got -1"
    ]


def test_an_error_that_stops_the_crawl_as_it_starts_is_shown(tmp_path: Path) -> None:
    """A component Scrapy cannot load fails the crawl's Deferred; the CLI said only
    "ended without a summary; see the log above", and the log above was empty."""
    result = _crawl(tmp_path, "-s", 'ITEM_PIPELINES={"no_such_module.Pipeline": 500}')
    assert result.returncode == ExitCode.INCOMPLETE, result.stderr[-3000:]
    assert "Traceback" in result.stderr
    assert (
        "corpus-crawler: the crawl failed: ModuleNotFoundError: No module named 'no_such_module'"
        in result.stderr
    )
    assert "stopped on an error (below) before it wrote its summary" in result.stdout


def test_a_failure_as_the_spider_opens_is_shown_and_the_crawl_ends_at_once(
    tmp_path: Path,
) -> None:
    """A pipeline failing in open_spider: Scrapy closes the spider ("shutdown") and
    writes a summary, and the CLI exited 0. The crawl log never opened, and the
    report waited 60 s for it (the cap below is a hang guard under that)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", "crawl", "http://127.0.0.1:9/",
         "-o", str(out), "-s", 'ITEM_PIPELINES={"failing_open.FailingOpen": 900}'],
        cwd=ROOT, capture_output=True, text=True, timeout=45, env=env,
    )  # fmt: skip
    assert result.returncode == ExitCode.INCOMPLETE, result.stderr[-3000:]
    assert "corpus-crawler: the crawl failed: OSError: the disk is on fire" in result.stderr
    assert "Traceback" in result.stderr


def test_the_cli_refuses_to_run_without_its_summary(tmp_path: Path) -> None:
    with pytest.raises(PreflightError, match="CORPUS_SUMMARY_ENABLED is off"):
        preflight(_profile(tmp_path), str(tmp_path / "out"), {"CORPUS_SUMMARY_ENABLED": "False"})  # type: ignore[arg-type]


def test_an_unwritable_dedup_state_folder_is_refused_before_the_crawl(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PreflightError) as raised:
        preflight(
            _profile(tmp_path),  # type: ignore[arg-type]
            str(tmp_path / "out"),
            {"CORPUS_DEDUP_STATE_DIR": str(blocker / "state")},
        )
    assert str(raised.value).startswith(f"cannot write to the dedup state folder {blocker}")
    assert "CORPUS_DEDUP_STATE_DIR" in str(raised.value)

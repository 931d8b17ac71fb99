"""The command line as a newcomer meets it: interruptions, wrong folders, wrong inputs.

Each test runs the real `corpus-crawler` in a subprocess against a site served on
127.0.0.1 (the bundled demo site) and checks what a user sees: the exit code, one
line on standard error instead of a traceback, and output that is whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler.testserver import Reply, SiteServer

ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = ROOT / "corpus_crawler" / "demo_site"
#: A guard against a hung process, not a speed assertion.
TIMEOUT = 120

PROFILE = """\
name: {name}
seeds:
  urls: ["{base}/"]
scope:
  max_depth: 3
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
"""

#: A stats collector that takes its time to start: a signal sent while it sleeps
#: lands in the middle of Scrapy's crawl set-up, deterministically.
SLOW_START_MODULE = """\
import json
import os
import re
import pathlib
import time
import zipfile

from scrapy.statscollectors import MemoryStatsCollector


class SlowStartStats(MemoryStatsCollector):
    def __init__(self, crawler):
        super().__init__(crawler)
        pathlib.Path(os.environ["SLOW_START_MARK"]).touch()
        time.sleep(2)
"""


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(DEMO_SITE) as server:
        yield server


def write_profile(folder: Path, base: str, name: str = "newcomer") -> Path:
    profile = folder / f"{name}.yaml"
    profile.write_text(PROFILE.format(base=base, name=name), encoding="utf-8")
    return profile


def cli(
    *arguments: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=env,
    )  # fmt: skip


def warc_responses(folder: Path) -> list[str]:
    uris = []
    for path in sorted(folder.glob("*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type == "response":
                    uris.append(record.rec_headers.get_header("WARC-Target-URI"))
    return uris


def _default_sigint() -> None:
    # a shell starts background jobs with SIGINT ignored; a terminal's Ctrl-C is not
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_signal_during_the_crawl_set_up_is_a_clean_interruption(
    site: SiteServer, tmp_path: Path, how: int
) -> None:
    (tmp_path / "slow_start.py").write_text(SLOW_START_MODULE, encoding="utf-8")
    mark = tmp_path / "set-up-reached"
    env = dict(os.environ, SLOW_START_MARK=str(mark))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    profile = write_profile(tmp_path, site.base_url)
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
        "-s", "STATS_CLASS=slow_start.SlowStartStats",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    while not mark.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the crawl never reached its set-up"
        time.sleep(0.01)
    process.send_signal(how)
    stdout, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 5, stdout + stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "run the same command again to resume" in stderr
    # stopped gracefully: a summary, and no file left half-written
    assert list(out.glob("*-summary.json")), stdout + stderr
    assert not list(out.glob("*.open")), sorted(p.name for p in out.iterdir())
    # and the same command finishes the campaign: every page once in the WARC files
    resumed = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    pages = [uri for uri in warc_responses(out) if uri.endswith((".html", "/"))]
    assert len(pages) == len(set(pages)) >= 10, pages


def test_a_folder_is_one_campaign(site: SiteServer, tmp_path: Path) -> None:
    first = write_profile(tmp_path, site.base_url, "first")
    out = tmp_path / "out"
    crawled = cli("crawl", str(first), "-o", str(out), cwd=tmp_path)
    assert crawled.returncode == 0, crawled.stdout + crawled.stderr
    # the documents and vertical pipelines are off by default: not worth a WARNING on
    # every crawl
    assert "DocumentsPipeline" not in crawled.stderr, crawled.stderr
    assert "VerticalFormatPipeline" not in crawled.stderr, crawled.stderr
    files = sorted(p.name for p in out.iterdir())
    # another profile into the same folder would continue this campaign and fetch
    # nothing (every URL seen): refused, with one line naming both and the fix
    second = write_profile(tmp_path, site.base_url, "second")
    refused = cli("crawl", str(second), "-o", str(out), cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()[-1:]
    assert "'first'" in line and "'second'" in line and "-o OUTDIR" in line, line
    assert "Traceback" not in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == files
    # the same profile again: a run of a finished campaign says why it fetched nothing
    again = cli("crawl", str(first), "-o", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 responses" in again.stdout
    assert "nothing left to fetch" in again.stderr and "--recrawl" in again.stderr
    uris = warc_responses(out)
    assert len(uris) == len(set(uris)) >= 10, uris


def test_a_second_demo_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    first = cli("demo", "-o", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    files = sorted(p.name for p in out.iterdir())
    # the demo site gets a new port each run: continuing the campaign would find
    # every page again and drop each as a duplicate of the first run
    second = cli("demo", "-o", str(out), cwd=tmp_path)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "earlier demo crawl" in second.stderr and "-o OUTDIR" in second.stderr
    assert sorted(p.name for p in out.iterdir()) == files


PAGE = DEMO_SITE / "about.html"

PREVERTICAL = """\
<doc id="1" url="http://example.org/a" lang="en">
<p class="good">The first paragraph of a small document, long enough to be one.</p>
</doc>
"""


def one_error_line(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.strip().splitlines()
    for needle in needles:
        assert needle in line, line
    return line


def test_extract_with_a_missing_stoplist_file_is_one_line(tmp_path: Path) -> None:
    result = cli("extract", "--stoplist", "no-such-list.txt", str(PAGE), cwd=tmp_path)
    one_error_line(result, "no-such-list.txt", "does not exist")
    assert result.stdout == ""


def test_extract_says_why_a_single_page_gave_no_text(tmp_path: Path) -> None:
    # an English page with only Czech accepted: empty output must not look like a bug
    result = cli("extract", "--accept-lang", "cs", str(PAGE), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "about.html: no text kept: wrong-language" in result.stderr


def test_dedup_and_process_refuse_an_output_folder_that_is_a_file(tmp_path: Path) -> None:
    prevert = tmp_path / "in.prevert"
    prevert.write_text(PREVERTICAL, encoding="utf-8")
    taken = tmp_path / "taken"
    taken.write_text("not a folder", encoding="utf-8")
    dedup = cli("dedup", "-q", "-o", str(taken), str(prevert), cwd=tmp_path)
    one_error_line(dedup, str(taken), "-o OUTDIR")
    warc = tmp_path / "in.warc"
    warc.write_bytes(b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    process = cli("process", "--no-progress", "-o", str(taken), str(warc), cwd=tmp_path)
    one_error_line(process, str(taken), "-o OUTDIR")
    assert taken.read_text(encoding="utf-8") == "not a folder"


def test_dedup_checks_its_summary_file_before_the_work(tmp_path: Path) -> None:
    prevert = tmp_path / "in.prevert"
    prevert.write_text(PREVERTICAL, encoding="utf-8")
    missing = tmp_path / "no-such-folder" / "summary.json"
    result = cli(
        "dedup", "-q", "-o", str(tmp_path / "out"), "--summary", str(missing), str(prevert),
        cwd=tmp_path,
    )  # fmt: skip
    one_error_line(result, "--summary", "does not exist")
    # nothing done (a later run would find its documents in the stores as duplicates)
    assert not (tmp_path / "out").exists()


def test_dedup_warns_about_an_input_without_documents(tmp_path: Path) -> None:
    stray = tmp_path / "notes.txt"
    stray.write_text("just some notes\n", encoding="utf-8")
    result = cli("dedup", "-q", "-o", str(tmp_path / "out"), str(stray), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "notes.txt: no <doc> in it" in result.stderr


def test_a_misspelt_corpus_setting_is_refused_with_the_right_name(
    site: SiteServer, tmp_path: Path
) -> None:
    # Scrapy ignores a setting nobody reads: the whole crawl ran without the JSONL
    # documents file this asked for
    profile = write_profile(tmp_path, site.base_url)
    out = tmp_path / "out"
    result = cli(
        "crawl", str(profile), "-o", str(out), "-s", "CORPUS_DOCUMENTS_JSON=True", cwd=tmp_path
    )
    one_error_line(result, "CORPUS_DOCUMENTS_JSON", "did you mean CORPUS_DOCUMENTS_JSONL?")
    with open(profile, "a", encoding="utf-8") as handle:
        handle.write("settings:\n  CORPUS_EXTRACT_WORKER: 2\n")
    result = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    one_error_line(result, "settings.CORPUS_EXTRACT_WORKER", "did you mean CORPUS_EXTRACT_WORKERS?")
    assert not list(out.glob("*.warc.gz"))
    demo = cli("demo", "-o", str(tmp_path / "demo"), "-s", "CORPUS_WARC_PREFX=x", cwd=tmp_path)
    one_error_line(demo, "did you mean CORPUS_WARC_PREFIX?")


def test_every_corpus_setting_the_code_reads_is_a_known_name() -> None:
    from corpus_crawler._prebuilt import ENVIRONMENT_VARIABLE
    from corpus_crawler.faults import ENV_VAR as KILL_AT
    from pipelines.settingnames import known_setting_names

    # environment variables, not settings: the prebuilt-index cache and the tests' kill points
    known = known_setting_names() | {ENVIRONMENT_VARIABLE, KILL_AT}
    read = set()
    for folder in ("pipelines", "spiders", "corpus_crawler"):
        for path in (ROOT / folder).rglob("*.py"):
            read.update(re.findall(r"\"(CORPUS_[A-Z0-9_]+)\"", path.read_text(encoding="utf-8")))
    assert len(read) > 50  # the scan found the settings
    # a new setting goes into a profile key (pipelines/bridge.py) or COMMAND_LINE_ONLY
    assert sorted(read - known) == []


def test_an_interrupted_dedup_says_what_is_left_and_how_to_start_over(tmp_path: Path) -> None:
    big = tmp_path / "big.prevert"
    with open(big, "w", encoding="utf-8") as handle:
        for doc in range(20000):
            handle.write(f'<doc id="{doc}" url="http://example.org/{doc}" lang="en">\n')
            for paragraph in range(4):
                words = " ".join(
                    f"w{(doc * 7919 + paragraph * 31 + i * 13) % 9973}" for i in range(25)
                )
                handle.write(f'<p class="good">\n{words}\n</p>\n')
            handle.write("</doc>\n")
    out = tmp_path / "out"
    partial = out / "big.prevert.open"
    process = subprocess.Popen(
        [sys.executable, "-m", "corpus_crawler.cli", "dedup", "-q", "-o", str(out), str(big)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    while not (partial.exists() and partial.stat().st_size > 0):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 130, stderr
    assert f"{partial} is incomplete" in stderr and "start over" in stderr, stderr
    # the same command again must not claim the file was deduplicated before
    again = cli("dedup", "-q", "-o", str(out), str(big), cwd=tmp_path)
    line = one_error_line(again, str(partial), "interrupted run", "start over")
    assert "deduplicated into" not in line


def test_report_names_a_missing_log_or_output_folder_in_one_line(tmp_path: Path) -> None:
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    (crawl / "c-1.crawl.log").write_text("", encoding="utf-8")
    missing = tmp_path / "no-such-folder" / "r.html"
    one_error_line(
        cli("report", str(crawl), "-o", str(missing), cwd=tmp_path), "-o", "does not exist"
    )
    assert not missing.parent.exists()
    one_error_line(cli("report", str(crawl), "--log", "nope.log", cwd=tmp_path), "nope.log")


def _done_units(state: Path) -> int:
    """Units `process` has committed as done (its state database, read-only)."""
    if not state.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT count(*) FROM units WHERE done").fetchone()[0])
    except sqlite3.OperationalError:  # not made yet, or busy: look again
        return 0


def test_an_interrupted_process_run_says_how_to_resume(site: SiteServer, tmp_path: Path) -> None:
    profile = write_profile(tmp_path, site.base_url)
    crawl = tmp_path / "crawl"
    crawled = cli("crawl", str(profile), "-o", str(crawl), cwd=tmp_path)
    assert crawled.returncode == 0, crawled.stdout + crawled.stderr
    (warc,) = crawl.glob("*.warc.gz")
    archives = tmp_path / "archives"
    archives.mkdir()
    # enough work to be interrupted in the middle: SIGINT follows the first unit's commit
    # within ~10 ms, the other units take seconds
    copies = 40
    for copy in range(copies):
        (archives / f"copy{copy:03d}.warc.gz").write_bytes(warc.read_bytes())
    out = tmp_path / "out"
    command = [sys.executable, "-m", "corpus_crawler.cli", "process", "--no-progress", "-j", "1"]
    process = subprocess.Popen(
        [*command, "-o", str(out), str(archives)], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint,
    )  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    # interrupted once a unit is committed, which the resume must skip (a unit's
    # .prevert file is renamed into place just before its commit: waiting for the
    # file alone lost that race on a loaded machine)
    while _done_units(out / "process-state.sqlite") < 1:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert "run the same command again to resume" in stderr, stderr
    resumed = cli(*command[3:], "-o", str(out), str(archives), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads((out / "process-summary.json").read_text(encoding="utf-8"))
    assert summary["this_run"]["units_skipped"] >= 1
    assert len(list(out.glob("*.prevert"))) == copies


def test_evaluate_checks_its_json_report_path_before_the_work(tmp_path: Path) -> None:
    gold_set = tmp_path / "gold-set"
    (gold_set / "html").mkdir(parents=True)
    (gold_set / "gold").mkdir()
    (gold_set / "html" / "about.html").write_bytes(PAGE.read_bytes())
    (gold_set / "gold" / "about.txt").write_text("A small reading list\n", encoding="utf-8")
    missing = tmp_path / "no-such-folder" / "report.json"
    result = cli("evaluate", "-q", "--json", str(missing), str(gold_set), cwd=tmp_path)
    one_error_line(result, "--json", "does not exist")
    assert result.stdout == ""  # refused before any page was scored


@pytest.mark.parametrize(
    ("extraction", "expected"),
    [
        # named "CORPUS_EXTRACT_* settings" by the crawl's own check before
        ({"language": "xx"}, "x.yaml: extraction.language: unknown language 'xx'"),
        (
            {"extractor": "declutter", "extractor_options": {"min_scor": 3}},
            "x.yaml: extraction.extractor_options: unknown key 'min_scor'",
        ),
        # silently ignored before: options of the other extractors
        (
            {"extractor_options": {"min_score": 3}},
            "x.yaml: extraction.extractor_options: the justext extractor takes no options",
        ),
    ],
)
def test_profile_extraction_errors_name_the_key(
    extraction: dict[str, object], expected: str
) -> None:
    from corpus_crawler.profile import ProfileError, parse_profile

    with pytest.raises(ProfileError) as error:
        parse_profile({"extraction": extraction}, "x.yaml")
    assert str(error.value).startswith(expected), str(error.value)


def test_profile_with_a_known_language_name_still_loads() -> None:
    from corpus_crawler.profile import parse_profile

    profile = parse_profile({"extraction": {"language": "English"}}, "x.yaml")
    assert profile.extraction.language == "English"


def test_ctrl_c_before_the_crawl_starts_exits_as_interrupted(tmp_path: Path) -> None:
    # the crawl's preflight reads the seed file; a FIFO holds it there until we write
    seeds = tmp_path / "seeds.fifo"
    os.mkfifo(seeds)
    profile = tmp_path / "fifo.yaml"
    profile.write_text("name: fifo\nseeds:\n  files: [seeds.fifo]\n", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", "out"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    # opening the FIFO for writing returns once the crawl has opened it for reading
    writer = os.open(seeds, os.O_WRONLY)
    try:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        os.close(writer)
    # README, "Exit codes": 5 for any interruption, so a wrapper script can tell
    assert process.returncode == 5, stderr
    assert stderr.strip().splitlines()[-1] == "corpus-crawler crawl: interrupted", stderr
    assert "Traceback" not in stderr


def test_wacz_of_a_resumed_campaign_holds_every_run(site: SiteServer, tmp_path: Path) -> None:
    profile = write_profile(tmp_path, site.base_url)
    out = tmp_path / "out"
    # a first run stopped early (as Ctrl-C or a time limit would), then resumed with --wacz
    first = cli(
        "crawl", str(profile), "-o", str(out), "-s", "CLOSESPIDER_PAGECOUNT=3", cwd=tmp_path
    )
    assert first.returncode == 0, first.stdout + first.stderr
    first_warcs = {p.name for p in out.glob("*.warc.gz") if not p.name.endswith(".wet.gz")}
    resumed = cli("crawl", str(profile), "-o", str(out), "--wacz", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    warcs = {p.name for p in out.glob("*.warc.gz") if not p.name.endswith(".wet.gz")}
    assert first_warcs and warcs > first_warcs  # two runs, two sets of files
    with zipfile.ZipFile(out / "newcomer.wacz") as archive:
        packaged = {name.removeprefix("archive/") for name in archive.namelist()}
    # the WACZ is the campaign's, not only the last run's
    assert warcs <= packaged, sorted(warcs - packaged)
    assert not any(name.endswith(".wet.gz") for name in packaged)


def test_evaluate_on_a_gold_set_still_packed_says_how_to_unpack(tmp_path: Path) -> None:
    # the README's `evaluate tests/data/gold/cleaneval-dev` before tests/data/gold.tar.xz
    # is unpacked
    data = tmp_path / "data"
    data.mkdir()
    (data / "gold.tar.xz").write_bytes(b"")  # only its name matters here
    result = cli("evaluate", "data/gold/cleaneval-dev", cwd=tmp_path)
    one_error_line(result, "unpack data/gold.tar.xz first: tar -xf data/gold.tar.xz -C data")


def test_a_folder_with_another_tools_files_is_not_taken_over(
    site: SiteServer, tmp_path: Path
) -> None:
    # another crawler's WARC and its unfinished `.open` file: a new campaign's recovery
    # renamed the `.open` file to a finished name and indexed both as its own
    folder = tmp_path / "theirs"
    folder.mkdir()
    foreign = b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n"
    (folder / "heritrix-1.warc").write_bytes(foreign)
    (folder / "heritrix-2.warc.gz.open").write_bytes(foreign)
    before = sorted(p.name for p in folder.iterdir())
    profile = write_profile(tmp_path, site.base_url)
    result = cli("crawl", str(profile), "-o", str(folder), cwd=tmp_path)
    one_error_line(result, "heritrix-1.warc", "no campaign", "-o OUTDIR")
    assert sorted(p.name for p in folder.iterdir()) == before


def test_extract_without_a_file_says_it_reads_the_terminal(tmp_path: Path) -> None:
    import pty

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "corpus_crawler.cli", "extract"],
        cwd=tmp_path, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    os.close(terminal)
    page = b"<p>" + b"This sentence is one of the words of a page typed by hand. " * 8 + b"</p>"
    os.write(controller, page + b"\n\x04")  # a line, then Ctrl-D: end of input
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        os.close(controller)
    assert process.returncode == 0, stderr
    assert "reading a page from standard input (end it with Ctrl-D" in stderr
    assert "typed by hand" in stdout


def test_a_second_ctrl_c_forcing_the_stop_is_still_an_interruption(tmp_path: Path) -> None:
    # pages that take their time: the graceful stop after a first Ctrl-C waits for
    # them, and a second Ctrl-C forces Scrapy to stop without a summary
    slow = {
        f"/slow{i}.html": Reply(
            headers=(("Content-Type", "text/html"),),
            body=b"<p>" + b"A slow page of the interruption test with words in it. " * 10 + b"</p>",
            delay=5.0,
        )
        for i in range(4)
    }
    links = "".join(f"<a href='/slow{i}.html'>slow {i}</a> " for i in range(4)).encode()
    pages = {"/": Reply(headers=(("Content-Type", "text/html"),), body=links), **slow}
    with SiteServer(pages=pages) as server:
        profile = write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
        ]  # fmt: skip
        process = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_default_sigint,
        )  # fmt: skip
        deadline = time.monotonic() + TIMEOUT
        while not any(r.path.startswith("/slow") for r in server.requests):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    # README, "Exit codes": 5, run the same command to resume (was 1, "ended without
    # a summary; see the log above" with nothing above)
    assert process.returncode == 5, stdout + stderr
    assert "run the same command again to resume" in stderr, stderr
    assert "stopped before it wrote its summary" in stdout, stdout


def test_crawl_a_url_without_a_profile(site: SiteServer, tmp_path: Path) -> None:
    # a newcomer's first try: every profile default, the site's host, output/<host-port>/
    loopback = [
        "-s", "CORPUS_NETWORK_ALLOWED_NETWORKS=127.0.0.1/32", "-s", "DOWNLOAD_DELAY=0",
        "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CORPUS_REPORT_ENABLED=False",
    ]  # fmt: skip
    crawled = cli("crawl", site.base_url + "/", *loopback, cwd=tmp_path)
    assert crawled.returncode == 0, crawled.stdout + crawled.stderr
    name = site.base_url.removeprefix("http://").replace(":", "-")
    out = tmp_path / "output" / name
    (summary_path,) = out.glob("*-summary.json")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["profile"] == name
    assert summary["pages"]["kept"] >= 8, summary
    uris = warc_responses(out)
    assert len(uris) == len(set(uris)) >= 10, uris
    assert all(uri.startswith(site.base_url + "/") for uri in uris), uris
    # the same command is the same campaign: it resumes (here: nothing is left)
    again = cli("crawl", site.base_url + "/", *loopback, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing left to fetch" in again.stderr
    assert sorted(p.name for p in (tmp_path / "output").iterdir()) == [name]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["example.org"], "give its URL: https://example.org/"),
        (["profile.yaml", "https://example.org/"], "give one crawl profile, or start URLs only"),
        (["ftp://example.org/"], "is not an http(s) URL"),
        (["https://example.org:99999/"], "https://example.org:99999/"),
        (["seeds.txt"], "seeds.txt is a list of URLs, not a crawl profile"),
    ],
)  # fmt: skip
def test_crawl_arguments_that_are_neither_a_profile_nor_urls(
    tmp_path: Path, arguments: list[str], expected: str
) -> None:
    # a seed list where a profile belongs
    (tmp_path / "seeds.txt").write_text("# seeds\nhttps://a.example/\nhttps://b.example/\n")
    result = cli("crawl", *arguments, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert expected in line and "Traceback" not in result.stderr, line
    assert [p.name for p in tmp_path.iterdir()] == ["seeds.txt"]


def test_process_names_a_url_as_one(tmp_path: Path) -> None:
    # Common Crawl users paste the URL of a WARC: say that process reads local files
    url = "https://data.commoncrawl.org/crawl-data/x.warc.gz"
    result = cli("process", url, "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert f"{url}: a URL, not a file" in line and "download it first" in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # nan passed `<= 0` and crashed int() with a traceback
        (["process", "in.warc.gz", "-o", "out", "--chunk-mb", "nan"],
         "corpus-crawler process: error: argument --chunk-mb: 'nan' is not a finite number"),
        # inf and nan as thresholds: refused by name, before the range check
        (["dedup", "-o", "out", "--near-threshold", "inf", "in.prevert"],
         "corpus-crawler dedup: error: argument --near-threshold: 'inf' is not a finite number"),
        (["dedup", "-o", "out", "--paragraph-threshold", "half", "in.prevert"],
         "argument --paragraph-threshold: 'half' is not a number"),
    ],
)  # fmt: skip
def test_number_options_refuse_what_is_not_a_finite_number(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    result = cli(*arguments, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert message in result.stderr


@pytest.mark.parametrize(
    ("arguments", "settings", "message"),
    [
        # an unknown language passed replace() and made every page an extractor-error (exit 0)
        (["--lang", "xx"], "", "unknown language 'xx'"),
        # a byte range per byte: a task per byte of a large archive
        (["--chunk-mb", "0.000001"], "", "--chunk-mb must be >= 0.01, got 1e-06"),
        # the profile's settings: section was ignored, so process quietly disagreed with
        # the crawl that refused (or used) the same values
        ([], "CORPUS_EXTRACT_WORKERS: -1",
         "profile.yaml: settings.CORPUS_EXTRACT_WORKERS (extraction.workers): must be >= 0"),
        ([], "CORPUS_EXTRACT_MIN_WORDS: 2.5",
         "settings.CORPUS_EXTRACT_MIN_WORDS (extraction.min_words): must be a whole number"),
        ([], "CORPUS_DEDUP_ENABLED: 'yes'",
         "settings.CORPUS_DEDUP_ENABLED (dedup.enabled): must be true or false"),
        ([], "CORPUS_EXTRACT_PRESET: bogus", "(extraction.preset): unknown preset 'bogus'"),
        ([], "CORPUS_EXTRACT_OPTIONS: '[1'", "(extraction.extractor_options): must be a mapping"),
    ],
)  # fmt: skip
def test_process_refuses_bad_values_before_any_work(
    tmp_path: Path, arguments: list[str], settings: str, message: str
) -> None:
    warc = tmp_path / "in.warc"
    warc.write_bytes(b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    profile = tmp_path / "profile.yaml"
    profile.write_text(f"name: p\nsettings:\n  {settings}\n" if settings else "name: p\n")
    result = cli("process", "--no-progress", "--profile", str(profile), *arguments,
                 "-o", str(tmp_path / "out"), str(warc), cwd=tmp_path)  # fmt: skip
    one_error_line(result, message)
    assert not (tmp_path / "out").exists()

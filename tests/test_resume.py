"""Campaigns survive their own death: kill -9, SIGINT, SIGTERM and a full disk, then resume.

A real crawl process (`corpus-crawler crawl PROFILE -o OUT`) crawls a loopback
site of a few hundred real pages (tests/site/crawl_site.py plus a tree of gold
pages, each answer slightly delayed so that kills land mid-crawl). It is killed
at several points of one campaign (detected by polling the server's request
log), and the same command is run again each time, until the campaign ends.
Then every record is counted: each page exactly once as a WARC response and as
a kept document in the WARC conversions, the prevertical and the vertical file;
every WARC passes `warcio check`; the campaign totals in the summary equal what
the files hold; and no process of a killed crawl outlives it.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import crawl_site
import pytest
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler import extract, faults
from corpus_crawler.profile import parse_profile
from corpus_crawler.testserver import Reply, SiteServer, add_links, isolate_links
from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
EXTRA_PAGES = 240
#: Seconds each page waits before it is answered.
DELAY = 0.01


PROFILE = """\
name: resume
seeds:
  urls: ["{base}/"]
  sitemaps_from_robots: true
scope:
  max_depth: {max_depth}
politeness:
  concurrent_requests: 4
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
limits:
  max_page_bytes: 2000000
  download_timeout: 30
  retry_times: 2
extraction:
  language: auto
  min_words: 60
  workers: 2
  page_timeout: 60
# the tree pages share their gold text: dedup (and with it yield pruning) would drop
# them, and these checks compare the kept set with extract() page by page
dedup:
  enabled: false
output:
  progress_interval: 0
  warc:
    prefix: resume
  prevertical:
    enabled: true
  vertical:
    enabled: true
"""


@dataclasses.dataclass
class Site:
    pages: dict[str, Reply]
    routes: dict[str, Any]
    #: Paths that must end up archived with a 200 response.
    pages_200: frozenset[str]


@pytest.fixture(scope="module")
def site(gold_dir: Path) -> Site:
    spec = crawl_site.build_site(gold_dir)
    gold = [
        isolate_links(p.read_bytes()) for p in sorted((gold_dir / "cleaneval-dev").glob("html/*"))
    ][:40]
    pages: dict[str, Reply] = {}
    for i in range(EXTRA_PAGES):
        children = [c for c in range(10 * i + 1, 10 * i + 11) if c < EXTRA_PAGES]
        nav = "".join(f"<a href='/tree/p{c}.html'>page {c}</a> " for c in children)
        # a unique sentence, so no two pages are the same document
        own = f"<p>Tree page number {i} of the resume test.</p>"
        pages[f"/tree/p{i}.html"] = Reply(
            headers=(("Content-Type", "text/html"),),
            body=add_links(gold[i % len(gold)], (own + nav).encode()),
        )
    for path, reply in spec.pages.items():
        pages[path] = reply
    index = pages["/"]
    pages["/"] = dataclasses.replace(
        index, body=add_links(index.body, b"<a href='/tree/p0.html'>the tree</a>")
    )
    pages = {path: dataclasses.replace(reply, delay=DELAY) for path, reply in pages.items()}
    errors = {"/missing.html", "/old-location", "/moved/step", "/away", "/big.html"}
    wanted = {p for p in pages if p.startswith("/tree/")} | (set(spec.once) - errors)
    wanted.add("/flaky.html")
    return Site(pages=pages, routes=dict(spec.routes), pages_200=frozenset(wanted))


# -- processes ---------------------------------------------------------------------------------


def _start_time(pid: int) -> str | None:
    """The start time of a live `pid`; None if it is gone (or a zombie: it has exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
    except OSError:
        return None
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return fields[19].decode()


def descendants(pid: int) -> dict[int, str]:
    """Every live descendant of `pid` (from /proc), with its start time."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rpartition(b")")[2].split()
        except OSError:
            continue
        children[int(fields[1])].append(int(entry.name))
    found: dict[int, str] = {}
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            started = _start_time(child)
            if started is not None:
                found[child] = started
                stack.append(child)
    return found


def survivors(processes: dict[int, str]) -> list[int]:
    return [pid for pid, started in processes.items() if _start_time(pid) == started]


def crawl_command(profile: Path, out: Path, *settings: str) -> list[str]:
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    for setting in settings:
        command += ["-s", setting]
    return command


def start_crawl(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as handle:
        return subprocess.Popen(command, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)


def wait_for_requests(server: SiteServer, count: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while len(server.requests) < count:
        assert process.poll() is None, "the crawl ended before the kill point"
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.005)


def kill_and_check_no_orphans(process: subprocess.Popen[bytes], how: int) -> None:
    family = descendants(process.pid)
    assert family, "the crawl should have extraction workers"
    process.send_signal(how)
    process.wait(timeout=TIMEOUT)
    if how == signal.SIGKILL:
        # the workers, the fork server and the resource tracker exit by themselves
        deadline = time.monotonic() + 10
        while survivors(family) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = survivors(family)
        assert not left, f"processes outlived the killed crawl: {left}"


def finish_campaign(command: list[str], log: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(result.stdout + result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    return result


# -- counting -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Record:
    type: str
    uri: str
    status: int | None
    headers: dict[str, str]
    http_headers: dict[str, str]
    content: bytes


def read_records(paths: list[Path]) -> Iterator[Record]:
    for path in paths:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle, check_digests=True):
                http = record.http_headers
                content = record.content_stream().read()
                assert record.digest_checker.passed is not False
                yield Record(
                    type=record.rec_type,
                    uri=record.rec_headers.get_header("WARC-Target-URI") or "",
                    status=int(http.get_statuscode())
                    if http and record.rec_type == "response"
                    else None,
                    headers=dict(record.rec_headers.headers),
                    http_headers={k.lower(): v for k, v in http.headers} if http else {},
                    content=content,
                )


def path_of(url: str) -> str:
    rest = url.split("://", 1)[1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def check_campaign(out: Path, site: Site, profile_text: str) -> dict[str, Any]:
    """The exactly-once checks; returns the last summary."""
    assert not list(out.glob("*.open")), "a file was left unfinished"
    # the main WARCs and the text WARCs (conversion records) beside them
    warcs = sorted(out.glob("*.warc.gz")) + sorted(out.glob("*.warc.wet.gz"))
    for path in warcs:
        check = subprocess.run(
            [sys.executable, "-m", "warcio.cli", "check", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stdout + check.stderr
    records = list(read_records(warcs))
    responses = [r for r in records if r.type == "response"]
    # every exchange once (robots.txt is fetched again by each run, by design)
    exchanges = collections.Counter(
        (path_of(r.uri), r.status) for r in responses if not r.uri.endswith("/robots.txt")
    )
    twice = {key: n for key, n in exchanges.items() if n != 1}
    assert not twice, f"archived more than once: {twice}"
    ok = {path for path, status in exchanges if status == 200}
    assert ok >= site.pages_200, f"never archived: {sorted(site.pages_200 - ok)}"
    # every kept document once, the same set in every file, and the right set
    conversions = collections.Counter(r.uri for r in records if r.type == "conversion")
    assert all(n == 1 for n in conversions.values()), conversions.most_common(3)
    prevertical = [
        a["final_url"] for p in sorted(out.glob("*.prevert")) for a, _ in read_vertical(p)
    ]
    vertical = [a["final_url"] for p in sorted(out.glob("*.vert")) for a, _ in read_vertical(p)]
    assert len(prevertical) == len(set(prevertical)) == len(conversions)
    assert set(prevertical) == set(vertical) == set(conversions)
    assert len(vertical) == len(set(vertical))
    profile = parse_profile(__import__("yaml").safe_load(profile_text))
    config = profile.extraction.extract_config(profile.limits.max_page_bytes)
    expected = set()
    for record in responses:
        content_type = record.http_headers.get("content-type", "")
        if record.status != 200 or not content_type.startswith("text/html"):
            continue
        if "WARC-Truncated" in record.headers:
            continue  # cut at the size cap: archived, counted too-large, never a document
        charset = content_type.split("charset=", 1)[1] if "charset=" in content_type else None
        document = extract(record.content, record.uri, config, http_charset=charset)
        if document.kept and sum(p.word_count for p in document.good_paragraphs) >= 60:
            expected.add(record.uri)
    assert len(expected) > EXTRA_PAGES / 2
    assert set(conversions) == expected
    by_id = {r.headers["WARC-Record-ID"]: r for r in records}
    for record in records:
        if record.type == "conversion":
            response = by_id[record.headers["WARC-Refers-To"]]
            assert response.type == "response" and response.uri == record.uri
    # the summary's campaign totals are what the files hold
    summaries = sorted(out.glob("*-summary.json"))
    summary = json.loads(summaries[-1].read_text(encoding="utf-8"))
    totals = summary["campaign"]["totals"]
    assert totals["warc_exchanges"] == len(responses)
    assert totals["documents_kept"] == len(conversions) == totals["warc_conversions"]
    assert totals["prevertical_documents"] == len(prevertical)
    assert totals["vertical_documents"] == len(vertical)
    assert summary["campaign"]["requests_left"] == 0
    return dict(summary)


def _write_profile(tmp_path: Path, base: str) -> tuple[Path, str]:
    text = PROFILE.format(base=base, max_depth=crawl_site.MAX_DEPTH)
    profile = tmp_path / "resume.yaml"
    profile.write_text(text, encoding="utf-8")
    return profile, text


# -- the tests ----------------------------------------------------------------------------------


def test_kill_9_at_several_points_then_resume_loses_nothing_and_repeats_nothing(
    site: Site, tmp_path: Path
) -> None:
    total = len(site.pages_200) + 12  # about the requests of one uninterrupted crawl
    log = tmp_path / "crawl.log"
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile, text = _write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        command = crawl_command(profile, out)
        kills = 0
        for fraction in (0.25, 0.5, 0.75):
            process = start_crawl(command, log)
            wait_for_requests(server, int(total * fraction), process)
            kill_and_check_no_orphans(process, signal.SIGKILL)
            kills += 1
        finish_campaign(command, log)
        served = server.counts()
    assert kills == 3
    summary = check_campaign(out, site, text)
    assert summary["campaign"]["run"] == 4 and summary["campaign"]["resumed"]
    # the killed runs did work that the next ones did not repeat
    assert served["/tree/p0.html"] >= 1 and sum(served.values()) < 3 * total


def test_kill_9_before_a_runs_first_commit_then_resume_moves_its_files_aside(
    site: Site, tmp_path: Path
) -> None:
    """Each run killed (`corpus_crawler.faults`) in its first document, between the
    prevertical and the vertical: that run's new corpus files hold bytes no commit
    describes, and the next run moves them to ``uncommitted/`` and fetches the page again
    (the timed kills above always land after a commit of the run's files)."""
    log = tmp_path / "crawl.log"
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile, text = _write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        command = crawl_command(profile, out)
        moved: list[str] = []
        for _ in range(2):
            env = {**os.environ, faults.ENV_VAR: "writer.mid_document:1"}
            with open(log, "ab") as handle:
                process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=handle)
            assert process.wait(timeout=TIMEOUT) == -9
            assert "kill point writer.mid_document reached" in log.read_text(errors="replace")
            with sqlite3.connect(f"file:{out / 'campaign.sqlite'}?mode=ro", uri=True) as db:
                committed = {name for (name,) in db.execute("SELECT name FROM files")}
            # the prevertical the run opened for that document: nothing of it committed
            fresh = [p.name for p in out.glob("*.prevert.open") if p.name[:-5] not in committed]
            assert len(fresh) == 1, fresh
            moved += fresh
        finish_campaign(command, log)
    assert set(moved) <= {p.name for p in (out / "uncommitted").iterdir()}
    summary = check_campaign(out, site, text)
    assert summary["campaign"]["run"] == 3 and summary["campaign"]["resumed"]


def test_sigint_and_sigterm_then_resume(site: Site, tmp_path: Path) -> None:
    total = len(site.pages_200) + 12
    log = tmp_path / "crawl.log"
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile, text = _write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        command = crawl_command(profile, out)
        for fraction, how in ((0.3, signal.SIGINT), (0.6, signal.SIGTERM)):
            process = start_crawl(command, log)
            wait_for_requests(server, int(total * fraction), process)
            kill_and_check_no_orphans(process, how)
            assert process.returncode == 5, log.read_text(errors="replace")[-3000:]
        finish_campaign(command, log)
    check_campaign(out, site, text)


def extraction_workers(crawl: int) -> list[int]:
    """The crawl's pool workers (the fork server's children), oldest first: the page
    pool starts its workers with the crawl, before any other pool of the fork server."""
    forkservers = [
        pid
        for pid in descendants(crawl)
        if b"forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
        and b"forkserver" not in Path(f"/proc/{_parent(pid)}/cmdline").read_bytes()
    ]
    workers = [pid for server in forkservers for pid in descendants(server)]
    return sorted(workers, key=lambda pid: int(_start_time(pid) or 0))


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[1])


def test_an_extraction_worker_killed_mid_crawl_loses_no_page(site: Site, tmp_path: Path) -> None:
    # The pages in flight in the broken pool are tried again in the new one, so the
    # crawl keeps every page it should (check_campaign), and it does not hang.
    total = len(site.pages_200) + 12
    log = tmp_path / "crawl.log"
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile, text = _write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        process = start_crawl(crawl_command(profile, out), log)
        try:
            wait_for_requests(server, total // 3, process)
            workers = extraction_workers(process.pid)
            assert workers, "the crawl should have extraction workers"
            os.kill(workers[0], signal.SIGKILL)
            assert process.wait(timeout=TIMEOUT) == 0, log.read_text(errors="replace")[-3000:]
        finally:
            if process.poll() is None:
                process.kill()
    output = log.read_text(errors="replace")
    assert "an extraction worker died; starting a new pool" in output
    assert "in the new pool" in output
    summary = check_campaign(out, site, text)
    assert summary["campaign"]["run"] == 1


def test_a_full_disk_stops_the_crawl_and_the_campaign_resumes_once_space_is_back(
    site: Site, tmp_path: Path
) -> None:
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile, text = _write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        full = subprocess.run(
            crawl_command(profile, out, "CORPUS_OUTPUT_FAULT_ENOSPC_AFTER=60"),
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        fetched_before_resume = len(server.requests)
        finish_campaign(crawl_command(profile, out), tmp_path / "crawl.log")
    assert full.returncode == 3, full.stderr[-3000:]
    stopped = [line for line in full.stderr.splitlines() if line.startswith("corpus-crawler:")]
    assert stopped == [
        "corpus-crawler: stopped: cannot write to"
        f" {out}: the disk is full (free some space, then run the same command again to resume)"
    ]
    assert "Traceback" not in full.stderr
    # it stopped fetching soon after the failure, well before the end
    assert fetched_before_resume < len(site.pages_200)
    check_campaign(out, site, text)


def test_a_campaign_folder_is_used_by_one_crawl_at_a_time(site: Site, tmp_path: Path) -> None:
    with SiteServer(pages=site.pages, routes=site.routes) as server:
        profile, _ = _write_profile(tmp_path, server.base_url)
        out = tmp_path / "out"
        first = start_crawl(crawl_command(profile, out), tmp_path / "first.log")
        try:
            wait_for_requests(server, 5, first)
            second = subprocess.run(
                crawl_command(profile, out),
                cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
            )  # fmt: skip
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=TIMEOUT)
    assert second.returncode == 4
    assert second.stderr.strip().splitlines() == [
        f"corpus-crawler: another crawl is using {out}: wait for it to finish, or give this"
        " one its own output folder (-o OUTDIR)"
    ]


@pytest.mark.parametrize(
    ("profile_text", "settings", "message"),
    [
        ("name: x\n", [], "no seeds: give seeds.urls"),
        ("name: x\nseeds: {files: [missing.txt]}\n", [], "cannot read seed file"),
        ("name: x\nseeds: {urls: ['http://127.0.0.1:9/']}\n", ["CORPUS_EXTRACT_WORKERS=two"],
         "-s CORPUS_EXTRACT_WORKERS: must be a whole number, got 'two'"),
    ],
)  # fmt: skip
def test_a_crawl_that_cannot_start_says_why_in_one_line(
    tmp_path: Path, profile_text: str, settings: list[str], message: str
) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(profile_text, encoding="utf-8")
    result = subprocess.run(
        crawl_command(profile, tmp_path / "out", *settings),
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("corpus-crawler: ") and message in line


def test_an_unwritable_output_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("name: x\nseeds: {urls: ['http://127.0.0.1:9/']}\n", encoding="utf-8")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    result = subprocess.run(
        crawl_command(profile, blocker / "out"),
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"corpus-crawler: cannot write to the output folder {blocker / 'out'}")
    assert os.path.exists(blocker)

"""A campaign's life as a crawl engineer lives it: first crawl, stop, resume, recrawl, report.

Each test runs the real `corpus-crawler` (or `scrapy crawl corpus`) in a subprocess
against the demo site served on 127.0.0.1, and checks what the user sees.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from corpus_crawler.testserver import SiteServer

ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = ROOT / "corpus_crawler" / "demo_site"
#: A guard against a hung process, not a speed assertion.
TIMEOUT = 120

PROFILE = """\
name: walk
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
schedule:
  min_interval: 1s
  initial_interval: 1s
output:
  progress_interval: 0
  report: false
"""


@pytest.fixture(scope="module")
def site() -> Iterator[SiteServer]:
    with SiteServer(DEMO_SITE) as server:
        yield server


def cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corpus_crawler.cli", *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip


def summaries(folder: Path) -> list[dict[str, object]]:
    found = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*-summary.json")]
    return sorted(found, key=lambda s: str(s["started"]))


def test_report_covers_every_run_of_a_campaign(site: SiteServer, tmp_path: Path) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
    out = tmp_path / "out"
    first = cli(
        "crawl", str(profile), "-o", str(out), "-s", "CLOSESPIDER_PAGECOUNT=2", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr[-2000:]
    resumed = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    time.sleep(1.2)  # the pages' revisit interval (initial_interval: 1s) passes
    recrawl = cli("crawl", str(profile), "-o", str(out), "--recrawl", cwd=tmp_path)
    assert recrawl.returncode == 0, recrawl.stderr[-2000:]
    written = summaries(out)
    assert len(written) == 3

    result = cli("report", str(out), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    runs = report["runs"]
    assert [run["kind"] for run in runs] == ["first crawl", "resume", "recrawl"]
    assert [run["finish_reason"] for run in runs] == [
        "closespider_pagecount",
        "finished",
        "finished",
    ]
    for run, summary in zip(runs, written, strict=True):
        pages = summary["pages"]
        assert isinstance(pages, dict)
        assert run["pages_fetched"] == pages["responses"]
        assert run["documents"] == pages["kept"]
    assert runs[2]["pages_fetched"] > 0  # the recrawl pass revisited the due pages
    total = report["total"]
    assert total["runs"] == 3
    for key in ("pages_fetched", "documents", "words"):
        assert total[key] == sum(run[key] for run in runs)
    assert total["documents"] > runs[-1]["documents"]
    assert report["latest_run"] == runs[-1]
    html = Path(report["report"]).read_text(encoding="utf-8")
    assert "Runs of the campaign" in html and "3 (latest)" in html
    assert f"<b>{total['documents']:,}</b>documents kept" in html

    text = cli("report", str(out), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"Campaign walk in {out}: 3 runs"
    assert any(line.startswith("3 (latest)") and "recrawl" in line for line in lines)
    assert any(line.startswith("total") and f"{total['documents']:,}" in line for line in lines)

    latest = cli("report", str(out), "--latest", "--json", cwd=tmp_path)
    assert latest.returncode == 0, latest.stderr
    only = json.loads(latest.stdout)
    assert [run["run"] for run in only["runs"]] == [3]


def test_bad_seed_lines_are_skipped_each_named_by_file_and_line(
    site: SiteServer, tmp_path: Path
) -> None:
    base = site.base_url
    other = base.replace("127.0.0.1", "localhost")
    (tmp_path / "seeds.txt").write_bytes(
        f"{base}/\n# the blog\n{base}/blog/\nexample.org\nftp://files.example/\n{other}/\n"
        f"{base}/caf".encode()
        + b"\xe9\n"
    )
    profile = tmp_path / "walk.yaml"
    profile.write_text(
        PROFILE.format(base=base)
        .replace(f'  urls: ["{base}/"]', "  files: [seeds.txt]")
        .replace("scope:\n", "scope:\n  allowed_domains: [127.0.0.1]\n"),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    seeds = tmp_path / "seeds.txt"
    for expected in (
        f"{seeds}:4: 'example.org' is not a URL (write it with its scheme, e.g."
        " https://example.org)",
        f"{seeds}:5: 'ftp://files.example/' has the scheme 'ftp'",
        f"{seeds}:7: byte 0xe9 at column {len(base) + 5} is not UTF-8",
        f"{seeds}:6: seed {other}/ is out of scope (host): skipped (add its host to"
        " scope.allowed_domains",
        f"{seeds}: 3 bad line(s) skipped, each listed above; 3 seed URL(s) read",
    ):
        assert expected in result.stderr, expected
    assert "seeds:   4 skipped (encoding 1, not-a-url 1, out-of-scope 1, scheme 1)" in result.stdout
    [summary] = summaries(out)
    stats = summary["stats"]
    assert isinstance(stats, dict)
    assert stats["corpus/seeds/bad/not-a-url"] == 1
    pages = summary["pages"]
    assert isinstance(pages, dict) and pages["kept"] > 0  # the good seeds were crawled


def test_a_seed_file_without_one_good_line_stops_before_the_crawl(tmp_path: Path) -> None:
    (tmp_path / "seeds.txt").write_text("example.org\nexample.net\n", encoding="utf-8")
    profile = tmp_path / "p.yaml"
    profile.write_text("name: p\nseeds:\n  files: [seeds.txt]\n", encoding="utf-8")
    result = cli("crawl", str(profile), "-o", "out", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert "holds no URL; the first bad line:" in last
    assert f"{tmp_path / 'seeds.txt'}:1: 'example.org' is not a URL" in last
    assert not (tmp_path / "out").exists()


def scrapy_crawl(profile: Path, *settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "corpus", "-a", f"profile={profile}",
         *(part for setting in settings for part in ("-s", setting))],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip


def test_scrapy_crawl_corpus_makes_the_clis_checks(site: SiteServer, tmp_path: Path) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
    out = tmp_path / "out"

    misspelt = scrapy_crawl(profile, f"CORPUS_OUTPUT_DIR={out}", "CORPUS_DEDUP_ENABLD=True")
    assert misspelt.returncode == 2, misspelt.stderr[-2000:]
    assert misspelt.stderr.strip().splitlines()[-1] == (
        "scrapy crawl corpus: -s CORPUS_DEDUP_ENABLD: no such corpus-crawler setting;"
        " did you mean CORPUS_DEDUP_ENABLED?"
    )

    a_file = tmp_path / "a-file"
    a_file.write_text("", encoding="utf-8")
    into_a_file = scrapy_crawl(profile, f"CORPUS_OUTPUT_DIR={a_file}")
    assert into_a_file.returncode == 2
    assert into_a_file.stderr.strip().splitlines()[-1] == (
        f"scrapy crawl corpus: cannot write to the output folder {a_file}: it is a file"
        " (choose another with -s CORPUS_OUTPUT_DIR=OUTDIR)"
    )

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "other-tool.warc.gz.open").write_bytes(b"not ours")
    refused = scrapy_crawl(profile, f"CORPUS_OUTPUT_DIR={foreign}")
    assert refused.returncode == 2
    assert "already holds corpus or WARC files (other-tool.warc.gz.open)" in refused.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["other-tool.warc.gz.open"]

    crawled = scrapy_crawl(profile, f"CORPUS_OUTPUT_DIR={out}")
    assert crawled.returncode == 0, crawled.stderr[-3000:]
    assert len(summaries(out)) == 1
    other = tmp_path / "other.yaml"
    other.write_text(PROFILE.format(base=site.base_url).replace("walk", "other"), encoding="utf-8")
    mixed = scrapy_crawl(other, f"CORPUS_OUTPUT_DIR={out}")
    assert mixed.returncode == 2
    assert f"{out} holds the campaign of profile 'walk'" in mixed.stderr.strip().splitlines()[-1]


def crawl_log_outcomes(folder: Path) -> dict[str, str]:
    outcomes = {}
    for path in sorted(folder.glob("*.crawl.log")):
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split(" ")
            outcomes[fields[3]] = fields[8]
    return outcomes


def test_robots_txt_holds_for_every_request_waiting_for_it(
    site: SiteServer, tmp_path: Path
) -> None:
    # many requests of one host wait for its robots.txt at once (a seed list, or a
    # resumed frontier): Scrapy gave the rules to the first and let the rest through
    base = site.base_url
    pages = ["about.html", "articles/literally.html", "articles/colophon.html", "notes.txt"]
    (tmp_path / "seeds.txt").write_text(
        "".join(f"{base}/{page}\n" for page in [*pages, "private/draft.html", *pages[:1]]),
        encoding="utf-8",
    )
    profile = tmp_path / "walk.yaml"
    profile.write_text(
        PROFILE.format(base=base)
        .replace(f'  urls: ["{base}/"]', "  files: [seeds.txt]")
        .replace("max_depth: 3", "follow_links: false"),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    outcomes = crawl_log_outcomes(out)
    assert outcomes[f"{base}/private/draft.html"] == "refused:robots"
    assert not any(outcomes[f"{base}/{page}"].startswith("refused") for page in pages), outcomes


def test_a_resumed_frontier_still_obeys_robots_txt(site: SiteServer, tmp_path: Path) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
    out = tmp_path / "out"
    first = cli(
        "crawl", str(profile), "-o", str(out),
        "-s", "CLOSESPIDER_PAGECOUNT=1", "-s", "CONCURRENT_REQUESTS=1", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    resumed = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    outcomes = crawl_log_outcomes(out)
    assert outcomes[f"{site.base_url}/private/draft.html"] == "refused:robots"
    assert outcomes[f"{site.base_url}/articles/colophon.html"] == "kept"


def test_a_recrawl_with_nothing_due_says_when_the_first_page_is(
    site: SiteServer, tmp_path: Path
) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(
        PROFILE.format(base=site.base_url).replace("initial_interval: 1s", "initial_interval: 2h"),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    first = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    recrawl = cli("crawl", str(profile), "-o", str(out), "--recrawl", cwd=tmp_path)
    assert recrawl.returncode == 0, recrawl.stderr[-2000:]
    last = recrawl.stderr.strip().splitlines()[-1]
    tracked = summaries(out)[0]["pages"]
    assert isinstance(tracked, dict)
    assert last.startswith(
        f"corpus-crawler: nothing was due for a recrawl: of the {tracked['responses'] - 1} URLs"
        f" the campaign in {out} tracks, the first is due at "
    ), last
    assert "(in 2.0 h)" in last or "(in 1.9 h)" in last or "(in 120 min)" in last, last


def test_an_output_switched_between_runs_says_what_it_misses(
    site: SiteServer, tmp_path: Path
) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
    out = tmp_path / "out"
    first = cli(
        "crawl", str(profile), "-o", str(out),
        "-s", "CLOSESPIDER_PAGECOUNT=2", "-s", "CONCURRENT_REQUESTS=1", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    assert "note:" not in first.stderr
    kept_first = summaries(out)[0]["pages"]
    assert isinstance(kept_first, dict) and kept_first["kept"] >= 1
    profile.write_text(
        PROFILE.format(base=site.base_url).replace(
            "output:\n", "output:\n  vertical: {enabled: true}\n  prevertical: {enabled: false}\n"
        ),
        encoding="utf-8",
    )
    resumed = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    kept_now = summaries(out)[1]["pages"]
    assert isinstance(kept_now, dict)
    assert (
        "corpus-crawler: note: output.vertical.enabled is on in this run but was off before:"
        f" the vertical files hold none of the {kept_first['kept']:,} documents of the earlier"
        " runs"
    ) in resumed.stderr
    assert (
        "corpus-crawler: note: output.prevertical.enabled is off in this run but was on"
        f" before: the prevertical files miss this run's {kept_now['kept']:,} documents"
    ) in resumed.stderr


def test_report_counts_a_killed_run_from_its_commits(site: SiteServer, tmp_path: Path) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(
        PROFILE.format(base=site.base_url).replace("download_delay: 0", "download_delay: 0.4"),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            logs = list(out.glob("*.crawl.log.open"))
            if logs and logs[0].read_text(encoding="utf-8").count(" kept ") >= 2:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the crawl ended before it could be killed"
        process.kill()  # SIGKILL: no summary, the crawl log left .open
    finally:
        process.wait(timeout=TIMEOUT)
    killed = json.loads(cli("report", str(out), "--json", cwd=tmp_path).stdout)
    [run] = killed["runs"]
    assert run["summary"] is None and run["finish_reason"] is None
    # what its commits left in the files (tests/test_report_killed_run.py checks the
    # figures against the files): the crawl log may hold pages the resume cuts back
    assert run["counted_from"] == "campaign store"

    # the delay only gave the first run time to be killed: the resume goes at full speed
    profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
    resumed = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    report = json.loads(cli("report", str(out), "--json", cwd=tmp_path).stdout)
    first, second = report["runs"]
    assert first["counted_from"] == "campaign store" and first["documents"] == run["documents"]
    assert second["counted_from"] == "summary" and second["kind"] == "resume"
    assert report["total"]["documents"] == first["documents"] + second["documents"]
    text = cli("report", str(out), cwd=tmp_path).stdout
    assert "no summary; counted from the campaign store" in text


def test_a_dead_seed_host_costs_lines_not_tracebacks(site: SiteServer, tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    profile = tmp_path / "walk.yaml"
    profile.write_text(
        PROFILE.format(base=site.base_url).replace(
            f'["{site.base_url}/"]', f'["{site.base_url}/", "{dead}"]'
        ),
        encoding="utf-8",
    )
    result = cli("crawl", str(profile), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    # its robots.txt got no response: the seed is deferred to a later run, not fetched
    # (RFC 9309 2.3.1.4), and both say so in one line each
    assert f"Error downloading <GET {dead}>: Connection was refused" in result.stderr
    netloc = dead.split("/")[2]
    assert f"robots.txt of {netloc} got no response: its pages are deferred" in result.stderr
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


def test_a_scope_narrowed_between_runs_applies_to_the_queued_frontier(
    site: SiteServer, tmp_path: Path
) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
    out = tmp_path / "out"
    first = cli(
        "crawl", str(profile), "-o", str(out),
        "-s", "CLOSESPIDER_PAGECOUNT=1", "-s", "CONCURRENT_REQUESTS=1", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    profile.write_text(
        PROFILE.format(base=site.base_url).replace(
            "scope:\n", 'scope:\n  deny_patterns: ["/articles/"]\n'
        ),
        encoding="utf-8",
    )
    resumed = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "requests queued by an earlier run are out of this profile's scope" in resumed.stderr
    outcomes = crawl_log_outcomes(out)
    articles = {url: outcome for url, outcome in outcomes.items() if "/articles/" in url}
    assert articles and set(articles.values()) == {"refused:denied"}, articles
    stats = summaries(out)[1]["stats"]
    assert isinstance(stats, dict)
    assert stats["corpus/frontier/refused/denied"] == len(articles)
    assert outcomes[f"{site.base_url}/about.html"] == "kept"  # the rest of the frontier goes on


def test_report_without_a_crawl_log_still_shows_the_runs(site: SiteServer, tmp_path: Path) -> None:
    profile = tmp_path / "walk.yaml"
    profile.write_text(
        PROFILE.format(base=site.base_url).replace("output:\n", "output:\n  crawl_log: false\n"),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    crawled = cli("crawl", str(profile), "-o", str(out), cwd=tmp_path)
    assert crawled.returncode == 0, crawled.stderr[-2000:]
    assert not list(out.glob("*.crawl.log"))
    result = cli("report", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [summary] = summaries(out)
    pages = summary["pages"]
    assert isinstance(pages, dict)
    [latest] = [line for line in result.stdout.splitlines() if line.startswith("1 (latest)")]
    assert f" {pages['kept']:,} " in latest
    assert "no HTML report: no crawl log (*.crawl.log)" in result.stderr

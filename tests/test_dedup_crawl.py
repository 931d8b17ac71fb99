"""Dedup in a real crawl: several loopback hosts with planted duplicates (tests/site/dup_site.py).

The same crawl runs with `dedup.enabled: false` and with the defaults; the
corpus files (prevertical) are compared: each duplicate group keeps exactly one
document, no unique page is lost, planted boilerplate paragraphs go, unique
paragraphs stay. A third crawl into the same output folder re-publishes
articles of the first on a new host: the stores of the first run catch them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import dup_site
import pytest

from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
CRAWL_TIMEOUT = 240  # a guard against a hung crawl, not a speed assertion


PROFILE = """\
name: dedup-test
seeds:
  urls: {seeds}
scope:
  max_depth: 2
politeness:
  obey_robots_txt: false
  concurrent_requests: 8
  concurrent_requests_per_domain: 4
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: auto
  workers: 1
output:
  progress_interval: 0
  report: false  # the HTML report has tests of its own; nothing here reads it
  warc:
    enabled: false
dedup:
  enabled: {enabled}
  paragraph_filter_mib: 8
yield:
  preset: "off"
"""


def start_crawl(
    workdir: Path, name: str, seeds: list[str], *, enabled: bool, out: Path
) -> subprocess.Popen[str]:
    profile = workdir / f"{name}.yaml"
    profile.write_text(
        PROFILE.format(seeds=json.dumps(seeds), enabled=str(enabled).lower()), encoding="utf-8"
    )
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out)]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish_crawls(*processes: subprocess.Popen[str]) -> None:
    try:
        for process in processes:
            stdout, stderr = process.communicate(timeout=CRAWL_TIMEOUT)
            assert process.returncode == 0, f"crawl failed:\n{stdout}\n{stderr[-5000:]}"
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def run_crawl(workdir: Path, name: str, seeds: list[str], *, enabled: bool, out: Path) -> None:
    finish_crawls(start_crawl(workdir, name, seeds, enabled=enabled, out=out))


def documents(out: Path) -> list[tuple[str, list[str]]]:
    """(final url, paragraph texts) of every document in the prevertical files."""
    docs = []
    for path in sorted(out.glob("*.prevert*")):
        for attributes, paragraphs in read_vertical(path):
            docs.append(
                (attributes["final_url"], [" ".join(text.split()) for _, text in paragraphs])
            )
    return docs


def key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    workdir = tmp_path_factory.mktemp("dedup-crawl")
    site = dup_site.build_dup_site()
    with dup_site.MultiHostServer(site.hosts) as server:
        seeds = [server.base_url(address) + "/" for address in site.hosts]
        # two output folders, one read-only site: the two crawls run side by side
        finish_crawls(
            start_crawl(workdir, "off", seeds, enabled=False, out=workdir / "off"),
            start_crawl(workdir, "on", seeds, enabled=True, out=workdir / "on"),
        )
    # pass 2 into the same folder: a new host re-publishes one article of every group
    later_hosts = dup_site.build_dup_site(addresses=("127.0.0.7",)).hosts
    copies = later_hosts["127.0.0.7"]
    copies.pages.clear()
    originals = {}
    for (address, path), group in site.groups.items():
        if group in originals:
            continue
        originals[group] = (address, path)
        copies.pages[f"/copy/{group}.html"] = site.hosts[address].pages[path]
    copies.pages["/"] = dup_site._index(copies, sorted(copies.pages))
    with dup_site.MultiHostServer({"127.0.0.7": copies}) as server:
        run_crawl(
            workdir, "pass2", [server.base_url("127.0.0.7") + "/"], enabled=True,
            out=workdir / "on",
        )  # fmt: skip
    return {"site": site, "workdir": workdir, "copies": len(originals)}


def test_every_duplicate_group_keeps_exactly_one_document(crawls: dict[str, object]) -> None:
    site = crawls["site"]
    workdir = crawls["workdir"]
    assert isinstance(workdir, Path)
    off = documents(workdir / "off")
    on = [doc for doc in documents(workdir / "on")]
    groups_off = Counter(site.groups[key(url)] for url, _ in off if key(url) in site.groups)
    groups_on = Counter(site.groups[key(url)] for url, _ in on if key(url) in site.groups)
    duplicated = [g for g, kind in site.group_kinds.items() if kind != "unique"]
    # the planted copies really reach the corpus without dedup
    assert sum(groups_off[g] > 1 for g in duplicated) >= 0.9 * len(duplicated)
    one = sum(groups_on[g] == 1 for g in duplicated)
    print(f"duplicate groups with exactly one document: {one}/{len(duplicated)}")
    assert one >= 0.98 * len(duplicated)
    # the corpus counts follow the corpus files, not what extraction kept
    first_summary = sorted((workdir / "on").glob("*summary*.json"))[0]
    stats = json.loads(first_summary.read_text(encoding="utf-8"))["stats"]
    pass_one = [doc for doc in on if key(doc[0])[0] != "127.0.0.7"]
    assert stats["corpus/docs_kept"] == len(pass_one)
    assert stats["corpus/paragraphs_good"] == sum(len(ps) for _, ps in pass_one)


def test_no_unique_page_is_lost(crawls: dict[str, object]) -> None:
    site = crawls["site"]
    workdir = crawls["workdir"]
    assert isinstance(workdir, Path)
    off = {key(url) for url, _ in documents(workdir / "off")}
    on = {key(url) for url, _ in documents(workdir / "on")}
    unique = [k for k, g in site.groups.items() if site.group_kinds[g] == "unique" and k in off]
    assert len(unique) >= 15
    lost = [k for k in unique if k not in on]
    print(f"unique pages lost: {len(lost)}/{len(unique)}")
    assert len(lost) <= 0.005 * len(unique)


def test_boilerplate_paragraphs_go_and_unique_paragraphs_stay(crawls: dict[str, object]) -> None:
    site = crawls["site"]
    workdir = crawls["workdir"]
    assert isinstance(workdir, Path)
    boilerplate = {*site.host_boilerplate.values(), site.shared_boilerplate}
    off = dict((key(url), paragraphs) for url, paragraphs in documents(workdir / "off"))
    on = {
        key(url): paragraphs
        for url, paragraphs in documents(workdir / "on")
        if key(url)[0] != "127.0.0.7"
    }
    # boilerplate of the documents both runs kept; the first occurrence of each stays
    both = [k for k in on if k in off]
    planted_off = sum(p in boilerplate for k in both for p in off[k])
    planted_on = sum(p in boilerplate for k in both for p in on[k])
    repeats_off = planted_off - len({p for k in both for p in off[k] if p in boilerplate})
    repeats_on = planted_on - len({p for k in both for p in on[k] if p in boilerplate})
    assert repeats_off > 50
    print(
        f"boilerplate repeats removed: {repeats_off - repeats_on}/{repeats_off}"
        f" ({planted_on} occurrence(s) left)"
    )
    assert (repeats_off - repeats_on) / repeats_off >= 0.95
    off_set = {p for paragraphs in off.values() for p in paragraphs}
    on_set = {p for paragraphs in on.values() for p in paragraphs}
    # A paragraph of an article whose copy lacks it (the "removed" groups) leaves with
    # the article when the shorter copy was met first: near-duplicate documents keep
    # the first occurrence, whichever the crawl order makes it. Those are measured,
    # like the added ones, not required; every other unique paragraph must stay.
    partial = {
        k for k, group in site.groups.items() if site.group_kinds[group] in ("added", "removed")
    }
    in_partial = {p for k, paragraphs in off.items() if k in partial for p in paragraphs}
    unique = [p for p in site.unique_paragraphs if p in off_set and p not in in_partial]
    kept = sum(p in on_set for p in unique)
    print(f"unique paragraphs kept: {kept}/{len(unique)}")
    assert kept >= 0.99 * len(unique)
    partial_unique = [p for p in site.unique_paragraphs if p in off_set and p in in_partial]
    print(
        "unique paragraphs of partial copies kept:"
        f" {sum(p in on_set for p in partial_unique)}/{len(partial_unique)}"
    )
    # paragraphs added to near-duplicate copies leave with the copy: measured, not required
    added = [p for p in site.added_paragraphs if p in off_set]
    print(f"paragraphs added to copies kept: {sum(p in on_set for p in added)}/{len(added)}")


def test_a_duplicate_of_an_earlier_run_is_caught(crawls: dict[str, object]) -> None:
    workdir = crawls["workdir"]
    assert isinstance(workdir, Path)
    later = [url for url, _ in documents(workdir / "on") if key(url)[0] == "127.0.0.7"]
    assert later == []
    summaries = sorted((workdir / "on").glob("*summary*.json"))
    assert len(summaries) == 2
    stats = json.loads(summaries[-1].read_text(encoding="utf-8"))["stats"]
    caught = stats.get("corpus/dropped/duplicate", 0) + stats.get(
        "corpus/dropped/near-duplicate", 0
    )
    print(f"pass-2 copies of pass-1 documents caught: {caught}/{crawls['copies']}")
    # every copy was fetched and extracted, and none reached the corpus
    assert caught >= crawls["copies"] - 1
    assert stats.get("corpus/dedup/documents", 0) == caught

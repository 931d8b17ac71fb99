"""Dedup survives kill -9 at each moment that matters: nothing lost, nothing doubled.

The loopback site with planted duplicates (tests/site/dup_site.py) is crawled
with dedup on, once without a stop (the reference) and then, for each kill
point of `corpus_crawler.faults`, killed by ``CORPUS_CRAWLER_KILL_AT=POINT:N``
(the crawl sends itself SIGKILL the N-th time it reaches POINT: a real kill -9
at an exact moment, not at whatever moment a timer hit) and resumed to the end.
Every output is then counted against the reference: each duplicate group one
document, every unique page one document, no page twice, in the prevertical,
the vertical (its text tokenised) and the JSONL alike; and in the WARC every
fetched URL one response and every kept document one conversion record.

What makes it hold, and the point that shows it:

* the dedup tables live in the campaign database and commit in the campaign's
  transaction (``dedup.rows_written``: rows of a kept document not committed
  are gone with its output; a resume that wiped the tables would keep a copy
  of a document kept before the kill);
* a page whose rows were committed but whose output was not is fetched again
  and kept as itself, ``keep_same_name`` (``dedup.rows_committed``);
* the paragraph n-gram filter, which cannot roll back, is fed from a journal
  only once its rows are committed, and feeding it again is harmless
  (``dedup.journal_applied``);
* the output files are cut back to their committed lengths on resume
  (``writer.mid_document``, ``writer.request_written``,
  ``vertical.torn_document``: bytes beyond the commit, whole documents or a
  torn one; ``writer.committed``: none).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import dup_site
import pytest
from test_vertical_after_dedup import tokenised, written_documents
from warcio.archiveiterator import ArchiveIterator

from corpus_crawler import faults
from corpus_crawler.documents import read_jsonl
from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240  # a guard against a hung crawl, not a speed assertion
#: Seconds between the campaign's commits: the site is crawled in about a second, and
#: a kill must find some of its documents committed (the default is 0.5).
COMMIT_INTERVAL = 0.05
#: Seconds before each answer of the test site.
ANSWER_DELAY = 0.05

PROFILE = """\
name: dedup-kill
seeds:
  urls: {seeds}
scope:
  max_depth: 2
politeness:
  obey_robots_txt: false
  concurrent_requests: 4
  concurrent_requests_per_domain: 2
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
extraction:
  language: auto
  workers: 1
output:
  progress_interval: 0
  warc:
    enabled: true
  vertical:
    enabled: true
  documents:
    jsonl: true
dedup:
  enabled: true
  paragraph_filter_mib: 8
yield:
  preset: "off"
"""

#: (kill point, the time it is reached that kills): each lands mid-crawl, after some
#: kept documents are committed and before all are.
KILLS = [
    ("dedup.rows_written", 20),
    ("dedup.rows_committed", 20),
    # journaled n-grams are applied per batch of commits, and a loaded machine makes
    # fewer, larger batches: the 10th came after the last kept document once under
    # the full suite (alone it comes at ~26 of 48); the 6th leaves room either way
    ("dedup.journal_applied", 6),
    ("writer.mid_document", 20),
    ("writer.request_written", 35),  # of about 100 requests
    # the 20th document's vertical (each document: its prevertical, then its vertical)
    ("vertical.torn_document", 40),
    ("writer.committed", 2),
]

Key = tuple[str, str]


def _key(url: str) -> Key:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path


@dataclass(frozen=True)
class Outputs:
    """Every record of a finished crawl's files, by page."""

    prevertical: list[Key]
    vertical: list[str]
    prevertical_blocks: list[str]
    jsonl: list[Key]
    warc_responses: list[Key]
    warc_conversions: list[Key]
    #: The CDXJ index beside the WARC files.
    cdxj: list[Key]
    #: Documents in the campaign's committed dedup tables.
    kept: int


def _outputs(out: Path) -> Outputs:
    prevertical = [
        _key(attributes["final_url"])
        for path in sorted(out.glob("*.prevert*"))
        for attributes, _ in read_vertical(path)
    ]
    jsonl = [
        _key(record["final_url"])
        for path in sorted(out.glob("*.jsonl"))
        for record in read_jsonl(path)
    ]
    responses: list[Key] = []  # a response or a revisit (the same payload again)
    conversions: list[Key] = []
    for path in sorted([*out.glob("*.warc.gz"), *out.glob("*.warc.wet.gz")]):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                uri = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type in ("response", "revisit"):
                    responses.append(_key(uri))
                elif record.rec_type == "conversion":
                    conversions.append(_key(uri))
    index = [
        _key(json.loads(line.split(" ", 2)[2])["url"])
        for path in sorted(out.glob("*.cdxj"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    with sqlite3.connect(out / "campaign.sqlite") as db:
        kept = int(db.execute("SELECT count(*) FROM dedup_documents").fetchone()[0])
    return Outputs(
        prevertical=prevertical,
        vertical=written_documents(out, ".vert"),
        prevertical_blocks=written_documents(out, ".prevert"),
        jsonl=jsonl,
        warc_responses=responses,
        warc_conversions=conversions,
        cdxj=index,
        kept=kept,
    )


def _committed(out: Path) -> tuple[int, int]:
    """Kept documents in the campaign's committed dedup tables, and in its committed
    output (the prevertical's count, committed with the files' lengths)."""
    with sqlite3.connect(f"file:{out / 'campaign.sqlite'}?mode=ro", uri=True) as db:
        try:
            kept = int(db.execute("SELECT count(*) FROM dedup_documents").fetchone()[0])
        except sqlite3.OperationalError:  # no dedup table committed yet
            kept = 0
        row = db.execute("SELECT value FROM counters WHERE key = 'prevertical/documents'")
        written = row.fetchone()
    return kept, int(written[0]) if written else 0


def _uncommitted_bytes(out: Path) -> int:
    """Bytes of the corpus files beyond the lengths the campaign committed."""
    with sqlite3.connect(f"file:{out / 'campaign.sqlite'}?mode=ro", uri=True) as db:
        committed = dict(db.execute("SELECT name, length FROM files").fetchall())
    return sum(
        path.stat().st_size - committed.get(path.name.removesuffix(".open"), 0)
        for pattern in ("*.warc.gz*", "*.warc.wet.gz*", "*.prevert*", "*.vert*", "*.jsonl*")
        for path in out.glob(pattern)
    )


#: Points whose kill leaves corpus bytes beyond the committed lengths (True), none (False).
LEAVES_UNCOMMITTED_BYTES = {
    "writer.mid_document": True,
    "writer.request_written": True,
    "vertical.torn_document": True,
    "writer.committed": False,
}


@dataclass(frozen=True)
class Site:
    site: dup_site.DupSite
    seeds: list[str]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    serve = dup_site._Handler.do_GET

    def slowly(handler: dup_site._Handler) -> None:
        # pages arrive at a pace the pipeline keeps up with: the writer's documents
        # follow the dedup verdicts closely instead of in one late burst
        time.sleep(ANSWER_DELAY)
        serve(handler)

    built = dup_site.build_dup_site()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dup_site._Handler, "do_GET", slowly)
        with dup_site.MultiHostServer(built.hosts) as server:
            yield Site(built, [server.base_url(address) + "/" for address in built.hosts])


@dataclass(frozen=True)
class Run:
    returncode: int
    log: str


def _crawl(site: Site, out: Path, kill_at: str | None = None) -> Run:
    profile = out.parent / f"{out.name}.yaml"
    profile.write_text(PROFILE.format(seeds=json.dumps(site.seeds)), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != faults.ENV_VAR}
    if kill_at is not None:
        env[faults.ENV_VAR] = kill_at
    command = [
        sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
        "-s", f"CORPUS_CAMPAIGN_COMMIT_INTERVAL={COMMIT_INTERVAL}",
    ]  # fmt: skip
    log = out.parent / f"{out.name}.log"
    # the log in a file, not a pipe: the workers of a killed crawl see it die once it is
    # reaped (`wait`), and they would hold a pipe open until then
    with open(log, "w", encoding="utf-8") as handle:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=handle)
        returncode = process.wait(timeout=TIMEOUT)
    return Run(returncode, log.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reference(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    """The outputs of the same crawl never stopped."""
    out = tmp_path_factory.mktemp("reference") / "out"
    result = _crawl(site, out)
    assert result.returncode == 0, result.log[-4000:]
    return _outputs(out)


def _check_documents(site: dup_site.DupSite, documents: list[Key]) -> None:
    twice = [key for key, count in Counter(documents).items() if count > 1]
    assert twice == [], f"documents written twice: {twice}"
    groups = Counter(site.groups[key] for key in documents if key in site.groups)
    duplicated = [g for g, kind in site.group_kinds.items() if kind != "unique"]
    not_one = {g: groups[g] for g in duplicated if groups[g] != 1}
    assert not_one == {}, f"duplicate groups without exactly one document: {not_one}"
    unique = [key for key, g in site.groups.items() if site.group_kinds[g] == "unique"]
    lost = [key for key in unique if key not in set(documents)]
    assert lost == [], f"unique pages lost: {lost}"


def test_reference_crawl_keeps_one_document_per_group(site: Site, reference: Outputs) -> None:
    _check_documents(site.site, reference.prevertical)
    assert len(reference.prevertical) == reference.kept == len(site.site.group_kinds)
    # every page of the site fetched and archived once (and the 404s of its navigation)
    pages = {(address, path) for address, host in site.site.hosts.items() for path in host.pages}
    assert pages <= set(reference.warc_responses)
    assert max(Counter(reference.warc_responses).values()) == 1


@pytest.mark.parametrize(("point", "nth"), KILLS, ids=[point for point, _ in KILLS])
def test_kill_9_at_point_then_resume_matches_the_uninterrupted_crawl(
    site: Site, reference: Outputs, tmp_path: Path, point: str, nth: int
) -> None:
    out = tmp_path / "out"
    killed = _crawl(site, out, kill_at=f"{point}:{nth}")
    # a real kill -9 at that point: no exit code, no summary
    assert killed.returncode == -9, killed.log[-4000:]
    assert f"kill point {point} reached, SIGKILL" in killed.log
    assert not list(out.glob("*summary*.json"))
    kept, written = _committed(out)
    # mid-crawl: some kept documents committed, not all. Documents committed in the
    # files too (what a resume that forgot the dedup tables would keep again) are
    # certain after writer.committed, a commit holding documents, and likely elsewhere
    print(f"{point}:{nth}: committed {kept} kept, {written} written of {reference.kept}")
    assert 0 < kept < reference.kept, kept
    assert written <= kept
    if point == "writer.committed":
        assert written > 0
    if point in LEAVES_UNCOMMITTED_BYTES:
        assert (_uncommitted_bytes(out) > 0) is LEAVES_UNCOMMITTED_BYTES[point]

    resumed = _crawl(site, out)
    assert resumed.returncode == 0, resumed.log[-4000:]
    summary = json.loads(sorted(out.glob("*summary*.json"))[-1].read_text(encoding="utf-8"))
    assert summary["campaign"]["run"] == 2 and summary["campaign"]["resumed"]

    got = _outputs(out)
    _check_documents(site.site, got.prevertical)
    # record for record what the uninterrupted crawl wrote (which copy of a group is
    # kept may differ: pages come in another order after the resume)
    assert len(got.prevertical) == len(reference.prevertical)
    assert Counter(got.jsonl) == Counter(got.prevertical)
    assert got.vertical == [tokenised(block, sentences=False) for block in got.prevertical_blocks]
    assert Counter(got.warc_conversions) == Counter(got.prevertical)
    assert Counter(got.warc_responses) == Counter(reference.warc_responses)
    assert Counter(got.cdxj) == Counter(got.warc_responses)
    # every kept document recorded once in the dedup tables: one kept again after the
    # kill is itself (keep_same_name), not a new record

    assert got.kept == reference.kept
    assert not (out / "state" / "dedup" / "dedup.sqlite").exists()


def test_every_kill_point_is_tested_and_placed() -> None:
    assert {point for point, _ in KILLS} == set(faults.POINTS)
    sources = [
        *(ROOT / "corpus_crawler").rglob("*.py"),
        *(ROOT / "pipelines").glob("*.py"),
    ]
    text = "\n".join(path.read_text(encoding="utf-8") for path in sources)
    for point in faults.POINTS:
        assert f'"{point}")' in text.replace(f'"{point}": (', ""), f"{point} is placed nowhere"


def test_kill_plan_parsing() -> None:
    assert faults.parse(None) is None and faults.parse("") is None
    plan = faults.parse("writer.committed:3")
    assert plan is not None and (plan.point, plan.nth) == ("writer.committed", 3)
    plan = faults.parse("dedup.rows_written")
    assert plan is not None and plan.nth == 1
    # a misspelt point would never kill, and the test would pass without its kill
    with pytest.raises(ValueError, match="no such kill point"):
        faults.parse("writer.comitted")
    with pytest.raises(ValueError, match="1 or more"):
        faults.parse("writer.committed:0")

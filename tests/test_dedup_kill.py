"""Dedup survives kill -9: its stores commit with the campaign, so nothing is lost or doubled.

The loopback site with planted duplicates (tests/site/dup_site.py) is crawled
with dedup on and the crawl killed with SIGKILL twice mid-crawl, then resumed
to the end. The corpus files must then hold what an uninterrupted crawl holds:
every duplicate group exactly one document, every unique page, no page twice;
the vertical file (formatted in a worker after the dedup verdict) holds the same
documents as the prevertical, each its text tokenised.

What makes it hold: the dedup tables live in the campaign database and commit
in the campaign's transaction, never behind the corpus files (a document's
rows are written before the document is); a page whose rows were committed
but whose output was cut back is fetched again and kept as itself
(``keep_same_name``); the paragraph n-gram filter, which cannot roll back, is
fed from a journal only once its rows are committed.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dup_site
import pytest
from test_vertical_after_dedup import tokenised, written_documents

from corpus_crawler.vertical import read_vertical

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240  # a guard against a hung crawl, not a speed assertion
#: New kept documents committed by a run before it is killed.
KILL_AFTER_DOCUMENTS = 5
#: Seconds before each answer of the test site.
ANSWER_DELAY = 0.1


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
    enabled: false
  vertical:
    enabled: true
dedup:
  enabled: true
  paragraph_filter_mib: 8
yield:
  preset: "off"
"""


def _key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path


def _committed_documents(out: Path) -> int:
    """Kept documents in the campaign's committed dedup state (0 before there is one)."""
    path = out / "campaign.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT count(*) FROM dedup_documents").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not committed yet
        return 0


def test_kill_9_twice_then_resume_keeps_one_document_per_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve = dup_site._Handler.do_GET
    delay = [ANSWER_DELAY]

    def slowly(handler: Any) -> None:
        # spread the crawl over several of the campaign's 0.5 s commits
        time.sleep(delay[0])
        serve(handler)

    monkeypatch.setattr(dup_site._Handler, "do_GET", slowly)
    site = dup_site.build_dup_site()
    out = tmp_path / "out"
    with dup_site.MultiHostServer(site.hosts) as server:
        seeds = [server.base_url(address) + "/" for address in site.hosts]
        profile = tmp_path / "kill.yaml"
        profile.write_text(PROFILE.format(seeds=json.dumps(seeds)), encoding="utf-8")
        command = [
            sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile), "-o", str(out),
        ]  # fmt: skip
        log = tmp_path / "crawl.log"
        committed: list[int] = []
        for _ in range(2):
            with open(log, "ab") as handle:
                process = subprocess.Popen(
                    command, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT
                )
            # kill right after a commit that holds new kept documents: mid-crawl, with
            # committed dedup state behind and uncommitted work in flight
            before = committed[-1] if committed else 0
            deadline = time.monotonic() + TIMEOUT
            while _committed_documents(out) < before + KILL_AFTER_DOCUMENTS:
                assert process.poll() is None, "the crawl ended before the kill point"
                assert time.monotonic() < deadline, "the crawl made no progress"
                time.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=TIMEOUT)
            committed.append(_committed_documents(out))
        delay[0] = 0.0  # the last run is not killed: nothing to wait for
        result = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr[-4000:]

    documents = [
        _key(attributes["final_url"])
        for path in sorted(out.glob("*.prevert*"))
        for attributes, _ in read_vertical(path)
    ]
    twice = [key for key, count in Counter(documents).items() if count > 1]
    assert twice == [], f"documents written twice: {twice}"
    groups = Counter(site.groups[key] for key in documents if key in site.groups)
    duplicated = [g for g, kind in site.group_kinds.items() if kind != "unique"]
    not_one = {g: groups[g] for g in duplicated if groups[g] != 1}
    print(f"duplicate groups with exactly one document: {len(duplicated) - len(not_one)}")
    assert not_one == {}, f"groups without exactly one document: {not_one}"
    unique = [key for key, g in site.groups.items() if site.group_kinds[g] == "unique"]
    lost = [key for key in unique if key not in set(documents)]
    print(f"unique pages lost: {len(lost)}/{len(unique)}")
    assert lost == []

    # the three runs really were one campaign, with the dedup tables in its database
    summaries = sorted(out.glob("*summary*.json"))
    last = json.loads(summaries[-1].read_text(encoding="utf-8"))
    assert last["campaign"]["run"] == 3 and last["campaign"]["resumed"]
    assert not (out / "state" / "dedup" / "dedup.sqlite").exists()
    with sqlite3.connect(out / "campaign.sqlite") as db:
        kept = db.execute("SELECT count(*) FROM dedup_documents").fetchone()[0]
    # every kept document is recorded once: a page kept again after a kill is itself
    # (keep_same_name), not a new record
    assert kept == len(documents)
    # the kills landed mid-crawl, after some dedup state was committed and before all
    print(f"kept documents committed at the kills: {committed} of {kept}")
    assert 0 < committed[0] <= committed[1] < kept
    # the vertical was cut back and resumed with the prevertical: document for document
    prevertical = written_documents(out, ".prevert")
    vertical = written_documents(out, ".vert")
    assert len(vertical) == len(prevertical) == kept
    assert vertical == [tokenised(block, sentences=False) for block in prevertical]

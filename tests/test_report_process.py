"""A report rendered in the render process is the report rendered in the crawl process.

`pipelines.report.RenderProcess` takes the refreshes (and then the final report)
off the crawl process, so that matplotlib's GIL-bound drawing never stalls the
reactor; what it writes must not depend on where it ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from corpus_crawler.crawllog import CrawlLogEntry, CrawlLogWriter
from corpus_crawler.report import write_report
from pipelines.report import RenderProcess

START = datetime(2024, 5, 6, 7, 0, tzinfo=timezone.utc)
GENERATED = datetime(2024, 5, 6, 9, 0, tzinfo=timezone.utc)
#: A guard against a hung render process, not a speed assertion.
TIMEOUT = 120


def _crawl_log(directory: Path) -> Path:
    with CrawlLogWriter(directory) as writer:
        for number in range(400):
            kept = number % 3 == 0
            writer.append(
                CrawlLogEntry(
                    time=START + timedelta(seconds=number / 7),
                    status=200 if number % 17 else 404,
                    url=f"http://host{number % 23}.test/p/{number}",
                    outcome="kept" if kept else "dropped:duplicate",
                    size=1000 + 37 * number,
                    annotations={"clean": str(300 + number), "words": "50", "lang": "cs"}
                    if kept
                    else {},
                )
            )
    (path,) = writer.files
    return path


def test_the_render_process_writes_the_same_bytes_as_the_crawl_process(tmp_path: Path) -> None:
    log = _crawl_log(tmp_path)
    summary = {"dropped": {"duplicate": 266}, "pages": {"responses": 400}}
    here = write_report(
        [log], tmp_path / "here.html", summary=summary, title="T", generated=GENERATED
    )
    renderer = RenderProcess()
    try:
        there = renderer.submit(
            [log], tmp_path / "there.html", summary=summary, title="T", generated=GENERATED
        ).result(timeout=TIMEOUT)
        running = renderer.submit(
            [log], tmp_path / "running.html", title="T", final=False, generated=GENERATED
        ).result(timeout=TIMEOUT)
    finally:
        renderer.shutdown()
    assert there == tmp_path / "there.html"
    assert here.read_bytes() == there.read_bytes()
    assert 'class="plot"' in here.read_text(encoding="utf-8")
    again = write_report(
        [log], tmp_path / "again.html", title="T", final=False, generated=GENERATED
    )
    assert running.read_bytes() == again.read_bytes()
    assert running.read_bytes() != here.read_bytes()  # in progress, no summary


def test_a_stopped_render_process_starts_again_on_the_next_report(tmp_path: Path) -> None:
    log = _crawl_log(tmp_path)
    renderer = RenderProcess()
    assert not renderer.started
    renderer.submit([log], tmp_path / "a.html").result(timeout=TIMEOUT)
    assert renderer.started
    renderer.shutdown()
    assert not renderer.started
    try:
        renderer.submit([log], tmp_path / "b.html").result(timeout=TIMEOUT)
    finally:
        renderer.shutdown()
    assert (tmp_path / "b.html").stat().st_size > 0


KILLED_CRAWL = """\
import sys
from pathlib import Path
from pipelines.report import RenderProcess

if __name__ == "__main__":  # the spawned render process imports this file
    renderer = RenderProcess()
    log, out = Path(sys.argv[1]), Path(sys.argv[2])
    renderer.submit([log], out, title="T").result(timeout=120)
    print(list(renderer._executor._processes), flush=True)
    sys.stdin.read()  # until the test kills this process
"""


def test_the_render_process_exits_when_the_crawl_is_killed(tmp_path: Path) -> None:
    """A `kill -9` of the crawl process leaves no render process behind (a worker
    blocked on its task queue never sees the pipe close: it needs its watchdog)."""
    log = _crawl_log(tmp_path)
    script = tmp_path / "crawl.py"
    script.write_text(KILLED_CRAWL, encoding="utf-8")
    crawl = subprocess.Popen(
        [sys.executable, str(script), str(log), str(tmp_path / "r.html")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert crawl.stdout is not None
    (render_pid,) = json.loads(crawl.stdout.readline())
    os.kill(render_pid, 0)  # it is running
    crawl.kill()
    crawl.wait(timeout=TIMEOUT)
    deadline = time.monotonic() + 30
    while _running(render_pid):
        assert time.monotonic() < deadline, f"render process {render_pid} outlived the crawl"
        time.sleep(0.1)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its parent (the test's init) reaps it

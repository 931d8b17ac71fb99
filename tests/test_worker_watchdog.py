"""The extraction workers' watchdog sees a crawl that died, even before it is reaped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from pipelines.worker import _alive, _process_start


def _state(pid: int) -> bytes:
    return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]


def test_a_crawl_killed_and_not_yet_reaped_is_dead() -> None:
    # a crawl killed with SIGKILL is a zombie until its parent reaps it; a parent that
    # waits for the crawl's pipes to close before reaping (subprocess.run does) waited
    # for the workers, which took the zombie for a running crawl: a hang
    crawl = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = _process_start(crawl.pid)
        assert started is not None and _alive(crawl.pid, started)
        os.kill(crawl.pid, 9)
        deadline = time.monotonic() + 30  # a guard against a hang, not a bound
        while _state(crawl.pid) != b"Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(crawl.pid) == b"Z"  # dead, not reaped: os.kill(pid, 0) still works
        assert not _alive(crawl.pid, started)
    finally:
        crawl.kill()
        crawl.wait()
    assert not _alive(crawl.pid, started)  # reaped: gone


def test_a_later_process_with_the_same_pid_is_not_the_crawl() -> None:
    assert _alive(os.getpid(), _process_start(os.getpid()))
    assert not _alive(os.getpid(), "0")  # another start time: another process

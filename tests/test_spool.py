"""Pool results handed back by file (`corpus_crawler.spool`): a worker killed while it
sends a result must break the pool, never hang it.

The kill is made exact with a fault that a real `kill -9` can cause: the worker writes
half of a message larger than PIPE_BUF (writes up to PIPE_BUF are atomic, so a kill
cannot cut those) and kills itself. The first test shows that this fault hangs a plain
`ProcessPoolExecutor` (so the fault is real); the second that through the spool the
same function answers (its pipe message is small); the third that a worker killed
while it writes its result file breaks the pool, as any death should.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import time
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from corpus_crawler.spool import RemoteError, ResultSpool

ROOT = Path(__file__).resolve().parent.parent

# a writer that a kill cuts after half of any message over PIPE_BUF
FAULT = """
import os, select, signal, struct
from multiprocessing.connection import Connection

def cut_big_writes():
    original = Connection._send_bytes
    def send(self, buf):
        data = bytes(buf)
        if len(data) > select.PIPE_BUF:
            self._send(struct.pack("!i", len(data)) + data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        original(self, buf)
    Connection._send_bytes = send

def big_result(size):
    cut_big_writes()
    return b"x" * size

def die_while_spooling(size):
    import corpus_crawler.spool as spool
    def fdopen(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    spool.os.fdopen = fdopen
    return b"x" * size
"""


def _executor() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))


def _fault_module(tmp_path: Path) -> None:
    (tmp_path / "spool_fault.py").write_text(FAULT)
    sys.path.insert(0, str(tmp_path))


def test_the_fault_hangs_a_plain_pool(tmp_path: Path) -> None:
    # in a child process: the hung pool's manager thread would hang pytest's exit
    (tmp_path / "spool_fault.py").write_text(FAULT)
    script = tmp_path / "plain.py"
    script.write_text(
        textwrap.dedent("""
        import multiprocessing, os, sys
        from concurrent.futures import ProcessPoolExecutor, TimeoutError
        import spool_fault
        if __name__ == "__main__":
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            try:
                pool.submit(spool_fault.big_result, 100_000).result(timeout=5)
                print("answered")
            except TimeoutError:
                print("hung")
            except Exception as exc:
                print("raised", type(exc).__name__)
            sys.stdout.flush()
            os._exit(0)
    """)
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.stdout.strip() == "hung", done.stderr[-2000:]


def test_with_the_spool_the_same_fault_cannot_strike(tmp_path: Path) -> None:
    # the result goes to a file; the pipe only carries its name, in one atomic write
    _fault_module(tmp_path)
    import spool_fault  # type: ignore[import-not-found,unused-ignore]

    spool = ResultSpool()
    pool = _executor()
    try:
        future = spool.submit(pool, spool_fault.big_result, 100_000)
        assert future.result(timeout=120) == b"x" * 100_000  # generous: only a hang is slow
        assert list(spool.directory.iterdir()) == []  # its file was read and removed
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        spool.close()
        sys.path.remove(str(tmp_path))


def test_a_worker_killed_while_spooling_breaks_the_pool(tmp_path: Path) -> None:
    _fault_module(tmp_path)
    import spool_fault

    spool = ResultSpool()
    pool = _executor()
    try:
        future = spool.submit(pool, spool_fault.die_while_spooling, 100_000)
        with pytest.raises(BrokenProcessPool):
            future.result(timeout=120)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        spool.close()
        sys.path.remove(str(tmp_path))


def _square(value: int) -> int:
    return value * value


def _fail(message: str) -> None:
    raise KeyError(message)


class _Unpicklable(Exception):
    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("not this one")


def _fail_unpicklably() -> None:
    raise _Unpicklable("x")


def test_results_and_errors_come_back_and_leave_no_files() -> None:
    spool = ResultSpool()
    pool = _executor()
    try:
        futures = [spool.submit(pool, _square, n) for n in range(20)]
        assert [f.result(timeout=120) for f in futures] == [n * n for n in range(20)]
        with pytest.raises(KeyError, match="lost") as raised:
            spool.submit(pool, _fail, "lost").result(timeout=120)
        cause = raised.value.__cause__
        assert isinstance(cause, RemoteError) and "_fail" in str(cause)
        with pytest.raises(RuntimeError, match="could not be pickled"):
            spool.submit(pool, _fail_unpicklably).result(timeout=120)
        assert list(spool.directory.iterdir()) == []
    finally:
        pool.shutdown(wait=True)
        spool.close()
    assert not spool.directory.exists()


def test_cancelling_follows_the_task() -> None:
    spool = ResultSpool()
    pool = _executor()
    try:
        running = spool.submit(pool, time.sleep, 1.0)
        # The pool hands max_workers + 1 tasks to its call queue at once and marks them
        # running, so two fillers take those places and `waiting` stays cancellable.
        fillers = [spool.submit(pool, _square, n) for n in (1, 2)]
        waiting = spool.submit(pool, _square, 3)
        while not running._inner.running():  # type: ignore[attr-defined]
            time.sleep(0.01)
        assert not running.cancel()  # it runs: as a plain future, it cannot be cancelled
        assert waiting.cancel()
        assert [f.result(timeout=120) for f in fillers] == [1, 4]
        with pytest.raises(CancelledError):
            waiting.result()
        assert running.result(timeout=120) is None
    finally:
        pool.shutdown(wait=True)
        spool.close()


def test_the_folders_of_dead_runs_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    spool = ResultSpool()
    stale = spool.directory.with_name(f"corpus-crawler-spool-{dead.stdout.strip()}-abc")
    stale.mkdir()
    (stale / "x.pickle").write_bytes(pickle.dumps((True, 1, "")))
    mine = ResultSpool()  # ours (a live process) stays
    try:
        assert not stale.exists()
        assert spool.directory.exists() and mine.directory.exists()
    finally:
        spool.close()
        mine.close()

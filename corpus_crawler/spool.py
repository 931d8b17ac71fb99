"""Results of process-pool workers handed back through files, not the pool's pipe.

`concurrent.futures.ProcessPoolExecutor` sends every result through one pipe that
all its workers share. A worker killed (the OOM killer, `kill -9`) in the middle of
writing a result larger than the pipe's atomic write size (PIPE_BUF, 4 KB on Linux)
leaves half a message in the pipe. The pool's manager thread then waits forever for
the rest: the parent holds the pipe's write end itself, so no end-of-file comes, and
the pool never notices that the worker died. Seen in `tests/test_process.py`'s kill
test (1 run in 36 hung; the stack was `wait_result_broken_or_wakeup` ->
`Connection.recv`); the crawl's page pool has the same pipe.

A worker that writes its result (or its exception) to a file and sends back only the
file's name sends a message of a hundred bytes, written to the pipe in one atomic
`write`: a kill then either sends it whole or not at all, and a death is always seen
as a broken pool. Results small enough for one atomic write go in the message itself.
Cost, measured on 20 KB results: ~20-40 us to write the file in the worker and ~25 us
to read and remove it in the parent, against milliseconds of extraction a page.
`ResultSpool.submit` does this around any picklable function and hands back an
ordinary `Future` of the function's own result.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import shutil
import tempfile
import traceback
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["RemoteError", "ResultSpool", "spooled_call"]

T = TypeVar("T")

_PREFIX = "corpus-crawler-spool-"


class RemoteError(Exception):
    """The traceback of an exception raised in a worker (the cause of the re-raised one)."""


#: Outcomes up to this size travel in the pipe message itself: with the pool's own
#: framing (~150 bytes) the message stays within PIPE_BUF (4096 bytes on Linux, the
#: POSIX minimum is 512: on such a system every outcome goes by file)
INLINE_BYTES = 3072 if getattr(select, "PIPE_BUF", 512) >= 4096 else 0


def spooled_call(directory: str, function: Callable[..., Any], *args: Any) -> bytes | str:
    """Run `function(*args)` in the worker. Its result or exception, pickled, is returned
    as bytes when small, or written to a new file in `directory`, whose path is returned."""
    try:
        outcome: tuple[bool, Any, str] = (True, function(*args), "")
    except Exception as exc:  # handed to the parent, which raises it again
        outcome = (False, exc, traceback.format_exc())
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an exception (or result) that cannot be pickled
        failure = RuntimeError(f"the worker's outcome could not be pickled: {exc!r}")
        data = pickle.dumps((False, failure, outcome[2]), protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) <= INLINE_BYTES:
        return data
    fd, path = tempfile.mkstemp(dir=directory, suffix=".pickle")
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    return path


class _SpooledFuture(Future[T]):
    """The caller's future: cancelling it cancels the pool's task, and fails as that
    does once the task runs (a plain `Future` would always cancel, leaving the task's
    file to nobody)."""

    def __init__(self, inner: Future[bytes | str]) -> None:
        super().__init__()
        self._inner = inner

    def cancel(self) -> bool:
        # the inner future's callback cancels this one
        return self._inner.cancel()


class ResultSpool:
    """A private folder of in-flight results for one pool (in the temporary folder,
    removed by `close`; folders of runs that were killed are removed by the next one)."""

    def __init__(self) -> None:
        _remove_dead_spools()
        self.directory = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))

    def submit(self, executor: Executor, function: Callable[..., T], *args: Any) -> Future[T]:
        """`executor.submit(function, *args)`, with the result coming back by file."""
        inner = executor.submit(spooled_call, str(self.directory), function, *args)
        outer: _SpooledFuture[T] = _SpooledFuture(inner)

        def transfer(done: Future[bytes | str]) -> None:
            if done.cancelled():
                Future.cancel(outer)
                return
            error = done.exception()
            if error is not None:  # BrokenProcessPool and the like: the pool's own errors
                outer.set_exception(error)
                return
            try:
                outer.set_result(self._collect(done.result()))
            except Exception as exc:
                outer.set_exception(exc)

        inner.add_done_callback(transfer)
        return outer

    @staticmethod
    def _collect(answer: bytes | str) -> Any:
        if isinstance(answer, bytes):
            ok, value, remote_traceback = pickle.loads(answer)
        else:
            try:
                with open(answer, "rb") as file:
                    ok, value, remote_traceback = pickle.load(file)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(answer)
        if ok:
            return value
        raise value from RemoteError(remote_traceback)

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def _remove_dead_spools() -> None:
    """Remove the spool folders of processes that no longer exist (a crawl killed with
    `kill -9` leaves its in-flight results behind)."""
    root = Path(tempfile.gettempdir())
    for folder in root.glob(f"{_PREFIX}*"):
        pid_text = folder.name[len(_PREFIX) :].partition("-")[0]
        if not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # another user's live process
            continue

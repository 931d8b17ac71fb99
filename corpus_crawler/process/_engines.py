"""Where tasks run: a local process pool (the default) or a Dask cluster.

Both hand back `concurrent.futures.Future`s, so the runner drives them the same
way. Dask distributed is the engine for many machines because the pipeline is
plain Python functions over plain data: a Dask worker is a Python process that
imports this package and calls `run_task`, with no JVM (Spark) and no actor
model or object store to configure (Ray). Its `LocalCluster` gives the same
code path on one machine, and ``--scheduler tcp://HOST:PORT`` joins a cluster
started with ``dask scheduler`` / ``dask worker`` on the machines that see the
input and output folders.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Protocol

from ..spool import ResultSpool
from ._task import (
    ChunkTask,
    RevisitTask,
    TaskResult,
    VerticalBatch,
    VerticalBatchResult,
    format_verticals,
    run_task,
)

__all__ = ["DaskEngine", "Engine", "LocalEngine", "default_workers"]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Engine(Protocol):
    name: str
    workers: int

    def submit(self, task: ChunkTask | RevisitTask) -> Future[TaskResult]: ...
    def submit_vertical(self, batch: VerticalBatch) -> Future[VerticalBatchResult]: ...

    def restart(self) -> None: ...

    def close(self) -> None: ...


class LocalEngine:
    """A pool of worker processes on this machine (forkserver or spawn: never plain fork)."""

    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        # results come back by file: a worker killed while sending one through the
        # pool's pipe would hang the pool (corpus_crawler/spool.py)
        self._spool = ResultSpool()
        self.restart()

    def restart(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        methods = multiprocessing.get_all_start_methods()
        method = "forkserver" if "forkserver" in methods else "spawn"
        context = multiprocessing.get_context(method)
        if method == "forkserver":
            # imported (and warmed up) once by the fork server; each worker starts ready
            context.set_forkserver_preload(["corpus_crawler.process._preload"])
        self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)

    def submit(self, task: ChunkTask | RevisitTask) -> Future[TaskResult]:
        assert self._executor is not None
        return self._spool.submit(self._executor, run_task, task)

    def submit_vertical(self, batch: VerticalBatch) -> Future[VerticalBatchResult]:
        assert self._executor is not None
        return self._spool.submit(self._executor, format_verticals, batch)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        self._spool.close()


class DaskEngine:
    """Tasks on a Dask cluster: a `LocalCluster` on 127.0.0.1, or the scheduler at `address`."""

    name = "dask"

    def __init__(self, workers: int, address: str | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise RuntimeError(
                "the Dask engine needs the `distributed` package: pip install"
                " 'corpus-crawler[dask]' (or run without --dask/--scheduler for a local pool)"
            ) from None
        self._cluster: Any = None
        if address:
            self._client = Client(address)
            self.name = f"dask {address}"
        else:
            # Loopback only and no dashboard: the cluster must not listen on the network.
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            )
            self._client = Client(self._cluster)
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})) or workers)
        self._executor = self._client.get_executor(pure=False)

    def submit(self, task: ChunkTask | RevisitTask) -> Future[TaskResult]:
        future: Future[TaskResult] = self._executor.submit(run_task, task)
        return future

    def submit_vertical(self, batch: VerticalBatch) -> Future[VerticalBatchResult]:
        future: Future[VerticalBatchResult] = self._executor.submit(format_verticals, batch)
        return future

    def restart(self) -> None:
        """Dask replaces lost workers and reruns their tasks itself."""

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()

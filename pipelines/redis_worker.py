"""Who this process is in a distributed crawl: a worker slot in the output folder.

`corpus-crawler crawl PROFILE -o OUT --redis URL` run N times on one machine gives N
workers: each takes the first free slot, an `flock`'d file ``OUT/.worker-<N>.lock``
held for the life of the process (the kernel frees it when the process dies, even by
`kill -9`), and writes into its own folder ``OUT/<host>-<N>/`` under the worker id
``<host>-<N>``. A killed worker's slot is free for the next start, which then takes
over that identity: its committed file lengths and its leases in Redis.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["WorkerSlot", "claim_worker_slot", "distributed_overrides"]

#: Slots tried before giving up (a typo'd folder shared by a runaway script...).
MAX_SLOTS = 1024


@dataclass(frozen=True, slots=True)
class WorkerSlot:
    worker: str
    directory: Path
    #: The open, locked slot file: kept open (and so locked) until the process ends.
    handle: IO[str]


def _host_name() -> str:
    name = re.sub(r"[^A-Za-z0-9.-]+", "-", socket.gethostname().split(".")[0]).strip("-.")
    return name or "host"


def claim_worker_slot(output: Path) -> WorkerSlot:
    """Lock the first free slot of `output`; raise `OSError` if there is none."""
    import fcntl

    output.mkdir(parents=True, exist_ok=True)
    host = _host_name()
    for slot in range(MAX_SLOTS):
        path = output / f".worker-{slot}.lock"
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the process's life
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        worker = f"{host}-{slot}"
        return WorkerSlot(worker=worker, directory=output / worker, handle=handle)
    raise OSError(f"all {MAX_SLOTS} worker slots of {output} are taken")


def distributed_overrides(
    slot: WorkerSlot, redis_url: str, namespace: str, warc_prefix: str
) -> dict[str, str]:
    """The settings that make this crawl process the worker `slot` of the campaign."""
    return {
        "CORPUS_OUTPUT_DIR": str(slot.directory),
        "CORPUS_DISTRIBUTED_REDIS_URL": redis_url,
        "CORPUS_DISTRIBUTED_WORKER": slot.worker,
        "CORPUS_DISTRIBUTED_NAMESPACE": namespace,
        # the IIPC file names carry the worker: {prefix}-{host}-{slot}-{timestamp}-...
        "CORPUS_WARC_PREFIX": f"{warc_prefix}-{slot.worker}",
        "SCHEDULER": "pipelines.redis_scheduler.RedisCampaignScheduler",
    }

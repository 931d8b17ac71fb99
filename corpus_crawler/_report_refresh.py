"""The reports of a render process (`pipelines.report.RenderProcess`): each run's figures
kept between two reports, so that a refresh reads only what its crawl log gained.

The render process is one spawned process kept for a whole crawl; its tasks are
calls of `write_run_report`, which finds the run's `RunStats` here (kept for the
last `KEEP_RUNS` runs it reported on: a crawl's process reports on one) and reads on.
This module-level table is that process's memory between tasks, and nothing else's:
the crawl process renders with a fresh `RunStats` (`write_report`), and both give
the same report byte for byte (tests/test_report_process.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .crawllog import final_path
from .report import write_report
from .report_stats import RunStats

__all__ = ["write_run_report"]

KEEP_RUNS = 4

_RUNS: OrderedDict[Path, RunStats] = OrderedDict()


def write_run_report(crawl_logs: Sequence[Path], target: Path, **options: Any) -> Path:
    """`write_report` of one run's crawl logs (named after their first file), reading
    on from this process's last report on the same run."""
    if not crawl_logs:
        return write_report(crawl_logs, target, **options)
    key = final_path(Path(crawl_logs[0]))
    run = _RUNS.pop(key, None) or RunStats()
    _RUNS[key] = run
    while len(_RUNS) > KEEP_RUNS:
        _RUNS.popitem(last=False)
    return write_report(crawl_logs, target, run=run, **options)

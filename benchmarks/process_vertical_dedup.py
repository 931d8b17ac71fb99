"""`corpus-crawler process --dedup --vertical`: the CPU of tokenising the vertical only
for the documents dedup keeps, against a tree that tokenises every document.

Builds one WARC of the gold pages repeated until `--pages` (mostly exact duplicates
after the first few hundred, as in benchmarks/process_speed.py), then processes it
with each source tree given (``--trees OLD NEW``; default: this tree alone), the trees
alternating round by round, each run in its own Python process with that tree on its
path. Prints each run's CPU (main process, workers) and wall time, each tree's best
round and its ratio to the first tree's, and whether the trees wrote the same vertical
and prevertical files byte for byte.

    python benchmarks/process_vertical_dedup.py --trees /path/to/old . [--pages 3000]
        [--rounds 3] [-j 2] [--chunk-mb 1]

On a shared machine the wall time is noisy; the CPU seconds are the figure to read.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def run_one(tree: Path, warc: Path, out: Path, jobs: int, chunk_mb: float) -> dict[str, float]:
    """One `process` run with `tree`'s code (this script's own process)."""
    sys.path.insert(0, str(tree))
    from corpus_crawler.dedup import DedupConfig
    from corpus_crawler.process import (
        LocalEngine,
        ProcessOptions,
        ProcessSettings,
        process_archives,
    )

    settings = ProcessSettings()
    settings = dataclasses.replace(
        settings, outputs=dataclasses.replace(settings.outputs, vertical=True)
    )
    engine = LocalEngine(jobs)
    try:
        started = time.perf_counter()
        summary = process_archives(
            [warc],
            ProcessOptions(
                out,
                settings=settings,
                chunk_bytes=int(chunk_mb * 1024 * 1024),
                dedup=DedupConfig(paragraph_filter_mib=64),
            ),
            engine,
        )
        elapsed = time.perf_counter() - started
    finally:
        engine.close()
    run = summary.data["this_run"]
    return {
        "seconds": elapsed,
        "main_cpu": run["main_cpu_seconds"],
        "worker_cpu": run["worker_cpu_seconds"],
        "documents": summary.data["documents"],
        "pages": summary.data["pages_html"],
    }


def _files(out: Path, suffix: str) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(out.glob(f"*{suffix}")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=Path, nargs="+", default=[ROOT])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--chunk-mb", type=float, default=1.0)
    parser.add_argument(
        "--run-one", nargs=3, metavar=("TREE", "WARC", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.run_one:
        tree, warc, out = map(Path, args.run_one)
        print(json.dumps(run_one(tree, warc, out, args.jobs, args.chunk_mb)))
        return
    sys.path.insert(0, str(HERE))
    from process_speed import DEFAULT_TARBALL, build_warc, gold_html

    work = Path(tempfile.mkdtemp(prefix="process-vertical-bench-"))
    try:
        warc = work / "bench.warc.gz"
        size = build_warc(warc, gold_html(DEFAULT_TARBALL), args.pages)
        print(
            f"input: {args.pages} pages, {size / 1e6:.1f} MB; -j {args.jobs};"
            f" load {os.getloadavg()[0]:.1f}"
        )
        best: dict[Path, dict[str, float]] = {}
        #: (vertical, prevertical) digests -> the runs that wrote them
        outputs: dict[tuple[str, ...], list[str]] = {}
        for round_number in range(args.rounds):
            for number, tree in enumerate(args.trees):
                out = work / f"out-{number}"
                shutil.rmtree(out, ignore_errors=True)
                command = [
                    sys.executable, __file__, "--run-one", str(tree), str(warc), str(out),
                    "-j", str(args.jobs), "--chunk-mb", str(args.chunk_mb),
                ]  # fmt: skip
                env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
                # (in the tree: the pool's fork server takes the working folder into its
                # path, and a run of one tree once imported the other's workers)
                result = subprocess.run(
                    command, capture_output=True, text=True, env=env, check=True, cwd=tree
                )
                figures = json.loads(result.stdout.strip().splitlines()[-1])
                digests = tuple(
                    hashlib.sha1(_files(out, suffix)).hexdigest()[:12]
                    for suffix in (".vert", ".prevert")
                )
                outputs.setdefault(digests, []).append(f"round {round_number + 1} {tree}")
                cpu = figures["main_cpu"] + figures["worker_cpu"]
                print(
                    f"  round {round_number + 1} {tree}: {figures['seconds']:.2f} s, CPU main"
                    f" {figures['main_cpu']:.2f} s + workers {figures['worker_cpu']:.2f} s"
                    f" = {cpu:.2f} s; {figures['documents']} documents of {figures['pages']} pages"
                    f" (load {os.getloadavg()[0]:.1f})"
                )
                if tree not in best or cpu < best[tree]["main_cpu"] + best[tree]["worker_cpu"]:
                    best[tree] = figures
        first = args.trees[0]
        base = best[first]["main_cpu"] + best[first]["worker_cpu"]
        print("\nbest round per tree (CPU seconds; ratio to the first tree):")
        for tree in args.trees:
            figures = best[tree]
            cpu = figures["main_cpu"] + figures["worker_cpu"]
            print(
                f"  {tree}: main {figures['main_cpu']:.2f} + workers {figures['worker_cpu']:.2f}"
                f" = {cpu:.2f} s ({cpu / base:.2f}x), wall {figures['seconds']:.2f} s"
                f" ({figures['seconds'] / best[first]['seconds']:.2f}x)"
            )
        if len(outputs) == 1:
            (digests,) = outputs
            print(f"  every run wrote the same vertical and prevertical (sha1 {digests})")
        else:
            print("  the runs wrote different files:")
            for digests, runs in outputs.items():
                print(f"    vertical, prevertical sha1 {digests}: {', '.join(runs)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

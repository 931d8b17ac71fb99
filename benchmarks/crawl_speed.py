"""Crawl speed: bare link following against the full pipeline, in the same run.

A site of at least 2,000 real pages (the gold pages, replicated, each with its
own links: a 10-ary tree plus cross links, so the crawl must follow links to
find every page) is served on 127.0.0.1 from memory by a threaded server in
this process. Then two crawls run, each in its own process (a Twisted reactor
cannot restart), with the same spider, scope, concurrency and robots.txt:

(a) ``links``: following links only -- the extraction pipeline off, so the
    spider extracts links in its callback with Scrapy's LinkExtractor; no WARC,
    no corpus files;
(b) ``full``: the full pipeline as a profile has it by default -- pages parsed
    once in the worker processes for text and links, WARC records (request,
    response, conversion) and the prevertical corpus file, written by the
    writer thread;
(c) ``full+vert``: (b) plus the tokenised vertical file (`output.vertical`,
    off by default). Its tokenizer runs in the worker processes: with dedup on
    (the default) only for the documents dedup keeps, after its verdict
    (`pipelines.extract.VerticalFormatPipeline`); the site repeats its gold
    pages, so dedup drops about 9 pages in 10;
(d) ``full+vert@writer``, on request: (c) with the tokenizer on the crawl
    process's writer thread instead (the format pipeline left out), the other
    way to tokenise only kept documents; it competes with the reactor for the GIL;
(e) ``full+vert-dedup``, on request: (c) with dedup off, so every extracted page
    is kept and the workers tokenise it with the page (about 10x the documents);
(f) ``full@article``, on request: (b) with the `article` preset instead of the
    profile's default `corpus` (`extraction.preset`), for a news or article crawl.

Printed per run: pages/s, CPU seconds and cores used by the crawl (its process
and its workers, sampled from /proc; "main" is the crawl process alone), peak
RSS of the crawl's processes together, and the server's CPU; then the ratios
b/a and c/a of pages/s. Also, from a probe in the crawl process
(`benchmarks/reactor_lag.py`, a 10 ms `LoopingCall`): the reactor's worst and
99th-percentile lag while crawling and while closing, and the close time (from
the engine's last response to the process exit). On a shared machine, compare
the CPU figures too: when other work takes the cores, throughput follows total CPU per page.

    python benchmarks/crawl_speed.py [--pages 2200] [--runs links,full,full+vert]
                                     [--gold DIR] [--json OUT] [--tree DIR]

``--tree DIR`` crawls with the code of another worktree (its ``corpus_crawler`` and
``pipelines``; this tree's site and probe), to compare two versions on one site.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TARBALL = ROOT / "tests" / "data" / "gold.tar.xz"
SHARED_GOLD = ROOT.parent / "shared" / "data" / "gold"

sys.path.insert(0, str(ROOT))

from corpus_crawler.testserver import Reply, SiteServer, add_links, isolate_links  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def load_gold_pages(gold: Path | None) -> list[bytes]:
    def from_dir(root: Path) -> list[bytes]:
        return [p.read_bytes() for p in sorted(root.glob("*/html/*.html"))]

    if gold is not None:
        return from_dir(gold)
    if SHARED_GOLD.is_dir():
        return from_dir(SHARED_GOLD)
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(DEFAULT_TARBALL) as archive:
        archive.extractall(tmp, filter="data")
        return from_dir(Path(tmp) / "gold")


def build_site(gold: list[bytes], count: int) -> dict[str, Reply]:
    """`count` pages: page i is gold page i mod len(gold), isolated, plus its own links."""
    pages: dict[str, Reply] = {}
    isolated = [isolate_links(html) for html in gold]
    for i in range(count):
        targets = [c for c in range(10 * i + 1, 10 * i + 11) if c < count]
        targets += [(i * 7919 + k * 104729) % count for k in range(1, 4)]
        if i:
            targets.append((i - 1) // 10)
        nav = "".join(f'<li><a href="/p/{t}.html">Article {t}</a></li>' for t in targets)
        body = add_links(isolated[i % len(isolated)], f"<ul>{nav}</ul>".encode())
        pages[f"/p/{i}.html"] = Reply(headers=(("Content-Type", "text/html"),), body=body)
    pages["/"] = pages.pop("/p/0.html")
    pages["/robots.txt"] = Reply(
        headers=(("Content-Type", "text/plain"),), body=b"User-agent: *\nDisallow: /private/\n"
    )
    return pages


# -- process sampling -----------------------------------------------------------------------


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def _tree(root: int) -> list[int]:
    children = _children_map()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _cpu_and_rss(pid: int) -> tuple[float, int] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # fields[11], [12]: utime, stime (clock ticks); fields[21]: rss (pages)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[21]) * PAGE_SIZE


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields) - idle) / CLOCK_TICKS, sum(fields) / CLOCK_TICKS


class TreeSampler(threading.Thread):
    """Samples CPU time and RSS of a process and all its descendants every 0.1 s,
    and the CPU time of the process's main thread (the reactor) on its own."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.cpu: dict[int, float] = {}
        self.main_thread_cpu = 0.0
        self.peak_rss = 0
        self.processes = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(0.1)

    def sample(self) -> None:
        total_rss = 0
        for pid in _tree(self.pid):
            measured = _cpu_and_rss(pid)
            if measured is None:
                continue
            cpu, rss = measured
            self.cpu[pid] = max(cpu, self.cpu.get(pid, 0.0))
            total_rss += rss
        self.peak_rss = max(self.peak_rss, total_rss)
        self.processes = max(self.processes, len(self.cpu))
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            self.main_thread_cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        except OSError:
            pass

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


# -- one crawl -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    name: str
    pages: int
    kept: int
    seconds: float
    pages_per_second: float
    cpu_seconds: float
    #: of which the crawl process itself (reactor, writer thread), not its workers
    main_cpu_seconds: float
    #: of which the reactor thread alone
    reactor_cpu_seconds: float
    #: share of the machine's CPU time used by anything, this benchmark included
    machine_busy_percent: float
    cores_used: float
    peak_rss_mb: float
    server_cpu_seconds: float
    processes: int
    files: dict[str, int]
    #: the reactor's lag while crawling (up to the last response) and while closing
    lag_crawl_max_ms: float
    lag_crawl_p99_ms: float
    lag_close_max_ms: float
    #: from the engine's last response to the crawl process's exit, and its parts: to
    #: the engine finding itself idle (the pages downloaded but still being extracted
    #: and written: the engine sees its last item within ~10 ms), to the engine
    #: stopped (spider_closed handlers: writers, final report), to the exit
    close_seconds: float
    close_idle_seconds: float
    close_handlers_seconds: float
    close_exit_seconds: float


PROFILE = """\
name: crawl-speed-{name}
seeds:
  urls: ["{url}"]
scope:
  max_depth: null
politeness:
  concurrent_requests: {concurrency}
  concurrent_requests_per_domain: {concurrency}
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  language: en
  preset: {preset}
output:
  directory: "{out}"
  progress_interval: 0
  warc:
    enabled: {full}
  prevertical:
    enabled: {full}
  vertical:
    enabled: {vertical}
"""

RUNS = {
    "links": (False, False),
    "full": (True, False),
    "full+vert": (True, True),
    "full+vert@writer": (True, True),
    "full+vert-dedup": (True, True),
    "full@article": (True, False),
}


def _extensions(tree: Path) -> dict[str, int]:
    """The tree's own EXTENSIONS plus the lag probe (``-s EXTENSIONS`` replaces the dict)."""
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, pipelines.settings as s; print(json.dumps(s.EXTENSIONS))",
        ],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    extensions: dict[str, int] = json.loads(listed.stdout)
    extensions["reactor_lag.ReactorLagProbe"] = 900
    return extensions


def crawl(
    name: str,
    server: SiteServer,
    workdir: Path,
    concurrency: int,
    tree: Path = ROOT,
    report_interval: float | None = None,
) -> Run:
    full, vertical = RUNS[name]
    out = workdir / name.replace("+", "-").replace("@", "-at-")
    profile = workdir / f"{out.name}.yaml"
    profile.write_text(
        PROFILE.format(
            name=name,
            url=server.url("/"),
            concurrency=concurrency,
            out=out,
            full="true" if full else "false",
            vertical="true" if vertical else "false",
            preset="article" if name.endswith("@article") else "corpus",
        ),
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile)]
    if not full:
        command += ["-s", "CORPUS_EXTRACT_ENABLED=False"]
    if name.endswith("-dedup"):
        command += ["-s", "CORPUS_DEDUP_ENABLED=False"]
    command += ["-s", f"EXTENSIONS={json.dumps(_extensions(tree))}"]
    if report_interval is not None:
        command += ["-s", f"CORPUS_REPORT_INTERVAL={report_interval}"]
    lag_file = workdir / f"{out.name}.lag.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT / "benchmarks")]),
        "CORPUS_BENCH_LAG_FILE": str(lag_file),
    }
    if name.endswith("@writer"):
        # without the format pipeline the writer thread formats the vertical text
        from pipelines.settings import ITEM_PIPELINES

        pipelines = {**ITEM_PIPELINES, "pipelines.extract.VerticalFormatPipeline": None}
        command += ["-s", f"ITEM_PIPELINES={json.dumps(pipelines)}"]
    before = time.process_time()
    busy_before, total_before = _machine_busy()
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    sampler = TreeSampler(process.pid)
    sampler.start()
    stdout, stderr = process.communicate()
    exited_wall = time.time()
    wall = time.monotonic() - started
    sampler.stop()
    busy_after, total_after = _machine_busy()
    # this process runs only the server (and the sampler) while the crawl runs
    server_cpu = time.process_time() - before
    if process.returncode != 0:
        raise SystemExit(f"crawl {name} failed ({process.returncode}):\n{stdout}\n{stderr}")
    summary_path = next(out.glob("*-summary.json"))
    summary: dict[str, Any] = json.loads(summary_path.read_text(encoding="utf-8"))
    pages = int(summary["pages"]["responses"])
    seconds = float(summary["elapsed_seconds"])
    cpu = sum(sampler.cpu.values())
    lag = json.loads(lag_file.read_text(encoding="utf-8"))
    return Run(
        name=name,
        pages=pages,
        kept=int(summary["pages"]["kept"]),
        seconds=round(seconds, 2),
        pages_per_second=round(pages / seconds, 1),
        cpu_seconds=round(cpu, 2),
        main_cpu_seconds=round(sampler.cpu.get(process.pid, 0.0), 2),
        reactor_cpu_seconds=round(sampler.main_thread_cpu, 2),
        machine_busy_percent=round(
            100.0 * (busy_after - busy_before) / max(total_after - total_before, 1e-9), 1
        ),
        cores_used=round(cpu / wall, 2),
        peak_rss_mb=round(sampler.peak_rss / 2**20, 1),
        server_cpu_seconds=round(server_cpu, 2),
        processes=sampler.processes,
        files={k: len(v) for k, v in summary["files"].items()},
        lag_crawl_max_ms=lag["crawl"]["max_ms"],
        lag_crawl_p99_ms=lag["crawl"]["p99_ms"],
        lag_close_max_ms=lag["close"]["max_ms"],
        close_seconds=round(exited_wall - lag["last_response_wall"], 2),
        close_idle_seconds=round(lag["idle_wall"] - lag["last_response_wall"], 2),
        close_handlers_seconds=round(lag["engine_stopped_wall"] - lag["idle_wall"], 2),
        close_exit_seconds=round(exited_wall - lag["engine_stopped_wall"], 2),
    )


def _print_run(run: Run) -> None:
    print(
        f"({run.name}) {run.pages} pages in {run.seconds:.1f} s = {run.pages_per_second:.1f}"
        f" pages/s | crawl CPU {run.cpu_seconds:.1f} s (main {run.main_cpu_seconds:.1f} s,"
        f" reactor {run.reactor_cpu_seconds:.1f} s,"
        f" workers {run.cpu_seconds - run.main_cpu_seconds:.1f} s;"
        f" {run.cores_used:.2f} cores,"
        f" {run.processes} processes)"
        f" = {1000 * run.cpu_seconds / run.pages:.1f} ms/page"
        f" (crawl process {1000 * run.main_cpu_seconds / run.pages:.1f},"
        f" workers {1000 * (run.cpu_seconds - run.main_cpu_seconds) / run.pages:.1f})"
        f" | peak RSS {run.peak_rss_mb:.0f} MB | server CPU {run.server_cpu_seconds:.1f} s"
        f" | machine busy {run.machine_busy_percent:.0f}%"
        f" | kept {run.kept} | files {run.files}"
        f" | reactor lag crawling max {run.lag_crawl_max_ms:.0f} ms"
        f" p99 {run.lag_crawl_p99_ms:.0f} ms, closing max {run.lag_close_max_ms:.0f} ms"
        f" | close {run.close_seconds:.2f} s (idle {run.close_idle_seconds:.2f},"
        f" handlers {run.close_handlers_seconds:.2f}, exit {run.close_exit_seconds:.2f})",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2200, help="pages on the site")
    parser.add_argument("--gold", type=Path, default=None, help="folder of gold sets")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--runs", default="links,full,full+vert", help="comma-separated: " + ", ".join(RUNS)
    )
    parser.add_argument("--json", type=Path, default=None, help="save the figures here")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="worktree whose crawler code runs (default: this)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="run the list this many times")
    parser.add_argument(
        "--report-interval",
        type=float,
        default=None,
        help="seconds between HTML report refreshes (default: the profile's, 300)",
    )
    args = parser.parse_args(argv)

    gold = load_gold_pages(args.gold)
    site = build_site(gold, args.pages)
    megabytes = sum(len(r.body) for r in site.values()) / 2**20
    print(
        f"site: {args.pages} pages from {len(gold)} gold pages, {megabytes:.1f} MB of HTML;"
        f" {os.cpu_count()} CPU(s), Python {platform.python_version()}"
    )
    names = [n.strip() for n in args.runs.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNS]
    if unknown or not names:
        parser.error(f"unknown run(s) {unknown}: use {', '.join(RUNS)}")
    runs: dict[str, Run] = {}
    all_runs: list[Run] = []
    print(f"tree: {args.tree.resolve()}")
    with tempfile.TemporaryDirectory() as tmp, SiteServer(pages=site) as server:
        for round_number in range(args.repeat):
            for name in names:
                workdir = Path(tmp) / f"round{round_number}"
                workdir.mkdir(exist_ok=True)
                run = crawl(
                    name,
                    server,
                    workdir,
                    args.concurrency,
                    args.tree.resolve(),
                    args.report_interval,
                )
                runs[name] = run
                all_runs.append(run)
                _print_run(run)
    ratios = {}
    if "links" in runs:
        for name, run in runs.items():
            if name != "links":
                ratios[name] = round(run.pages_per_second / runs["links"].pages_per_second, 3)
                print(f"ratio {name}/links: {ratios[name]:.2f}  (goal for full: >= 1.0)")
    if args.json:
        args.json.write_text(
            json.dumps({"runs": [asdict(r) for r in all_runs], "ratios": ratios}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

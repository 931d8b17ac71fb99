"""Soak: does a long crawl's memory stay flat and its pages/s hold as the campaign grows?

A generated site of `--pages` pages (default 50,000) is served from this process on
`--hosts` loopback addresses (127.0.0.1, 127.0.0.2, ...: Linux routes all of 127/8 to
lo), each page made on request from its number, so the site costs no memory however
large it is. A page is a news-site template (menu, footer: the same on every page of a
host) around an article of English sentences drawn from the gold pages' text, so
extraction, language identification, dedup and the vertical's tokenizer do real work;
one page in 20 is a near-duplicate of the page before it (one paragraph changed), one
in 50 an exact copy of an earlier article. Pages link as a 10-ary tree plus cross links
across hosts; each host's robots.txt names a sitemap of its first pages.

The crawl is a real `corpus-crawler crawl` subprocess with every output on: WARC with
conversion records (the text WARC) and the CDXJ index written live, prevertical,
vertical, JSONL, Parquet, the crawl log, the HTML report refreshed every
`--report-interval` seconds (default 60), dedup (exact, near-documents, paragraphs),
into a campaign folder (the SQLite store). Every `--interval` seconds (default 5) this
script samples the pages done (lines of the crawl log with a 200 HTML response) and the
RSS (`/proc/PID/status` VmRSS, with its RssAnon and RssFile parts in the CSV) of the
crawl process and of each process below it (extraction workers, the report's render
process, the sitemap worker).

Printed: the RSS of each process at 10 %, 50 % and 100 % of the pages, its slope over
the second half (least squares, MiB per 10,000 pages), pages/s per decile of the pages,
and the total. Every sample goes to a CSV (`--csv`, long format: one row per process
per sample, plus a `total` row) to plot, e.g. with pandas:
``df.pivot_table(index="pages", columns="role_pid", values="rss_mib").plot()``.

    python benchmarks/soak.py [--pages 50000] [--hosts 4] [--csv soak.csv]
                              [--keep DIR] [--memprobe DIR]

``--memprobe DIR`` sets ``MEMPROBE_DIR`` for the crawl: `pipelines.memprobe`
then dumps tracemalloc snapshots and object counts there (it slows the crawl: use it
to find what grows, not to measure pages/s). ``--keep DIR`` keeps the campaign folder.
On a bigger machine: ``--pages 1000000 --concurrency 64``. Figures from a shared
machine are noisy: read the slopes and the per-decile rates against the first decile.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from lxml import html as lxml_html

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from crawl_speed import _children_map, _cpu_and_rss, load_gold_pages  # noqa: E402

from corpus_crawler.testserver import Reply, RequestRecord, SiteServer  # noqa: E402

MIB = 2**20

# -- the site ------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_ASCII_WORDS = re.compile(r"^[A-Za-z0-9 ,.;:'\"()!?%$-]+$")


def sentence_pool(gold: list[bytes]) -> list[str]:
    """English-looking sentences of 8-40 words from the gold pages' paragraphs."""
    sentences: set[str] = set()
    for page in gold:
        try:
            tree = lxml_html.fromstring(page)
        except (ValueError, SyntaxError):
            continue
        for paragraph in tree.iter("p"):
            text = " ".join(paragraph.text_content().split())
            for sentence in _SENTENCE_END.split(text):
                if 8 <= len(sentence.split()) <= 40 and _ASCII_WORDS.match(sentence):
                    sentences.add(sentence)
    if len(sentences) < 1000:
        raise SystemExit(f"only {len(sentences)} sentences in the gold pages: need 1,000")
    return sorted(sentences)


@dataclass(frozen=True, slots=True)
class Site:
    """Page `i` lives on host `i % len(bases)` at `/p/i.html`, made from `i` alone."""

    pages: int
    sentences: list[str]
    bases: list[str] = field(default_factory=list)

    def url(self, number: int) -> str:
        return f"{self.bases[number % len(self.bases)]}/p/{number}.html"

    def _article(self, seed: int) -> list[str]:
        draw = random.Random(seed)
        return [
            " ".join(draw.choices(self.sentences, k=draw.randint(2, 6)))
            for _ in range(draw.randint(4, 10))
        ]

    def article(self, number: int) -> tuple[str, list[str]]:
        if number % 50 == 49 and number >= 100:
            number -= 97  # an exact copy of an earlier page's article
        paragraphs = self._article(number)
        if number % 20 == 19:
            # a near-duplicate: the article before it with its last paragraph changed
            paragraphs = self._article(number - 1)
            paragraphs[-1] = self._article(number)[0]
        title = " ".join(paragraphs[0].split()[:8])
        return title, paragraphs

    def links(self, number: int) -> list[int]:
        targets = [c for c in range(10 * number + 1, 10 * number + 11) if c < self.pages]
        targets += [(number * 7919 + k * 104729) % self.pages for k in range(1, 4)]
        if number:
            targets.append((number - 1) // 10)
        return targets

    def page(self, number: int) -> bytes:
        title, paragraphs = self.article(number)
        host = number % len(self.bases)
        menu = "".join(
            f'<li><a href="/p/{section}.html">Section {section}</a></li>'
            for section in range(host, min(self.pages, host + 5 * len(self.bases)), len(self.bases))
        )
        related = "".join(
            f'<li><a href="{self.url(t)}">Related story {t}</a></li>' for t in self.links(number)
        )
        body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
        return (
            "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>{title} | Site {host}</title></head><body>\n"
            f'<div class=header><a href="/">Home</a><ul class=menu>{menu}</ul>'
            '<form action="/search"><input name=q></form></div>\n'
            f"<div class=article><h1>{title}</h1>\n"
            f"<p class=byline>Posted by the editors, story {number}</p>\n{body}</div>\n"
            f"<div class=related><h3>Related</h3><ul>{related}</ul></div>\n"
            f"<div class=footer><p>Copyright 2026 Site {host}. All rights reserved.</p>"
            '<a href="/about.html">About</a> <a href="/contact.html">Contact</a></div>\n'
            "</body></html>\n"
        ).encode()

    def route(self, host: int) -> object:
        html_type = (("Content-Type", "text/html; charset=utf-8"),)

        def answer(request: RequestRecord) -> Reply:
            path = request.path
            if path.startswith("/p/") and path.endswith(".html"):
                try:
                    number = int(path[3:-5])
                except ValueError:
                    number = -1
                if 0 <= number < self.pages and number % len(self.bases) == host:
                    return Reply(headers=html_type, body=self.page(number))
            elif path == "/":
                return Reply(headers=html_type, body=self.page(host))
            elif path == "/robots.txt":
                return Reply(
                    headers=(("Content-Type", "text/plain"),),
                    body=b"User-agent: *\nDisallow: /search\n"
                    + f"Sitemap: {self.bases[host]}/sitemap.xml\n".encode(),
                )
            elif path == "/sitemap.xml":
                entries = "".join(
                    f"<url><loc>{self.url(n)}</loc></url>"
                    for n in range(host, min(self.pages, 2000), len(self.bases))
                )
                return Reply(
                    headers=(("Content-Type", "application/xml"),),
                    body=(
                        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                        f'"http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>\n'
                    ).encode(),
                )
            return Reply(status=404, headers=(("Content-Type", "text/plain"),), body=b"no\n")

        return answer


# -- sampling ------------------------------------------------------------------------------


def memory(pid: int) -> tuple[int, int, int] | None:
    """VmRSS, RssAnon and RssFile + RssShmem of a process, in bytes (the n-gram filter
    of paragraph dedup is a mapped file: its pages count as RssFile, the heap as RssAnon)."""
    fields: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    fields[name] = int(value.split()[0]) * 1024
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if "VmRSS" not in fields:
        return None
    file_backed = fields.get("RssFile", 0) + fields.get("RssShmem", 0)
    return fields["VmRSS"], fields.get("RssAnon", 0), file_backed


def _read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def role_of(pid: int, parent: int, roles: dict[int, str], root: int) -> str | None:
    """What a process below the crawl is: None while it cannot be told yet.

    The extraction workers and the sitemap reader are forked by one forkserver (its
    preloaded modules make them look alike: "worker", told apart by their CPU time);
    the report's render process is spawned and maps matplotlib once it has rendered.
    """
    if pid == root:
        return "crawl"
    command = _read(f"/proc/{pid}/cmdline")
    if roles.get(parent) == "forkserver":
        return "worker"
    if "resource_tracker" in command:
        return "resource_tracker"
    if "forkserver" in command:
        return "forkserver"
    if "_backend_agg" in _read(f"/proc/{pid}/maps"):
        return "render"
    return None


class CrawlLogCounter:
    """Counts the 200 HTML responses in the crawl log(s) of a folder as they are written."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pages = 0
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}

    def update(self) -> int:
        for path in sorted(self.folder.glob("*.crawl.log*")):
            # a log is written as NAME.open and renamed when closed: one file, one offset
            path = path.with_name(path.name.removesuffix(".open"))
            offset = self._offsets.get(path, 0)
            try:
                with _open_either(path) as handle:
                    handle.seek(offset)
                    chunk = handle.read()
            except OSError:
                continue
            self._offsets[path] = offset + len(chunk)
            lines = (self._partial.pop(path, b"") + chunk).split(b"\n")
            self._partial[path] = lines.pop()
            for line in lines:
                fields = line.split(b" ", 7)
                if len(fields) > 6 and fields[1] == b"200" and fields[6].startswith(b"text/html"):
                    self.pages += 1
        return self.pages


def _open_either(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except FileNotFoundError:
        return path.with_name(path.name + ".open").open("rb")


@dataclass(slots=True)
class Sample:
    seconds: float
    pages: int
    #: pid -> (role, RSS in bytes)
    processes: dict[int, tuple[str, int]]


class Sampler(threading.Thread):
    def __init__(self, pid: int, folder: Path, interval: float, writer: csv.writer) -> None:  # type: ignore[valid-type]
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.counter = CrawlLogCounter(folder)
        self.samples: list[Sample] = []
        self.roles: dict[int, str] = {}
        #: pid -> CPU seconds at its last sample
        self.cpu: dict[int, float] = {}
        self._writer = writer
        self._start_time = time.monotonic()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        processes: dict[int, tuple[str, int]] = {}
        children = _children_map()
        todo, tree = [self.pid], [self.pid]
        while todo:
            parent = todo.pop()
            for pid in children.get(parent, []):
                todo.append(pid)
                tree.append(pid)
                if pid not in self.roles:
                    role = role_of(pid, parent, self.roles, self.pid)
                    if role is not None:
                        self.roles[pid] = role
        self.roles.setdefault(self.pid, "crawl")
        parts: dict[int, tuple[int, int]] = {}
        for pid in tree:
            measured = memory(pid)
            if measured is not None and pid in self.roles:
                processes[pid] = (self.roles[pid], measured[0])
                parts[pid] = measured[1:]
                cpu = _cpu_and_rss(pid)
                if cpu is not None:
                    self.cpu[pid] = cpu[0]
        if not processes:
            return
        sample = Sample(time.monotonic() - self._start_time, self.counter.update(), processes)
        self.samples.append(sample)
        when = f"{sample.seconds:.1f}"
        for pid, (role, rss) in sorted(processes.items()):
            anon, file_backed = parts[pid]
            self._writer.writerow(  # type: ignore[attr-defined]
                [
                    when,
                    sample.pages,
                    pid,
                    role,
                    *(f"{v / MIB:.1f}" for v in (rss, anon, file_backed)),
                ]
            )
        totals = [
            sum(v)
            for v in zip(*((rss, *parts[pid]) for pid, (_, rss) in processes.items()), strict=True)
        ]
        self._writer.writerow(  # type: ignore[attr-defined]
            [when, sample.pages, 0, "total", *(f"{v / MIB:.1f}" for v in totals)]
        )

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


# -- the figures ---------------------------------------------------------------------------


def slope_per_10k(points: list[tuple[int, int]]) -> float | None:
    """Least-squares slope of RSS (bytes) over pages, in MiB per 10,000 pages."""
    if len(points) < 3:
        return None
    xs = [float(p) for p, _ in points]
    ys = [float(r) for _, r in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    return slope * 10_000 / MIB


def at_share(samples: list[Sample], pages: int, share: float) -> Sample | None:
    wanted = share * pages
    return next((s for s in samples if s.pages >= wanted), samples[-1] if samples else None)


def decile_rates(samples: list[Sample], pages: int) -> list[float]:
    """Pages/s within each tenth of the pages, the crossing times interpolated."""

    def time_at(count: float) -> float:
        previous = Sample(0.0, 0, {})
        for sample in samples:
            if sample.pages >= count:
                if sample.pages == previous.pages:
                    return sample.seconds
                share = (count - previous.pages) / (sample.pages - previous.pages)
                return previous.seconds + share * (sample.seconds - previous.seconds)
            previous = sample
        return samples[-1].seconds

    marks = [time_at(pages * k / 10) for k in range(11)]
    return [
        (pages / 10) / (marks[k + 1] - marks[k]) if marks[k + 1] > marks[k] else float("nan")
        for k in range(10)
    ]


def crawling(samples: list[Sample]) -> list[Sample]:
    """The samples before the last page was done: after it the crawl closes (writers
    finishing, the final report, processes exiting), which is no crawling."""
    final = samples[-1].pages
    before = [s for s in samples if s.pages < final]
    return before or samples


def report(
    samples: list[Sample], roles: dict[int, str], cpu: dict[int, float], summary: dict[str, object]
) -> None:
    samples = crawling(samples)
    pages = samples[-1].pages
    print(f"\npages done (crawl log): {pages}; samples while crawling: {len(samples)}")
    by_pid: dict[int, list[tuple[int, int]]] = {}
    for sample in samples:
        for pid, (_, rss) in sample.processes.items():
            by_pid.setdefault(pid, []).append((sample.pages, rss))
    totals = [(s.pages, sum(r for _, r in s.processes.values())) for s in samples]
    points = {**{pid: pts for pid, pts in sorted(by_pid.items())}, 0: totals}
    shares = (0.1, 0.5, 1.0)
    at = [at_share(samples, pages, share) for share in shares]
    print(
        f"{'process':<24}{'CPU s':>8}{'RSS@10%':>10}{'RSS@50%':>10}{'RSS@100%':>10}{'peak':>10}"
        f"{'MiB/10k pages (2nd half)':>28}"
    )
    for pid, series in points.items():
        name = "total" if pid == 0 else f"{roles[pid]}[{pid}]"
        cpu_text = f"{sum(cpu.values()) if pid == 0 else cpu.get(pid, 0.0):.0f}"
        cells = []
        for moment in at:
            if moment is None:
                cells.append("-")
            elif pid == 0:
                cells.append(f"{sum(r for _, r in moment.processes.values()) / MIB:.0f}")
            elif pid in moment.processes:
                cells.append(f"{moment.processes[pid][1] / MIB:.0f}")
            else:
                cells.append("-")
        second_half = [(p, r) for p, r in series if p >= pages / 2]
        slope = slope_per_10k(second_half)
        slope_text = "-" if slope is None else f"{slope:+.2f}"
        peak = max(r for _, r in series) / MIB
        print(
            f"{name:<24}{cpu_text:>8}{cells[0]:>10}{cells[1]:>10}{cells[2]:>10}{peak:>10.0f}{slope_text:>28}"
        )
    rates = decile_rates(samples, pages)
    first = rates[0] if rates and rates[0] == rates[0] else float("nan")
    print("pages/s per decile: " + " ".join(f"{r:.1f}" for r in rates))
    print("  against the 1st:  " + " ".join(f"{r / first:.2f}" for r in rates))
    seconds = samples[-1].seconds
    print(f"total: {pages} pages in {seconds:.0f} s = {pages / max(seconds, 1e-9):.1f} pages/s")
    print(f"summary: {json.dumps(summary)}")


# -- the crawl -----------------------------------------------------------------------------

PROFILE = """\
name: soak
seeds:
  urls: {seeds}
  sitemaps_from_robots: true
scope:
  max_depth: null
  max_pages: {max_pages}
politeness:
  concurrent_requests: {concurrency}
  concurrent_requests_per_domain: {concurrency}
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.0/8]
limits:
  max_sitemap_urls: 50000
extraction:
  language: en
output:
  directory: "{out}"
  progress_interval: 30
  warc:
    enabled: true
    conversion_records: true
    cdxj: true
    max_file_bytes: {warc_bytes}
  prevertical:
    enabled: true
  vertical:
    enabled: true
  documents:
    jsonl: true
    parquet: true
  crawl_log: true
  report: true
  report_interval: {report_interval}
dedup:
  enabled: true
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=50_000, help="pages on the site")
    parser.add_argument("--hosts", type=int, default=4, help="loopback hosts (127.0.0.N)")
    parser.add_argument(
        "--site-factor",
        type=int,
        default=1,
        help="the site has this many times --pages pages and the crawl stops at --pages"
        " (scope.max_pages): every page crawled then links to ~10 unknown ones (checked"
        " against the seen set and the page budget), as on the open web, instead of the"
        " last 90%% being leaves whose links are all known",
    )
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--report-interval", type=float, default=60.0)
    parser.add_argument(
        "--warc-mib", type=int, default=100, help="WARC rotation size (MiB): rotations happen"
    )
    parser.add_argument("--csv", type=Path, default=Path("soak.csv"), help="samples, to plot")
    parser.add_argument("--keep", type=Path, default=None, help="campaign folder to keep")
    parser.add_argument("--memprobe", type=Path, default=None, help="tracemalloc dumps here")
    parser.add_argument("--gold", type=Path, default=None, help="folder of gold sets")
    parser.add_argument("-s", "--set", action="append", default=[], help="KEY=VALUE to the crawl")
    args = parser.parse_args(argv)
    if args.hosts < 1 or args.hosts > 250:
        parser.error("--hosts: 1 to 250")

    sentences = sentence_pool(load_gold_pages(args.gold))
    if args.site_factor < 1:
        parser.error("--site-factor: 1 or more")
    site = Site(args.pages * args.site_factor, sentences)
    servers = [
        SiteServer(host=f"127.0.0.{h + 1}", fallback=site.route(h), keep_log=False)  # type: ignore[arg-type]
        for h in range(args.hosts)
    ]
    site.bases.extend(server.base_url for server in servers)
    sample_size = sum(len(site.page(n)) for n in range(200)) / 200
    print(
        f"site: {site.pages} pages on {args.hosts} host(s), crawl: {args.pages} pages,"
        f" ~{sample_size / 1024:.1f} KiB a page,"
        f" {len(sentences)} sentences; {os.cpu_count()} CPU(s); load {os.getloadavg()[0]:.1f}"
        " (a shared machine: read ratios)",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep if args.keep is not None else Path(tmp) / "campaign"
        out.mkdir(parents=True, exist_ok=True)
        profile = Path(tmp) / "soak.yaml"
        profile.write_text(
            PROFILE.format(
                seeds=json.dumps([site.url(h) for h in range(args.hosts)]),
                max_pages="null" if args.site_factor == 1 else args.pages,
                concurrency=args.concurrency,
                out=out,
                warc_bytes=args.warc_mib * MIB,
                report_interval=args.report_interval,
            ),
            encoding="utf-8",
        )
        command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile)]
        for setting in args.set:
            command += ["-s", setting]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if args.memprobe is not None:
            args.memprobe.mkdir(parents=True, exist_ok=True)
            env["MEMPROBE_DIR"] = str(args.memprobe.resolve())
        for server in servers:
            server.start()
        log_path = Path(tmp) / "crawl.stderr"
        try:
            with (
                args.csv.open("w", newline="", encoding="utf-8") as csv_file,
                log_path.open("w", encoding="utf-8") as stderr,
            ):
                writer = csv.writer(csv_file)
                writer.writerow(
                    ["seconds", "pages", "pid", "role", "rss_mib", "anon_mib", "file_mib"]
                )
                process = subprocess.Popen(
                    command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr
                )
                sampler = Sampler(process.pid, out, args.interval, writer)
                try:
                    sampler.start()
                    _follow(process, csv_file)
                finally:
                    if process.poll() is None:  # this script failed or was interrupted
                        process.terminate()
                        process.wait()
                sampler.stop()
        finally:
            for server in servers:
                server.stop()
        if process.returncode != 0:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise SystemExit(f"crawl failed ({process.returncode}):\n{tail}")
        summary = _summary(out)
        if not sampler.samples:
            raise SystemExit("no sample taken: the crawl ended within --interval")
        report(sampler.samples, sampler.roles, sampler.cpu, summary)
    print(f"samples: {args.csv}")
    return 0


def _follow(process: subprocess.Popen[bytes], csv_file: IO[str]) -> None:
    while process.poll() is None:
        time.sleep(1.0)
        csv_file.flush()


def _summary(out: Path) -> dict[str, object]:
    path = max(out.glob("*-summary.json"), default=None)
    if path is None:
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        "pages": data.get("pages"),
        "elapsed_seconds": data.get("elapsed_seconds"),
        "files": {k: len(v) for k, v in data.get("files", {}).items()},
    }


if __name__ == "__main__":
    sys.exit(main())

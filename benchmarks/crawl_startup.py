"""What a small crawl costs besides its pages: start-up and shut-down CPU of `corpus-crawler crawl`.

A crawl of three pages is nearly all fixed cost: the interpreter, Scrapy and Twisted,
the library's imports, the fork server and extraction workers, the final report. The
test suite runs well over 150 such crawls, and every user pays it once a crawl. Here
each row crawls the same three-page site (served on 127.0.0.1 from this process) in a
fresh process tree, rows round-robin, `--rounds` times; the best round is kept.

CPU is that of the whole process tree: the crawl runs under a child-subreaper wrapper
(`PR_SET_CHILD_SUBREAPER`) that reaps every descendant (the fork server, the workers,
multiprocessing's resource tracker, a report process) and reports its children's
`getrusage`, so nothing that outlives its parent is lost. Also printed: the crawl
process's own CPU and the heavy packages it had imported when it exited.

Rows: `python -c pass` and `import scrapy` (floors), then the crawl with the default
profile, with the report off, with the report and dedup off, and with `language: auto`.
Each round runs every row once (and every tree, with ``--tree``), so a slow spell of a
shared machine falls on the rows of one round alike: a row's ratio is the median over
rounds of its CPU over the default crawl's CPU in the same round (best-of-rounds CPU
put the same row at 1.75 s and 2.68 s in two runs on one day); the CPU column is each
row's best round.

    python benchmarks/crawl_startup.py [--rounds 5] [--tree DIR ...] [--json OUT]

``--tree DIR`` (repeatable) crawls with the code of that worktree instead of this one,
row by row next to each other (e.g. the main branch against a change): the ratio
column is then over the first tree's default crawl.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpus_crawler.testserver import SiteServer, html_reply  # noqa: E402

#: Top-level packages worth seeing in a crawl process (each costs 50-350 ms to import).
HEAVY = ("aiohttp", "matplotlib", "numpy", "pyarrow", "PIL", "redis", "requests", "fasttext")

# Run as `python -c`: become the subreaper, run the command, reap every descendant.
_REAPER = r"""
import ctypes, json, os, resource, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
code = subprocess.call(sys.argv[1:])
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "cpu": usage.ru_utime + usage.ru_stime}))
"""

# Run the crawl in-process as `corpus-crawler crawl` does, then note its own CPU and imports.
_PROBE = r"""
import atexit, json, os, resource, sys
def note():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    heavy = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
    with open(os.environ["STARTUP_NOTE"], "w") as handle:
        json.dump({"cpu": usage.ru_utime + usage.ru_stime, "heavy": heavy}, handle)
if __name__ == "__main__":
    atexit.register(note)
    from corpus_crawler.cli import main
    sys.exit(main(sys.argv[1:]))
"""

PROFILE = """\
name: startup
seeds:
  urls: ["{base}/"]
politeness:
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  language: {language}
  workers: 2
output:
  progress_interval: 0
  report: {report}
dedup:
  enabled: {dedup}
"""


@dataclass(frozen=True)
class Row:
    name: str
    #: None: a floor (a Python command, no crawl).
    profile: dict[str, str] | None = None
    floor: str = ""


ROWS = (
    Row("python -c pass", floor="pass"),
    Row("import scrapy", floor="import scrapy"),
    Row("crawl (defaults)", {"language": "en", "report": "true", "dedup": "true"}),
    Row("crawl, report off", {"language": "en", "report": "false", "dedup": "true"}),
    Row("crawl, report+dedup off", {"language": "en", "report": "false", "dedup": "false"}),
    Row("crawl, language auto", {"language": "auto", "report": "true", "dedup": "true"}),
)


def _page(number: int, links: str = "") -> bytes:
    sentence = f"This is sentence {number} of plain English text that a crawl keeps as good. "
    return f"<html><body><p>{sentence * 12}</p>{links}</body></html>".encode()


def run_row(row: Row, tree: Path, base: str, work: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if row.profile is None:
        command = [sys.executable, "-c", row.floor]
        note = None
    else:
        work.mkdir(parents=True, exist_ok=True)
        profile = work / "profile.yaml"
        profile.write_text(PROFILE.format(base=base, **row.profile), encoding="utf-8")
        probe = work / "probe.py"
        probe.write_text(f"HEAVY = {HEAVY!r}\n{_PROBE}", encoding="utf-8")
        note = work / "note.json"
        env["STARTUP_NOTE"] = str(note)
        command = [sys.executable, str(probe), "crawl", str(profile), "-o", str(work / "out")]
    reaped = subprocess.run(
        [sys.executable, "-c", _REAPER, *command],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    result = json.loads(reaped.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"{row.name} in {tree} failed:\n{reaped.stderr[-3000:]}")
    if note is not None:
        noted = json.loads(note.read_text(encoding="utf-8"))
        result["main_cpu"] = noted["cpu"]
        result["heavy"] = noted["heavy"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", action="append", type=Path, default=[])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree] or [ROOT]
    pages = {
        "/": html_reply(_page(1, '<a href="/a.html">a</a> <a href="/b.html">b</a>')),
        "/a.html": html_reply(_page(2)),
        "/b.html": html_reply(_page(3)),
    }
    best: dict[tuple[str, str], dict[str, object]] = {}
    cpu_by_round: dict[tuple[str, str], list[float]] = {}
    with SiteServer(pages=pages) as site, tempfile.TemporaryDirectory() as temp:
        for round_number in range(args.rounds):
            for row in ROWS:
                for index, tree in enumerate(trees):
                    work = Path(temp) / f"r{round_number}-{index}-{ROWS.index(row)}"
                    result = run_row(row, tree, site.base_url, work)
                    key = (row.name, str(tree))
                    cpu_by_round.setdefault(key, []).append(float(result["cpu"]))  # type: ignore[arg-type]
                    if key not in best or float(result["cpu"]) < float(best[key]["cpu"]):  # type: ignore[arg-type]
                        best[key] = result
    reference_key = (ROWS[2].name, str(trees[0]))
    reference = float(best[reference_key]["cpu"])  # type: ignore[arg-type]

    def ratio(key: tuple[str, str]) -> float:
        """The median over rounds of the row's CPU over the reference row's of that round."""
        pairs = zip(cpu_by_round[key], cpu_by_round[reference_key], strict=True)
        return statistics.median(cpu / base for cpu, base in pairs)

    print(f"best of {args.rounds} rounds; CPU of the whole process tree; ratio: the median over")
    print("rounds of the row's CPU over the first tree's default crawl in the same round")
    print(f"(best {reference:.2f} s)\n")
    print(f"{'row':26} {'tree':28} {'CPU s':>6} {'ratio':>6} {'main s':>7}  heavy imports")
    for row in ROWS:
        for tree in trees:
            key = (row.name, str(tree))
            result = best[key]
            cpu = float(result["cpu"])  # type: ignore[arg-type]
            main_cpu = result.get("main_cpu")
            main_text = f"{main_cpu:7.2f}" if isinstance(main_cpu, float) else f"{'':7}"
            heavy = ", ".join(result.get("heavy", []))  # type: ignore[arg-type]
            print(
                f"{row.name:26} {str(tree)[-28:]:28} {cpu:6.2f} {ratio(key):6.2f}"
                f" {main_text}  {heavy}"
            )
    if args.json:
        args.json.write_text(
            json.dumps({f"{name} @ {tree}": value for (name, tree), value in best.items()}),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()

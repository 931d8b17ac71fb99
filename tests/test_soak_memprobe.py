"""The memory probe (`pipelines.memprobe`): off unless MEMPROBE_DIR is set, and then
a real crawl dumps tracemalloc snapshots and object counts that `python -m
pipelines.memprobe DIR` compares."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_crawler.testserver import Reply, SiteServer
from pipelines import memprobe
from pipelines.memprobe import largest_containers, probe_config

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 180
PAGES = 40

PROFILE = """\
name: memprobe
seeds:
  urls: ["{base}/"]
scope:
  max_depth: null
politeness:
  obey_robots_txt: false
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  workers: 1
  language: en
output:
  progress_interval: 0
  report: false
"""


def _extensions(env: dict[str, str]) -> dict[str, int]:
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, pipelines.settings as s; print(json.dumps(s.EXTENSIONS))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT,
    )
    extensions: dict[str, int] = json.loads(listed.stdout)
    return extensions


def test_the_probe_is_not_even_registered_without_the_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMPROBE_")}
    assert "pipelines.memprobe.MemoryProbe" not in _extensions(env)
    env["MEMPROBE_DIR"] = str(tmp_path)
    assert "pipelines.memprobe.MemoryProbe" in _extensions(env)


def test_a_bad_number_names_the_variable() -> None:
    with pytest.raises(ValueError, match="MEMPROBE_PAGES"):
        probe_config({"MEMPROBE_DIR": "x", "MEMPROBE_PAGES": "many"})
    assert probe_config({}) is None


class _Holder:
    def __init__(self) -> None:
        # strings only: a dict gc does not track, found through its holder
        self.urls = {f"http://a.test/{i}": str(i) for i in range(5000)}


def test_the_longest_containers_are_named_by_their_holder() -> None:
    holder = _Holder()
    # every container over 1,000 items: in the whole suite's process bigger ones (caches
    # of other tests) would push this one out of the default top 15
    found = largest_containers(limit=1_000_000)
    assert {"type": "dict", "len": 5000} in [
        {k: c[k] for k in ("type", "len")} for c in found if "_Holder.urls" in c["owner"]
    ]
    del holder


def test_the_walks_never_traverse_the_asyncio_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython 3.12.0-3.12.5 (gh-122695): traversing `_asyncio` can close its free list
    of future iterators into a ring, and the next traversal never ends. Neither the
    container walk nor the referrer scan may hand that module to gc."""
    import _asyncio

    traversed: list[object] = []
    get_referents = gc.get_referents

    def recording(*objects: object) -> list[object]:
        traversed.extend(objects)
        return get_referents(*objects)

    monkeypatch.setattr(gc, "get_referents", recording)
    monkeypatch.setattr(memprobe, "FEW_REFERRED", 0)  # the scan, not gc.get_referrers
    holder = _Holder()
    found = largest_containers(limit=100)
    assert any("_Holder.urls" in c["owner"] for c in found)
    assert traversed and not any(o is _asyncio for o in traversed)
    del holder


#: Future iterators freed into `_asyncio`'s free list, then the probe, then a
#: traversal of everything: on CPython 3.12.0-3.12.5 the probe without its guard
#: hung here (3.12.1: in gc.get_referrers, for ever).
_FREE_LIST_SCRIPT = """
import asyncio, gc, sys
from pipelines.memprobe import largest_containers

async def main():
    loop = asyncio.get_running_loop()
    for _ in range(3):
        futures = [loop.create_future() for _ in range(20)]
        iterators = [iter(f) for f in futures]
        del iterators
        for f in futures:
            f.set_result(None)
        for _ in range(2):
            largest_containers(limit=5)

asyncio.run(main())
print(len(gc.get_referrers(sys.modules["asyncio"])) > 0)
"""


def test_the_probe_leaves_asyncio_s_free_list_whole() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FREE_LIST_SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "True\n"


def _page(i: int) -> Reply:
    links = "".join(f'<a href="/p/{j}.html">page {j}</a> ' for j in range(i + 1, min(PAGES, i + 4)))
    text = " ".join(f"Sentence number {k} of page {i} says something plain." for k in range(12))
    body = f"<html><body><p>{text}</p><p>{links}</p></body></html>"
    return Reply(headers=(("Content-Type", "text/html; charset=utf-8"),), body=body.encode())


def test_a_probed_crawl_dumps_what_the_comparison_reads(tmp_path: Path) -> None:
    pages = {"/": _page(0), **{f"/p/{i}.html": _page(i) for i in range(1, PAGES)}}
    dumps = tmp_path / "dumps"
    with SiteServer(pages=pages) as server:
        profile = tmp_path / "p.yaml"
        profile.write_text(PROFILE.format(base=server.base_url), encoding="utf-8")
        env = {
            **os.environ,
            "MEMPROBE_DIR": str(dumps),
            "MEMPROBE_PAGES": "15",
            "MEMPROBE_FRAMES": "2",
        }
        command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile)]
        command += ["-o", str(tmp_path / "out")]
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
    assert done.returncode == 0, done.stderr[-2000:]
    counts = sorted(dumps.glob("objects-*.json"))
    # at the engine's start, at 15 and 30 responses, at the close
    assert [p.stem for p in counts][:3] == [
        "objects-000000000",
        "objects-000000015",
        "objects-000000030",
    ]
    assert len(counts) == 4
    assert len(list(dumps.glob("snapshot-*.pickle"))) == 4
    last = json.loads(counts[-1].read_text(encoding="utf-8"))
    assert last["responses"] == PAGES
    assert last["rss"] > 0 and last["traced"] > 0
    assert last["objects"]["builtins.dict"] > 0
    compared = subprocess.run(
        [sys.executable, "-m", "pipelines.memprobe", str(dumps), "--top", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert compared.stdout.startswith(f"from 15 to {PAGES} responses")
    assert "MiB" in compared.stdout and "longest containers now:" in compared.stdout


def test_many_containers_are_named_as_few_are(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines import memprobe

    class _Many:
        def __init__(self) -> None:
            self.lists = [[i] * 3 for i in range(100)]
            self.dicts = [{"k": i} for i in range(100)]

    many = _Many()
    containers: list[object] = [*many.lists, *many.dicts, many.lists, many.dicts]
    scanned = memprobe._owners(containers)  # past FEW_REFERRED: the one-pass scan
    monkeypatch.setattr(memprobe, "FEW_REFERRED", 10_000)
    asked = memprobe._owners(containers)  # gc.get_referrers
    assert scanned == asked
    assert scanned[-2].endswith("._Many.lists") and scanned[-1].endswith("._Many.dicts")
    assert set(scanned[:200]) == {"?"}  # held by a list only: no name, no fallback
    del many

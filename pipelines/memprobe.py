"""What grows in a long crawl: tracemalloc snapshots and object counts, on request.

Off unless the environment variable ``MEMPROBE_DIR`` names a folder (read in
`probe_config`, the one place). Then `pipelines.settings` adds `MemoryProbe` to the
extensions: tracemalloc starts with the engine (``MEMPROBE_FRAMES`` frames a
trace, default 12) and every ``MEMPROBE_PAGES`` responses (default 5,000) the
probe dumps into the folder ``snapshot-PAGES.pickle`` (`tracemalloc.Snapshot.dump`)
and ``objects-PAGES.json`` (the process's RSS, the traced memory and the count of live
objects by type, from `gc.get_objects`). Off, it costs nothing: the class is not even
imported. On, tracemalloc slows the crawl several times: probe to find what grows,
measure speed without it (``benchmarks/soak.py``).

Compare two dumps (the first after the warm-up against the last):

    python -m pipelines.memprobe DIR [--first PAGES] [--last PAGES] [--top 25]

prints the allocation sites whose memory grew most (by traceback) and the object types
whose count grew most.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import gc
import json
import linecache
import os
import sys
import tracemalloc
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["MemoryProbe", "ProbeConfig", "compare", "memprobe_extensions", "probe_config"]

FOLDER_VARIABLE = "MEMPROBE_DIR"


@dataclass(frozen=True, slots=True)
class ProbeConfig:
    folder: Path
    every_pages: int = 5000
    #: tracemalloc frames a trace; 0: no tracemalloc (object counts and malloc figures
    #: only, at a few seconds a dump: the crawl runs at its own speed)
    frames: int = 12


def probe_config(environ: dict[str, str] | None = None) -> ProbeConfig | None:
    """The probe's settings from the environment, None when it is off."""
    environ = dict(os.environ) if environ is None else environ
    folder = environ.get(FOLDER_VARIABLE, "")
    if not folder:
        return None
    try:
        every = int(environ.get("MEMPROBE_PAGES", "5000"))
        frames = int(environ.get("MEMPROBE_FRAMES", "12"))
    except ValueError as exc:
        raise ValueError(f"MEMPROBE_PAGES and MEMPROBE_FRAMES take whole numbers: {exc}") from None
    return ProbeConfig(Path(folder), max(1, every), max(0, frames))


def memprobe_extensions() -> dict[str, int]:
    """The EXTENSIONS entry that switches the probe on, {} when the variable is unset."""
    return {"pipelines.memprobe.MemoryProbe": 990} if probe_config() is not None else {}


def _rss_bytes() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_figures() -> dict[str, int]:
    """glibc's malloc: bytes in use, free but kept in its arenas, and mapped for big blocks
    (memory that neither tracemalloc nor gc sees: SQLite's caches, zlib, Arrow...)."""
    try:
        libc = ctypes.CDLL(None)
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):
        return {}
    mallinfo2.restype = _Mallinfo2
    info = mallinfo2()
    return {
        "malloc_in_use": info.uordblks + info.hblkhd,
        "malloc_free_kept": info.fordblks,
        "malloc_mapped": info.hblkhd,
        "python_blocks": sys.getallocatedblocks(),
    }


def object_counts(limit: int = 300) -> dict[str, int]:
    """Live objects tracked by the garbage collector, by type, the most common first."""
    counts: Counter[str] = Counter(
        f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects()
    )
    return dict(counts.most_common(limit))


#: Up to this many objects, `gc.get_referrers` finds their referrers; past it, one
#: pass over gc's objects does (`_referrers`).
FEW_REFERRED = 64

#: CPython 3.12.0 to 3.12.5 traverse the `_asyncio` module's free list of future
#: iterators (CPython gh-122695, fixed in 3.12.6): `gc.get_referents` of that module
#: returns freed iterators, and dropping them frees them again, which can close the
#: free list into a ring. The next traversal of the module (any `get_referents` or
#: `get_referrers`) then never ends, appending to its result until memory runs out.
#: On 3.12.1 a probed crawl hung in `get_referrers` and a test worker grew to 23 GB.
#: The probe never traverses that module (nothing it looks for is held only there),
#: and on those versions never calls `gc.get_referrers`, which would.
_ASYNCIO_FREE_LIST_TRAVERSED = (3, 12) <= sys.version_info[:3] < (3, 12, 6)


def _traversable(objects: list[object]) -> list[object]:
    """`objects` but the `_asyncio` module, whose traversal may never end (above)."""
    asyncio_module = sys.modules.get("_asyncio")
    return [o for o in objects if o is not asyncio_module]


def _referrers(objects: list[object]) -> list[object]:
    """`gc.get_referrers(*objects)`: the gc objects that refer to one of `objects`.
    get_referrers compares every referent of every gc object with each object asked
    for, so its cost grows with their number: for every container over 1,000 items of
    a test worker that had run half the suite (Python 3.12), it ran for over ten
    minutes. Past `FEW_REFERRED` objects, one pass looks each referent up in a set;
    so does every call where get_referrers would traverse the `_asyncio` module's
    free list (`_ASYNCIO_FREE_LIST_TRAVERSED`)."""
    if len(objects) <= FEW_REFERRED and not _ASYNCIO_FREE_LIST_TRAVERSED:
        return gc.get_referrers(*objects)
    wanted = {id(o) for o in objects}
    found = []
    for candidate in _traversable(gc.get_objects()):
        for referent in gc.get_referents(candidate):
            if id(referent) in wanted:
                found.append(candidate)
                break
    return found


def _owners(containers: list[object]) -> list[str]:
    """Who holds each container: `Type.attribute`, `module.name`, or the referrers' types.

    Two scans of every gc object in all (`gc.get_referrers` of all the containers at once,
    then of the dicts that hold one), not one or more per container: with every container
    over a size asked for, one scan each took seconds in a big process."""
    index = {id(c): i for i, c in enumerate(containers)}
    # per container, what its referrers say, in their order: a name, a dict that holds it
    # under a key (its holder is looked up below), or a fallback type name
    events: list[list[tuple[str, Any, str]]] = [[] for _ in containers]
    frame_type = type(sys._getframe())
    for referrer in _referrers(containers):
        if referrer is containers:
            continue
        referred: set[int] = set()
        if isinstance(referrer, dict):
            for key, value in referrer.items():
                if id(value) in index and value is containers[index[id(value)]]:
                    events[index[id(value)]].append(("dict", referrer, key))
                    referred.add(index[id(value)])
        elif isinstance(getattr(referrer, "__dict__", None), dict) and not isinstance(
            referrer, type
        ):
            for key, value in vars(referrer).items():
                if id(value) in index and value is containers[index[id(value)]]:
                    name = f"{type(referrer).__qualname__}.{key}"
                    events[index[id(value)]].append(("name", None, name))
                    referred.add(index[id(value)])
        if hasattr(type(referrer), "__slots__"):
            for slot in getattr(type(referrer), "__slots__", ()):
                value = getattr(referrer, slot, None)
                if id(value) in index and value is containers[index[id(value)]]:
                    name = f"{type(referrer).__qualname__}.{slot}"
                    events[index[id(value)]].append(("name", None, name))
                    referred.add(index[id(value)])
        if not isinstance(referrer, (list, tuple, frame_type)):
            for referent in gc.get_referents(referrer):
                if id(referent) in index and referent is containers[index[id(referent)]]:
                    fallback = f"<{type(referrer).__qualname__}>"
                    events[index[id(referent)]].append(("fallback", None, fallback))
    holding = {id(e[1]): e[1] for found in events for e in found if e[0] == "dict"}
    holders: dict[int, list[str]] = {key: [] for key in holding}
    if holding:
        for holder in _referrers(list(holding.values())):
            namespace = getattr(holder, "__dict__", None)
            if id(namespace) in holders and namespace is holding[id(namespace)]:
                holders[id(namespace)].append(type(holder).__qualname__)
    owners = []
    for found in events:
        names: list[str] = []
        for kind, namespace, name in found:
            if kind == "dict":
                names.extend(f"{holder}.{name}" for holder in holders[id(namespace)])
            elif kind == "name" or not names:  # a fallback only while nothing named it
                names.append(name)
        owners.append(", ".join(sorted(set(names))[:4]) or "?")
    return owners


def largest_containers(limit: int = 15) -> list[dict[str, Any]]:
    """The longest dicts, lists, sets and deques alive, with who holds each."""
    import heapq
    from collections import deque

    kinds = (dict, list, set, frozenset, deque)
    candidates: dict[int, Any] = {}
    # a container of strings and numbers only is not tracked by gc (nor, then, the
    # instance dict holding it): reached from the tracked objects through untracked ones
    untracked_seen: set[int] = set()
    walked = (*kinds, tuple)
    todo = _traversable(gc.get_objects())
    while todo:
        # a level at a time, its referents in one call: a list per object made the walk
        # ~9x slower under tracemalloc (every allocation traced), ~1.5 s a dump
        level, todo = todo, []
        for o in level:
            if isinstance(o, kinds) and len(o) > 1000:
                candidates[id(o)] = o
        for referent in gc.get_referents(*level):
            if (
                isinstance(referent, walked)
                and not gc.is_tracked(referent)
                and id(referent) not in untracked_seen
            ):
                untracked_seen.add(id(referent))
                todo.append(referent)
        del level
    untracked_seen.clear()
    top = heapq.nlargest(
        limit, ((len(o), key, o) for key, o in candidates.items()), key=lambda item: item[0]
    )
    candidates.clear()
    owners = _owners([o for _, _, o in top])
    found = [
        {"type": type(o).__qualname__, "len": length, "owner": owner}
        for (length, _, o), owner in zip(top, owners, strict=True)
    ]
    # lru_cache wrappers keep their dict out of gc's reach: ask them
    for o in gc.get_objects():
        if type(o) is functools._lru_cache_wrapper:
            size = o.cache_info().currsize
            if size > 1000:
                name = f"{getattr(o, '__module__', '?')}.{getattr(o, '__qualname__', '?')}"
                found.append({"type": "lru_cache", "len": size, "owner": name})
    return found


class MemoryProbe:
    def __init__(self, config: ProbeConfig) -> None:
        self.config = config
        self.responses = 0
        self._next_dump = config.every_pages

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MemoryProbe:
        from scrapy import signals
        from scrapy.exceptions import NotConfigured

        config = probe_config()
        if config is None:
            raise NotConfigured(f"set {FOLDER_VARIABLE}=FOLDER to probe the crawl's memory")
        config.folder.mkdir(parents=True, exist_ok=True)
        probe = cls(config)
        crawler.signals.connect(probe.engine_started, signal=signals.engine_started)
        crawler.signals.connect(probe.response_received, signal=signals.response_received)
        crawler.signals.connect(probe.spider_closed, signal=signals.spider_closed)
        return probe

    def engine_started(self) -> None:
        if self.config.frames:
            tracemalloc.start(self.config.frames)
        self.dump()

    def response_received(self, *args: Any, **kwargs: Any) -> None:
        self.responses += 1
        if self.responses >= self._next_dump:
            self._next_dump += self.config.every_pages
            self.dump()

    def spider_closed(self) -> None:
        self.dump()
        tracemalloc.stop()

    def dump(self) -> None:
        gc.collect()
        stem = f"{self.responses:09d}"
        if tracemalloc.is_tracing():
            snapshot = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, tracemalloc.__file__)]
            )
            snapshot.dump(str(self.config.folder / f"snapshot-{stem}.pickle"))
        traced, peak = tracemalloc.get_traced_memory()
        facts = {
            "responses": self.responses,
            "rss": _rss_bytes(),
            "traced": traced,
            "traced_peak": peak,
            **malloc_figures(),
            "containers": largest_containers(),
            "objects": object_counts(),
        }
        path = self.config.folder / f"objects-{stem}.json"
        path.write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")


# -- comparing dumps -----------------------------------------------------------------------


def _dumps(folder: Path) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in folder.glob("objects-*.json"))


def compare(folder: Path, first: int | None, last: int | None, top: int) -> str:
    marks = _dumps(folder)
    if len(marks) < 2:
        raise SystemExit(f"{folder}: fewer than two objects-*.json files to compare")
    # the first dump is taken at the engine's start, before anything is allocated
    first = first if first is not None else marks[min(1, len(marks) - 2)]
    last = last if last is not None else marks[-1]
    pages = max(1, last - first)
    lines = [f"from {first} to {last} responses ({pages} pages); growth per 10,000 pages:"]
    old_path = folder / f"snapshot-{first:09d}.pickle"
    new_path = folder / f"snapshot-{last:09d}.pickle"
    stats = []
    if old_path.is_file() and new_path.is_file():
        old = tracemalloc.Snapshot.load(str(old_path))
        new = tracemalloc.Snapshot.load(str(new_path))
        stats = new.compare_to(old, "traceback")[:top]
    for stat in stats:
        lines.append(
            f"{stat.size_diff * 10_000 / pages / 2**20:+9.2f} MiB {stat.count_diff:+9d} blocks"
            f" (now {stat.size / 2**20:.1f} MiB)"
        )
        for frame in stat.traceback.format(most_recent_first=True)[:12]:
            lines.append("      " + frame.strip())
        linecache.clearcache()
    old_objects = json.loads((folder / f"objects-{first:09d}.json").read_text(encoding="utf-8"))
    new_objects = json.loads((folder / f"objects-{last:09d}.json").read_text(encoding="utf-8"))
    for name in ("rss", "traced", "malloc_in_use", "malloc_free_kept", "malloc_mapped"):
        if name in old_objects and name in new_objects:
            lines.append(
                f"{name}: {old_objects[name] / 2**20:.0f} -> {new_objects[name] / 2**20:.0f} MiB"
            )
    if "python_blocks" in new_objects:
        lines.append(
            f"python_blocks: {old_objects.get('python_blocks', 0)}"
            f" -> {new_objects['python_blocks']}"
        )
    lines.append("longest containers now:")
    for container in new_objects.get("containers", []):
        lines.append(f"  {container['len']:9d} {container['type']} held by {container['owner']}")
    growth = Counter(new_objects["objects"])
    growth.subtract(old_objects["objects"])
    lines.append("objects whose count grew most:")
    for name, diff in growth.most_common(top):
        if diff > 0:
            lines.append(f"  {diff:+9d} {name} (now {new_objects['objects'][name]})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="compare two dumps of pipelines.memprobe")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--first", type=int, default=None, help="responses of the older dump")
    parser.add_argument("--last", type=int, default=None, help="responses of the newer dump")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    print(compare(args.folder, args.first, args.last, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time loading the shipped stoplists in a fresh process: one language, all 100, the index.

    python tools/time_stoplists.py

Prints CPU and wall seconds per step; CPU time is the steadier number on a shared machine.
"""

from __future__ import annotations

import time


def main() -> None:
    cpu, wall = time.process_time(), time.perf_counter()

    def lap(label: str) -> None:
        nonlocal cpu, wall
        now_cpu, now_wall = time.process_time(), time.perf_counter()
        print(f"{label:<28} cpu {now_cpu - cpu:.3f}s  wall {now_wall - wall:.3f}s")
        cpu, wall = now_cpu, now_wall

    from corpus_crawler import stoplists

    lap("import corpus_crawler.stoplists")
    english = stoplists.get_stoplist("en")
    lap(f"one language (en, {len(english)} words)")
    lists = stoplists.all_stoplists()
    lap(f"all {len(lists)} ({sum(map(len, lists.values()))} words)")
    index = stoplists.stopword_index()
    lap(f"stopword_index ({len(index)} words)")


if __name__ == "__main__":
    main()

"""benchmarks/extract_speed.py's timing: candidates take turns page by page, and
the ratios are medians of ratios within a round (issue 13's x-parse-time bound is
read from them). A fake clock that each candidate advances by a known cost makes
the arithmetic exact; the real clocks are only passed through."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from tool_loader import BENCHMARKS, load_tool


def _bench() -> ModuleType:
    return load_tool("extract_speed", BENCHMARKS)


class FakeClock:
    """Time that moves only when a candidate works; `slow` adds a spell to a round."""

    def __init__(self) -> None:
        self.now = 0.0
        self.factor = 1.0

    def __call__(self) -> float:
        return self.now

    def work(self, cost: float) -> None:
        self.now += cost * self.factor


def test_each_page_goes_through_every_candidate_in_a_rotating_order() -> None:
    bench = _bench()
    clock = FakeClock()
    calls: list[tuple[str, str]] = []

    def candidate(name: str, cost: float) -> object:
        def run(html: bytes, url: str | None) -> None:
            calls.append((name, url or ""))
            clock.work(cost)

        return bench.Candidate(name, run)

    names = [bench.PARSE, bench.JUSTEXT, "extract seed lang=en", "extract corpus lang=en"]
    costs = [1.0, 12.0, 3.0, 3.6]
    candidates = [candidate(n, c) for n, c in zip(names, costs, strict=True)]
    pages = [bench.Page("set", str(i), f"page-{i}", b"<p>x</p>") for i in range(8)]

    timings = {t.name: t for t in bench.measure(candidates, pages, 2, clock)}

    # every page met every candidate once a round, the first of them rotating
    assert len(calls) == 2 * len(pages) * len(names)
    firsts = [calls[i * len(names)][0] for i in range(len(pages))]
    assert firsts == [names[i % len(names)] for i in range(len(pages))]
    for page in pages:
        assert sorted(n for n, url in calls if url == page.url) == sorted(names * 2)
    parse, corpus = timings[bench.PARSE], timings["extract corpus lang=en"]
    assert parse.rounds == (8.0, 8.0) and parse.pages_per_second == 1.0
    assert corpus.vs_parse_time == pytest.approx(3.6)
    assert corpus.vs_seed_time == pytest.approx(1.2)
    assert timings["extract seed lang=en"].vs_justext_speed == pytest.approx(4.0)
    assert timings[bench.JUSTEXT].vs_seed_time is None


def test_a_slow_spell_in_one_round_does_not_move_the_ratios() -> None:
    """The machine runs 3x slower through round 2 (another job): that round's
    times triple, the ratio to the parse does not move."""
    bench = _bench()
    clock = FakeClock()
    ran = {"pages": 0}

    def run_with(cost: float) -> Callable[[bytes, str | None], None]:
        def run(html: bytes, url: str | None) -> None:
            clock.work(cost)

        return run

    def parse(html: bytes, url: str | None) -> None:
        ran["pages"] += 1
        # the second round (pages 11-20) runs on a machine 3x slower
        clock.factor = 3.0 if 10 < ran["pages"] <= 20 else 1.0
        clock.work(1.0)

    candidates = [
        bench.Candidate(bench.PARSE, parse),
        bench.Candidate("extract article lang=auto", run_with(3.2)),
    ]
    pages = [bench.Page("set", str(i), None, b"") for i in range(10)]
    timings = {t.name: t for t in bench.measure(candidates, pages, 3, clock)}
    article = timings["extract article lang=auto"]
    assert article.rounds[1] > 2.5 * article.rounds[0]
    assert article.vs_parse_time == pytest.approx(3.2)


class CacheClock(FakeClock):
    """A fake clock with a CPU cache: a parse leaves it cold, and the next pass over
    classified blocks pays `miss` to fetch them before it finds them warm."""

    def __init__(self, miss: float) -> None:
        super().__init__()
        self.cold = True
        self.miss = miss

    def parse(self, index: int) -> None:
        self.work(1.0)
        self.cold = True

    def block_pass(self, cost: float) -> Callable[[int], None]:
        def run(index: int) -> None:
            self.work(cost + (self.miss if self.cold else 0.0))
            self.cold = False

        return run

    def touch(self, index: int) -> None:  # the untimed pass of `warm`
        self.cold = False


def test_warm_runs_untimed_before_every_call() -> None:
    bench = _bench()
    clock = FakeClock()
    log: list[tuple[str, int]] = []

    def call(name: str, cost: float) -> Callable[[int], None]:
        def run(index: int) -> None:
            log.append((name, index))
            clock.work(cost)

        return run

    seconds = bench.interleaved_rounds(
        {"a": call("a", 1.0), "b": call("b", 2.0)}, 3, 2, clock, warm=call("warm", 5.0)
    )

    assert seconds == {"a": [3.0, 3.0], "b": [6.0, 6.0]}  # warm's 5.0 is counted nowhere
    assert len(log) == 2 * 3 * 2 * 2
    for (first, first_index), (second, second_index) in zip(log[::2], log[1::2], strict=True):
        assert first == "warm" and second != "warm" and first_index == second_index


def test_without_warm_the_pass_after_a_parse_pays_for_the_cold_cache() -> None:
    """container_pass_cost's case: two passes over the same classified blocks that cost
    the same, beside a parse. Rotating three candidates puts one of the passes after
    the parse twice as often as the other, so it looks dearer; warming before each
    call makes them equal again."""
    bench = _bench()
    for warm, expected in ((False, False), (True, True)):
        clock = CacheClock(miss=0.5)
        calls = {
            "parse": clock.parse,
            "template_shift 0": clock.block_pass(0.3),
            "shipped": clock.block_pass(0.3),
        }
        seconds = bench.interleaved_rounds(calls, 30, 3, clock, warm=clock.touch if warm else None)
        ratio = bench.median_ratio(seconds["template_shift 0"], seconds["shipped"])
        assert (ratio == pytest.approx(1.0)) is expected, (warm, ratio)


def test_measure_runs_before_untimed_before_every_call() -> None:
    """The cold rows: `before` (the caches emptied) runs before each candidate's call
    on each page and its cost is counted in no row."""
    bench = _bench()
    clock = FakeClock()
    log: list[str] = []

    def run(name: str, cost: float) -> Callable[[bytes, str | None], None]:
        def call(html: bytes, url: str | None) -> None:
            log.append(name)
            clock.work(cost)

        return call

    def before() -> None:
        log.append("before")
        clock.work(7.0)

    pages = [bench.Page("set", str(i), None, b"<p>x</p>") for i in range(4)]
    candidates = [
        bench.Candidate(bench.PARSE, run("parse", 1.0)),
        bench.Candidate("x", run("x", 3.0)),
    ]
    timings = bench.measure(candidates, pages, 2, clock, before)

    assert [t.best_seconds for t in timings] == [4.0, 12.0]
    assert [t.vs_parse_time for t in timings] == [1.0, 3.0]
    assert log[::2] == ["before"] * (2 * 4 * 2) and "before" not in log[1::2]


def test_per_file_runs_every_command_once_a_file_against_justext(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--per-file`: real commands, one per file, each row a CPU time per file, the
    ratio against jusText's own command line run in the same rounds."""
    bench = _bench()
    english = b"<html><body><p>" + b"This is the text that the page is about, and it is long. " * 6
    pages = [
        bench.Page("set", "kept", None, english + b"</p></body></html>"),
        bench.Page("set", "empty", None, b"<html><body><p>x</p></body></html>"),
    ]
    rows = bench.per_file_speed(pages, files=2, rounds=1)
    assert rows[0].name == "python -m justext -s English FILE"
    assert any("--lang en --preset corpus" in row.name for row in rows)
    for row in rows:
        assert row.files == 2 and len(row.rounds) == 1
        assert 0 < row.best_seconds < 60  # a CPU time per file: a real process ran
    assert rows[0].vs_justext_speed == 1.0
    out = bench.format_cli_timings(rows, digits=3)
    assert f"{rows[1].best_seconds:.3f}" in out
    assert "s a file" in capsys.readouterr().err


def test_per_file_with_two_trees_runs_both_in_the_same_rounds(tmp_path: Path) -> None:
    bench = _bench()
    old = tmp_path / "old"
    old.symlink_to(bench.ROOT)  # another checkout (here the same code)
    page = bench.Page("set", "p", None, b"<html><body><p>Some words.</p></body></html>")
    rows = bench.per_file_speed([page], files=1, rounds=1, trees=(old, bench.ROOT))
    names = [row.name for row in rows]
    assert len(names) == 7 and len(set(names)) == 7
    twins = [name for name in names if name.endswith(f" [{old}]")]
    assert len(twins) == 3
    assert all(twin.removesuffix(f" [{old}]") + f" [{bench.ROOT}]" in names for twin in twins)

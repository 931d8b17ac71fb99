"""A report refreshed from what the crawl log gained is the report of a full read.

`RunStats.update` reads each crawl-log file of a run on from the offset just past the
last whole line it read. Here logs are written the way a crawl writes them (rotated
files, ``.open`` until closed, bytes landing at any cut point: torn lines, a UTF-8
character split in two), with an update at every cut, and every update must give the
`CrawlStats` of a full read of the same files at that moment; the last one the same
HTML too.
"""

from __future__ import annotations

import copy
import itertools
import os
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from corpus_crawler.crawllog import (
    CrawlLogEntry,
    CrawlLogWriter,
    crawl_log_runs,
    format_entry,
    parse_line,
    read_crawl_log,
)
from corpus_crawler.report import CrawlStats, RunStats, collect, render_html, write_report

START = datetime(2026, 11, 24, 20, 0, tzinfo=timezone.utc)
GENERATED = datetime(2026, 11, 25, 0, 0, tzinfo=timezone.utc)
OUTCOMES = ["kept", "dropped:duplicate", "dropped:too-short", "refused:robots", "error:http-404"]


def _lines(rng: random.Random, count: int) -> list[bytes]:
    lines = []
    for number in range(count):
        outcome = rng.choice(OUTCOMES)
        kept = outcome == "kept"
        entry = CrawlLogEntry(
            # mostly in order, some lines logged late (as a slow page's outcome is)
            time=START + timedelta(seconds=number / 3 - rng.choice((0, 0, 0, 4.5))),
            status=0 if outcome.startswith("refused") else (404 if "404" in outcome else 200),
            # non-ASCII URLs: a cut point may fall inside a character
            url=f"http://h{rng.randrange(9)}.test/žluťoučký/{number}",
            outcome=outcome,
            size=None if outcome.startswith("refused") else rng.randrange(10, 200_000),
            discovery=rng.choice(("", "L", "LL", "LR", "S")),
            annotations={"clean": str(rng.randrange(5000)), "words": "40", "lang": "cs"}
            if kept
            else {},
        )
        lines.append(format_entry(entry).encode("utf-8"))
    return lines


def _full_read(paths: list[Path]) -> CrawlStats:
    """The figures of every whole line of `paths`, read here without `read_appended`."""
    entries = []
    for path in paths:
        data = path.read_bytes()
        whole = data[: data.rfind(b"\n") + 1].decode("utf-8")
        entries.extend(parse_line(line) for line in whole.splitlines())
    return collect(entries)


def _write_run_with_updates(tmp_path: Path, seed: int) -> tuple[RunStats, list[Path]]:
    """Write a rotated run's files in random pieces, updating `RunStats` after each
    piece and comparing it with a full read; returns it and the final files."""
    rng = random.Random(seed)
    lines = _lines(rng, rng.randrange(50, 400))
    files = rng.randrange(1, 6)
    bounds = sorted(rng.sample(range(1, len(lines)), files - 1)) if files > 1 else []
    parts = [lines[a:b] for a, b in zip([0, *bounds], [*bounds, len(lines)], strict=True)]
    run = RunStats()
    closed: list[Path] = []
    shown: list[tuple[CrawlStats, CrawlStats]] = []  # (a snapshot, a copy made then)
    for serial, part in enumerate(parts):
        final = tmp_path / f"c-{20261124200000000 + serial}-{serial:05d}-h.crawl.log"
        current = final.with_name(final.name + ".open")
        data = b"".join(part)
        cuts = sorted({0, len(data), *(rng.randrange(len(data) + 1) for _ in range(4))})
        with open(current, "wb") as handle:
            for start, end in itertools.pairwise(cuts):
                handle.write(data[start:end])
                handle.flush()
                stats = run.update([*closed, current])
                assert stats == _full_read([*closed, current]), (seed, serial, end)
                shown.append((stats, copy.deepcopy(stats)))
        os.replace(current, final)
        if rng.random() < 0.5:
            # the writer closed it after the crawl process listed it: the render
            # process is given the `.open` name of a file that is gone
            assert run.update([*closed, current]) == _full_read([*closed, final])
        closed.append(final)
    # a report being drawn from a snapshot never sees later lines
    assert all(snapshot == then for snapshot, then in shown)
    return run, closed


@pytest.mark.parametrize("seed", range(30))
def test_every_update_equals_a_full_read_of_the_same_files(tmp_path: Path, seed: int) -> None:
    run, files = _write_run_with_updates(tmp_path, seed)
    assert run.update(files) == _full_read(files)
    assert sum(run.offsets.values()) == sum(path.stat().st_size for path in files)


def test_the_report_after_updates_is_the_report_of_a_full_read(tmp_path: Path) -> None:
    run, files = _write_run_with_updates(tmp_path, seed=7)
    read_on = write_report(files, tmp_path / "a.html", run=run, generated=GENERATED, title="T")
    full = write_report(files, tmp_path / "b.html", generated=GENERATED, title="T")
    assert read_on.read_bytes() == full.read_bytes()
    html = render_html(_full_read(files), title="T", generated=GENERATED)
    assert read_on.read_bytes() == html.encode("utf-8")


def _log(path: Path, lines: list[bytes]) -> None:
    with open(path, "ab") as handle:
        handle.write(b"".join(lines))


def test_a_torn_last_line_is_read_once_it_is_whole(tmp_path: Path) -> None:
    lines = _lines(random.Random(1), 20)
    path = tmp_path / "c-20261124200000000-00000-h.crawl.log.open"
    _log(path, lines[:10])
    cut = lines[10].index("ž".encode()) + 1
    _log(path, [lines[10][:cut]])  # a line being written, cut inside a character
    assert [e.url for e in read_crawl_log(path)] == [e.url for e in _entries(lines[:10])]
    run = RunStats()
    assert run.update([path]).entries == 10
    assert run.offsets[path.with_name(path.name.removesuffix(".open"))] == len(b"".join(lines[:10]))
    _log(path, [lines[10][cut:], *lines[11:]])
    assert run.update([path]) == _full_read([path])
    assert run.update([path]).entries == 20


def test_a_renamed_open_file_is_read_on_from_its_offset_not_again(tmp_path: Path) -> None:
    lines = _lines(random.Random(2), 20)
    current = tmp_path / "c-20261124200000000-00000-h.crawl.log.open"
    final = current.with_name(current.name.removesuffix(".open"))
    _log(current, lines[:10])
    run = RunStats()
    assert run.update([current]).entries == 10
    # A status in the bytes already read is changed in place (same size, same file):
    # a read on from the offset never sees it, a read from the start would.
    data = current.read_bytes()
    assert b" 200 " in data
    with open(current, "r+b") as handle:
        handle.write(data.replace(b" 200 ", b" 201 ", 1))
    os.replace(current, final)  # closed by the writer, and written on (as a test can)
    _log(final, lines[10:])
    stats = run.update([current])  # the name it was listed under
    assert stats == collect(_entries(lines))
    assert stats != _full_read([final]) and stats.statuses["201"] == 0


def test_a_file_that_shrank_or_vanished_is_read_again_from_the_start(tmp_path: Path) -> None:
    lines = _lines(random.Random(3), 30)
    first = tmp_path / "c-20261124200000000-00000-h.crawl.log"
    second = tmp_path / "c-20261124200001000-00001-h.crawl.log"
    _log(first, lines[:10])
    _log(second, lines[10:30])
    run = RunStats()
    assert run.update([first, second]).entries == 30
    # cut back (as a crash recovery cuts a torn tail) and written on
    with open(second, "r+b") as handle:
        handle.truncate(len(b"".join(lines[10:15])))
    _log(second, lines[25:27])
    assert run.update([first, second]) == _full_read([first, second])
    # a file replaced by another one of the same name, longer
    replacement = tmp_path / "new"
    replacement.write_bytes(b"".join(lines[:12]))
    os.replace(replacement, first)
    assert run.update([first, second]) == _full_read([first, second])
    # the first file gone from the list: what was read of it is no longer counted
    assert run.update([second]) == _full_read([second])
    first.unlink()
    with pytest.raises(FileNotFoundError):
        run.update([first, second])
    assert run.update([second]) == _full_read([second])


def test_a_line_that_is_not_a_crawl_log_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c-20261124200000000-00000-h.crawl.log"
    lines = _lines(random.Random(4), 3)
    _log(path, [*lines, b"not a crawl log line\n"])
    with pytest.raises(ValueError, match=r"00000-h\.crawl\.log:4: a crawl log line has 10"):
        RunStats().update([path])
    path.write_bytes(lines[0] + b"\xff\xfe 1 2\n")
    with pytest.raises(ValueError, match=r"crawl\.log:2: .*utf-8"):
        RunStats().update([path])


def test_the_files_of_each_run_are_told_apart_by_their_names(tmp_path: Path) -> None:
    names = [
        "c-20261124200000000-00000-h.crawl.log",  # run 1, rotated twice
        "c-20261124200100000-00001-h.crawl.log",
        "c-20261124200200000-00002-h.crawl.log",
        "c-20261124210000000-00000-h.crawl.log",  # run 2, alone
        "c-20261124220000000-00000-h.crawl.log",  # run 3, still writing its second
        "c-20261124220500000-00001-h.crawl.log.open",
        "c-20261124200030000-00000-other-host.crawl.log",  # another host's run
        "my-own.crawl.log",
    ]
    runs = crawl_log_runs(tmp_path / name for name in reversed(names))
    assert [[path.name for path in run] for run in runs] == [
        ["my-own.crawl.log"],
        names[0:3],
        [names[6]],
        [names[3]],
        names[4:6],
    ]


def test_the_writer_lists_every_file_of_its_rotated_log(tmp_path: Path) -> None:
    entries = _entries(_lines(random.Random(5), 10))  # ~100 bytes a line
    with CrawlLogWriter(tmp_path, max_bytes=250, flush_interval=60, hostname="h") as writer:
        for number, entry in enumerate(entries[:9]):
            writer.append(entry)
            if number % 3 == 2:
                writer.flush()
                assert writer.paths == writer.files  # rotated at the flush: none open
        writer.append(entries[9])
        writer.flush()
        assert writer.paths == (*writer.files, writer.current_path)
    assert len(writer.files) == 4 and writer.paths == writer.files
    assert crawl_log_runs(tmp_path.iterdir()) == [list(writer.files)]
    assert [e for path in writer.files for e in read_crawl_log(path)] == entries
    with pytest.raises(ValueError, match="rotation size"):
        CrawlLogWriter(tmp_path, max_bytes=0)


def _entries(lines: list[bytes]) -> list[CrawlLogEntry]:
    return [parse_line(line.decode("utf-8")) for line in lines]

"""The frontier's lease order kept by runs of rows (schema 3) and the seen set's log: the
same leases as the per-row index gave (a reference model of the lease rule, under random
batches, leases, finishes and restarts), older campaigns converted in the opening
transaction (a full disk mid-conversion leaves them whole), and seen marks that survive
the log's move into `seen_keys` and a restart."""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import corpus_crawler.state as state
from corpus_crawler.state import (
    DATABASE_NAME,
    SCHEMA_VERSION,
    Admission,
    CampaignStore,
    QueueEntry,
)


def disk_full_on_insert(
    db: sqlite3.Connection, table: str, *, after_rows: int | None = None, temp: bool = False
) -> None:
    """Make inserts into `table` fail as SQLite does on a full disk: at once, or once the
    table holds more than `after_rows` rows. The trigger is named `full` (drop it to give
    the space back); `temp` keeps it to this connection."""
    when = "" if after_rows is None else f" WHEN (SELECT count(*) FROM {table}) > {after_rows}"
    timing = "BEFORE" if after_rows is None else "AFTER"
    db.execute(
        f"CREATE {'TEMP ' if temp else ''}TRIGGER full {timing} INSERT ON {table}{when}"
        " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
    )


# -- a reference model of the lease rule --------------------------------------------------


@dataclass
class _Model:
    """What `CampaignStore.lease` must hand out: highest priority first; within it the
    sites in turn (going on after the last site served), FIFO within a site."""

    #: (order of arrival, priority, site, text) of every queued request
    queued: list[tuple[int, int, str, str]] = field(default_factory=list)
    #: text -> the same tuple, for the leased ones not finished
    leased: dict[str, tuple[int, int, str, str]] = field(default_factory=dict)
    turn: tuple[int, str] | None = None
    arrivals: int = 0

    def enqueue(self, priority: int, site: str, text: str) -> None:
        self.queued.append((self.arrivals, priority, site, text))
        self.arrivals += 1

    def lease(self, count: int) -> list[str]:
        taken: list[str] = []
        top = max((entry[1] for entry in self.queued), default=None)
        after = self.turn[1] if self.turn and self.turn[0] == top else None
        while top is not None and len(taken) < count:
            found = self._first(top, after)
            if found is None and after is not None:
                found = self._first(top, None)
            if found is None:
                top, after = max((entry[1] for entry in self.queued), default=None), None
                continue
            self.queued.remove(found)
            self.leased[found[3]] = found
            after = found[2]
            taken.append(found[3])
        if taken:
            self.turn = None if top is None or after is None else (top, after)
        return taken

    def _first(self, priority: int, after: str | None) -> tuple[int, int, str, str] | None:
        candidates = [
            entry
            for entry in self.queued
            if entry[1] == priority and (after is None or entry[2] > after)
        ]
        return min(candidates, key=lambda entry: (entry[2], entry[0]), default=None)

    def restart(self) -> None:
        # leased and never finished: queued again, in their old place
        self.queued.extend(self.leased.values())
        self.leased.clear()
        self.turn = None


_STEP = st.one_of(
    st.tuples(
        st.just("batch"),
        st.lists(
            st.tuples(st.integers(-2, 0), st.sampled_from(["a.cz", "b.cz", "c.cz", "d.cz"])),
            max_size=20,
        ),
    ),
    st.tuples(st.just("lease"), st.integers(1, 12)),
    st.tuples(st.just("finish"), st.integers(0, 5)),
    st.tuples(st.just("restart"), st.just(0)),
)


@settings(max_examples=80, deadline=None)
@given(steps=st.lists(_STEP, max_size=25), rows_per_write=st.sampled_from([1, 3, 512]))
def test_leases_follow_the_lease_rule_across_batches_finishes_and_restarts(
    steps: list[tuple[str, object]], rows_per_write: int
) -> None:
    model = _Model()
    number = 0
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        # rows written in small groups too: runs then end and start within a batch
        patch.setattr(state, "_PENDING_ROWS", rows_per_write)
        store = CampaignStore(tmp)
        rows: dict[str, int] = {}
        try:
            for kind, argument in steps:
                if kind == "batch":
                    entries: list[QueueEntry] = []
                    for priority, site in argument:  # type: ignore[attr-defined]
                        text = f"r{number}"
                        number += 1
                        entries.append((f"http://{site}/{text}", text, priority, None, None, site))
                        model.enqueue(priority, site, text)
                    assert set(store.enqueue_many(entries)) <= {Admission.QUEUED}
                elif kind == "lease":
                    leased = store.lease(int(argument))  # type: ignore[call-overload]
                    assert [text for _, text in leased] == model.lease(int(argument))  # type: ignore[call-overload]
                    rows.update((text, row) for row, text in leased)
                elif kind == "finish":
                    for text in sorted(model.leased)[: int(argument)]:  # type: ignore[call-overload]
                        del model.leased[text]
                        store.finish(rows.pop(text), f"http://x/{text}", "kept")
                else:
                    # a kill after the last commit: what was leased and not finished
                    # comes back (the test commits first, so nothing else is lost)
                    store.commit({})
                    store.abandon()
                    store = CampaignStore(tmp)
                    assert store.requeued == len(model.leased)
                    model.restart()
                    rows.clear()
                assert store.queued == len(model.queued)
            assert [text for _, text in store.lease(10_000)] == model.lease(10_000)
        finally:
            store.close()


def test_a_run_whose_head_was_leased_and_not_finished_leases_each_row_once(
    tmp_path: Path,
) -> None:
    store = CampaignStore(tmp_path)
    store.enqueue_many([(f"http://a.cz/{n}", f"a{n}", 0, None, None, "a.cz") for n in range(5)])
    first = store.lease(2)
    assert [text for _, text in first] == ["a0", "a1"]
    store.finish(first[1][0], "http://a.cz/1", "kept")  # a1 done, a0 still in flight
    store.commit({})
    store.abandon()  # killed
    again = CampaignStore(tmp_path)
    assert again.requeued == 1
    assert [text for _, text in again.lease(10)] == ["a0", "a2", "a3", "a4"]
    assert again.lease(10) == []
    again.close()


# -- older campaigns --------------------------------------------------------------------------

#: The frontier of a schema-2 campaign: a lease index entry on every queued row.
_SCHEMA_2_FRONTIER = [
    "CREATE TABLE frontier (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL,"
    " state INTEGER NOT NULL DEFAULT 0, request TEXT NOT NULL, site TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX frontier_sites ON frontier (priority DESC, site, id) WHERE state = 0",
]


def _make_schema_2_campaign(directory: Path, rows: list[tuple[int, int, str, str]]) -> None:
    """A campaign as the store wrote it before frontier runs: (priority, state, site,
    request) rows, in id order."""
    CampaignStore(directory).close("finished")
    with sqlite3.connect(directory / DATABASE_NAME) as db:
        # (frontier_runs stays, empty: the store creates it before it converts)
        db.execute("DROP TABLE frontier")
        for statement in _SCHEMA_2_FRONTIER:
            db.execute(statement)
        db.executemany(
            "INSERT INTO frontier (priority, state, site, request) VALUES (?, ?, ?, ?)", rows
        )
        db.execute("PRAGMA user_version = 2")


_OLD_ROWS = [
    (-1, 0, "b.cz", "b0"),
    (-1, 1, "a.cz", "a-in-flight"),  # leased by the run that was killed
    (-1, 0, "a.cz", "a0"),
    (0, 0, "c.cz", "seed"),
    (-1, 0, "a.cz", "a1"),
    (-1, 0, "b.cz", "b1"),
]


def test_a_schema_2_frontier_is_converted_and_leases_in_the_same_order(tmp_path: Path) -> None:
    _make_schema_2_campaign(tmp_path, _OLD_ROWS)
    store = CampaignStore(tmp_path)
    assert store.requeued == 1 and store.queued == 6
    assert store.enqueue("a-new", -1, fingerprint=b"new", site="a.cz") is Admission.QUEUED
    assert [text for _, text in store.lease(10)] == [
        "seed", "a-in-flight", "b0", "a0", "b1", "a1", "a-new",
    ]  # fmt: skip
    store.close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert "frontier_sites" not in indexes and "frontier_runs_order" in indexes


def test_a_frontier_conversion_stopped_by_a_full_disk_leaves_the_old_frontier_whole(
    tmp_path: Path,
) -> None:
    rows = [(-1, 0, f"s{n % 7}.cz", f"r{n}") for n in range(300)]
    _make_schema_2_campaign(tmp_path, rows)
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        disk_full_on_insert(db, "frontier_runs", after_rows=150)
    with pytest.raises(sqlite3.DatabaseError, match="full"):
        CampaignStore(tmp_path)
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
        assert db.execute("SELECT count(*) FROM frontier_runs").fetchone()[0] == 0
        assert db.execute("SELECT request FROM frontier ORDER BY id").fetchall() == [
            (text,) for *_, text in rows
        ]
        indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert "frontier_sites" in indexes
        db.execute("DROP TRIGGER full")
    # space is back: the next run converts it and leases every row once
    store = CampaignStore(tmp_path)
    leased = [text for _, text in store.lease(1000)]
    assert sorted(leased) == sorted(text for *_, text in rows)
    # sites in turn, FIFO within each
    assert leased[:7] == ["r0", "r1", "r2", "r3", "r4", "r5", "r6"]
    store.close("finished")


def test_the_lease_index_an_older_corpus_crawler_left_is_dropped(tmp_path: Path) -> None:
    # what a schema-2 corpus-crawler does to a schema-3 campaign before it refuses it
    CampaignStore(tmp_path).close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        db.execute(_SCHEMA_2_FRONTIER[1])
    CampaignStore(tmp_path).close("finished")
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "frontier_sites" not in indexes


# -- the seen log -----------------------------------------------------------------------------


@pytest.mark.parametrize("filter_bits", [3, 23], ids=["saturated-filter", "sized-filter"])
def test_seen_marks_survive_the_logs_move_into_seen_keys_and_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filter_bits: int
) -> None:
    monkeypatch.setattr(state, "_SEEN_LOG_KEYS", 50)
    # 8 bits: every key "may" be in seen_keys, so each is looked up; 2**23: almost none
    monkeypatch.setattr(state, "_FILTER_MIN_BITS", filter_bits)
    monkeypatch.setattr(state, "_FILTER_MAX_BITS", filter_bits)

    def entries(numbers: range) -> list[QueueEntry]:
        return [(f"http://a.cz/{n}", f"r{n}", 0, b"fp%d" % n, None, "a.cz") for n in numbers]

    store = CampaignStore(tmp_path)
    assert set(store.enqueue_many(entries(range(40)))) == {Admission.QUEUED}
    store.commit({})  # 40 in the log: not moved yet
    assert set(store.enqueue_many(entries(range(30, 80)))[:10]) == {Admission.DUPLICATE}
    store.commit({})  # 80: moved
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        assert db.execute("SELECT count(*) FROM seen_keys").fetchone()[0] == 80
        assert db.execute("SELECT count(*) FROM seen_log").fetchone()[0] == 0
    # found in seen_keys now, and in the log for the newer ones
    admissions = store.enqueue_many(entries(range(70, 100)))
    assert admissions == [Admission.DUPLICATE] * 10 + [Admission.QUEUED] * 20
    store.commit({})
    store.enqueue_many(entries(range(100, 110)))  # never committed
    store.abandon()
    again = CampaignStore(tmp_path)
    admissions = again.enqueue_many(entries(range(0, 110)))
    assert admissions == [Admission.DUPLICATE] * 100 + [Admission.QUEUED] * 10
    assert again.enqueue("x", 0, fingerprint=b"fp5") is Admission.DUPLICATE
    assert again.enqueue("x", 0, fingerprint=b"fp200") is Admission.QUEUED
    again.close()


@settings(max_examples=50, deadline=None)
@given(
    keys=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=300),
    others=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=300),
    size=st.integers(0, 10**6),
)
def test_the_seen_filter_never_calls_a_key_it_was_given_new(
    keys: list[int], others: list[int], size: int
) -> None:
    seen_filter = state.SeenFilter(size)
    seen_filter.add_all(keys)
    assert all(seen_filter.may_hold(key) for key in keys)
    assert seen_filter.maybe_held(keys) == keys
    assert seen_filter.maybe_held(others) == [key for key in others if seen_filter.may_hold(key)]
    # (and it is a filter: with a few hundred keys in 2**23 bits, others are mostly new)
    if len(set(others) - set(keys)) >= 100:
        assert sum(seen_filter.may_hold(key) for key in others) < len(others) // 2


def test_the_seen_log_is_moved_without_a_commit_once_it_holds_its_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state, "_SEEN_LOG_KEYS", 10)
    monkeypatch.setattr(state, "_SEEN_LOG_MAX_KEYS", 40)
    store = CampaignStore(tmp_path)
    for start in range(0, 100, 20):
        store.enqueue_many(
            [
                (f"http://a.cz/{n}", f"r{n}", 0, b"fp%d" % n, None, "a.cz")
                for n in range(start, start + 20)
            ]
        )
    assert len(store._seen_logged) < 40  # moved twice, at 40 and 80 keys
    assert set(
        store.enqueue_many(
            [(f"http://a.cz/{n}", f"r{n}", 0, b"fp%d" % n, None, "a.cz") for n in range(100)]
        )
    ) == {Admission.DUPLICATE}
    store.commit({})
    store.close()
    with sqlite3.connect(tmp_path / DATABASE_NAME) as db:
        moved = db.execute("SELECT count(*) FROM seen_keys").fetchone()[0]
        logged = db.execute("SELECT count(*) FROM seen_log").fetchone()[0]
    assert moved + logged == 100 and moved >= 80

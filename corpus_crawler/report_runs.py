"""Every run of a campaign, one line each and in total: what `corpus-crawler report` shows.

A campaign folder is crawled many times: a first crawl, resumes after a stop, recrawl
passes weeks later. Each run that ended with a summary left a ``*-summary.json``; the
campaign store (``campaign.sqlite``, table ``runs``) knows every run, also those that
were killed before they could write one. `campaign_runs` joins the two (the store is
opened read-only: a report may be drawn while a crawl runs), `CampaignReport` adds
them up, and `render_text` / `CampaignReport.to_json` show them.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .crawllog import CrawlLogEntry, read_crawl_log

__all__ = [
    "CampaignReport",
    "RunReport",
    "campaign_report",
    "campaign_runs",
    "crawl_logs",
    "duration_text",
    "next_recrawl",
    "output_changes",
    "render_text",
]

#: The campaign database's file name (`corpus_crawler.state.DATABASE_NAME`; not
#: imported, so that reading a report never loads the crawl's state module).
DATABASE_NAME = "campaign.sqlite"

#: Before any crawl log line: the span of a run whose start is not recorded.
_BEGINNING = datetime.min.replace(tzinfo=timezone.utc)

#: A summary's start is the crawl's own clock, truncated to the second; the store's
#: run starts a moment before it (the campaign opens first). Seconds of slack.
_MATCH_SLACK = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class RunReport:
    """One run of a campaign."""

    number: int
    #: "first crawl", "resume", "recrawl" or "continued" (a run after a finished one).
    kind: str
    started: datetime | None
    finished: datetime | None
    #: Scrapy's finish reason; "" when the run left no end (killed, or still running).
    reason: str
    has_summary: bool
    pages_fetched: int = 0
    documents: int = 0
    words: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    duration_seconds: float = 0.0
    summary_file: str = ""
    #: Where the figures come from: "summary", "campaign store" (a run killed before
    #: it could write its summary: what its commits put in the files), "crawl log" (the
    #: same without a store that records them) or "" (none: no figures).
    counted_from: str = ""

    @property
    def counted(self) -> bool:
        return bool(self.counted_from)

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.number,
            "kind": self.kind,
            "started": self.started.isoformat(timespec="seconds") if self.started else None,
            "finished": self.finished.isoformat(timespec="seconds") if self.finished else None,
            "finish_reason": self.reason or None,
            "summary": self.summary_file or None,
            "counted_from": self.counted_from or None,
            "pages_fetched": self.pages_fetched,
            "documents": self.documents,
            "words": self.words,
            "dropped": dict(self.dropped),
            "duration_seconds": round(self.duration_seconds, 3),
        }


@dataclass(frozen=True, slots=True)
class CampaignReport:
    """The runs of one campaign folder, oldest first, and their totals."""

    folder: str
    profile: str
    runs: tuple[RunReport, ...]

    @property
    def latest(self) -> RunReport | None:
        return self.runs[-1] if self.runs else None

    @property
    def totals(self) -> dict[str, Any]:
        dropped: Counter[str] = Counter()
        for run in self.runs:
            dropped.update(run.dropped)
        return {
            "runs": len(self.runs),
            "runs_without_summary": sum(not run.has_summary for run in self.runs),
            "pages_fetched": sum(run.pages_fetched for run in self.runs),
            "documents": sum(run.documents for run in self.runs),
            "words": sum(run.words for run in self.runs),
            "dropped": {reason: count for reason, count in dropped.most_common() if count},
            "duration_seconds": round(sum(run.duration_seconds for run in self.runs), 3),
        }

    def to_json(self) -> dict[str, Any]:
        latest = self.latest
        return {
            "folder": self.folder,
            "profile": self.profile or None,
            "latest_run": latest.to_json() if latest else None,
            "total": self.totals,
            "runs": [run.to_json() for run in self.runs],
        }


def _parse_time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _store_runs(directory: Path) -> list[tuple[int, datetime | None, datetime | None, str]]:
    """(id, started, finished, reason) of every run the campaign store knows; [] without one."""
    path = directory / DATABASE_NAME
    if not path.is_file():
        return []
    try:
        # read-only: a report must never change a campaign, nor wait for a running crawl
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            rows = db.execute(
                "SELECT id, started, finished, reason FROM runs ORDER BY id"
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return []  # not ours, or unreadable: the summaries still tell most of it
    return [(int(i), _parse_time(s), _parse_time(f), str(r or "")) for i, s, f, r in rows]


@dataclass(frozen=True, slots=True)
class _Committed:
    """What the store's commits recorded of one run: the outcome of each finished
    request (`corpus_crawler.state.CampaignStore.finish`), committed with its output."""

    outcomes: Counter[str]
    #: URLs whose request failed ("failed:..."): an HTTP error has an archived
    #: response, a network error none; the crawl log tells which.
    failed_urls: tuple[str, ...]
    kept_urls: frozenset[str]


def _store_commits(directory: Path) -> dict[int, _Committed] | None:
    """Per run, what its commits put in the files; None without a store that records it.

    A killed run's crawl log holds lines of pages whose output the next run cut back
    and fetched again (the log is written once a second, the commit every half second
    or as set): counted from the log, such a page counts in both runs. The store's
    ``fetches`` rows are written in the same transaction as the files' committed
    lengths, so they are exactly the pages left in the files."""
    path = directory / DATABASE_NAME
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            rows = db.execute("SELECT run, url, outcome FROM fetches ORDER BY id").fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    outcomes: dict[int, Counter[str]] = {}
    failed: dict[int, list[str]] = {}
    kept: dict[int, set[str]] = {}
    for run, url, outcome in rows:
        run, outcome = int(run), str(outcome)
        outcomes.setdefault(run, Counter())[outcome] += 1
        if outcome.startswith("failed:"):
            failed.setdefault(run, []).append(str(url))
        elif outcome == "kept":
            kept.setdefault(run, set()).add(str(url))
    return {
        run: _Committed(counts, tuple(failed.get(run, ())), frozenset(kept.get(run, ())))
        for run, counts in outcomes.items()
    }


def _from_commits(run: RunReport, committed: _Committed | None, tally: _Tally) -> RunReport:
    """`run`'s figures from what its commits left in the files (`_store_commits`); the
    crawl log (`tally`: the lines of its time span) adds what the store does not keep:
    words, and whether a failed request had a response (an HTTP error status) or none
    (a network error)."""
    if committed is None:  # killed before its first commit: the next run cut it all back
        return dataclasses.replace(run, counted_from="campaign store")
    failed_without_response = sum(1 for url in committed.failed_urls if url not in tally.answered)
    outcomes = committed.outcomes
    dropped: Counter[str] = Counter(
        {o.partition(":")[2]: n for o, n in outcomes.items() if o.startswith("dropped:")}
    )
    return dataclasses.replace(
        run,
        pages_fetched=sum(outcomes.values()) - failed_without_response,
        documents=outcomes.get("kept", 0),
        words=sum(tally.kept_words.get(url, 0) for url in committed.kept_urls),
        dropped=dict(dropped.most_common()),
        counted_from="campaign store",
    )


def next_recrawl(directory: Path) -> tuple[int, datetime | None]:
    """How many URLs the campaign tracks for recrawls, and when the first is due next
    (None: none is waiting); (0, None) without a campaign store."""
    path = directory / DATABASE_NAME
    if not path.is_file():
        return 0, None
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            tracked, due = db.execute(
                "SELECT count(*), min(CASE WHEN queued = 0 THEN next_due END) FROM urls"
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 0, None
    moment = datetime.fromtimestamp(due, timezone.utc) if due is not None else None
    return int(tracked or 0), moment


#: Corpus outputs a profile can switch between runs: summary `files` key -> profile key.
_DOCUMENT_OUTPUTS = {
    "prevertical": "output.prevertical.enabled",
    "vertical": "output.vertical.enabled",
    "warc_text": "output.warc.conversion_records",
    "jsonl": "output.documents.jsonl",
    "parquet": "output.documents.parquet",
}


def output_changes(directory: Path) -> list[str]:
    """What a corpus output switched on or off in the latest run leaves out: the
    documents of the runs that did not write it (a silent gap in the corpus)."""
    summaries = [data for _, data in _read_summaries(directory)]
    if len(summaries) < 2:
        return []
    *earlier, latest = summaries

    def kept(data: dict[str, Any]) -> int:
        return _int(_section(data, "pages").get("kept"))

    def wrote(data: dict[str, Any], kind: str) -> bool:
        return bool(_section(data, "files").get(kind))

    notes = []
    for kind, key in _DOCUMENT_OUTPUTS.items():
        if not kept(latest):
            continue
        missed = sum(kept(data) for data in earlier if not wrote(data, kind))
        if wrote(latest, kind) and missed:
            notes.append(
                f"{key} is on in this run but was off before: the {kind} files hold"
                f" none of the {missed:,} documents of the earlier runs (make them with"
                f" `corpus-crawler process` over the campaign's WARC files)"
            )
        elif not wrote(latest, kind) and any(wrote(data, kind) for data in earlier):
            notes.append(
                f"{key} is off in this run but was on before: the {kind} files miss"
                f" this run's {kept(latest):,} documents"
            )
    return notes


def _read_summaries(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for path in directory.glob("*-summary.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a summary cut short by a full disk: the store still has the run
        # a crawl's summary, not another tool's file of the same ending (`process`)
        if isinstance(data, dict) and "finish_reason" in data and "pages" in data:
            found.append((path, data))
    found.sort(key=lambda item: (_parse_time(item[1].get("started")) or datetime.min.replace(
        tzinfo=timezone.utc), item[0].name))  # fmt: skip
    return found


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _from_summary(
    number: int,
    kind: str,
    path: Path,
    data: dict[str, Any],
    started: datetime | None,
    finished: datetime | None,
    reason: str,
) -> RunReport:
    pages, text, dropped = (_section(data, key) for key in ("pages", "text", "dropped"))
    elapsed = data.get("elapsed_seconds")
    return RunReport(
        number=number,
        kind=kind,
        started=started or _parse_time(data.get("started")),
        finished=finished or _parse_time(data.get("finished")),
        reason=reason or str(data.get("finish_reason") or ""),
        has_summary=True,
        counted_from="summary",
        pages_fetched=_int(pages.get("responses")),
        documents=_int(pages.get("kept")),
        words=_int(text.get("words")),
        dropped={str(k): v for k, v in dropped.items() if _int(v)},
        duration_seconds=float(elapsed) if isinstance(elapsed, (int, float)) else 0.0,
        summary_file=path.name,
    )


def _kind(number: int, summary: dict[str, Any] | None, previous_reason: str | None) -> str:
    recrawl = (summary or {}).get("recrawl")
    if isinstance(recrawl, dict) and recrawl.get("pass"):
        return "recrawl"
    if number == 1:
        return "first crawl"
    return "continued" if previous_reason == "finished" else "resume"


def _owner(
    store_runs: Sequence[tuple[int, datetime | None, datetime | None, str]],
    summary: dict[str, Any],
) -> int | None:
    """The index of the run that wrote `summary`: the one whose start and end are
    nearest the summary's (both to the second), among runs begun before it."""
    started = _parse_time(summary.get("started"))
    if started is None:
        return None
    finished = _parse_time(summary.get("finished"))
    best: tuple[float, int] | None = None
    for index, (_, run_started, run_finished, _) in enumerate(store_runs):
        if run_started is None or run_started > started + _MATCH_SLACK:
            continue
        distance = abs((run_started - started).total_seconds())
        if finished is not None and run_finished is not None:
            distance += abs((run_finished - finished).total_seconds())
        elif finished is not None:
            distance += 1.0  # a run with no recorded end fits a finished summary less well
        if best is None or distance < best[0]:
            best = (distance, index)
    return best[1] if best else None


def crawl_logs(directory: Path) -> list[Path]:
    """The crawl logs of every run, oldest first: finished ones and the `.open` one of a
    run still going or killed (its next run finishes it)."""
    found = list(directory.glob("*.crawl.log")) + list(directory.glob("*.crawl.log.open"))
    return sorted(found, key=lambda path: path.name)


@dataclass(slots=True)
class _Tally:
    """What a run's crawl log lines (those of its time span) add up to, counted in one
    pass over the logs (`_tally_logs`): never the lines themselves, which are GBs in
    a long campaign."""

    start: datetime
    until: datetime | None
    #: URLs whose words or response the store's commits ask about (`_Committed`).
    failed_urls: frozenset[str] = frozenset()
    kept_urls: frozenset[str] = frozenset()
    lines: int = 0
    pages_fetched: int = 0
    documents: int = 0
    words: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    last: datetime | None = None
    #: Of `failed_urls`, those with a response (an HTTP status) in the span.
    answered: set[str] = field(default_factory=set)
    #: Of `kept_urls`, the words of their last kept line in the span.
    kept_words: dict[str, int] = field(default_factory=dict)

    def covers(self, moment: datetime) -> bool:
        return moment >= self.start and (self.until is None or moment < self.until)

    def add(self, entry: CrawlLogEntry) -> None:
        self.lines += 1
        self.last = entry.time if self.last is None else max(self.last, entry.time)
        if entry.status:
            self.pages_fetched += 1
            if entry.url in self.failed_urls:
                self.answered.add(entry.url)
        if entry.kept:
            words = int(entry.annotations.get("words", 0) or 0)
            self.documents += 1
            self.words += words
            if entry.url in self.kept_urls:
                self.kept_words[entry.url] = words
        if entry.outcome.startswith("dropped:"):
            self.dropped[entry.outcome.partition(":")[2]] += 1

    def merge(self, other: _Tally) -> None:
        """Add `other`, a tally of the same span over lines that come after this one's."""
        self.lines += other.lines
        if other.last is not None:
            self.last = other.last if self.last is None else max(self.last, other.last)
        self.pages_fetched += other.pages_fetched
        self.documents += other.documents
        self.words += other.words
        self.dropped.update(other.dropped)
        self.answered |= other.answered
        self.kept_words.update(other.kept_words)


def _tally_logs(paths: Sequence[Path], tallies: Sequence[_Tally]) -> None:
    """Add each line of the crawl logs `paths` to the tallies whose span covers it.

    A log that cannot be read whole (renamed by a run meanwhile, or not ours) adds
    nothing: each log is counted into tallies of its own first, added once read."""
    for path in paths:
        own = [_Tally(t.start, t.until, t.failed_urls, t.kept_urls) for t in tallies]
        try:
            for entry in read_crawl_log(path):
                for tally in own:
                    if tally.covers(entry.time):
                        tally.add(entry)
        except (OSError, ValueError):
            continue  # the summaries and the store still count
        for tally, counted in zip(tallies, own, strict=True):
            tally.merge(counted)


def _from_crawl_log(run: RunReport, tally: _Tally) -> RunReport:
    """`run`'s figures counted from the crawl log lines of its time span."""
    if run.started is None or not tally.lines or tally.last is None:
        return run
    return dataclasses.replace(
        run,
        pages_fetched=tally.pages_fetched,
        documents=tally.documents,
        words=tally.words,
        dropped=dict(tally.dropped.most_common()),
        duration_seconds=tally.last.timestamp() - tally.start.timestamp(),
        counted_from="crawl log",
    )


def campaign_runs(directory: Path) -> list[RunReport]:
    """Every run of the campaign in `directory`, oldest first.

    Runs come from the campaign store; each is given the summary that its crawl
    wrote (`_owner`). Without a store
    (a folder of summaries only, or a Redis campaign's worker folder) every summary
    is a run.
    """
    summaries = _read_summaries(directory)
    store_runs = _store_runs(directory)
    runs: list[RunReport] = []
    if not store_runs:
        previous: str | None = None
        for number, (path, data) in enumerate(summaries, 1):
            kind = _kind(number, data, previous)
            runs.append(_from_summary(number, kind, path, data, None, None, ""))
            previous = runs[-1].reason
        return runs
    matched: dict[int, tuple[Path, dict[str, Any]]] = {}
    for path, data in summaries:
        owner = _owner(store_runs, data)
        if owner is not None:
            matched[owner] = (path, data)
    previous = None
    for index, (number, started, finished, reason) in enumerate(store_runs):
        found = matched.get(index)
        kind = _kind(number, found[1] if found else None, previous)
        if found is not None:
            runs.append(_from_summary(number, kind, *found, started, finished, reason))
        else:
            duration = (finished - started).total_seconds() if started and finished else 0.0
            runs.append(
                RunReport(number, kind, started, finished, reason, False, duration_seconds=duration)
            )
        previous = reason
    if any(not run.has_summary for run in runs):
        _count_from_logs(directory, runs)
    return runs


def _count_from_logs(directory: Path, runs: list[RunReport]) -> None:
    """Give each run without a summary its figures: from its commits in the campaign
    store and its crawl log lines, or from those lines alone without a store."""
    commits = _store_commits(directory)
    tallies: dict[int, _Tally] = {}
    for index, run in enumerate(runs):
        if run.has_summary:
            continue
        until = run.finished or (runs[index + 1].started if index + 1 < len(runs) else None)
        committed = commits.get(run.number) if commits is not None else None
        tallies[index] = _Tally(
            run.started or _BEGINNING,  # no start recorded: the store's commits tell
            until,
            frozenset(committed.failed_urls) if committed else frozenset(),
            committed.kept_urls if committed else frozenset(),
        )
    _tally_logs(crawl_logs(directory), list(tallies.values()))
    for index, run in enumerate(runs):
        if run.has_summary:
            continue
        tally = tallies[index]
        if commits is None:
            runs[index] = _from_crawl_log(run, tally)
        else:
            counted = _from_commits(run, commits.get(run.number), tally)
            duration = _from_crawl_log(run, tally).duration_seconds
            runs[index] = dataclasses.replace(
                counted, duration_seconds=duration or run.duration_seconds
            )


def campaign_report(directory: Path) -> CampaignReport:
    runs = campaign_runs(directory)
    profile = ""
    for _path, data in reversed(_read_summaries(directory)):
        profile = str(data.get("profile") or "")
        if profile:
            break
    return CampaignReport(folder=str(directory), profile=profile, runs=tuple(runs))


def duration_text(seconds: float) -> str:
    """A duration as a person reads it: seconds, minutes or hours."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.1f} s"


def _drops(dropped: dict[str, int]) -> str:
    return ", ".join(f"{reason} {count:,}" for reason, count in dropped.items()) or "none"


def _row(label: str, run: RunReport) -> Sequence[str]:
    started = run.started.strftime("%Y-%m-%d %H:%M") if run.started else "?"
    end = run.reason or ("no end recorded (killed, or still running)")
    if not run.has_summary:
        end += "; no summary" + (f"; counted from the {run.counted_from}" if run.counted else "")
    return (
        label,
        run.kind,
        started,
        f"{run.pages_fetched:,}" if run.counted else "-",
        f"{run.documents:,}" if run.counted else "-",
        f"{run.words:,}" if run.counted else "-",
        duration_text(run.duration_seconds),
        end,
    )


def render_text(report: CampaignReport) -> str:
    """The campaign's runs as a plain-text table, the latest marked, then the totals."""
    lines = [
        f"Campaign {report.profile + ' ' if report.profile else ''}in {report.folder}:"
        f" {len(report.runs)} run" + ("s" if len(report.runs) != 1 else "")
    ]
    if not report.runs:
        return lines[0] + "\n"
    headers = ("run", "kind", "started (UTC)", "pages", "documents", "words", "duration", "end")
    rows = [
        _row(f"{run.number}{' (latest)' if run is report.latest else ''}", run)
        for run in report.runs
    ]
    totals = report.totals
    rows.append(
        (
            "total",
            "",
            "",
            f"{totals['pages_fetched']:,}",
            f"{totals['documents']:,}",
            f"{totals['words']:,}",
            duration_text(totals["duration_seconds"]),
            "",
        )
    )
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    numeric = {3, 4, 5, 6}

    def line(row: Sequence[str]) -> str:
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    lines.append(line(headers))
    lines.extend(line(row) for row in rows)
    for run in report.runs:
        if run.counted:
            lines.append(f"dropped in run {run.number}: {_drops(run.dropped)}")
    lines.append(f"dropped in total: {_drops(totals['dropped'])}")
    uncounted = sum(not run.counted for run in report.runs)
    if uncounted:
        lines.append(
            f"{uncounted} run(s) left neither a summary nor a crawl log (still running, or"
            " killed with the crawl log off): what they fetched is in the WARC files but"
            " not in these figures"
        )
    return "\n".join(lines) + "\n"

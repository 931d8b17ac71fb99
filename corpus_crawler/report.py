"""An HTML crawl report that a crawl engineer or a linguist reads at a glance.

`write_report(crawl_logs, summary, target)` reads the crawl log
(`corpus_crawler.crawllog`) and, when there is one, the crawl's JSON summary,
and writes one self-contained HTML file: headline numbers, pages and documents
over time, outcomes and drop reasons, HTTP statuses, languages, page sizes,
and the top hosts with their yield, as tables and plots.

The plots are drawn with matplotlib (the reference plotting library of the
scientific Python stack, maintained for two decades, no browser or network
needed) into PNG images embedded as ``data:`` URLs, so the file opens
anywhere, offline, and can be mailed or archived with the corpus. Figures are
built with the object API (no pyplot state), so a report can be rendered on a
worker thread during a crawl.

Also `corpus-crawler report OUTDIR` (`corpus_crawler._cli_report`).
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .crawllog import crawl_log_runs
from .report_runs import duration_text
from .report_stats import CrawlStats, RunStats, collect, size_bin

if TYPE_CHECKING:
    from .report_runs import CampaignReport

__all__ = [
    "CrawlStats",
    "RunStats",
    "campaign_crawl_logs",
    "collect",
    "find_crawl_files",
    "render_html",
    "size_bin",
    "write_report",
]

#: Hosts shown in the top-hosts plot and table.
TOP_HOSTS = 20


# --- plots ------------------------------------------------------------------------------------


def _figure(width: float = 7.0, height: float = 3.2) -> Any:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return figure


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _bar(items: Sequence[tuple[str, int]], title: str, xlabel: str, color: str) -> str:
    figure = _figure(7.0, max(2.0, 0.32 * len(items) + 1.0))
    axes = figure.add_subplot()
    labels = [label for label, _ in items][::-1]
    values = [value for _, value in items][::-1]
    axes.barh(labels, values, color=color)
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    for index, value in enumerate(values):
        axes.annotate(
            f"{value:,}", (value, index), xytext=(3, 0), textcoords="offset points", va="center"
        )
    axes.margins(x=0.15)
    return _png(figure)


def _years(stats: CrawlStats, years: list[str]) -> str:
    """Kept documents per year they declare, every year from the first to the last."""
    first, last = int(years[0]), int(years[-1])
    labels = [str(year) for year in range(first, last + 1)]
    figure = _figure(7.0, 3.2)
    axes = figure.add_subplot()
    axes.bar(labels, [stats.published_years[label] for label in labels], color="C5")
    undated = stats.published_years["undated"]
    dated = sum(stats.published_years[label] for label in labels)
    axes.set_title(
        f"Kept documents by publication year ({dated:,} dated, {undated:,} declare none)"
    )
    axes.set_ylabel("documents")
    from matplotlib.ticker import MaxNLocator

    axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 0.2 documents
    axes.tick_params(axis="x", labelrotation=90 if len(labels) > 12 else 0)
    axes.grid(alpha=0.3, axis="y")
    return _png(figure)


#: Timelines of at most this many points (seconds with log lines) are drawn with a
#: marker on each: a crawl of one second is one point, which a line alone leaves blank.
TIMELINE_MARKED_POINTS = 60


def _timeline(stats: CrawlStats) -> str:
    figure = _figure()
    _draw_timeline(figure.add_subplot(), stats)
    return _png(figure)


def _draw_timeline(axes: Any, stats: CrawlStats) -> None:
    span = stats.timeline[-1][0] if stats.timeline else 0.0
    scale, unit = (60.0, "minutes") if span >= 120 else (1.0, "seconds")
    times = [t / scale for t, _, _ in stats.timeline]
    marker = "o" if len(times) <= TIMELINE_MARKED_POINTS else None
    fetched = [f for _, f, _ in stats.timeline]
    kept = [k for _, _, k in stats.timeline]
    axes.plot(times, fetched, label="pages fetched", color="C0", marker=marker)
    axes.plot(times, kept, label="documents kept", color="C2", marker=marker)
    axes.set_xlabel(f"{unit} since the first log line")
    axes.set_ylabel("count")
    axes.set_ylim(bottom=0)  # counts read from zero, not from the lowest one
    if span == 0:
        # a crawl within one second: one point, on an axis of a second, not of 0.08 s
        axes.set_xlim(-0.5, 1.0)
    axes.set_title("Pages and documents over time")
    axes.legend(loc="upper left")
    axes.grid(alpha=0.3)


def byte_size_label(size: float) -> str:
    """A tick of the sizes plot: 1 B, 10 B, ..., 1 kB, 10 kB, 100 kB, 1 MB (decimal units,
    as the sizes are counted by powers of ten)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size:.3g} B"


def _sizes(stats: CrawlStats) -> str:
    figure = _figure()
    axes = figure.add_subplot()
    top = max(stats.size_bins, default=4)
    edges = [10 ** (i / 4) for i in range(0, max(top, 4) + 2)]
    bins = range(len(edges) - 1)
    axes.stairs(
        [stats.size_bins[i] for i in bins],
        edges,
        fill=True,
        color="C0",
        alpha=0.7,
        label="all responses",
    )
    if stats.kept_size_bins:
        axes.stairs(
            [stats.kept_size_bins[i] for i in bins],
            edges,
            fill=True,
            color="C2",
            alpha=0.8,
            label="kept documents",
        )
    axes.set_xscale("log")
    from matplotlib.ticker import FuncFormatter, NullFormatter

    # "10 kB", not mathtext's $10^{4}$: read at a glance, and no TeX parser to load
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: byte_size_label(value)))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlabel("body size (log scale)")
    axes.set_ylabel("responses")
    axes.set_title("Response sizes")
    axes.legend()
    return _png(figure)


# --- HTML -------------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } .sub { color: #666; margin-top: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; min-width: 9em; }
.card b { display: block; font-size: 1.5em; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 1em; }
figure { margin: 0; } img.plot { width: 100%; height: auto; border: 1px solid #eee; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.92em; }
th, td { border-bottom: 1px solid #eee; padding: 0.25em 0.7em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
code { background: #f5f5f5; padding: 0 0.2em; }
"""

# Marks the page once every plot image has decoded, so a browser check (and a reader)
# can tell a broken report from a good one.
_SCRIPT = """
window.addEventListener("load", function () {
  var plots = document.querySelectorAll("img.plot"), ok = 0;
  plots.forEach(function (img) { if (img.complete && img.naturalWidth > 0) { ok += 1; } });
  document.body.setAttribute("data-plots-ok", ok + "/" + plots.length);
  if (ok !== plots.length) { console.error("report: " + (plots.length - ok) + " plots failed"); }
});
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _percent(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def render_html(
    stats: CrawlStats,
    summary: dict[str, Any] | None = None,
    *,
    title: str = "Crawl report",
    generated: datetime | None = None,
    final: bool = True,
    campaign: CampaignReport | None = None,
) -> str:
    """The report as one self-contained HTML page.

    With `campaign` (the logs of every run), the headline counts every run, the
    duration is the runs' own (not the weeks between them), and a table shows each
    run with the latest marked.
    """
    summary = summary or {}
    generated = generated or datetime.now(timezone.utc)
    fetched = sum(stats.host_pages.values())
    kept = sum(stats.host_kept.values())
    elapsed = (stats.last - stats.first).total_seconds() if stats.first and stats.last else 0.0
    if campaign is not None and campaign.runs:
        elapsed = campaign.totals["duration_seconds"] or elapsed
    state = "finished" if final else "in progress (refreshed during the crawl)"
    profile = summary.get("profile")
    reason = summary.get("finish_reason") if final else None
    cards = [
        ("URLs logged", f"{stats.entries:,}"),
        ("pages fetched", f"{fetched:,}"),
        ("documents kept", f"{kept:,}"),
        ("yield (clean / raw)", _percent(stats.bytes_clean, stats.bytes_raw)),
        ("words kept", f"{stats.words:,}"),
        ("hosts", f"{len(stats.host_pages):,}"),
        ("duration", duration_text(elapsed)),
    ]
    # requests deferred to a later run: network errors, unreachable robots.txt (.retries)
    pending = int((summary.get("campaign") or {}).get("retries_pending") or 0)
    if pending:
        due = str((summary.get("campaign") or {}).get("next_retry") or "")
        first = f" (first {due[:16].replace('T', ' ')} UTC)" if due else ""
        cards.append((f"URLs waiting for a retry{first}", f"{pending:,}"))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="sub">Crawl {_e(state)}; report generated'
        f" {_e(generated.isoformat(timespec='seconds'))}"
        + (f"; profile <code>{_e(profile)}</code>" if profile else "")
        + (f"; finish reason <code>{_e(reason)}</code>" if reason else "")
        + "</p>",
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{_e(v)}</b>{_e(k)}</div>' for k, v in cards)
        + "</div>",
    ]
    if campaign is not None and campaign.runs:
        parts.append(_runs_section(campaign))
    plots: list[tuple[str, str]] = []
    if stats.timeline:
        plots.append(("Pages and documents over time", _timeline(stats)))
    outcome_groups: Counter[str] = Counter()
    for outcome, count in stats.outcomes.items():
        outcome_groups[outcome] += count
    if outcome_groups:
        plots.append(
            ("Outcomes", _bar(outcome_groups.most_common(15), "Outcome per URL", "URLs", "C1"))
        )
    if stats.host_pages:
        top = stats.host_pages.most_common(TOP_HOSTS)
        plots.append(("Top hosts", _bar(top, "Pages fetched per host", "pages", "C0")))
    if stats.languages:
        plots.append(
            (
                "Languages",
                _bar(
                    stats.languages.most_common(15), "Kept documents by language", "documents", "C2"
                ),
            )
        )
    years = sorted(year for year in stats.published_years if year != "undated")
    if years:
        plots.append(("Publication years", _years(stats, years)))
    if stats.size_bins:
        plots.append(("Sizes", _sizes(stats)))
    if stats.statuses:
        plots.append(
            ("HTTP status", _bar(stats.statuses.most_common(12), "HTTP status", "responses", "C4"))
        )
    parts.append('<div class="grid">')
    for caption, data in plots:
        parts.append(
            f'<figure><img class="plot" alt="{_e(caption)}" src="{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>"
        )
    parts.append("</div>")

    parts.append("<h2>Yield per host</h2>")
    host_rows = [
        (
            host,
            pages,
            stats.host_kept[host],
            _percent(stats.host_kept[host], pages),
            f"{stats.host_raw[host]:,}",
            f"{stats.host_clean[host]:,}",
            _percent(stats.host_clean[host], stats.host_raw[host]),
        )
        for host, pages in stats.host_pages.most_common(TOP_HOSTS)
    ]
    parts.append(
        _table(
            ("host", "pages", "kept", "kept %", "raw bytes (kept)", "clean bytes", "yield"),
            host_rows,
        )
    )
    parts.append("<h2>Outcomes and drop reasons</h2>")
    parts.append(
        _table(
            ("outcome", "URLs", "share"),
            [(o, c, _percent(c, stats.entries)) for o, c in stats.outcomes.most_common()],
        )
    )
    if campaign is not None and campaign.runs:
        parts.append("<h3>Documents dropped (every run, from their summaries)</h3>")
        parts.append(_table(("reason", "pages"), list(campaign.totals["dropped"].items())))
    elif summary.get("dropped"):
        parts.append("<h3>Documents dropped (from the summary)</h3>")
        parts.append(
            _table(("reason", "pages"), [(k, v) for k, v in summary["dropped"].items() if v])
        )
    parts.append("<h2>Languages</h2>")
    parts.append(
        _table(
            ("language", "documents", "share"),
            [(lang, c, _percent(c, kept)) for lang, c in stats.languages.most_common()],
        )
    )
    if years:
        parts.append("<h2>Publication years</h2>")
        parts.append(
            _table(
                ("year the page declares", "documents", "share"),
                [
                    (year, c, _percent(c, kept))
                    for year, c in sorted(stats.published_years.items(), reverse=True)
                ],
            )
        )
    parts.append("<h2>Discovery</h2>")
    labels = {"seed": "seed", "L": "link", "R": "redirect", "S": "sitemap", "P": "prerequisite"}
    parts.append(
        _table(
            ("last hop", "URLs"),
            [(labels.get(k, k), c) for k, c in stats.discovery.most_common()],
        )
    )
    files = summary.get("files") or {}
    if any(files.values()):
        parts.append("<h2>Files</h2>")
        parts.append(
            _table(
                ("kind", "file"), [(kind, name) for kind, names in files.items() for name in names]
            )
        )
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"


def _runs_section(campaign: CampaignReport) -> str:
    latest = campaign.latest
    rows = []
    for run in campaign.runs:
        counted = run.counted
        rows.append(
            (
                f"{run.number} (latest)" if run is latest else run.number,
                run.kind,
                run.started.strftime("%Y-%m-%d %H:%M") if run.started else "?",
                f"{run.pages_fetched:,}" if counted else "-",
                f"{run.documents:,}" if counted else "-",
                f"{run.words:,}" if counted else "-",
                f"{sum(run.dropped.values()):,}" if counted else "-",
                duration_text(run.duration_seconds),
                (run.reason or "no end recorded")
                + ("" if run.has_summary else "; no summary")
                + ("; counted from the crawl log" if run.counted_from == "crawl log" else ""),
            )
        )
    totals = campaign.totals
    rows.append(
        (
            "total",
            f"{totals['runs']} runs",
            "",
            f"{totals['pages_fetched']:,}",
            f"{totals['documents']:,}",
            f"{totals['words']:,}",
            f"{sum(totals['dropped'].values()):,}",
            duration_text(totals["duration_seconds"]),
            "",
        )
    )
    headers = ("run", "kind", "started (UTC)", "pages", "documents", "words", "dropped",
               "duration", "end")  # fmt: skip
    return "<h2>Runs of the campaign</h2>" + _table(headers, rows)


def write_report(
    crawl_logs: Sequence[Path],
    target: Path,
    *,
    summary: dict[str, Any] | None = None,
    title: str = "Crawl report",
    final: bool = True,
    campaign: CampaignReport | None = None,
    generated: datetime | None = None,
    run: RunStats | None = None,
) -> Path:
    """Read the crawl logs, write the report to `target` (atomically); returns `target`.

    `generated` (default: now) is the time the report says it was made. `run`: the
    figures read from these logs so far (`RunStats`), read on from where they stopped
    (default: all read now)."""
    stats = (run or RunStats()).update(crawl_logs)
    text = render_html(
        stats, summary, title=title, final=final, campaign=campaign, generated=generated
    )
    temporary = target.with_name(target.name + ".open")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, target)
    return target


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_STAMP = re.compile(r"-(\d{14})(?:\d{3})?-")


def _stamp(path: Path) -> datetime | None:
    match = _STAMP.search(path.name.replace("-summary.json", "-"))
    if match is None:
        return None
    return datetime.strptime(match.group(1), "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)


def find_crawl_files(directory: Path) -> tuple[list[Path], Path | None]:
    """The crawl-log files of the latest crawl in `directory` and its summary, if any.

    Both are named after the moment the crawl started: the summary is the latest
    one and the run (`crawl_log_runs`: a log rotated at its size limit is several
    files, the ``.open`` one of a crawl still going included) the one whose first
    file's start is nearest to it.
    """
    summaries = sorted(
        directory.glob("*-summary.json"), key=lambda p: (_stamp(p) or _EPOCH, p.name)
    )
    runs = crawl_log_runs([*directory.glob("*.crawl.log"), *directory.glob("*.crawl.log.open")])
    summary = summaries[-1] if summaries else None
    if not runs:
        return [], summary
    started = _stamp(summary) if summary is not None else None
    if started is None:
        return runs[-1], summary
    dated = [
        (abs((stamp - started).total_seconds()), files[0].name, index)
        for index, files in enumerate(runs)
        if (stamp := _stamp(files[0])) is not None
    ]
    return (runs[min(dated)[2]] if dated else runs[-1]), summary


def campaign_crawl_logs(directory: Path) -> list[Path]:
    """Every crawl log in `directory` (all runs of its campaign, and the `.open` one of a
    run still going or killed), oldest first."""
    from .report_runs import crawl_logs

    return crawl_logs(directory)


def load_summary(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data

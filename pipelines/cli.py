"""`corpus-crawler crawl` and `corpus-crawler demo`.

Scrapy is imported inside the handlers only, so `corpus-crawler --help` and the
library commands never load it. A crawl runs a Twisted reactor, which cannot
be restarted: one crawl per process.

The output folder is a campaign (`pipelines.campaign`): running the same command
again after any stop continues it. Exit codes (`ExitCode`): 0 the crawl ran to
its end; 1 it ran but wrote no summary or had write errors; 2 it could not start
(bad profile, bad setting value, no seeds, unreadable seed file, unwritable
output folder), with one line saying why; 3 it stopped because the output could
not be written (a full disk): free space and run the same command to resume;
4 another crawl is using the output folder; 5 it was interrupted (Ctrl-C,
SIGTERM): run the same command to resume; 6 no request got any response and some
failed with network errors, or waited for a robots.txt that got none (the network
is down): they wait for a deferred retry.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import importlib.util
import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from corpus_crawler.config import ConfigError
from corpus_crawler.profile import (
    Profile,
    ProfileError,
    load_profile,
    profile_for_urls,
)
from corpus_crawler.seeds import looks_like_url, read_seed_file
from corpus_crawler.state import DATABASE_NAME, OUTPUT_EXTENSIONS
from pipelines.settingnames import check_setting_names
from pipelines.settingtypes import check_setting_types

if TYPE_CHECKING:
    from pipelines.redis_worker import WorkerSlot

__all__ = [
    "CrawlResult",
    "ExitCode",
    "bundled_profile",
    "demo_site_dir",
    "preflight",
    "register",
    "run_profile",
]

MB = 1024 * 1024


class ExitCode(enum.IntEnum):
    """What `corpus-crawler crawl` exits with (README: "Campaigns")."""

    OK = 0
    INCOMPLETE = 1
    CANNOT_START = 2
    WRITE_FAILURE = 3
    LOCKED = 4
    INTERRUPTED = 5
    #: No request got any response and some failed with network errors (DNS, refused
    #: connections, timeouts): the network or every site is down (they wait for a retry).
    NETWORK_DOWN = 6


class PreflightError(Exception):
    def __init__(self, message: str, code: ExitCode = ExitCode.CANNOT_START) -> None:
        super().__init__(message)
        self.code = code


def register(subparsers: Any) -> None:
    crawl = subparsers.add_parser(
        "crawl",
        help="crawl the web with a profile into WARC and corpus files",
        description=(
            "Crawl with a crawl profile (see configs/crawls/example.yaml): fetch pages,"
            " extract their text, write WARC and (pre)vertical files and a JSON summary."
            " Or give start URLs instead of a profile: every profile default (the seeds'"
            " hosts, depth 5, robots.txt obeyed, 1 s between requests to a host), output"
            " in output/<host>/."
        ),
    )
    crawl.add_argument(
        "profile",
        nargs="+",
        metavar="PROFILE|URL",
        help="crawl profile, e.g. configs/crawls/example.yaml; or one or more start URLs",
    )
    _common_arguments(crawl, default_output=None)
    crawl.add_argument(
        "--wacz",
        action="store_true",
        help="at the end, package the campaign's WARC files (of every run) as"
        " OUTDIR/<profile name>.wacz"
        " (py-wacz: pip install 'corpus-crawler[wacz]')",
    )
    crawl.add_argument(
        "--lang",
        metavar="LANG[,LANG...]",
        help="keep only documents in these languages (codes or names: cs,sk or Czech) and"
        " ask sites for them (Accept-Language); replaces the profile's"
        " extraction.accept_languages",
    )
    crawl.add_argument(
        "--recrawl",
        action="store_true",
        help="start a new pass over the campaign in OUTDIR: revisit every known URL that is"
        " due (profile schedule:) with conditional GETs, follow links of changed pages;"
        " unchanged pages become WARC revisit records and stay out of the corpus files",
    )
    crawl.add_argument(
        "--redis",
        metavar="URL",
        help="join a campaign shared through Redis (redis://HOST:PORT/DB): run the same"
        " command any number of times, on any machines; each process writes into its own"
        " OUTDIR/<host>-<slot>/ (default: the profile's distributed.redis_url)",
    )
    crawl.set_defaults(func=run_crawl)

    demo = subparsers.add_parser(
        "demo",
        help="crawl a small bundled site on 127.0.0.1 (no internet needed)",
        description=(
            "Serve the small site bundled with corpus-crawler on 127.0.0.1, crawl it with"
            " the full pipeline and show where the WARC and corpus files are."
        ),
    )
    _common_arguments(demo, default_output="demo-output")
    demo.set_defaults(func=run_demo)


def _common_arguments(parser: argparse.ArgumentParser, default_output: str | None) -> None:
    parser.add_argument(
        "-o",
        "--output",
        default=default_output,
        metavar="OUTDIR",
        help="output folder"
        + (f" (default: {default_output})" if default_output else " (default: the profile's)"),
    )
    parser.add_argument(
        "-s",
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a Scrapy or CORPUS_* setting (repeatable), e.g. -s DOWNLOAD_DELAY=2",
    )


def _overrides(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"-s {pair!r}: write settings as KEY=VALUE, e.g. -s DOWNLOAD_DELAY=2")
        out[key.strip()] = value
    return out


@dataclass(frozen=True, slots=True)
class CrawlResult:
    summary: dict[str, Any]
    summary_path: Path | None
    elapsed: float
    #: Scrapy's finish reason ("finished", "shutdown", "write-failure", ...).
    finish_reason: str = ""
    #: Why the output could not be written, if it could not.
    write_failure: str | None = None
    #: Files the summary cannot name (written after it): crawl log, HTML report.
    extra_files: dict[str, Path] = dataclasses.field(default_factory=dict)
    #: The exception that stopped the crawl outside Scrapy's own handling, if one did.
    failure: BaseException | None = None
    failure_traceback: str = ""

    @property
    def ok(self) -> bool:
        return self.summary_path is not None and not self.summary.get("writer", {}).get("errors")

    @property
    def exit_code(self) -> ExitCode:
        from pipelines.campaign import WRITE_FAILURE

        if self.write_failure is not None or self.finish_reason == WRITE_FAILURE:
            return ExitCode.WRITE_FAILURE
        if self.failure is not None:
            # a failure that stopped the crawl: never a success, whatever was written
            return ExitCode.CANNOT_START if self.bad_setting else ExitCode.INCOMPLETE
        if self.finish_reason == "shutdown":
            return ExitCode.INTERRUPTED
        if self.network_down:
            return ExitCode.NETWORK_DOWN
        return ExitCode.OK if self.ok else ExitCode.INCOMPLETE

    @property
    def bad_setting(self) -> bool:
        """The failure is a setting a component refused as the crawl started (before
        anything ran: no summary)."""
        return isinstance(self.failure, (ConfigError, ValueError)) and not self.summary

    @property
    def network_down(self) -> bool:
        """No response at all in this run, and requests that failed with network errors
        (or waited for a robots.txt that got no response either)."""
        pages = self.summary.get("pages") or {}
        return not pages.get("responses") and bool(
            pages.get("network_failures") or pages.get("robots_no_response")
        )


def _crawl_settings(
    profile: Profile | None,
    output: str | None,
    overrides: dict[str, Any] | None,
    verbosity: int = 0,
) -> Any:
    from scrapy.settings import Settings

    from pipelines.bridge import profile_settings

    settings = Settings()
    settings.setmodule("pipelines.settings", priority="project")
    if profile is not None:
        # as the spider applies it: over settings.py, under the command line
        settings.setdict(profile_settings(profile), priority="spider")
    settings.set("LOG_LEVEL", ("WARNING", "INFO", "DEBUG")[min(verbosity, 2)], priority="cmdline")
    settings.set("CORPUS_PROGRESS_STREAM", "stderr", priority="cmdline")
    if output:
        settings.set("CORPUS_OUTPUT_DIR", output, priority="cmdline")
    for key, value in (overrides or {}).items():
        settings.set(key, value, priority="cmdline")
    return settings


def preflight(profile: Profile, output: str | None, overrides: dict[str, Any]) -> None:
    """Check what would make the crawl fail at once; raise `PreflightError` with one line."""
    try:
        # the one check of setting values (pipelines.settingtypes), as the spider makes it
        check_setting_types(profile.settings, f"{profile.source or 'profile'}: settings.")
        check_setting_types(overrides, "-s ")
    except ConfigError as exc:
        raise PreflightError(str(exc)) from None
    settings = _crawl_settings(profile, output, overrides)
    if not settings.getbool("CORPUS_SUMMARY_ENABLED", True):
        raise PreflightError(
            "CORPUS_SUMMARY_ENABLED is off: corpus-crawler crawl reads the JSON summary for"
            " its report and its exit code (scrapy crawl corpus runs without it)"
        )
    check_crawl_settings(settings, profile.settings, overrides, profile=profile)


def check_crawl_settings(
    settings: Any,
    profile_settings: Iterable[str],
    command_line: Iterable[str],
    recrawl_switch: str = "--recrawl",
    *,
    profile: Profile | None = None,
) -> None:
    """The checks of a crawl's merged Scrapy `settings` before it starts, for the CLI's
    `crawl` and for `scrapy crawl corpus` alike (`spiders.corpus.CorpusSpider`):
    `CORPUS_*` names in the profile's `settings:` and on the command line, setting
    values (a raw one by the rules of the profile key it stands for, then as each
    component reads them), seeds, the output folder (writable, not locked, this
    profile's campaign, no other tool's files). `recrawl_switch`: how this entry's user
    asks for a recrawl pass on its command line. Raises `PreflightError` with one line."""
    from scrapy.exceptions import NotConfigured

    from corpus_crawler._cli_checks import output_folder_problem
    from corpus_crawler.setting_keys import profile_with_settings
    from corpus_crawler.state import CampaignLocked, _FolderLock
    from pipelines.addressguard import policy_from_settings, resolver_config_from_settings
    from pipelines.campaign import CampaignSettings
    from pipelines.crawllog import CrawlLogSettings
    from pipelines.dedup import DedupSettings
    from pipelines.extract import ExtractSettings
    from pipelines.robots import robots_unreachable_policy
    from pipelines.writer import OutputSettings
    from pipelines.yieldguard import YieldSettings
    from spiders.corpus import SpiderConfig

    source = settings.get("CORPUS_PROFILE_PATH") or "profile"
    profile_settings, command_line = list(profile_settings), list(command_line)
    try:
        check_setting_names(profile_settings, f"{source}: settings.")
        check_setting_names(command_line, "-s ")
    except ConfigError as exc:
        raise PreflightError(str(exc)) from None
    raw = [name for name in profile_settings if name not in command_line]
    for names, where in ((raw, f"{source}: settings."), (command_line, "-s ")):
        try:
            profile_with_settings(profile or Profile(), settings, names)
        except ConfigError as exc:
            raise PreflightError(f"bad setting: {where}{exc}") from None
    try:
        for build in (
            SpiderConfig.from_settings,
            ExtractSettings.from_settings,
            OutputSettings.from_settings,
            CampaignSettings.from_settings,
            CrawlLogSettings.from_settings,
            DedupSettings.from_settings,
            YieldSettings.from_settings,
            policy_from_settings,
            resolver_config_from_settings,
            robots_unreachable_policy,
        ):
            with contextlib.suppress(NotConfigured):
                build(settings)
    except (ConfigError, ValueError, TypeError) as exc:
        raise PreflightError(f"bad setting: {exc}") from None
    spider = SpiderConfig.from_settings(settings)
    if not (spider.seed_urls or spider.seed_files or spider.sitemaps):
        raise PreflightError(
            "no seeds: give seeds.urls, seeds.files or seeds.sitemaps in the profile"
            " (or -s CORPUS_SEEDS_URLS=URL)"
        )
    for seed_file in spider.seed_files:
        try:
            found = read_seed_file(seed_file, max_length=spider.traps.max_url_length)
        except OSError as exc:
            raise PreflightError(
                f"cannot read seed file {seed_file}: {exc.strerror or exc}"
                " (fix seeds.files in the profile)"
            ) from None
        if not found.urls:
            # bad lines are skipped during the crawl (each one logged); a file with
            # none that is good is the wrong file, not a typo
            first = f"; the first bad line: {found.problems[0]}" if found.problems else ""
            raise PreflightError(f"seed file {seed_file} holds no URL{first}")
    directory = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
    if settings.getbool("CORPUS_RECRAWL_ENABLED"):
        # before the folder is made: nothing is written
        problem = _recrawl_problem(
            directory,
            recrawl_switch,
            f"{source}: settings."
            if _RECRAWL in profile_settings and _RECRAWL not in command_line
            else None,
        )
        if problem is not None:
            raise PreflightError(problem)
    problem = output_folder_problem(directory)
    if problem is None:
        # a dedup state folder of its own (shared by campaigns), made at the spider's
        # open: unwritable, it stopped the crawl there with a traceback
        with contextlib.suppress(NotConfigured):
            dedup = DedupSettings.from_settings(settings)
            if not dedup.in_campaign:
                problem = output_folder_problem(
                    dedup.directory, "CORPUS_DEDUP_STATE_DIR", "the dedup state folder"
                )
    if problem is not None:
        raise PreflightError(problem)
    lock = _FolderLock(directory)
    try:
        lock.acquire()
    except CampaignLocked as exc:
        raise PreflightError(str(exc), ExitCode.LOCKED) from None
    lock.release()
    if settings.get("CORPUS_DISTRIBUTED_REDIS_URL"):
        return  # the campaign is in Redis; the folder is this worker's slot
    _check_same_campaign(
        directory,
        str(settings.get("CORPUS_PROFILE_NAME") or ""),
    )
    _check_no_foreign_outputs(directory)


_RECRAWL = "CORPUS_RECRAWL_ENABLED"


def _recrawl_problem(directory: Path, switch: str, profile_key: str | None) -> str | None:
    """`recrawl_problem` naming what turned the pass on: the command line's `switch`,
    or the profile's setting (`profile_key` its prefix) when only the profile set it."""
    from corpus_crawler._cli_checks import recrawl_problem

    if profile_key is None:
        return recrawl_problem(directory, DATABASE_NAME, switch)
    return recrawl_problem(
        directory, DATABASE_NAME, f"{profile_key}{_RECRAWL} is true", f"{_RECRAWL} in the profile"
    )


#: Names of the files a crawl writes into its folder (and `process`, `dedup`, other
#: crawlers write too): the campaign's committed outputs and the rest.
_OUTPUT_SUFFIXES = (
    *OUTPUT_EXTENSIONS, ".warc", ".arc.gz", ".open", ".parquet", ".cdxj", ".crawl.log",
)  # fmt: skip


def _check_no_foreign_outputs(directory: Path) -> None:
    """A new campaign takes its folder's WARC and `.open` files for its own (recovery
    finishes `.open` files and indexes WARCs): refuse a folder that already holds
    some without a campaign (another tool's, or a crawl whose campaign.sqlite is gone)."""
    if (directory / DATABASE_NAME).exists():
        return
    found = sorted(
        path.name
        for path in directory.iterdir()
        if path.is_file() and path.name.endswith(_OUTPUT_SUFFIXES)
    )
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise PreflightError(
            f"{directory} already holds corpus or WARC files ({shown}) but no campaign"
            " (campaign.sqlite): a new crawl there would take them for its own; give it"
            " an empty or new folder with -o OUTDIR"
        )


def earlier_campaign(directory: Path) -> tuple[str, str] | None:
    """The profile name and path of the campaign in `directory`, from its latest run's
    summary; None when it holds no campaign (or no run of it wrote a summary)."""
    if not (directory / DATABASE_NAME).is_file():
        return None
    runs = []
    for path in directory.glob("*-summary.json"):
        with contextlib.suppress(OSError):
            runs.append((path.stat().st_mtime, path))
    for _, path in sorted(runs, reverse=True):
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(summary, dict) and isinstance(summary.get("profile"), str):
            return summary["profile"], str(summary.get("profile_path") or "")
    return None


def _check_same_campaign(directory: Path, profile_name: str) -> None:
    """A folder is one campaign: a crawl of another profile there would continue it,
    skipping every URL it has seen (a silent run of 0 pages), and mix two corpora."""
    earlier = earlier_campaign(directory)
    if earlier is None or earlier[0] == profile_name:
        return
    name, path = earlier
    raise PreflightError(
        f"{directory} holds the campaign of profile {name!r}"
        + (f" ({path})" if path else "")
        + f", not of {profile_name!r}: give this crawl its own folder with -o OUTDIR"
        f" (or, to continue that campaign, set `name: {name}` in the profile)"
    )


class _HeldStopSignals:
    """Ctrl-C or SIGTERM while Scrapy sets the crawl up, held until the engine runs.

    Scrapy installs its graceful-shutdown handlers only once the reactor has
    started. Before that, a SIGINT raises KeyboardInterrupt inside whatever set-up
    code runs (a component's constructor, the campaign opening its store), where
    Twisted logs it as a CRITICAL traceback and the crawl ends as "without a
    summary" (exit 1), its files left `.open`; a SIGTERM killed the process outright.
    Holding the signal and raising it again once the engine runs gives the ordinary
    graceful stop: files closed, a summary written, exit code 5.

    Afterwards Scrapy's handlers answer, and `received` notes that they did: a second
    Ctrl-C forces Scrapy to stop at once, without a summary, and that is still an
    interruption to resume (exit 5), not a crawl that "ended without a summary".
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.pending: int | None = None
        self.delivered = False
        self.received = False
        self._previous: dict[int, Any] = {}

    def _noting(self, handler: Any) -> Any:
        def handle(signum: int, frame: object) -> None:
            self.received = True
            handler(signum, frame)

        return handle if callable(handler) else handler

    def _hold(self, signum: int, _frame: object) -> None:
        if self.pending is None:
            self.pending = signum

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # Python takes signal handlers from the main thread only
        for signum in self.SIGNALS:
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN:
                continue  # as Python leaves it for a background job: stay ignored
            self._previous[signum] = previous
            signal.signal(signum, self._hold)

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            if signal.getsignal(signum) == self._hold:
                signal.signal(signum, previous)

    def deliver_once_running(self, crawler: Any, crawl: Any) -> None:
        """Hold signals until the engine runs, then raise a held one again (Scrapy's
        handlers, installed at the reactor's start-up, then stop the crawl gracefully).

        Scrapy's own handler is not enough between the reactor's start and the engine's:
        a graceful stop then finds no engine running and stops the reactor without
        closing the spider (no summary, files left `.open`)."""
        from twisted.internet import reactor as installed_reactor

        reactor: Any = installed_reactor
        scrapy_handlers: dict[int, Any] = {}

        def engine_running() -> bool:
            try:
                engine = crawler.engine
            except (AttributeError, RuntimeError):  # not made yet
                return False
            return engine is not None and bool(getattr(engine, "running", False))

        def after_startup() -> None:
            for signum in self._previous:
                scrapy_handlers[signum] = signal.getsignal(signum)
                signal.signal(signum, self._hold)
            check()

        def check() -> None:
            if not engine_running() and not _finished(crawl):
                reactor.callLater(0.05, check)
                return
            for signum, handler in scrapy_handlers.items():
                if signal.getsignal(signum) == self._hold:
                    signal.signal(signum, self._noting(handler))
            if self.pending is not None and engine_running() and not _finished(crawl):
                self.delivered = True
                signal.raise_signal(self.pending)

        # callLater(0): after every start-up trigger, Scrapy's handler installation included
        reactor.callWhenRunning(lambda: reactor.callLater(0, after_startup))


def _finished(crawl: Any) -> bool:
    """Whether the crawl's Deferred (or asyncio future, without a reactor) has fired."""
    done = getattr(crawl, "done", None)
    return bool(done()) if callable(done) else bool(getattr(crawl, "called", False))


def run_profile(
    profile: Profile,
    *,
    output: str | None = None,
    overrides: dict[str, Any] | None = None,
    verbosity: int = 0,
) -> CrawlResult:
    """Run one crawl in this process (Scrapy's CrawlerProcess) and return its summary."""
    from scrapy.crawler import CrawlerProcess

    from spiders.corpus import CorpusSpider

    settings = _crawl_settings(None, output, overrides, verbosity)
    # Scrapy installs its own root log handler (with LOG_LEVEL); a handler the CLI
    # installed earlier would print every record Scrapy lets through at NOTSET.
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    started = time.monotonic()
    held = _HeldStopSignals()
    held.install()
    try:
        process = CrawlerProcess(settings)
        crawler = process.create_crawler(CorpusSpider)
        crawl = process.crawl(crawler, profile=profile)
        # an exception that stops the crawl (a component refusing its settings as the
        # engine starts, say) fails this Deferred; unheld, Twisted would print it only
        # when the Deferred is collected, after the logs have closed: never
        failures: list[Any] = []
        crawl.addErrback(failures.append)
        held.deliver_once_running(crawler, crawl)
        process.start()
    finally:
        held.uninstall()
    elapsed = time.monotonic() - started
    try:
        path_value = crawler.stats.get_value("corpus/summary_path")
        finish_reason = str(crawler.stats.get_value("finish_reason") or "")
        write_failure = crawler.stats.get_value("corpus/write_failure")
    except (RuntimeError, AttributeError):  # the crawl failed before it started
        path_value, finish_reason, write_failure = None, "", None
    stopped = held.received or (held.pending is not None and not held.delivered)
    if stopped and finish_reason != "shutdown" and not path_value:
        # stopped by a signal without a summary (a second Ctrl-C forces that; or the
        # crawl ended before a held signal could be passed on): an interruption to resume
        finish_reason = "shutdown"
    summary_path = Path(path_value) if path_value else None
    summary: dict[str, Any] = {}
    if summary_path is not None and summary_path.is_file():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    extra_files: dict[str, Path] = {}
    for label, key in (("crawl log", "corpus/crawl_log_path"), ("report", "corpus/report_path")):
        try:
            value = crawler.stats.get_value(key)
        except RuntimeError:  # the crawl failed before it started
            value = None
        if value:
            extra_files[label] = Path(value)
    failure = failures[0] if failures else None
    return CrawlResult(
        summary,
        summary_path,
        elapsed,
        finish_reason,
        write_failure,
        extra_files,
        failure=failure.value if failure is not None else None,
        failure_traceback=failure.getTraceback() if failure is not None else "",
    )


def _finish(result: CrawlResult, redis_campaign: tuple[str, str] | None = None) -> int:
    """Print the crawl's report and notes; its exit code. `redis_campaign` is the
    (Redis URL, namespace) of a distributed run, whose state is not in its folder."""
    print(report(result))
    code = result.exit_code
    if result.failure is not None:
        if result.bad_setting:
            print(f"corpus-crawler: bad setting: {result.failure}", file=sys.stderr)
        else:
            print(result.failure_traceback, file=sys.stderr)
            print(
                f"corpus-crawler: the crawl failed: {type(result.failure).__name__}:"
                f" {result.failure}",
                file=sys.stderr,
            )
    note = nothing_left_note(result.summary, redis_campaign)
    if note and code is ExitCode.OK:
        print(f"corpus-crawler: {note}", file=sys.stderr)
    if result.summary.get("output_dir"):
        from corpus_crawler.report_runs import output_changes

        for change in output_changes(Path(str(result.summary["output_dir"]))):
            print(f"corpus-crawler: note: {change}", file=sys.stderr)
    if code is ExitCode.WRITE_FAILURE:
        print(
            f"corpus-crawler: stopped: {result.write_failure or 'the output could not be written'}",
            file=sys.stderr,
        )
    elif code is ExitCode.INTERRUPTED:
        print(
            "corpus-crawler: interrupted; run the same command again to resume the campaign",
            file=sys.stderr,
        )
    elif code is ExitCode.NETWORK_DOWN:
        pages = result.summary["pages"]
        failures = pages["network_failures"]
        robots = pages.get("robots_no_response") or 0
        waited = f", {robots} waited for a robots.txt that got none" if robots else ""
        print(
            f"corpus-crawler: no response at all: {failures} request(s) failed with network"
            f" errors{waited} (DNS, refused or timed-out connections): is the network down?",
            file=sys.stderr,
        )
    return int(code)


def retry_note(summary: dict[str, Any]) -> str | None:
    """How many requests wait for a deferred retry and when the first is due."""
    campaign = summary.get("campaign") or {}
    pending = int(campaign.get("retries_pending") or 0)
    first = campaign.get("next_retry")
    if not pending or not first:
        return None
    from datetime import datetime, timezone

    from corpus_crawler.retries import pending_note

    due = datetime.fromisoformat(str(first)).timestamp()
    return pending_note(pending, due, datetime.now(timezone.utc).timestamp())


def nothing_left_note(
    summary: dict[str, Any], redis_campaign: tuple[str, str] | None = None
) -> str | None:
    """Why a run of an earlier campaign fetched nothing, and what to run instead.
    `redis_campaign`: the (URL, namespace) of a distributed run, whose campaign lives
    in Redis (a new output folder joins it as it stands)."""
    campaign = summary.get("campaign") or {}
    recrawl = summary.get("recrawl") or {}
    if summary and recrawl.get("pass") and not recrawl.get("due"):
        return _nothing_due_note(Path(str(summary.get("output_dir") or ".")))
    if (
        summary
        and not summary.get("pages", {}).get("responses")
        and campaign.get("requests_left")
        and campaign.get("requests_left") == campaign.get("retries_pending")
    ):
        # all that is left waits for its retry time (a cron run came too early)
        return f"nothing to fetch yet: {retry_note(summary)}"
    if (
        not summary
        or summary.get("pages", {}).get("responses")
        or int(campaign.get("run") or 0) < 2
        or campaign.get("requests_left")
        or (summary.get("recrawl") or {}).get("pass")
    ):
        return None
    totals = campaign.get("totals") or {}
    exchanges, documents = totals.get("warc_exchanges", 0), totals.get("documents_kept", 0)
    done = (
        f"{exchanges} exchange{'' if exchanges == 1 else 's'} archived and {documents}"
        f" document{'' if documents == 1 else 's'} kept by its earlier runs"
    )
    if redis_campaign is not None:
        url, namespace = redis_campaign
        # the output folder may be new: the campaign is Redis's, and -o changes nothing
        return (
            f"nothing left to fetch: the Redis campaign {namespace!r} at {url} had already"
            f" finished ({done}). Add seeds to the profile to grow it, or give a new"
            " campaign its own name (the profile's name, or -s"
            " CORPUS_DISTRIBUTED_NAMESPACE=NAME)"
        )
    return (
        f"nothing left to fetch: the campaign in {summary.get('output_dir')} had already"
        f" finished ({done}). Add --recrawl to revisit its pages that are due, add seeds"
        " to the profile to grow it, or give a new crawl its own folder with -o OUTDIR"
    )


def _nothing_due_note(directory: Path) -> str:
    """A recrawl pass that found no URL due: when the first one is, and what sets it."""
    from datetime import datetime, timezone

    from corpus_crawler.report_runs import next_recrawl

    tracked, due = next_recrawl(directory)
    if due is None:
        return (
            f"nothing was due for a recrawl: the campaign in {directory} tracks"
            f" {tracked:,} URLs and none is waiting for a revisit"
        )
    wait = (due - datetime.now(timezone.utc)).total_seconds()
    when = f"in {wait / 3600:.1f} h" if wait >= 3600 else f"in {max(wait, 0) / 60:.0f} min"
    return (
        f"nothing was due for a recrawl: of the {tracked:,} URLs the campaign in"
        f" {directory} tracks, the first is due at {due.isoformat(timespec='minutes')}"
        f" ({when}); run --recrawl again then, or shorten schedule.initial_interval /"
        " schedule.min_interval in the profile (they apply to revisits scheduled after)"
    )


def _load(arguments: list[str]) -> Profile | None:
    """The profile file named, or the profile of the start URLs given instead."""
    urls = [argument for argument in arguments if looks_like_url(argument)]
    try:
        if urls and len(urls) == len(arguments):
            return profile_for_urls(urls)
        if len(arguments) > 1:
            raise ProfileError(
                f"give one crawl profile, or start URLs only (got {len(arguments)} arguments:"
                f" {', '.join(arguments)}); put more seeds in the profile's seeds.urls"
            )
        return load_profile(arguments[0])
    except ProfileError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return None


def run_crawl(args: argparse.Namespace) -> int:
    profile = _load(args.profile)
    if profile is None:
        return 2
    if getattr(args, "lang", None):
        try:
            profile = profile.with_languages(args.lang.split(","))
        except ProfileError as exc:
            print(f"corpus-crawler: --lang: {exc}", file=sys.stderr)
            return 2
    try:
        overrides = _overrides(args.settings)
    except ConfigError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "recrawl", False):
        overrides["CORPUS_RECRAWL_ENABLED"] = "True"
    output = args.output
    redis_url = getattr(args, "redis", None) or profile.distributed.redis_url
    worker_slot = None  # its open file holds the slot's lock until this function returns
    if redis_url:
        try:
            worker_slot = _join_distributed(profile, output, overrides, redis_url)
            output = str(worker_slot.directory)
        except PreflightError as exc:
            print(f"corpus-crawler: {exc}", file=sys.stderr)
            return int(exc.code)
    try:
        preflight(profile, output, overrides)
    except PreflightError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return int(exc.code)
    redis_campaign = None
    if worker_slot is not None:
        from corpus_crawler.redis_state import shown_url

        namespace = str(overrides["CORPUS_DISTRIBUTED_NAMESPACE"])
        redis_campaign = (shown_url(redis_url), namespace)
        # said once the settings passed: a refused one is the run's only line
        print(f"Worker {worker_slot.worker} of the Redis campaign at {redis_campaign[0]}",
              file=sys.stderr)  # fmt: skip
    print(f"Crawling with profile {profile.name!r} ({profile.source}) ...", file=sys.stderr)
    result = run_profile(profile, output=output, overrides=overrides, verbosity=args.verbose)
    code = _finish(result, redis_campaign)
    wacz = getattr(args, "wacz", False) and result.summary_path is not None and code == 0
    prefix = str(overrides.get("CORPUS_WARC_PREFIX") or profile.output.warc.prefix)
    if wacz and not _package(result, profile.name, prefix):
        return 1
    if worker_slot is not None:
        worker_slot.handle.close()
    return code


def _join_distributed(
    profile: Profile, output: str | None, overrides: dict[str, Any], redis_url: str
) -> WorkerSlot:
    """Make this process a worker of the Redis campaign (`pipelines.redis_worker`): checks
    Redis, claims a worker slot of the output folder (locked while the slot lives)."""
    from corpus_crawler.redis_state import RedisUnavailable, check_redis
    from pipelines.redis_worker import claim_worker_slot, distributed_overrides

    if overrides.get("CORPUS_RECRAWL_ENABLED"):
        raise PreflightError(
            "--recrawl runs on a single-process campaign only: leave out --redis"
            " (and distributed.redis_url)"
        )
    try:
        check_redis(redis_url)
    except RedisUnavailable as exc:
        raise PreflightError(str(exc)) from None
    settings = _crawl_settings(profile, output, overrides)
    base = Path(settings.get("CORPUS_OUTPUT_DIR") or "output")
    try:
        slot = claim_worker_slot(base)
    except OSError as exc:
        raise PreflightError(
            f"cannot take a worker slot in {base}: {exc} (choose another folder with -o OUTDIR)"
        ) from None
    overrides.update(
        distributed_overrides(
            slot,
            redis_url,
            settings.get("CORPUS_DISTRIBUTED_NAMESPACE") or profile.name,
            settings.get("CORPUS_WARC_PREFIX") or "corpus",
        )
    )
    return slot


def campaign_warcs(folder: Path, prefix: str) -> list[Path]:
    """Every finished WARC file (named `prefix`-...) of the campaign in `folder`, from all
    its runs: a run resumed after a stop, or a recrawl pass whose revisit records refer
    to earlier captures, is not replayable from its own files alone."""
    found = [*folder.glob(f"{prefix}-*.warc.gz"), *folder.glob(f"{prefix}-*.warc")]
    return sorted(path for path in found if not path.name.endswith((".wet.gz", ".wet")))


def _package(result: CrawlResult, name: str, prefix: str) -> bool:
    """`crawl --wacz`: the finished WARC files as one WACZ beside them."""
    from corpus_crawler.packaging import WaczError, package_wacz

    assert result.summary_path is not None
    out = result.summary_path.parent
    warcs = campaign_warcs(out, prefix)
    target = out / f"{name or 'crawl'}.wacz"
    print(f"Packaging {len(warcs)} WARC file(s) as {target} ...", file=sys.stderr)
    try:
        package_wacz(warcs, target, title=name, description=f"corpus-crawler crawl {name!r}")
    except (ConfigError, WaczError) as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return False
    print(f"  {'WACZ:':13}{target}")
    return True


def _package_dir() -> Path:
    import corpus_crawler

    return Path(corpus_crawler.__file__).resolve().parent


def demo_site_dir() -> Path:
    return _package_dir() / "demo_site"


def bundled_profile(name: str) -> Path:
    """configs/crawls/<name>.yaml from a checkout, or the copy inside an installed wheel."""
    candidates = (
        Path(__file__).resolve().parent.parent / "configs" / "crawls" / f"{name}.yaml",
        _package_dir() / "_configs" / "crawls" / f"{name}.yaml",
    )
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no bundled crawl profile {name!r} in {candidates[0].parent}")


def run_demo(args: argparse.Namespace) -> int:
    from corpus_crawler.testserver import SiteServer

    profile = _load([str(bundled_profile("demo"))])
    if profile is None:
        return 2
    try:
        overrides = _overrides(args.settings)
        check_setting_types(overrides, "-s ")
        check_setting_names(overrides, "-s ")
    except ConfigError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return 2
    earlier = Path(args.output or profile.output.directory)
    if (earlier / DATABASE_NAME).is_file():
        # the demo site gets a new port, so new URLs, each run: continuing the campaign
        # would fetch it all again and drop every page as a duplicate of the last run
        print(
            f"corpus-crawler: {earlier} holds an earlier demo crawl: remove it"
            f" (rm -r {earlier}) or choose another folder with -o OUTDIR",
            file=sys.stderr,
        )
        return int(ExitCode.CANNOT_START)
    site = demo_site_dir()
    pages = sum(1 for _ in site.rglob("*.html"))
    if profile.output.documents.parquet and importlib.util.find_spec("pyarrow") is None:
        print(
            "Parquet output needs pyarrow (pip install 'corpus-crawler[parquet]'):"
            " the demo writes JSONL documents only",
            file=sys.stderr,
        )
        output = profile.output
        profile = dataclasses.replace(
            profile,
            output=dataclasses.replace(
                output, documents=dataclasses.replace(output.documents, parquet=False)
            ),
        )
    with SiteServer(site) as server:
        profile = dataclasses.replace(
            profile,
            seeds=dataclasses.replace(profile.seeds, urls=(server.url("/"),)),
            # the demo site is on this machine: allow exactly that address
            network=dataclasses.replace(profile.network, allowed_networks=("127.0.0.1/32",)),
        )
        print(
            f"Serving the bundled demo site ({pages} HTML pages, one of them disallowed by"
            f" its robots.txt, and a few other files) at {server.base_url}/",
            file=sys.stderr,
        )
        print("Crawling it with the full pipeline ...", file=sys.stderr)
        result = run_profile(
            profile, output=args.output, overrides=overrides, verbosity=args.verbose
        )
    code = _finish(result)
    if result.summary_path is not None:
        out = result.summary_path.parent
        print()
        print("Look inside:")
        print(f"  head -n 20 {out}/*.prevert     # the clean paragraphs, one <doc> per page")
        print(f"  warcio index {out}/*.warc.gz   # every request and response")
        print(f"  warcio index {out}/*.warc.wet.gz   # the clean text of each kept page")
        if "report" in result.extra_files:
            print(f"  open {result.extra_files['report']}   # the crawl at a glance")
        print(f"  corpus-crawler report {out}   # rebuild the HTML report from the crawl log")
    return code


def _corpus_tool_lines(vertical: Path) -> list[str]:
    """The Manatee registry and CWB script written beside a vertical file, if any."""
    stem = vertical.name.removesuffix(".gz").removesuffix(".vert")
    return [
        f"  {label + ':':13}{path}"
        for label, path in (
            ("Manatee", vertical.with_name(stem + ".manatee")),
            ("CWB script", vertical.with_name(stem + ".cwb.sh")),
        )
        if path.is_file()
    ]


def report(result: CrawlResult) -> str:
    """A short human summary of a finished crawl."""
    summary = result.summary
    if not summary and result.finish_reason == "shutdown":
        return "The crawl was stopped before it wrote its summary."
    if not summary and result.failure is not None:
        return "The crawl stopped on an error (below) before it wrote its summary."
    if not summary:
        return "The crawl ended without a summary; see the log above."
    pages, text = summary["pages"], summary["text"]
    dropped = ", ".join(f"{k} {v}" for k, v in summary["dropped"].items() if v) or "none"
    lines = [
        f"Crawl {summary['finish_reason']} in {summary['elapsed_seconds']:.1f} s:"
        f" {pages['responses']} responses, {pages['html']} HTML pages,"
        f" {pages['kept']} documents kept",
        f"  text:    {text['paragraphs_good']:,} good paragraphs, {text['words']:,} words,"
        f" {text['bytes_raw'] / MB:.2f} MB -> {text['bytes_clean'] / MB:.2f} MB"
        f" (yield {text['yield_percent']:.1f}%)",
        f"  dropped: {dropped}",
    ]
    bad_seeds = {
        key.rpartition("/")[2]: value
        for key, value in (summary.get("stats") or {}).items()
        if key.startswith("corpus/seeds/bad/") and value
    }
    if bad_seeds:
        lines.append(
            f"  seeds:   {sum(bad_seeds.values()):,} skipped ("
            + ", ".join(f"{reason} {count:,}" for reason, count in sorted(bad_seeds.items()))
            + "), each named with its file:line in the log above"
        )
    base = Path(summary["output_dir"])
    for label, key in (
        ("WARC", "warc"),
        ("text WARC", "warc_text"),
        ("CDXJ", "warc_index"),
        ("prevertical", "prevertical"),
        ("vertical", "vertical"),
    ):
        for name in summary["files"].get(key, ()):
            lines.append(f"  {label + ':':13}{base / name}")
            if key == "vertical":
                lines.extend(_corpus_tool_lines(base / name))
    for label, key in (("JSONL", "jsonl"), ("Parquet", "parquet")):
        for name in summary["files"].get(key, ()):
            lines.append(f"  {label + ':':13}{base / name}")
    if result.summary_path is not None:
        lines.append(f"  {'summary:':13}{result.summary_path}")
    for label, path in result.extra_files.items():
        lines.append(f"  {label + ':':13}{path}")
    retries = retry_note(summary)
    if retries:
        lines.append(f"  retries: {retries}")
    errors = summary.get("writer", {}).get("errors")
    if errors:
        lines.append(f"  write errors: {len(errors)} (first: {errors[0]})")
    return "\n".join(lines)

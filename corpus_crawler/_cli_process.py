"""`corpus-crawler process`: reprocess WARC/ARC archives into corpus files."""

from __future__ import annotations

import argparse
import dataclasses
import faulthandler
import signal
import sys
from pathlib import Path
from typing import Any

from ._cli_checks import finite_float, output_folder_problem, url_argument_problem
from .config import ConfigError
from .profile import Profile, ProfileError, load_profile

__all__ = ["MIN_CHUNK_MB", "register", "run_process"]

#: The smallest byte range (in MB) an input is cut into: 10 kB, about one record.
MIN_CHUNK_MB = 0.01


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "process",
        help="turn WARC/ARC archives (Common Crawl's, other crawlers', ours) into corpus files",
        description=(
            "Run the crawl's extraction, language identification and filters over the HTML"
            " responses (and revisits) in WARC or ARC files and write the same prevertical,"
            " vertical and conversion-WARC files a crawl writes. Resumable: run the same"
            " command again after an interruption and finished inputs are skipped."
        ),
    )
    parser.add_argument(
        "archives", nargs="+", metavar="ARCHIVE",
        help="WARC/ARC files (.warc, .warc.gz, .arc, .arc.gz) or folders of them",
    )  # fmt: skip
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUTDIR")
    parser.add_argument(
        "-j", "--jobs", type=int, default=0, metavar="N",
        help="worker processes (default: one per core)",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=Path,
        help="take the extraction and output settings from this crawl profile (the ones the"
        " crawl that wrote the archives used, to get the same documents)",
    )  # fmt: skip
    parser.add_argument("--lang", help="language code, `auto` or `none` (overrides the profile)")
    parser.add_argument(
        "--min-words", type=int, help="drop documents with fewer good words (too-short)"
    )
    parser.add_argument(
        "--dedup", action=argparse.BooleanOptionalAction, default=None,
        help="run the crawl's dedup stages (exact and near-duplicate documents, seen and"
        " foreign paragraphs) with their stores in OUTDIR/state/dedup (default: as the"
        " profile's dedup: section says; off without --profile)",
    )  # fmt: skip
    parser.add_argument("--vertical", action="store_true", help="also write the vertical file")
    parser.add_argument("--no-warc", action="store_true", help="no conversion-record WARC")
    parser.add_argument(
        "--chunk-mb", type=finite_float, default=16.0,
        help="cut larger inputs into byte ranges of this size, one task each (default 16,"
        " at least 0.01)",
    )  # fmt: skip
    engine = parser.add_mutually_exclusive_group()
    engine.add_argument(
        "--dask", action="store_true",
        help="run the tasks on a local Dask cluster (127.0.0.1, no dashboard)",
    )  # fmt: skip
    engine.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT",
        help="run the tasks on the Dask cluster with this scheduler (every worker must see the"
        " input files at the same paths)",
    )  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run_process)


def _settings(args: argparse.Namespace) -> tuple[Any, str, Any]:
    from .dedup import DedupConfig
    from .process import OutputChoice, ProcessSettings

    dedup_config, dedup_enabled = DedupConfig(), False
    if args.profile is not None:
        profile = _with_raw_settings(load_profile(args.profile))
        settings = ProcessSettings.from_profile(profile)
        name = profile.name
        dedup_config, dedup_enabled = profile.dedup.config(), profile.dedup.enabled
    else:
        settings, name = ProcessSettings(), ""
    # --dedup / --no-dedup override the profile's `dedup.enabled`, never its thresholds
    dedup = dedup_config if (dedup_enabled if args.dedup is None else args.dedup) else None
    extract = settings.extract
    if args.lang is not None:
        language = None if args.lang.lower() == "none" else args.lang
        # checked() reads the language's stoplist: an unknown language is a ConfigError
        extract = dataclasses.replace(extract, language=language).checked()
    outputs: OutputChoice = settings.outputs
    if args.vertical:
        outputs = dataclasses.replace(outputs, vertical=True)
    if args.no_warc:
        outputs = dataclasses.replace(outputs, warc=False, warc_metadata=False)
    settings = dataclasses.replace(
        settings,
        extract=extract,
        outputs=outputs,
        min_words=settings.min_words if args.min_words is None else args.min_words,
    )
    if settings.min_words < 0:
        raise ConfigError(f"--min-words must be >= 0, got {settings.min_words}")
    return settings, name, dedup


def _with_raw_settings(profile: Profile) -> Profile:
    """The profile with the values of its `settings:` section that stand for profile keys
    (`CORPUS_EXTRACT_PRESET: article` is extraction.preset) put in, as the crawl
    that used it read them: the same documents, and the same values refused."""
    from .setting_keys import PlainSettings, profile_with_settings

    try:
        return profile_with_settings(profile, PlainSettings(profile.settings), profile.settings)
    except ProfileError as exc:
        where = profile.source or "profile"
        raise ProfileError(f"{where}: settings.{exc}") from None


def _progress(total: int) -> Any:
    """One progress bar over the input bytes (tqdm until the shared progress module lands)."""
    from tqdm import tqdm

    return tqdm(
        total=total, unit="B", unit_scale=True, desc="process", file=sys.stderr, mininterval=1.0
    )


def run_process(args: argparse.Namespace) -> int:
    from .process import (
        DaskEngine,
        LocalEngine,
        ProcessError,
        ProcessOptions,
        collect_inputs,
        default_workers,
        process_archives,
    )

    if hasattr(signal, "SIGUSR1"):
        # `kill -USR1 PID` prints every thread's stack to stderr: for a run that seems stuck
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        settings, profile_name, dedup = _settings(args)
        if args.jobs < 0:
            raise ConfigError(f"-j must be >= 1 (or 0 for one per core), got {args.jobs}")
        if args.chunk_mb < MIN_CHUNK_MB:
            # a range smaller than a record holds nothing; a tiny one makes a task per byte
            raise ConfigError(f"--chunk-mb must be >= {MIN_CHUNK_MB:g}, got {args.chunk_mb:g}")
        for name in args.archives:
            problem = url_argument_problem(name, "WARC/ARC files and folders of them")
            if problem:
                raise ConfigError(problem)
        inputs = collect_inputs([Path(name) for name in args.archives])
        problem = output_folder_problem(Path(args.output))
        if problem:
            raise ConfigError(problem)
    except (ConfigError, ProfileError, ProcessError) as exc:
        print(f"corpus-crawler process: {exc}", file=sys.stderr)
        return 2
    workers = args.jobs or default_workers()
    options = ProcessOptions(
        output=args.output,
        settings=settings,
        chunk_bytes=max(1, int(args.chunk_mb * 1024 * 1024)),
        profile_name=profile_name,
        dedup=dedup,
    )
    engine: Any
    if args.dask or args.scheduler:
        try:
            engine = DaskEngine(workers, args.scheduler)
        except (OSError, TimeoutError, RuntimeError, ValueError) as exc:
            where = f"the Dask scheduler at {args.scheduler}" if args.scheduler else "Dask"
            print(f"corpus-crawler process: cannot start {where}: {exc}", file=sys.stderr)
            return 2
    else:
        engine = LocalEngine(workers)
    try:
        summary = process_archives(
            inputs, options, engine, progress=None if args.no_progress else _progress
        )
    except (ProcessError, RuntimeError) as exc:
        print(f"corpus-crawler process: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "corpus-crawler process: interrupted; run the same command again to resume"
            " (inputs already finished are skipped)",
            file=sys.stderr,
        )
        return 130
    finally:
        engine.close()
    _print_summary(summary.data)
    return 0


def _print_summary(data: dict[str, Any]) -> None:
    run = data["this_run"]
    lines = [
        f"inputs: {run['units_processed']} processed, {run['units_skipped']} already done"
        f" ({run['engine']}, {run['workers']} workers, {run['seconds']:.1f} s)",
        f"documents: {data['documents']} ({data['words']} words) from"
        f" {data['pages_html']} HTML pages",
        "records: " + ", ".join(f"{k} {v}" for k, v in data["records"].items()),
        "dropped: " + (", ".join(f"{k} {v}" for k, v in data["dropped"].items()) or "none"),
    ]
    dedup = data.get("dedup") or {}
    if dedup:
        lines.append(
            f"dedup: {dedup.get('documents', 0)} documents checked,"
            f" {data['dropped'].get('duplicate', 0)} duplicate,"
            f" {data['dropped'].get('near-duplicate', 0)} near-duplicate;"
            f" {dedup.get('paragraphs_removed', 0)} paragraphs removed"
        )
    revisits = data["revisits"]
    if revisits["resolved"] or revisits["unresolved"]:
        lines.append(
            f"revisits: {revisits['resolved']} resolved, {revisits['unresolved']} unresolved"
        )
    if data["damaged_records"]:
        lines.append(f"damaged records: {len(data['damaged_records'])} (see the summary file)")
    for kind, names in data["files"].items():
        if names:
            lines.append(f"{kind}: {len(names)} file(s) in {data['output']}")
    print("\n".join(lines), file=sys.stderr)
    print(str(Path(data["output"]) / "process-summary.json"))

"""`corpus-crawler evaluate`: score extractor settings on gold-annotated pages.

Made for tuning a language: run it on a gold set of that language, change a
`--param`, and compare the table (or the `--per-page` rows, worst first).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO, cast

import yaml

from ._cli_checks import output_file_problem
from .config import EXTRACTORS, ConfigError, ExtractConfig, JustextParams, Preset
from .evaluate import (
    ExtractFn,
    GoldSetError,
    SetReport,
    evaluate_set,
    find_gold_sets,
    format_pages,
    format_table,
    report_to_dict,
)

_JUSTEXT_PARAMS = frozenset(JustextParams.__dataclass_fields__)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score extraction against gold-annotated pages (shingle F1)",
        description=(
            "Extract every page of one or more gold sets and print token-shingle"
            " precision/recall/F1 (the scrapinghub article-extraction benchmark's"
            " metric), bag-of-words F1 and speed. A gold set is a folder with"
            " html/<id>.html, gold/<id>.txt and optionally manifest.jsonl; a folder"
            " of such sets evaluates each of them."
        ),
    )
    parser.add_argument("gold_sets", nargs="+", metavar="GOLD_SET_DIR", type=Path)
    parser.add_argument("--extractor", choices=EXTRACTORS, default="justext")
    parser.add_argument("--preset", choices=[p.value for p in Preset], default=Preset.SEED.value)
    parser.add_argument(
        "--lang",
        default="auto",
        metavar="CODE|auto|none",
        help="stoplist language (ISO code or jusText name), 'auto' per page, 'none' for no"
        " stoplist (default: auto)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a setting, e.g. length_low=50 or no_headings=true (repeatable):"
        " jusText thresholds, or options of the declutter/kimatu/combined extractor",
    )
    parser.add_argument(
        "--per-page", action="store_true", help="also print every page, worst shingle F1 first"
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the full report here")
    parser.add_argument(
        "-j", "--workers", type=int, default=1, metavar="N", help="worker processes (default 1)"
    )
    parser.add_argument(
        "--function",
        metavar="MODULE:NAME",
        help="score this Python function (html_bytes, url) -> text instead of extract(),"
        " e.g. to compare another tool on the same pages; the extraction options are ignored",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=handle)


def parse_params(pairs: Sequence[str]) -> dict[str, Any]:
    """`["length_low=50", "no_headings=true"]` -> `{"length_low": 50, "no_headings": True}`."""
    params: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError(f"--param {pair!r}: write NAME=VALUE, e.g. --param length_low=50")
        try:
            # YAML scalars, as in the language files: 50 -> int, 0.3 -> float, true -> bool
            params[name] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            params[name] = raw
    return params


def build_config(args: argparse.Namespace) -> ExtractConfig:
    overrides = parse_params(args.param)
    language = None if args.lang.lower() == "none" else args.lang
    if args.extractor == "justext":
        justext_overrides, options = overrides, {}
    else:
        justext_overrides = {k: v for k, v in overrides.items() if k in _JUSTEXT_PARAMS}
        options = {k: v for k, v in overrides.items() if k not in _JUSTEXT_PARAMS}
    params = JustextParams().merged(justext_overrides, "--param") if justext_overrides else None
    return ExtractConfig(
        extractor=args.extractor,
        preset=Preset.parse(args.preset),
        language=language,
        params=params,
        extractor_options=options,
    ).checked()


def _check_unpacked(path: Path) -> None:
    """A gold set asked for inside an archive not unpacked yet (the README's
    `tests/data/gold/cleaneval-dev` ships as tests/data/gold.tar.xz): say how to unpack."""
    if path.exists():
        return
    for folder in (path, *path.parents):
        if not folder.name:
            continue
        for suffix in (".tar.xz", ".tar.gz", ".tgz", ".tar", ".zip"):
            archive = folder.with_name(folder.name + suffix)
            if archive.is_file():
                unpack = (
                    f"python -m zipfile -e {archive} {archive.parent}"
                    if suffix == ".zip"
                    else f"tar -xf {archive} -C {archive.parent}"
                )
                raise ConfigError(f"{path}: no such folder; unpack {archive} first: {unpack}")


def load_function(spec: str) -> ExtractFn:
    """`"package.module:name"` -> that callable."""
    module_name, sep, name = spec.partition(":")
    if not sep or not module_name or not name:
        raise ConfigError(f"--function {spec!r}: write MODULE:NAME, e.g. mytools.extractors:clean")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"--function {spec!r}: cannot import {module_name!r} ({exc}); is it on PYTHONPATH?"
        ) from None
    function = getattr(module, name, None)
    if not callable(function):
        raise ConfigError(f"--function {spec!r}: {module_name} has no function {name!r}")
    return cast(ExtractFn, function)


class _Progress:
    """`name done/total` on stderr: redrawn in place on a terminal, every few seconds otherwise."""

    def __init__(self, name: str, stream: TextIO) -> None:
        self.name = name
        self.stream = stream
        self.tty = stream.isatty()
        self.interval = 0.2 if self.tty else 10.0
        self.last = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < self.interval:
            return
        self.last = now
        line = f"evaluate: {self.name} {done}/{total} pages"
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        elif done < total:
            self.stream.write(line + "\n")
        self.stream.flush()


def handle(args: argparse.Namespace) -> int:
    if args.workers < 1:
        print("evaluate: -j/--workers must be at least 1", file=sys.stderr)
        return 2
    try:
        config = build_config(args)
        extractor: ExtractFn | ExtractConfig = (
            load_function(args.function) if args.function else config
        )
        for path in args.gold_sets:
            _check_unpacked(Path(path))
        set_dirs = [s for path in args.gold_sets for s in find_gold_sets(path)]
        # checked now: found at the end, it cost the whole evaluation and a traceback
        problem = output_file_problem(args.json, "--json") if args.json else None
        if problem:
            raise ConfigError(problem)
    except (ConfigError, GoldSetError) as exc:
        print(f"evaluate: {exc}", file=sys.stderr)
        return 2
    reports: list[SetReport] = []
    for set_dir in set_dirs:
        progress = None if args.quiet else _Progress(set_dir.name, sys.stderr)
        try:
            reports.append(
                evaluate_set(set_dir, extractor, workers=args.workers, progress=progress)
            )
        except GoldSetError as exc:
            print(f"evaluate: {exc}", file=sys.stderr)
            return 2
    print(format_table(reports))
    if args.per_page:
        for report in reports:
            print(f"\n{report.name}: pages, worst shingle F1 first")
            print(format_pages(report))
    if args.json:
        payload = {
            "config": {
                "function": args.function,
                "extractor": config.extractor,
                "preset": config.preset.value,
                "language": config.language,
                "params": dict(parse_params(args.param)),
            },
            "sets": [report_to_dict(r) for r in reports],
        }
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    errors = sum(r.errors for r in reports)
    if errors:
        print(
            f"evaluate: the extractor raised on {errors} page(s); see --per-page", file=sys.stderr
        )
        return 1
    return 0

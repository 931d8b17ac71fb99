"""`corpus-crawler crawl` and `corpus-crawler demo`.

Scrapy is imported inside the handlers only, so `corpus-crawler --help` and the
library commands never load it. A crawl runs a Twisted reactor, which cannot
be restarted: one crawl per process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_crawler.config import ConfigError
from corpus_crawler.profile import Profile, ProfileError, load_profile

__all__ = ["CrawlResult", "bundled_profile", "demo_site_dir", "register", "run_profile"]

MB = 1024 * 1024


def register(subparsers: Any) -> None:
    crawl = subparsers.add_parser(
        "crawl",
        help="crawl the web with a profile into WARC and corpus files",
        description=(
            "Crawl with a crawl profile (see configs/crawls/example.yaml): fetch pages,"
            " extract their text, write WARC and (pre)vertical files and a JSON summary."
        ),
    )
    crawl.add_argument("profile", help="crawl profile, e.g. configs/crawls/example.yaml")
    _common_arguments(crawl, default_output=None)
    crawl.add_argument(
        "--wacz",
        action="store_true",
        help="at the end, package the crawl's WARC files as OUTDIR/<profile name>.wacz"
        " (py-wacz: pip install 'corpus-crawler[wacz]')",
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

    @property
    def ok(self) -> bool:
        return self.summary_path is not None and not self.summary.get("writer", {}).get("errors")


def run_profile(
    profile: Profile,
    *,
    output: str | None = None,
    overrides: dict[str, Any] | None = None,
    verbosity: int = 0,
) -> CrawlResult:
    """Run one crawl in this process (Scrapy's CrawlerProcess) and return its summary."""
    from scrapy.crawler import CrawlerProcess
    from scrapy.settings import Settings

    from spiders.corpus import CorpusSpider

    settings = Settings()
    settings.setmodule("pipelines.settings", priority="project")
    settings.set("LOG_LEVEL", ("WARNING", "INFO", "DEBUG")[min(verbosity, 2)], priority="cmdline")
    settings.set("CORPUS_PROGRESS_STREAM", "stderr", priority="cmdline")
    if output:
        settings.set("CORPUS_OUTPUT_DIR", output, priority="cmdline")
    for key, value in (overrides or {}).items():
        settings.set(key, value, priority="cmdline")
    # Scrapy installs its own root log handler (with LOG_LEVEL); a handler the CLI
    # installed earlier would print every record Scrapy lets through at NOTSET.
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    started = time.monotonic()
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(CorpusSpider)
    process.crawl(crawler, profile=profile)
    process.start()
    elapsed = time.monotonic() - started
    try:
        path_value = crawler.stats.get_value("corpus/summary_path")
    except RuntimeError:  # the crawl failed before it started; Scrapy logged why
        path_value = None
    summary_path = Path(path_value) if path_value else None
    summary: dict[str, Any] = {}
    if summary_path is not None and summary_path.is_file():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    return CrawlResult(summary, summary_path, elapsed)


def _load(path: str) -> Profile | None:
    try:
        return load_profile(path)
    except ProfileError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return None


def run_crawl(args: argparse.Namespace) -> int:
    profile = _load(args.profile)
    if profile is None:
        return 2
    try:
        overrides = _overrides(args.settings)
    except ConfigError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return 2
    print(f"Crawling with profile {profile.name!r} ({args.profile}) ...", file=sys.stderr)
    result = run_profile(profile, output=args.output, overrides=overrides, verbosity=args.verbose)
    print(report(result))
    packaged = True
    if getattr(args, "wacz", False) and result.summary_path is not None:
        packaged = _package(result, profile.name)
    return 0 if result.ok and packaged else 1


def _package(result: CrawlResult, name: str) -> bool:
    """`crawl --wacz`: the finished WARC files as one WACZ beside them."""
    from corpus_crawler.packaging import WaczError, package_wacz

    assert result.summary_path is not None
    out = result.summary_path.parent
    warcs = [out / file for file in result.summary.get("files", {}).get("warc", [])]
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

    profile = _load(str(bundled_profile("demo")))
    if profile is None:
        return 2
    try:
        overrides = _overrides(args.settings)
    except ConfigError as exc:
        print(f"corpus-crawler: {exc}", file=sys.stderr)
        return 2
    site = demo_site_dir()
    pages = sum(1 for _ in site.rglob("*.html"))
    with SiteServer(site) as server:
        profile = dataclasses.replace(
            profile,
            seeds=dataclasses.replace(profile.seeds, urls=(server.url("/"),)),
            # the demo site is on this machine: allow exactly that address
            network=dataclasses.replace(profile.network, allowed_networks=("127.0.0.1/32",)),
        )
        print(
            f"Serving the bundled demo site ({pages} HTML pages and a few other files)"
            f" at {server.base_url}/",
            file=sys.stderr,
        )
        print("Crawling it with the full pipeline ...", file=sys.stderr)
        result = run_profile(
            profile, output=args.output, overrides=overrides, verbosity=args.verbose
        )
    print(report(result))
    if result.summary_path is not None:
        out = result.summary_path.parent
        print()
        print("Look inside:")
        print(f"  head -n 20 {out}/*.prevert     # the clean paragraphs, one <doc> per page")
        print(f"  warcio index {out}/*.warc.gz   # every request and response")
        print(f"  warcio index {out}/*.warc.wet.gz   # the clean text of each kept page")
    return 0 if result.ok else 1


def report(result: CrawlResult) -> str:
    """A short human summary of a finished crawl."""
    summary = result.summary
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
    if result.summary_path is not None:
        lines.append(f"  {'summary:':13}{result.summary_path}")
    errors = summary.get("writer", {}).get("errors")
    if errors:
        lines.append(f"  write errors: {len(errors)} (first: {errors[0]})")
    return "\n".join(lines)

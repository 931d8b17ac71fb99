"""WACZ packaging of a crawl's WARC files (py-wacz), for ReplayWeb.page and pywb.

A WACZ is a ZIP of the WARCs, a CDXJ index, a ``pages.jsonl`` list of the HTML
pages and a ``datapackage.json`` with checksums (https://specs.webrecorder.net/wacz/).
py-wacz builds it; it runs in a child process so that its own logging and
exit paths stay out of the crawl's.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from .config import ConfigError

__all__ = ["WaczError", "package_wacz"]


class WaczError(RuntimeError):
    """py-wacz could not build or validate the package."""


def package_wacz(
    warcs: Sequence[Path],
    output: Path,
    *,
    title: str = "",
    description: str = "",
    timeout: float | None = None,
) -> Path:
    """Write `output` (``*.wacz``) from `warcs`, with a page list detected from their
    HTML responses, then validate it with py-wacz. Returns `output`."""
    if importlib.util.find_spec("wacz") is None:
        raise ConfigError(
            "--wacz needs py-wacz: pip install 'corpus-crawler[wacz]' (or pip install wacz)"
        )
    if not warcs:
        raise WaczError("no WARC file to package (is output.warc.enabled off?)")
    if output.suffix != ".wacz":
        raise ConfigError(f"a WACZ file name must end in .wacz, got {output.name!r}")
    command = [sys.executable, "-m", "wacz", "create", "-o", str(output), "--detect-pages"]
    if title:
        command += ["--title", title]
    if description:
        command += ["--desc", description]
    command += [str(path) for path in warcs]
    _run(command, timeout, f"packaging {output}")
    _run([sys.executable, "-m", "wacz", "validate", "-f", str(output)], timeout, "validation")
    return output


def _run(command: list[str], timeout: float | None, what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()[-5:]
        raise WaczError(f"py-wacz failed in {what}: " + " | ".join(detail))

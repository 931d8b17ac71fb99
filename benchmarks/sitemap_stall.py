"""Does a big sitemap slow the other hosts of a crawl? A ratio measured in one run.

Two crawls, each a `corpus-crawler crawl` subprocess against loopback servers with
test host names answered by the scripted DNS server of tests/site/hostile_site.py:

(a) ``alone``: one host crawled as a chain of pages (/p0 -> /p1 -> ...), one page
    at a time, for `--chain` pages;
(b) ``sitemap``: the same chain while another host serves a generated sitemap of
    `--mb` MB (seconds of parsing); the chain runs until a URL listed at the
    sitemap's end is requested, i.e. until the sitemap was read whole.

Printed: the chain's pages/s in (a), its pages/s in (b) between the sitemap's last
byte and the first request for a URL it lists (while it was parsed), and the ratio
b/a. Near 1: the other host did not notice; near 0: the crawl stalled (as it did
when the sitemap was parsed on the reactor thread, or with Scrapy's 5 MB scraper
limit). On a shared machine the parse takes longer and the ratio is noisier.

    python benchmarks/sitemap_stall.py [--mb 30] [--chain 60]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from corpus_crawler.testserver import SiteServer  # noqa: E402

PROFILE = """\
name: sitemap-stall
seeds:
  urls: ["{chain}"]
  sitemaps: {sitemaps}
scope: {{max_depth: null, max_domain_depth: null}}
politeness:
  concurrent_requests: 8
  concurrent_requests_per_domain: 1
  download_delay: 0.01
  randomize_delay: false
  autothrottle: false
  obey_robots_txt: false
network:
  allowed_networks: [127.0.0.1/32]
  dns_servers: ["{dns}"]
extraction: {{workers: 1}}
output:
  progress_interval: 0
  prevertical: {{enabled: false}}
"""


def _site_module() -> ModuleType:
    path = ROOT / "tests" / "site" / "hostile_site.py"
    spec = importlib.util.spec_from_file_location("hostile_site", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["hostile_site"] = module
    spec.loader.exec_module(module)
    return module


def _crawl(profile: str, workdir: Path, name: str) -> None:
    path = workdir / f"{name}.yaml"
    path.write_text(profile, encoding="utf-8")
    command = [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(path)]
    command += ["-o", str(workdir / name)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"crawl {name} failed:\n{result.stderr[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=30.0, help="sitemap size in MB")
    parser.add_argument("--chain", type=int, default=60, help="pages of the chain alone")
    args = parser.parse_args(argv)
    site = _site_module()
    script = {"chain.test": [("127.0.0.1",)], "big.test": [("127.0.0.1",)]}
    with tempfile.TemporaryDirectory() as tmp, site.ScriptedDns(script) as dns:
        workdir = Path(tmp)
        alone: list[float] = []
        with SiteServer(fallback=site.chain_until(lambda: False, alone, args.chain - 1)) as host:
            seeds = f"http://chain.test:{host.port}/p0"
            _crawl(PROFILE.format(chain=seeds, sitemaps="[]", dns=dns.address), workdir, "alone")
        alone_rate = (len(alone) - 1) / (alone[-1] - alone[0])

        beside: list[float] = []
        with (
            site.SitemapHost(listed=3) as big,
            SiteServer(fallback=site.chain_until(big.listed_requested, beside, 100_000)) as host,
        ):
            base = f"http://big.test:{big.server_address[1]}"
            big.body = site.big_sitemap(
                int(args.mb * 1e6), [base + path for path in big.listed_paths]
            )
            seeds = f"http://chain.test:{host.port}/p0"
            sitemaps = f'["{base}/sitemap.xml"]'
            _crawl(PROFILE.format(chain=seeds, sitemaps=sitemaps, dns=dns.address), workdir, "big")
            events = list(big.events)
    (sent,) = [at for at, what in events if what == "sitemap sent"]
    first_listed = min(at for at, what in events if what.startswith("GET /listed/"))
    during = [at for at in beside if sent < at < first_listed]
    parse_rate = len(during) / (first_listed - sent)
    print(
        textwrap.dedent(
            f"""\
            chain alone: {len(alone)} pages, {alone_rate:.2f} pages/s
            next to a {args.mb:g} MB sitemap: parsed in ~{first_listed - sent:.2f} s,\
 {len(during)} chain pages meanwhile, {parse_rate:.2f} pages/s
            ratio (while parsed / alone): {parse_rate / alone_rate:.2f}"""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

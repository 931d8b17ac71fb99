"""A crawl writes nothing in the user's home but corpus-crawler's own cache, opens no
control port, and contacts nothing but the hosts it crawls.

Scrapy 2.19 enables its RemoteControl extension by default: an HTTP server on
localhost that runs Python code posted to it, announced by a job file written under
the user's state directory (~/.local/state/scrapy/job_files) that a killed crawl
leaves behind. `pipelines/settings.py` switches it off, as it does the telnet console.
The crawl here runs with HOME and the XDG directories pointed at empty folders; the
only thing it may leave is the language identifier's index in
$XDG_CACHE_HOME/corpus-crawler (corpus_crawler/langid.py), a cache by design.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_crawler.testserver import Reply, SiteServer
from pipelines.addons import SwitchedOffExtensions

ROOT = Path(__file__).resolve().parent.parent
#: A guard against a hung crawl, not a speed assertion.
TIMEOUT = 120

PROFILE = """\
name: home-alone
seeds:
  urls: ["{base}/"]
politeness:
  obey_robots_txt: false
  download_delay: 0
  autothrottle: false
network:
  allowed_networks: [127.0.0.1/32]
extraction:
  workers: 1
output:
  progress_interval: 0
  report: false
"""


def _page(text: str, links: str = "") -> Reply:
    body = f"<html><body><p>{text}</p>{links}</body></html>".encode()
    return Reply(headers=(("Content-Type", "text/html; charset=utf-8"),), body=body)


def test_a_crawl_writes_nothing_in_the_users_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    pages = {"/": _page("The index page.", "<a href='/a.html'>a</a>"), "/a.html": _page("A page.")}
    env = dict(os.environ)
    env["HOME"] = str(home)
    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        env[name] = str(home / name.lower())
    with SiteServer(pages=pages) as site:
        profile = tmp_path / "p.yaml"
        profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
        out = tmp_path / "out"
        done = subprocess.run(
            # -X importtime: every module each process of the crawl imports, on stderr
            [
                *(sys.executable, "-X", "importtime", "-m", "corpus_crawler.cli"),
                *("crawl", str(profile), "-o", str(out)),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(out.glob("*.warc.gz")), "the crawl archived nothing"
    cache = home / "xdg_cache_home"
    ours = cache / "corpus-crawler"
    written = sorted(
        str(path.relative_to(home))
        for path in home.rglob("*")
        if path not in (cache, ours) and ours not in path.parents
    )
    assert written == [], f"the crawl wrote in the user's home: {written}"
    assert "RemoteControl" not in done.stderr
    # switched off, RemoteControl is not even imported (aiohttp: ~0.1 s of CPU a crawl)
    # (stderr is shared by the crawl's processes: lines may interleave, so no parsing)
    assert re.search(r"\| +scrapy\.crawler$", done.stderr, re.M), "no -X importtime output"
    assert "scrapy.extensions.remote_control" not in done.stderr
    assert "aiohttp" not in done.stderr


@pytest.mark.parametrize("switch", [False, True])
def test_remote_control_is_loaded_only_when_switched_on(switch: bool) -> None:
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("pipelines.settings", priority="project")
    settings.set("REMOTE_CONTROL_ENABLED", switch, priority="cmdline")
    SwitchedOffExtensions().update_settings(settings)
    extensions = settings.get_component_priority_dict_with_base("EXTENSIONS")
    assert ("scrapy.extensions.remote_control.RemoteControl" in extensions) is switch
    # the other extensions stay
    assert "scrapy.extensions.corestats.CoreStats" in extensions
    assert "pipelines.campaign.CampaignExtension" in extensions


def test_a_proxy_named_in_the_environment_is_not_used(tmp_path: Path) -> None:
    # http_proxy is often set for package installs; Scrapy's HttpProxyMiddleware took it
    # up and sent every page of the crawl through it
    pages = {"/": _page("The index page.", "<a href='/a.html'>a</a>"), "/a.html": _page("A page.")}
    with SiteServer(pages=pages) as site, SiteServer(host="127.0.0.2") as proxy:
        env = dict(os.environ, http_proxy=proxy.base_url, https_proxy=proxy.base_url)
        env.update(HTTP_PROXY=proxy.base_url, HTTPS_PROXY=proxy.base_url, no_proxy="", NO_PROXY="")
        profile = tmp_path / "p.yaml"
        profile.write_text(PROFILE.format(base=site.base_url), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "corpus_crawler.cli", "crawl", str(profile),
             "-o", str(tmp_path / "out")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert proxy.requests == []
        assert sorted(r.path for r in site.requests) == ["/", "/a.html"]

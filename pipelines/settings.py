"""Scrapy settings of the corpus crawler (`scrapy.cfg` points here).

The `CORPUS_*` defaults are those of an empty crawl profile (`Profile()`), so a
crawl started without a profile (`scrapy crawl corpus -s CORPUS_SEEDS_URLS=...`)
behaves like one with an empty profile. A profile given with
`-a profile=PROFILE.yaml` overrides them; `-s KEY=VALUE` overrides both.
"""

from __future__ import annotations

from corpus_crawler.profile import Profile
from pipelines.bridge import profile_settings

BOT_NAME = "corpus-crawler"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"

ITEM_PIPELINES = {
    "pipelines.extract.DropPipeline": 100,
    # exact / near-duplicate documents, seen paragraphs, paragraph language
    "pipelines.dedup.DedupPipeline": 150,
    # the vertical text of what dedup kept, tokenised in a worker (pipelines/extract.py)
    "pipelines.extract.VerticalFormatPipeline": 160,
    "pipelines.outputs.WarcDocumentPipeline": 800,
    "pipelines.outputs.VerticalPipeline": 810,
    "pipelines.outputs.DocumentsPipeline": 820,
}

SPIDER_MIDDLEWARES = {
    # a request that produced no page is finished here, not as an item
    "pipelines.campaign.RequestDoneMiddleware": 10,
}

DOWNLOADER_MIDDLEWARES = {
    # right after Scrapy's OffsiteMiddleware (50), before robots.txt is fetched (100)
    "pipelines.addressguard.AddressGuardMiddleware": 55,
    "pipelines.middlewares.ScopeGuardMiddleware": 60,
    # refuses requests to hosts pruned for low text yield, before robots.txt (100)
    "pipelines.yieldguard.YieldGuardMiddleware": 65,
    # closest to the downloader: sees every exchange, redirects and errors included,
    # with the body as received (before HttpCompressionMiddleware, 590, decodes it)
    "pipelines.capture.WarcCaptureMiddleware": 950,
    # after the capture: a response cut at the size cap is archived, then dropped
    "pipelines.capture.SizeCapMiddleware": 945,
    # the hostile web (issue 11): robots.txt read to 500 KiB in a thread, cookies checked
    # against the bundled public suffix list (never downloaded), decompression bombs
    # counted, names whose every address is refused counted instead of retried
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "pipelines.robots.BoundedRobotsTxtMiddleware": 100,
    "scrapy.downloadermiddlewares.cookies.CookiesMiddleware": None,
    "pipelines.cookies.OfflineCookiesMiddleware": 700,
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None,
    "pipelines.decompression.BoundedHttpCompressionMiddleware": 590,
    "pipelines.addressguard.RefusedAddressMiddleware": 940,
    # every response as received (before the size cap drops a cut one) and every
    # refused or failed request, for the crawl log
    "pipelines.crawllog.CrawlLogMiddleware": 947,
    # a distributed crawl (--redis) frees the host for other processes at the response
    "pipelines.redis_politeness.HostReleaseMiddleware": 960,
}

# Every connection goes to an address the network policy vetted (pipelines/resolver.py).
TWISTED_DNS_RESOLVER = "pipelines.resolver.PinnedResolver"

EXTENSIONS = {
    # the campaign folder: state, lock and the writer thread (others get it first)
    "pipelines.campaign.CampaignExtension": 0,
    # the extraction workers, awaited by the spider's callback
    "pipelines.extract.PageProcessor": 10,
    "pipelines.extensions.ProgressExtension": 500,
    "pipelines.extensions.SummaryExtension": 510,
    "pipelines.crawllog.CrawlLogExtension": 520,
    "pipelines.report.ReportExtension": 530,
    # what sites ask: robots.txt's Crawl-delay as a host's delay floor, and a backoff on
    # 429/503 (Retry-After); after AutoThrottle (0), whose adjustment it undoes when it
    # goes below them
    "pipelines.pacing.HostPacing": 540,
}

# Breadth-first: a corpus crawl wants many sites' shallow pages before one site's deep
# ones. The spider gives each request priority -depth; the campaign scheduler keeps
# the frontier on disk (SQLite), FIFO within a priority, and survives kill -9.
SCHEDULER = "pipelines.scheduler.CampaignScheduler"

# Only http(s) is fetched.
DOWNLOAD_HANDLERS: dict[str, str | None] = {"file": None, "data": None, "ftp": None, "s3": None}
# Scrapy's HTTP/1.1 handler, keeping the status line and headers as received for the
# WARC, and a body cut at DOWNLOAD_MAXSIZE (not cancelled) so that it can be archived.
DOWNLOAD_HANDLERS["http"] = "pipelines.download.CorpusDownloadHandler"
DOWNLOAD_HANDLERS["https"] = "pipelines.download.CorpusDownloadHandler"

# Scrapy runs each response's callback output through CONCURRENT_ITEMS asyncio tasks,
# all created up front: the default 100 cost ~3 ms of reactor time per response here,
# for callbacks that yield one item.
CONCURRENT_ITEMS = 4
# A meta refresh is found by the extraction worker and followed as a link; Scrapy's
# middleware would decode and search every HTML body on the reactor thread (~2 ms a page).
METAREFRESH_ENABLED = False

TELNETCONSOLE_ENABLED = False
# Scrapy 2.19's RemoteControl runs Python code posted to a localhost HTTP server and
# announces it in a job file under the user's home (~/.local/state/scrapy/job_files)
# that a killed crawl never removes. A crawl opens no door, and writes nothing outside
# its output folder but corpus-crawler's own cache (tests/test_crawl_leaves_home_alone.py).
REMOTE_CONTROL_ENABLED = False
# ... and its module (aiohttp) is not even imported while it is off (pipelines/addons.py).
ADDONS = {"pipelines.addons.SwitchedOffExtensions": 0}
# The crawler contacts the hosts it crawls and nothing else: a proxy that the environment
# names (http_proxy, set for package installs) is not taken up silently, every page of
# a crawl going through it with the WARC's WARC-IP-Address and the address guard
# describing another connection. A crawl meant to use one says so:
# -s HTTPPROXY_ENABLED=True (tests/test_crawl_leaves_home_alone.py).
HTTPPROXY_ENABLED = False
# Drops are expected events of a corpus crawl, counted in the stats.
DEFAULT_DROPITEM_LOG_LEVEL = "DEBUG"
LOG_LEVEL = "INFO"

globals().update(profile_settings(Profile()))

# A long crawl's memory probed (tracemalloc dumps) only when MEMPROBE_DIR is set
# (pipelines/memprobe.py, benchmarks/soak.py --memprobe); nothing is added otherwise.
from pipelines.memprobe import memprobe_extensions  # noqa: E402

EXTENSIONS.update(memprobe_extensions())

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
    "pipelines.extract.ExtractPipeline": 100,
    "pipelines.outputs.WarcDocumentPipeline": 800,
    "pipelines.outputs.VerticalPipeline": 810,
}

DOWNLOADER_MIDDLEWARES = {
    # right after Scrapy's OffsiteMiddleware (50), before robots.txt is fetched (100)
    "pipelines.middlewares.AddressGuardMiddleware": 55,
    "pipelines.middlewares.ScopeGuardMiddleware": 60,
    # closest to the downloader: sees every exchange, redirects and errors included,
    # with the body as received (before HttpCompressionMiddleware, 590, decodes it)
    "pipelines.capture.WarcCaptureMiddleware": 950,
    # after the capture: a response cut at the size cap is archived, then dropped
    "pipelines.capture.SizeCapMiddleware": 945,
}

EXTENSIONS = {
    "pipelines.extensions.ProgressExtension": 500,
    "pipelines.extensions.SummaryExtension": 510,
}

# Breadth-first: a corpus crawl wants many sites' shallow pages before one site's deep
# ones. The spider gives each request priority -depth itself (its links do not pass
# through DepthMiddleware); FIFO queues keep the order within a depth.
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"

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
# Drops are expected events of a corpus crawl, counted in the stats.
DEFAULT_DROPITEM_LOG_LEVEL = "DEBUG"
LOG_LEVEL = "INFO"

globals().update(profile_settings(Profile()))

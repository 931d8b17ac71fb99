"""The `corpus` spider: seeds, scope and link rules. Nothing else.

Seeds come from the profile's URL list, seed files, and sitemaps (sitemap
indexes, gzipped sitemaps, and robots.txt `Sitemap:` lines). Each response
becomes a `FetchedPage` item; the spider does no text processing and writes
no files.

Links: a page is parsed once, in an extraction worker, for both its text and
its links: the callback awaits `pipelines.extract.PageProcessor`, then yields
the links it decides to follow (scope: hosts, deny patterns, binary file types;
depth) as requests, which pass Scrapy's spider middlewares and the campaign
scheduler (seen URLs and page budgets live there, on disk), and last the page's
item. Every callback and errback ends with exactly one item carrying the
request's frontier ``row`` (`pipelines.items`): the campaign finishes the
request when the pipelines are through with it. With the extraction switched
off (`CORPUS_EXTRACT_ENABLED=False`) the spider falls back to Scrapy's
`LinkExtractor` in its callback, i.e. a plain link-following crawl.

Run it with `scrapy crawl corpus -a profile=configs/crawls/example.yaml` or
`corpus-crawler crawl configs/crawls/example.yaml`.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider, DownloadCancelledError, IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.settings import BaseSettings
from twisted.python.failure import Failure
from w3lib.html import get_meta_refresh
from w3lib.url import safe_url_string

from corpus_crawler.config import ConfigError
from corpus_crawler.mediatype import is_html as response_is_html
from corpus_crawler.mediatype import parse_content_type
from corpus_crawler.profile import Profile, load_profile
from corpus_crawler.seeds import read_seed_file
from corpus_crawler.setting_keys import NO_LIMIT
from corpus_crawler.sitemaps import (
    SitemapBudget,
    SitemapContent,
    SitemapKind,
    SitemapLimits,
    read_sitemap,
)
from corpus_crawler.traps import DomainLedger, TrapLimits, cap_links
from pipelines.bridge import profile_settings
from pipelines.extract import PageProcessor
from pipelines.items import FetchedPage, RequestDone
from pipelines.settingtypes import check_command_line, check_setting_types, exit_with
from pipelines.sitemap_reader import SitemapReader
from spiders.scope import UrlScope

__all__ = ["CorpusSpider", "SpiderConfig"]


def _limit(settings: BaseSettings, name: str) -> int | None:
    value = settings.getint(name, NO_LIMIT)
    return None if value < 0 else value


@dataclass(frozen=True, slots=True)
class SpiderConfig:
    """The spider's settings (`CORPUS_SEEDS_*`, `CORPUS_SCOPE_*`), read once."""

    seed_urls: tuple[str, ...]
    seed_files: tuple[str, ...]
    sitemaps: tuple[str, ...]
    sitemaps_from_robots: bool
    allowed_domains: tuple[str, ...]
    allowed_tlds: tuple[str, ...]
    deny_patterns: tuple[str, ...]
    max_depth: int | None
    follow_links: bool
    #: Extract links in the callback (the extraction pipeline is off).
    links_in_callback: bool
    max_sitemap_bytes: int
    traps: TrapLimits
    sitemap_limits: SitemapLimits

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SpiderConfig:
        return cls(
            seed_urls=tuple(settings.getlist("CORPUS_SEEDS_URLS")),
            seed_files=tuple(settings.getlist("CORPUS_SEEDS_FILES")),
            sitemaps=tuple(settings.getlist("CORPUS_SEEDS_SITEMAPS")),
            sitemaps_from_robots=settings.getbool("CORPUS_SEEDS_SITEMAPS_FROM_ROBOTS"),
            allowed_domains=tuple(settings.getlist("CORPUS_SCOPE_ALLOWED_DOMAINS")),
            allowed_tlds=tuple(settings.getlist("CORPUS_SCOPE_ALLOWED_TLDS")),
            deny_patterns=tuple(settings.getlist("CORPUS_SCOPE_DENY_PATTERNS")),
            max_depth=_limit(settings, "CORPUS_SCOPE_MAX_DEPTH"),
            follow_links=settings.getbool("CORPUS_SCOPE_FOLLOW_LINKS", True),
            links_in_callback=not settings.getbool("CORPUS_EXTRACT_ENABLED", True),
            max_sitemap_bytes=settings.getint("DOWNLOAD_MAXSIZE"),
            traps=TrapLimits(
                max_url_length=_limit(settings, "CORPUS_SCOPE_MAX_URL_LENGTH"),
                max_segment_repeats=_limit(settings, "CORPUS_SCOPE_MAX_SEGMENT_REPEATS"),
                max_query_parameters=_limit(settings, "CORPUS_SCOPE_MAX_QUERY_PARAMETERS"),
                max_domain_depth=_limit(settings, "CORPUS_SCOPE_MAX_DOMAIN_DEPTH"),
                max_pages_per_domain=_limit(settings, "CORPUS_SCOPE_MAX_PAGES_PER_DOMAIN"),
                max_links_per_page=_limit(settings, "CORPUS_SCOPE_MAX_LINKS_PER_PAGE"),
            ),
            sitemap_limits=SitemapLimits(
                max_bytes=settings.getint("CORPUS_SITEMAPS_MAX_BYTES", 50 * 1024 * 1024),
                max_urls=settings.getint("CORPUS_SITEMAPS_MAX_URLS", 50_000),
                max_depth=settings.getint("CORPUS_SITEMAPS_MAX_DEPTH", 2),
                max_per_host=settings.getint("CORPUS_SITEMAPS_MAX_PER_HOST", 1000),
            ),
        )


#: Campaign meta: the hosts seeds redirected to (a list), and one key per such host.
_SEED_REDIRECT_HOSTS = "scope_seed_redirect_hosts"
_SEED_REDIRECT_PREFIX = "scope_seed_redirect:"
#: Seconds a host found not to be a seed's redirect target is not asked about again.
_SEED_REDIRECT_RECHECK = 30.0

#: What to do about a seed the scope refuses, by refusal (`spiders.scope.Refusal`).
_SEED_REFUSAL_FIXES = {
    "host": "add its host to scope.allowed_domains, or drop the seed",
    "denied": "it matches scope.deny_patterns: narrow the pattern, or drop the seed",
    "binary": "its extension names a file that is not a page: drop the seed",
    "scheme": "only http:// and https:// pages are crawled: drop the seed",
}


def _check_before_the_crawl(settings: BaseSettings, profile: Profile | None) -> None:
    from scrapy.settings import SETTINGS_PRIORITIES

    from pipelines.cli import PreflightError, check_crawl_settings

    cmdline = SETTINGS_PRIORITIES["cmdline"]
    command_line = [name for name in settings if settings.getpriority(name) == cmdline]
    try:
        check_crawl_settings(
            settings,
            profile.settings if profile else (),
            command_line,
            recrawl_switch="-s CORPUS_RECRAWL_ENABLED=True",
            profile=profile,
        )
    except PreflightError as exc:
        # the CLI's fixes name its own option; Scrapy's -o is a feed export
        message = str(exc).replace("-o OUTDIR", "-s CORPUS_OUTPUT_DIR=OUTDIR")
        exit_with(PreflightError(message), "scrapy crawl corpus", int(exc.code))


class CorpusSpider(Spider):
    name = "corpus"

    config: SpiderConfig
    scope: UrlScope

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> CorpusSpider:
        profile = kwargs.pop("profile", None)
        loaded: Profile | None = None
        try:
            if profile is not None:
                loaded = profile if isinstance(profile, Profile) else load_profile(str(profile))
                check_setting_types(loaded.settings, f"{loaded.source or 'profile'}: settings.")
                # "spider" priority: the profile beats settings.py, `-s` beats the profile.
                crawler.settings.setdict(profile_settings(loaded), priority="spider")
            check_command_line(crawler.settings)
        except ConfigError as exc:  # a ProfileError too: one line, no traceback
            exit_with(exc)
        if not isinstance(profile, Profile):
            # `scrapy crawl corpus`: the same checks as `corpus-crawler crawl` makes
            # before it starts Scrapy (which hands the spider a loaded Profile)
            _check_before_the_crawl(crawler.settings, loaded)
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._set_up(crawler)
        return spider

    def _set_up(self, crawler: Crawler) -> None:
        self.config = SpiderConfig.from_settings(crawler.settings)
        #: Entry depth per registered domain (a trap limit of this run); the page
        #: budgets are campaign state, counted by the scheduler on disk.
        self._domains = DomainLedger(
            dataclasses.replace(self.config.traps, max_pages_per_domain=None)
        )
        self._sitemap_budget = SitemapBudget(self.config.sitemap_limits)
        self._sitemap_reader = SitemapReader(self.config.sitemap_limits)
        crawler.signals.connect(self._sitemap_reader.close, signal=signals.spider_closed)
        #: Counts kept here and added to the stats once per page, not once per link.
        self._counts: Counter[str] = Counter()
        #: Seed hosts whose robots.txt Sitemap: lines are still to be read.
        self._robots_origins: set[str] = set()
        crawler.signals.connect(self._robots_received, signal=signals.response_received)
        self.scope = UrlScope()  # replaced by _build_scope(), once the seeds are known
        #: The scope is the seeds' hosts (the profile names no domains nor TLDs).
        self._implicit_scope = False
        #: Host -> time.monotonic() until which it is known not to be a seed's redirect
        #: target (`admit_seed_redirect`: links redirecting off-site ask for each).
        self._not_redirect_hosts: dict[str, float] = {}
        #: The seeds (URL -> where it was given), read once by `_build_scope`; a
        #: CloseSpider it raised waits for start() to raise it.
        self._seeds: dict[str, str] | CloseSpider | None = None
        # spider_opened comes before the engine leases anything: a request an earlier
        # run queued is checked (ScopeGuardMiddleware) against this run's scope even if
        # a spider middleware holds start() back (one that awaits a token, say)
        crawler.signals.connect(self._build_scope, signal=signals.spider_opened)
        self._processor: PageProcessor | None = None
        self._link_extractor: Any = None

    def _find_processor(self) -> None:
        # Extensions exist only once the crawl starts, after from_crawler().
        if not self.config.links_in_callback:
            self._processor = self.crawler.get_extension(PageProcessor)
        if self._processor is None:
            from scrapy.linkextractors import LinkExtractor

            self._link_extractor = LinkExtractor(unique=True, canonicalize=False)

    @property
    def _stats(self) -> Any:
        # Crawler.stats exists only once the crawl starts, after from_crawler().
        return self.crawler.stats

    # -- seeds ------------------------------------------------------------------------

    def _seed_urls(self) -> dict[str, str]:
        """Seed URL -> where it was read ("seeds.urls" or "FILE:LINE"), in order.

        A bad line of a seed file is skipped, named by file and line, and counted
        (`corpus.seeds`): one typo in a long list must not stop the crawl.
        """
        seeds = dict.fromkeys(self.config.seed_urls, "seeds.urls")
        for path in self.config.seed_files:
            try:
                found = read_seed_file(path, max_length=self.config.traps.max_url_length)
            except OSError as exc:
                raise CloseSpider(f"cannot read seed file {path}: {exc.strerror}") from None
            for problem in found.problems:
                self.logger.warning("seed line skipped: %s", problem)
                self._counts[f"corpus/seeds/bad/{problem.reason}"] += 1
            if found.problems:
                self.logger.warning(
                    "%s: %d bad line(s) skipped, each listed above; %d seed URL(s) read",
                    path, len(found.problems), len(found.urls),
                )  # fmt: skip
            if not found.urls:
                first = f"; the first: {found.problems[0]}" if found.problems else ""
                raise CloseSpider(f"seed file {path} holds no URL{first}")
            for url, line in found.urls:
                seeds.setdefault(url, f"{path}:{line}")
        return seeds

    def _build_scope(self) -> None:
        """`spider_opened`: read the seeds and build this run's scope from the profile
        (the seeds' hosts when it names none)."""
        if self._seeds is not None:
            return
        try:
            self._seeds = self._seed_urls()
        except CloseSpider as exc:
            self._seeds = exc
            return
        domains = self.config.allowed_domains
        self._implicit_scope = not domains and not self.config.allowed_tlds
        if self._implicit_scope:
            # No explicit scope: stay on the hosts the crawl starts from, and on the
            # hosts the campaign's seeds redirected to (`admit_seed_redirect`)
            starts = [*self._seeds, *self.config.sitemaps]
            hosts = {h for h in (urlsplit(u).hostname for u in starts) if h is not None}
            store = self._campaign_store()
            if store is not None:
                hosts.update(store.get_meta(_SEED_REDIRECT_HOSTS) or ())
            domains = tuple(hosts)
        self.scope = UrlScope.build(
            domains, self.config.allowed_tlds, self.config.deny_patterns, self.config.traps
        )

    def _campaign_store(self) -> Any:
        from pipelines.campaign import CampaignExtension

        campaign = self.crawler.get_extension(CampaignExtension)
        return campaign.store if campaign is not None else None

    def admit_seed_redirect(self, request: Request) -> bool:
        """Whether `request`, refused for its host, is a seed's redirect whose host now
        joins the scope (the scope is the seeds' hosts: a seed that moved, or goes from
        www. to the bare domain, would otherwise give nothing), or a request queued for
        such a host by an earlier run or by another process of the campaign. As
        Heritrix's seedsRedirectNewSeeds. Kept in the campaign, so resumed runs and all
        processes of a distributed crawl keep these hosts in scope."""
        if not self._implicit_scope:
            return False
        host = (urlsplit(request.url).hostname or "").lower()
        if not host:
            return False
        store = self._campaign_store()
        seed = request.meta.get("depth") == 0 and "redirect_urls" in request.meta
        # a link redirecting off-site (common) asks about its host once in a while, not
        # each time (a Redis round trip); a request queued by another run or process
        # always asks: refused, it would be lost
        link_redirect = not seed and "redirect_urls" in request.meta
        if link_redirect and self._not_redirect_hosts.get(host, 0.0) > time.monotonic():
            return False
        known = store is not None and store.get_meta(_SEED_REDIRECT_PREFIX + host)
        if not seed and not known:
            if link_redirect:
                self._not_redirect_hosts[host] = time.monotonic() + _SEED_REDIRECT_RECHECK
            return False
        self.scope = self.scope.with_host(host)
        if seed and not known:
            origin = request.meta["redirect_urls"][0]
            self.logger.warning(
                "seed %s redirects to %s: %s joins the crawl's scope", origin, request.url, host
            )
            self.crawler.stats.inc_value("corpus/scope/seed_redirect_hosts")
            if store is not None:
                # the host's own key decides (written once); the list seeds the scope of
                # a later run (in Redis two processes may race on it: a host missing
                # there still comes back through its own key)
                store.set_meta(_SEED_REDIRECT_PREFIX + host, origin)
                hosts = list(store.get_meta(_SEED_REDIRECT_HOSTS) or ())
                store.set_meta(_SEED_REDIRECT_HOSTS, sorted({*hosts, host}))
        return self.scope.check(request.url) is None

    async def start(self) -> AsyncIterator[Any]:
        self._find_processor()
        self._build_scope()  # made at spider_opened; here for a spider opened otherwise
        if isinstance(self._seeds, CloseSpider):
            raise self._seeds
        seed_origins = self._seeds or {}
        seeds = list(seed_origins)
        sitemaps = list(self.config.sitemaps)
        if not seeds and not sitemaps:
            message = (
                "no seeds: give seeds.urls, seeds.files or seeds.sitemaps in the profile"
                " (-a profile=PROFILE.yaml) or set CORPUS_SEEDS_URLS"
            )
            self.logger.error(message)
            raise CloseSpider(message)
        for url in seeds:
            refusal = self.scope.check(url)
            if refusal is not None:
                self.logger.warning(
                    "%s: seed %s is out of scope (%s): skipped (%s)",
                    seed_origins[url], url, refusal, _SEED_REFUSAL_FIXES.get(
                        str(refusal), "loosen that scope limit in the profile, or drop the seed"),
                )  # fmt: skip
                self._counts["corpus/seeds/bad/out-of-scope"] += 1
            request = self._page_request(url, depth=0)
            if request is not None:
                yield request
        self._flush_counts()
        if self.crawler.settings.getbool("CORPUS_RECRAWL_ENABLED"):
            for request in self._recrawl_requests():
                yield request
        for url in sitemaps:
            if (sitemap := self._sitemap_request(url)) is not None:
                yield sitemap
        if self.config.sitemaps_from_robots:
            origins = dict.fromkeys(
                f"{p.scheme}://{p.netloc}" for p in map(urlsplit, seeds) if p.netloc
            )
            if self.crawler.settings.getbool("ROBOTSTXT_OBEY"):
                # RobotsTxtMiddleware fetches each seed host's robots.txt anyway: read
                # its Sitemap: lines from that response instead of fetching it twice.
                self._robots_origins.update(origins)
            else:
                for origin in origins:
                    if (sitemap := self._sitemap_request(origin + "/robots.txt")) is not None:
                        yield sitemap

    def _recrawl_requests(self) -> Iterator[Request]:
        """`crawl --recrawl`: every known URL whose revisit is due, as a conditional GET."""
        from pipelines.campaign import CampaignExtension

        campaign = self.crawler.get_extension(CampaignExtension)
        if campaign is None:
            return
        due = 0
        #: Due URLs this profile's scope refuses (it was narrowed since they were
        #: crawled), by refusal: counted and named, left in the store (not deleted): a
        #: scope widened again recrawls them.
        out_of_scope: Counter[str] = Counter()
        example = ""
        for url, etag, last_modified, depth in campaign.store.due_urls():
            refusal = self.scope.check(url)
            if refusal is not None:
                out_of_scope[str(refusal)] += 1
                example = example or f"{url} ({refusal})"
                self.logger.debug("recrawl: %s is out of scope (%s): not revisited", url, refusal)
                continue
            headers: dict[str, str] = {}
            if etag:
                headers["If-None-Match"] = etag
            if last_modified:
                headers["If-Modified-Since"] = last_modified
            meta: dict[str, Any] = {
                "depth": depth,
                "corpus_recrawl": url,
                # a 304 is an answer, not an error: let it reach the callback
                "handle_httpstatus_list": [304],
            }
            due += 1
            yield Request(
                url,
                callback=self.parse,
                errback=self._download_failed,
                headers=headers,
                meta=meta,
                priority=-depth,
                dont_filter=True,
            )
        self.logger.info("recrawl: %d known URL(s) due for a revisit", due)
        self._stats.set_value("corpus/recrawl/due", due)
        for reason, count in out_of_scope.items():
            self._stats.set_value(f"corpus/recrawl/refused/{reason}", count)
        if out_of_scope:
            reasons = ", ".join(f"{r} {n:,}" for r, n in out_of_scope.most_common())
            self.logger.warning(
                "recrawl: %d due URL(s) are out of this profile's scope (%s), e.g. %s: not"
                " revisited, counted as corpus/recrawl/refused/<reason>; they stay in the"
                " campaign, and a recrawl with the scope widened again revisits them",
                out_of_scope.total(), reasons, example,
            )  # fmt: skip

    def _robots_received(self, response: Response, request: Request) -> None:
        """`response_received` handler: the Sitemap: lines of the robots.txt files that
        RobotsTxtMiddleware fetched for the seed hosts."""
        if not self._robots_origins or not response.url.endswith("/robots.txt"):
            return
        parts = urlsplit(response.url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if parts.path != "/robots.txt" or origin not in self._robots_origins:
            return
        self._robots_origins.discard(origin)
        if response.status == 200:
            for sitemap in self._sitemap_links(response):
                self.crawler.engine.crawl(sitemap)

    def _sitemap_request(self, url: str, depth: int = 0) -> Request | None:
        refusal = self._sitemap_budget.admit(url, depth)
        if refusal is not None:
            self._stats.inc_value(f"corpus/sitemaps/refused/{refusal}")
            return None
        meta = {
            "depth": 0,
            "corpus_sitemap": True,
            "corpus_sitemap_depth": depth,
            # sitemaps.org allows 50 MB of XML, more than a page: the sitemap cap applies
            "download_maxsize": self.config.sitemap_limits.max_bytes,
        }
        return Request(url, callback=self._parse_sitemap, errback=self._download_failed, meta=meta)

    async def _parse_sitemap(self, response: Response) -> AsyncIterator[Any]:
        content: SitemapContent | None
        if urlsplit(response.url).path == "/robots.txt":  # read to 500 KiB only: quick here
            content = read_sitemap(response.body, response.url, self.config.sitemap_limits)
        else:  # in a worker process: seconds of CPU for a big sitemap (pipelines.sitemap_reader)
            content = await self._sitemap_reader.read(response.body, response.url)
        if content is None:
            self._stats.inc_value("corpus/sitemaps/failed")
        else:
            for request in self._sitemap_links(response, content):
                yield request
        yield RequestDone(response.url, response.meta.get("corpus_row"), "sitemap")

    def _sitemap_links(
        self, response: Response, content: SitemapContent | None = None
    ) -> Iterator[Request]:
        depth = int(response.meta.get("corpus_sitemap_depth", 0))
        if content is None:  # a robots.txt, read to 500 KiB only: quick enough here
            content = read_sitemap(response.body, response.url, self.config.sitemap_limits)
        if content.kind is SitemapKind.INVALID:
            self.logger.warning("ignoring a sitemap that is not XML or text: %s", response.url)
            self._stats.inc_value("corpus/sitemaps/invalid")
            return
        self._stats.inc_value("corpus/sitemaps/read")
        if content.truncated:
            self._stats.inc_value("corpus/sitemaps/truncated")
        for url in content.urls:
            if not content.lists_sitemaps:
                request = self._page_request(url, depth=0)
            elif self.scope.check(url, page=False) is None:
                # a robots.txt's Sitemap: lines are the top level, not one level down
                request = self._sitemap_request(url, depth + (content.kind is SitemapKind.INDEX))
            else:
                request = None
            if request is not None:
                yield request
        self._flush_counts()

    # -- scope --------------------------------------------------------------------------

    def _page_request(self, url: str, depth: int, *, verbatim: bool = False) -> Request | None:
        """A request for a page, or None if it is out of scope.

        Pages already seen and page budgets are the scheduler's business: they are
        campaign state, kept on disk (`pipelines.scheduler`).
        """
        url = url.partition("#")[0]
        refusal = self.scope.check(url)
        if refusal is not None:
            self._counts[f"corpus/links/refused/{refusal}"] += 1
            return None
        trap = self._domains.admit(url, depth)
        if trap is not None:
            self._counts[f"corpus/links/refused/{trap}"] += 1
            return None
        # corpus_budget: counts against the page budgets when scheduled
        meta: dict[str, Any] = {"depth": depth, "corpus_budget": True}
        if verbatim:
            # the worker already made the URL safe (w3lib.url.safe_url_string)
            meta["verbatim_url"] = True
        return Request(
            url, callback=self.parse, errback=self._download_failed, meta=meta, priority=-depth
        )

    def _follow_requests(
        self, page_url: str, depth: int, links: Iterable[str]
    ) -> Iterator[Request]:
        if not self.config.follow_links:
            return
        depth += 1
        if self.config.max_depth is not None and depth > self.config.max_depth:
            self._stats.inc_value("corpus/links/too-deep", len(tuple(links)))
            return
        self._stats.max_value("corpus/depth_max", depth)
        links, cut = cap_links(tuple(links), self.config.traps)
        if cut:
            self._stats.inc_value("corpus/links/over-max-links-per-page", cut)
        for url in links:
            request = self._page_request(url, depth, verbatim=True)
            if request is not None:
                yield request
        self._flush_counts()

    def _flush_counts(self) -> None:
        stats = self._stats
        for key, count in self._counts.items():
            stats.inc_value(key, count)
        self._counts.clear()

    # -- responses ----------------------------------------------------------------------

    async def parse(self, response: Response) -> AsyncIterator[Any]:
        change = response.meta.get("corpus_change")
        if response.status == 304 or change == "unchanged":
            # archived as a revisit; its text and links are in the corpus already
            yield RequestDone(response.url, response.meta.get("corpus_row"), "unchanged")
            return
        page = fetched_page(response)
        if self._processor is None:
            if (
                self._link_extractor is not None
                and page.is_html
                and isinstance(response, TextResponse)
            ):
                urls = self._callback_links(response)
                for request in self._follow_requests(page.url, page.depth, urls):
                    yield request
            yield RequestDone(page.url, page.row, "fetched")
            return
        links, item = await self._processor.process(page, response.body)
        for request in self._follow_requests(page.url, page.depth, links):
            yield request
        # last: by the time the pipelines see it, every link above is scheduled
        yield item

    def _download_failed(self, failure: Failure) -> None:
        """One log line per page that could not be fetched (the stats count them by type)."""
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        row = request.meta.get("corpus_row") if request is not None else None
        outcome = f"failed:{failure.type.__name__ if failure.type else 'error'}"
        if failure.check(IgnoreRequest):
            pass  # refused on purpose (robots.txt, scope, address): counted where refused
        elif failure.check(DownloadCancelledError):
            pass  # over the size cap: counted as too-large by SizeCapMiddleware
        else:
            self.logger.warning(
                "could not fetch %s: %s", url, failure.getErrorMessage() or failure.type
            )
        # An errback's output skips the spider middlewares, so the request is finished
        # here rather than by an item that feed exports would see.
        from pipelines.campaign import CampaignExtension

        campaign = self.crawler.get_extension(CampaignExtension)
        if campaign is not None:
            campaign.item_done(RequestDone(url, row, outcome))

    def _callback_links(self, response: TextResponse) -> list[str]:
        """Links found on the reactor thread, when the extraction workers are off."""
        robots = response.xpath("//meta[translate(@name,'ROBTS','robts')='robots']/@content")
        if any("nofollow" in c.lower() or "none" in c.lower() for c in robots.getall()):
            return []
        urls = [
            link.url for link in self._link_extractor.extract_links(response) if not link.nofollow
        ]
        # MetaRefreshMiddleware is off in this project (the workers follow refreshes as links)
        _, refresh = get_meta_refresh(response.text, response.url)
        if refresh:
            urls.append(safe_url_string(refresh, response.encoding))
        return urls


def _content_type(response: Response) -> tuple[str, str | None]:
    raw = response.headers.get(b"Content-Type") or b""
    return parse_content_type(raw.decode("latin-1"))


def fetched_page(response: Response) -> FetchedPage:
    """The item for a response: what the pipelines need, nothing parsed."""
    meta = response.meta
    media, charset = _content_type(response)
    is_html = response_is_html(media, response.body)
    redirects = meta.get("redirect_urls")
    last_modified = response.headers.get(b"Last-Modified")
    return FetchedPage(
        url=response.url,
        request_url=redirects[0] if redirects else response.url,
        status=response.status,
        fetched_at=meta.get("corpus_fetched_at") or datetime.now(timezone.utc).isoformat(),
        depth=int(meta.get("depth", 0)),
        content_type=media,
        http_charset=charset,
        last_modified=last_modified.decode("latin-1") if last_modified else None,
        ip_address=str(response.ip_address) if response.ip_address else "",
        is_html=is_html,
        size=len(response.body),
        row=meta.get("corpus_row"),
        response_id=meta.get("corpus_response_id", ""),
    )

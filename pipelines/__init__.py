"""Scrapy adapters of the corpus crawler: the library (`corpus_crawler`) inside a crawl.

    Response --spider (awaits PageProcessor: extract() + links, one parse, in a worker)
             --> link requests (spider middlewares, CampaignScheduler) + an item
             --> DropPipeline / output pipelines --> the writer thread

* `settings` - the Scrapy settings module (`scrapy.cfg` points here);
* `bridge` - a crawl profile as Scrapy settings;
* `campaign` - the campaign folder: state, lock, writer; finishes each request;
* `scheduler` - the frontier, seen set and page budgets, on disk (SQLite);
* `extract`, `pool`, `worker` - extraction in a process pool, awaited by the spider;
* `middlewares` - address guard, redirect scope, WARC capture, size cap;
* `writer`, `outputs` - the one writer thread and the pipelines feeding it;
* `extensions` - progress lines and the JSON summary;
* `cli` - `corpus-crawler crawl` and `corpus-crawler demo`.

Importing this package does not import Scrapy: the worker processes import
`pipelines.worker` only.
"""

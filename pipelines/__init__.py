"""Scrapy adapters of the corpus crawler: the library (`corpus_crawler`) inside a crawl.

    Response --spider--> FetchedPage --ExtractPipeline--> CorpusDocument --writers
                                 (worker processes: extract() + links, one parse)

* `settings` - the Scrapy settings module (`scrapy.cfg` points here);
* `bridge` - a crawl profile as Scrapy settings;
* `extract`, `pool`, `worker` - extraction in a process pool, links fed back to the spider;
* `middlewares` - address guard, redirect scope, WARC capture, size cap;
* `writer`, `outputs` - the one writer thread and the pipelines feeding it;
* `extensions` - progress lines and the JSON summary;
* `cli` - `corpus-crawler crawl` and `corpus-crawler demo`.

Importing this package does not import Scrapy: the worker processes import
`pipelines.worker` only.
"""

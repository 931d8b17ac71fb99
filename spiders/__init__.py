"""Scrapy spiders: `corpus` (spiders/corpus.py) and its scope rules (spiders/scope.py)."""

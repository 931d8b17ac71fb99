"""Registered domains from the public suffix list, offline.

Per-domain budgets must count `a.example.co.uk` and `b.example.co.uk` as one
site, and `alice.blogspot.com` and `bob.blogspot.com` as two: that needs the
public suffix list (PSL). `tldextract` ships a snapshot of it inside the
package; by default it would also download a fresh copy from the internet on
first use and cache it under the home folder. A crawler must contact only the
hosts it crawls, so this module uses the bundled snapshot only: no download,
no cache files.

The PSL's private section is included (`blogspot.com`, `github.io`,
`s3.amazonaws.com`...): those suffixes hand out subdomains to unrelated owners.
A host under no listed suffix (`.test`, `.internal`, a typo) follows the PSL
algorithm's default rule `*`: its last label is the suffix.
"""

from __future__ import annotations

import functools
import ipaddress

import tldextract

__all__ = ["is_public_suffix", "registered_domain", "suffix_extractor"]


@functools.cache
def suffix_extractor() -> tldextract.TLDExtract:
    """The one offline extractor (the snapshot is parsed once, on first use, ~30 ms)."""
    return tldextract.TLDExtract(
        cache_dir=None,
        suffix_list_urls=(),
        fallback_to_snapshot=True,
        include_psl_private_domains=True,
    )


def _normalise(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """The registrable domain of `host`: `news.bbc.co.uk` -> `bbc.co.uk`.

    An IP address is its own domain; so is a public suffix itself (`co.uk`) and a
    single-label host (`localhost`). Case, a trailing dot and IPv6 brackets are
    normalised away.
    """
    host = _normalise(host)
    if not host or _is_ip(host):
        return host
    parts = suffix_extractor()(host)
    if parts.suffix and parts.domain:
        return f"{parts.domain}.{parts.suffix}"
    if parts.suffix:  # the host is a public suffix
        return host
    labels = host.split(".")
    return ".".join(labels[-2:])


def is_public_suffix(host: str) -> bool:
    """True if `host` is itself a public suffix (`com`, `co.uk`, `blogspot.com`): a cookie
    set for it would reach every site under it."""
    host = _normalise(host)
    if not host or _is_ip(host):
        return False
    parts = suffix_extractor()(host)
    return bool(parts.suffix) and not parts.domain

"""The reactor's host name resolver: resolve once, hand Twisted only vetted addresses.

Twisted's HTTP client (under Scrapy's download handler) connects to exactly the
addresses the reactor's `IHostnameResolver` delivers. This resolver filters
every answer through the `AddressPolicy` before delivering it, so a connection
can only go to an address that passed the policy: there is no second,
independent lookup for a DNS-rebinding name to answer differently, and the
WARC capture never sees an exchange with a refused address.

* A failed lookup delivers no address (the connection fails with
  `DNSLookupError`); it is cached too, for a shorter time, so a name that fails
  and then answers a private address is not asked again at once.
* Concurrent lookups of one name share one query and one answer.
* The cache is bounded (least recently used entries go first) and entries
  expire; an expired or evicted name is looked up and filtered again, so
  eviction costs a query, never safety.
* Answers come from the system resolver (getaddrinfo in the reactor's thread
  pool) or, when the profile names DNS servers, from those servers directly
  (`network.dns_servers`).

Scrapy builds this from the process settings (`TWISTED_DNS_RESOLVER`) before
the profile is read; `AddressGuardMiddleware` hands it the crawl's policy and
DNS settings with `configure()`.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.interfaces import (
    IAddress,
    IHostnameResolver,
    IHostResolution,
    IResolutionReceiver,
)
from zope.interface import implementer, provider

from corpus_crawler.addresses import (
    AddressPolicy,
    AddressRefusal,
    IPAddress,
    literal_address,
    parse_dns_server,
)

__all__ = ["PinnedResolver", "ResolverConfig", "installed_resolver", "parse_dns_server"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ResolverConfig:
    """`CORPUS_NETWORK_DNS_*` plus the address policy."""

    policy: AddressPolicy = field(default_factory=AddressPolicy)
    #: (host, port) of DNS servers to ask instead of the system resolver.
    dns_servers: tuple[tuple[str, int], ...] = ()
    #: Names kept in the cache.
    cache_size: int = 100_000
    #: Seconds an answer is reused (the system resolver gives no TTL).
    cache_seconds: float = 3600.0
    #: Seconds a failed lookup is remembered.
    failure_seconds: float = 300.0
    #: Seconds per query to `dns_servers` (then one retry with twice as long).
    query_timeout: float = 2.0


@dataclass(frozen=True, slots=True)
class _Answer:
    addresses: tuple[IPAddress, ...]
    expires: float
    error: str = ""


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:  # pragma: no cover - Twisted never cancels host resolutions
        raise NotImplementedError


@implementer(IHostnameResolver)
class PinnedResolver:
    """`IHostnameResolver` that filters answers through the address policy and caches them."""

    def __init__(
        self,
        reactor: Any,
        config: ResolverConfig = ResolverConfig(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reactor = reactor
        # zope interfaces do not type-check: the resolvers are Any to mypy
        self.system: Any = reactor.nameResolver
        if isinstance(self.system, PinnedResolver):  # installed twice: wrap the real one
            self.system = self.system.system
        self.clock = clock
        self.stats: Any = None
        self._cache: OrderedDict[str, _Answer] = OrderedDict()
        self._pending: dict[str, list[Callable[[_Answer], None]]] = {}
        self._dns_client: Any = None
        self.config = config

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> PinnedResolver:
        # Built from the process settings, before any profile is read: the strict
        # default policy holds until AddressGuardMiddleware calls configure().
        return cls(reactor)

    def install_on_reactor(self) -> None:
        # AddressGuardMiddleware may have installed and configured one already (a crawl
        # can be set up before the reactor): replacing it would lose the crawl's policy
        if not isinstance(self.reactor.nameResolver, PinnedResolver):
            self.reactor.installNameResolver(self)

    def configure(self, config: ResolverConfig, stats: Any = None) -> None:
        """The crawl's policy and DNS settings; forgets cached answers."""
        self.config = config
        self.stats = stats
        self._cache.clear()
        self._dns_client = None
        if config.dns_servers:
            from twisted.names import client

            timeout = (max(1, round(config.query_timeout)), max(2, round(2 * config.query_timeout)))
            self._dns_client = client.Resolver(
                servers=list(config.dns_servers), reactor=self.reactor, timeout=timeout
            )

    # -- IHostnameResolver ----------------------------------------------------------------

    def resolveHostName(
        self,
        resolutionReceiver: Any,  # IResolutionReceiver
        hostName: str,
        portNumber: int = 0,
        addressTypes: Sequence[type[IAddress]] | None = None,
        transportSemantics: str = "TCP",
    ) -> Any:  # IHostResolution
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)

        def deliver(answer: _Answer) -> None:
            self._deliver(resolutionReceiver, answer, portNumber, addressTypes)

        name = hostName.lower().rstrip(".")
        literal = literal_address(name)
        if literal is not None:
            deliver(_Answer((literal,), 0.0))
            return resolution
        answer = self._cached(name)
        if answer is not None:
            deliver(answer)
            return resolution
        waiting = self._pending.get(name)
        if waiting is not None:
            waiting.append(deliver)
            return resolution
        self._pending[name] = [deliver]
        self._inc("corpus/dns/lookups")
        self._lookup(name).addBoth(self._resolved, name)
        return resolution

    # -- what the guard asks ----------------------------------------------------------------

    def refusal(self, host: str, port: int | None = None) -> AddressRefusal | None:
        """Why `host` got no address on its last lookup, if the policy refused its answer
        (None if it resolved to an allowed address, failed, or was not looked up)."""
        name = host.lower().rstrip(".").strip("[]")
        literal = literal_address(name)
        if literal is not None:
            return self.config.policy.refusal(literal, port)
        answer = self._cache.get(name)
        if answer is None or not answer.addresses:
            return None
        refusals = [self.config.policy.refusal(a, port) for a in answer.addresses]
        if any(r is None for r in refusals):
            return None
        return refusals[0]

    # -- internals ------------------------------------------------------------------------

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def _cached(self, name: str) -> _Answer | None:
        answer = self._cache.get(name)
        if answer is None:
            return None
        if answer.expires <= self.clock():
            del self._cache[name]
            return None
        self._cache.move_to_end(name)
        return answer

    def _resolved(self, result: Any, name: str) -> None:
        now = self.clock()
        if isinstance(result, tuple) and result:
            answer = _Answer(result, now + self.config.cache_seconds)
        else:
            error = "no address" if isinstance(result, tuple) else str(result.value)
            answer = _Answer((), now + self.config.failure_seconds, error or "lookup failed")
            self._inc("corpus/dns/failures")
            logger.debug("DNS lookup of %s failed: %s", name, answer.error)
        if self.config.cache_size > 0:
            self._cache[name] = answer
            self._cache.move_to_end(name)
            while len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)
        for deliver in self._pending.pop(name, []):
            deliver(answer)

    def _deliver(
        self,
        receiver: Any,
        answer: _Answer,
        port: int,
        address_types: Sequence[type[IAddress]] | None,
    ) -> None:
        policy = self.config.policy
        for address in answer.addresses:
            refusal = policy.refusal(address, port)
            if refusal is not None:
                self._inc(f"corpus/dns/refused/{refusal}")
                continue
            if isinstance(address, ipaddress.IPv4Address):
                if address_types is None or IPv4Address in address_types:
                    receiver.addressResolved(IPv4Address("TCP", str(address), port))
            elif address_types is None or IPv6Address in address_types:
                receiver.addressResolved(IPv6Address("TCP", str(address), port))
        receiver.resolutionComplete()

    def _lookup(self, name: str) -> Deferred[tuple[IPAddress, ...]]:
        if self._dns_client is not None:
            return self._lookup_servers(name)
        return self._lookup_system(name)

    def _lookup_system(self, name: str) -> Deferred[tuple[IPAddress, ...]]:
        done: Deferred[tuple[IPAddress, ...]] = Deferred()
        found: list[IPAddress] = []

        @provider(IResolutionReceiver)
        class Collector:
            @staticmethod
            def resolutionBegan(resolution: IHostResolution) -> None:
                pass

            @staticmethod
            def addressResolved(address: IAddress) -> None:
                host = getattr(address, "host", None)
                parsed = literal_address(str(host)) if host is not None else None
                if parsed is not None and parsed not in found:
                    found.append(parsed)

            @staticmethod
            def resolutionComplete() -> None:
                done.callback(tuple(found))

        self.system.resolveHostName(Collector, name, 0)
        return done

    def _lookup_servers(self, name: str) -> Deferred[tuple[IPAddress, ...]]:
        from twisted.names import dns

        client = self._dns_client
        queries = DeferredList(
            [client.lookupAddress(name), client.lookupIPV6Address(name)], consumeErrors=True
        )

        def collect(results: list[tuple[bool, Any]]) -> tuple[IPAddress, ...]:
            found: list[IPAddress] = []
            for ok, value in results:
                if not ok:
                    continue
                answers = value[0]
                for record in answers:
                    if record.type == dns.A:
                        found.append(
                            ipaddress.IPv4Address(socket.inet_aton(record.payload.dottedQuad()))
                        )
                    elif record.type == dns.AAAA:
                        found.append(ipaddress.IPv6Address(record.payload.address))
            return tuple(dict.fromkeys(found))

        return queries.addCallback(collect)


def installed_resolver(reactor: Any) -> PinnedResolver:
    """The reactor's PinnedResolver, installed now if another resolver is in place."""
    current = reactor.nameResolver
    if isinstance(current, PinnedResolver):
        return current
    resolver = PinnedResolver(reactor)
    resolver.install_on_reactor()
    return resolver

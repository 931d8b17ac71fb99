"""Which IP addresses a crawl may connect to: the address policy, as pure functions.

A crawler that follows links from the open web must not be steered into the
machine's own network: loopback services, the cloud metadata endpoint
(169.254.169.254), private ranges, or their disguises in IPv6. The policy here
refuses every address that `ipaddress` does not call global, and the IPv6
forms that smuggle a refused IPv4 address or are deprecated:

* `::/96` IPv4-compatible (`::127.0.0.1`), deprecated by RFC 4291;
* `::ffff:0:0/96` IPv4-mapped (`::ffff:10.0.0.1`): judged as the IPv4 address;
* `2002::/16` 6to4 (`2002:7f00:1::`) embedding a refused IPv4 address;
* `2001::/32` Teredo embedding a refused server or client address;
* `64:ff9b::/96` NAT64 (RFC 6052) and `64:ff9b:1::/48` (RFC 8215): the gateway
  would connect to whatever IPv4 address is embedded;
* `fec0::/10` site-local, deprecated by RFC 3879;
* multicast, unspecified, reserved and documentation ranges.

A profile can allow networks (optionally on one port only) or switch the
policy off (`allow_private`). `pipelines/resolver.py` applies it to every DNS
answer before Twisted connects, so a connection only ever goes to an address
that passed this check.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AddressPolicy",
    "AddressRefusal",
    "AllowedNetwork",
    "IPAddress",
    "IPNetwork",
    "literal_address",
    "parse_allowed_network",
    "parse_dns_server",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")


class AddressRefusal(enum.Enum):
    """Why an address is refused; counted under ``corpus/refused/<value>``."""

    #: Not a global unicast address (private, loopback, link-local, shared, reserved...).
    PRIVATE = "private-address"
    #: An IPv6 form carrying a refused IPv4 address (mapped, 6to4, Teredo).
    EMBEDDED_PRIVATE = "embedded-private-address"
    #: IPv4-compatible or site-local IPv6: deprecated, never a public server.
    DEPRECATED_IPV6 = "deprecated-ipv6"
    #: An IPv6-to-IPv4 translation prefix: the gateway decides where it goes.
    NAT64 = "nat64"
    MULTICAST = "multicast"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class AllowedNetwork:
    """A network the profile allows despite the policy; `port` None means every port."""

    network: IPNetwork
    port: int | None = None

    def matches(self, address: IPAddress, port: int | None) -> bool:
        if self.port is not None and port != self.port:
            return False
        return address.version == self.network.version and address in self.network

    def __str__(self) -> str:
        if self.port is None:
            return str(self.network)
        if self.network.version == 6:
            return f"[{self.network}]:{self.port}"
        return f"{self.network}:{self.port}"


def parse_allowed_network(text: str) -> AllowedNetwork:
    """`127.0.0.1/32`, `10.0.0.0/8:8080`, `::1`, `[fd00::/8]:443` (a bare address is a /32 or
    /128). Raises ValueError with the accepted forms."""
    value = text.strip()
    port: int | None = None
    network_text = value
    if value.startswith("["):
        inside, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(_network_help(text))
        network_text = inside
        if rest:
            port = _port(rest[1:], text)
    elif value.count(":") == 1:  # IPv4 with a port; a bare IPv6 network has two or more
        network_text, _, port_text = value.partition(":")
        port = _port(port_text, text)
    try:
        network = ipaddress.ip_network(network_text, strict=False)
    except ValueError:
        raise ValueError(_network_help(text)) from None
    return AllowedNetwork(network, port)


def _port(text: str, whole: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(_network_help(whole))
    return int(text)


def _network_help(text: str) -> str:
    return (
        f"{text!r} is not an IP network: write e.g. `127.0.0.1/32`, `10.0.0.0/8:8080` (one port"
        " only), `::1/128` or `[fd00::/8]:8080`"
    )


def literal_address(host: str) -> IPAddress | None:
    """The IP address a URL's host names literally (`[::1]` too), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which addresses may be contacted: public ones, plus what the profile allows."""

    #: Allow every address (a crawl of an intranet).
    allow_private: bool = False
    allowed_networks: tuple[AllowedNetwork, ...] = ()

    def __post_init__(self) -> None:
        # a bare network means every port
        networks = tuple(
            n if isinstance(n, AllowedNetwork) else AllowedNetwork(n) for n in self.allowed_networks
        )
        object.__setattr__(self, "allowed_networks", networks)

    @classmethod
    def build(
        cls, allow_private: bool = False, allowed_networks: Iterable[str] = ()
    ) -> AddressPolicy:
        """From the profile's strings; raises ValueError naming a bad network."""
        return cls(allow_private, tuple(parse_allowed_network(n) for n in allowed_networks))

    def refusal(self, address: IPAddress, port: int | None = None) -> AddressRefusal | None:
        """None if `address` (on `port`) may be contacted, else why not."""
        if self.allow_private or self._allowed(address, port):
            return None
        if isinstance(address, ipaddress.IPv6Address):
            mapped = address.ipv4_mapped
            if mapped is not None:
                if self._allowed(mapped, port):
                    return None
                inner = _ipv4_refusal(mapped)
                return None if inner is None else AddressRefusal.EMBEDDED_PRIVATE
            return _ipv6_refusal(address)
        return _ipv4_refusal(address)

    def allows(self, address: IPAddress, port: int | None = None) -> bool:
        return self.refusal(address, port) is None

    def _allowed(self, address: IPAddress, port: int | None) -> bool:
        return any(allowed.matches(address, port) for allowed in self.allowed_networks)


def _ipv4_refusal(address: ipaddress.IPv4Address) -> AddressRefusal | None:
    if address.is_multicast:
        return AddressRefusal.MULTICAST
    if not address.is_global:
        return AddressRefusal.PRIVATE
    return None


def _ipv6_refusal(address: ipaddress.IPv6Address) -> AddressRefusal | None:
    if address.is_multicast:
        return AddressRefusal.MULTICAST
    # the embedding forms first: some are "global" to ipaddress, and their refusal says more
    if address in _IPV4_COMPATIBLE or address in _SITE_LOCAL:
        if address.is_loopback or address.is_unspecified:
            return AddressRefusal.PRIVATE
        return AddressRefusal.DEPRECATED_IPV6
    if any(address in network for network in _NAT64):
        return AddressRefusal.NAT64
    if address in _SIX_TO_FOUR:
        # judged by the IPv4 address it embeds, as the mapped form is: Python 3.13's
        # ipaddress (and 3.12.4's) calls all of 2002::/16 private, 3.11's none of it,
        # and a crawl must not refuse on one interpreter what it fetches on another
        embedded = address.sixtofour
        if embedded is None or _ipv4_refusal(embedded) is not None:
            return AddressRefusal.EMBEDDED_PRIVATE
        return None
    if address in _TEREDO and address.teredo is not None:
        server, client = address.teredo
        if _ipv4_refusal(server) is not None or _ipv4_refusal(client) is not None:
            return AddressRefusal.EMBEDDED_PRIVATE
    if not address.is_global:
        return AddressRefusal.PRIVATE
    return None


def parse_dns_server(text: str) -> tuple[str, int]:
    """`192.0.2.53`, `192.0.2.53:5353`, `[2001:db8::53]:53`; raises ValueError with the forms."""
    value = text.strip()
    host, port = value, "53"
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        if rest:
            port = rest.removeprefix(":")
    elif value.count(":") == 1:
        host, _, port = value.partition(":")
    if literal_address(host) is None or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(
            f"{text!r} is not a DNS server address: write an IP address with an optional port,"
            " e.g. `192.0.2.53`, `127.0.0.1:5353` or `[2001:db8::53]:53`"
        )
    return host, int(port)

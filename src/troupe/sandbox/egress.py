"""Where the navigator's browser may go: no loopback, private or link-local address.

:class:`EgressPolicy` judges one URL. The host is read the way a browser
reads it (``127.1``, ``2130706433``, ``0x7f.0.0.1``, ``0177.0.0.1`` and
``[::ffff:127.0.0.1]`` are all loopback), names are resolved, and any
address that is not globally routable (loopback, RFC 1918, fc00::/7,
169.254/16 with the cloud metadata service, unspecified, multicast,
reserved) is refused unless the host is listed in ``browser.allow_hosts``.
The browser session applies it to every request a page makes through
Playwright's request routing, and redirects are followed one hop at a time
so each hop is judged too.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

LOCAL_SCHEMES = frozenset({"data", "blob", "about"})
"""Schemes that load nothing from the network."""
NETWORK_SCHEMES = frozenset({"http", "https", "ws", "wss"})

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip(host: str) -> IpAddress | None:
    """``host`` as an address in any spelling a browser accepts, else None (a name)."""
    text = host.strip("[]").rstrip(".")
    try:
        address: IpAddress = ipaddress.ip_address(text)
    except ValueError:
        try:
            # inet_aton takes the old forms: 127.1, 2130706433, 0x7f.1, 0177.0.0.1.
            address = ipaddress.IPv4Address(socket.inet_aton(text))
        except (OSError, ValueError):
            return None
    return address


def _unmapped(address: IpAddress) -> IpAddress:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address.teredo is not None:
            return address.teredo[1]
    return address


def is_public(address: IpAddress) -> bool:
    """True only for a globally routable unicast address (IPv4 inside IPv6 unwrapped)."""
    plain = _unmapped(address)
    return plain.is_global and not plain.is_multicast


@dataclass(frozen=True)
class EgressPolicy:
    """Which hosts the browser may reach; ``allow_hosts`` lifts the private-address rule.

    An entry is a host (``127.0.0.1``, ``intranet.local``) or a host with a
    port (``127.0.0.1:8765``), compared after the same normalisation as URLs.
    """

    allow_hosts: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def allowing(cls, hosts: Iterable[str] = ()) -> EgressPolicy:
        """A policy with ``hosts`` allowed (entries are normalised)."""
        return cls(frozenset(_normal_entry(h) for h in hosts if h.strip()))

    def needs_approval(self, url: str) -> bool:
        """True when loading ``url`` reaches a network host ``allow_hosts`` does not list.

        Such a load needs a person's yes (an approved navigation); the config
        listing the host is that yes given in advance. ``data:``, ``blob:`` and
        ``about:`` URLs load nothing from the network and need none.
        """
        try:
            scheme = urlsplit(url).scheme.lower()
        except ValueError:
            return True
        return scheme not in LOCAL_SCHEMES and not self._listed(url)

    def _listed(self, url: str) -> bool:
        """True when ``allow_hosts`` names the host of ``url`` (alone or with its port)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return False
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".").lower()
        if not host or scheme not in NETWORK_SCHEMES:
            return False
        address = parse_ip(host)
        canonical = str(_unmapped(address)) if address is not None else host
        port = port or (443 if scheme in ("https", "wss") else 80)
        return bool({canonical, f"{canonical}:{port}", host} & self.allow_hosts)

    def refusal(self, url: str, *, resolve: bool = True) -> str | None:
        """Why ``url`` may not be loaded, or None when it may."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            return f"{url!r} is not a valid URL ({exc})"
        scheme = parts.scheme.lower()
        if scheme in LOCAL_SCHEMES:
            return None
        if scheme not in NETWORK_SCHEMES:
            return f"the scheme {scheme!r} is not loaded by the navigator"
        host = (parts.hostname or "").rstrip(".").lower()
        if not host:
            return f"{url!r} has no host"
        if not resolve and parse_ip(host) is None and not host.endswith("localhost"):
            return None
        try:
            self.connect_address(host, port or (443 if scheme in ("https", "wss") else 80), url)
        except EgressRefused as exc:
            return str(exc)
        return None

    def connect_address(self, host: str, port: int, url: str | None = None) -> str:
        """The one address to connect to for ``host:port``, resolved once and checked.

        The caller connects to exactly this address, so a name that resolves to
        a public address when checked and to a private one when used (DNS
        rebinding) cannot slip through. A host ``allow_hosts`` lists may
        resolve anywhere. ``url`` is what the refusal quotes.

        Raises:
            EgressRefused: the host cannot be resolved or is not public.
        """
        host = host.strip("[]").rstrip(".").lower()
        shown = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
        listed = self._listed(shown)
        url = url or shown
        literal = parse_ip(host)
        if literal is not None:
            if listed or is_public(literal):
                return str(_unmapped(literal))
            raise EgressRefused(_private(url, str(_unmapped(literal))))
        if host == "localhost" or host.endswith(".localhost"):
            if listed:
                return "127.0.0.1"
            raise EgressRefused(_private(url, "localhost"))
        try:
            found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as exc:
            raise EgressRefused(f"the host {host!r} cannot be resolved ({exc})") from None
        addresses = [parse_ip(str(sockaddr[0]).split("%")[0]) for *_, sockaddr in found]
        for address, (*_, sockaddr) in zip(addresses, found, strict=True):
            if not listed and (address is None or not is_public(address)):
                raise EgressRefused(_private(url, f"{host} ({sockaddr[0]})"))
        first = next((a for a in addresses if a is not None), None)
        if first is None:
            raise EgressRefused(f"the host {host!r} has no address")
        return str(first)


class EgressRefused(Exception):
    """A connection the egress policy does not allow; the message says why."""


def _private(url: str, what: str) -> str:
    return (
        f"refused: {url!r} points at {what}, a loopback, private, link-local or otherwise "
        "non-public address; a page there could read your machine or network. Add the "
        "host to browser.allow_hosts in the config file if it is meant to be reachable"
    )


def _normal_entry(entry: str) -> str:
    text = entry.strip().lower().rstrip(".")
    host, sep, port = text.rpartition(":")
    if sep and port.isdigit() and not host.endswith(":"):
        address = parse_ip(host)
        return f"{_unmapped(address) if address else host.strip('[]')}:{port}"
    address = parse_ip(text)
    return str(_unmapped(address)) if address is not None else text.strip("[]")

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
        if self._listed(url):
            return None
        address = parse_ip(host)
        default_port = 443 if scheme in ("https", "wss") else 80
        if address is not None:
            return None if is_public(address) else _private(url, str(_unmapped(address)))
        if host == "localhost" or host.endswith(".localhost"):
            return _private(url, "localhost")
        if not resolve:
            return None
        try:
            found = socket.getaddrinfo(host, port or default_port, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as exc:
            return f"the host {host!r} cannot be resolved ({exc})"
        for *_, sockaddr in found:
            resolved = parse_ip(str(sockaddr[0]).split("%")[0])
            if resolved is None or not is_public(resolved):
                return _private(url, f"{host} ({sockaddr[0]})")
        return None


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

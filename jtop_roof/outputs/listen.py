"""Where ``serve`` and ``--prometheus`` listen: ``HOST:PORT``, ``[V6]:PORT`` or ``PORT`` read into a
host and a port, and whether a host is loopback only. Nothing here imports Textual."""

from __future__ import annotations

import ipaddress
import socket

from jtop_roof.model.digits import decimal_int
from jtop_roof.model.errors import UserError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9101
MAX_PORT = 65535


class ServeError(UserError):
    """A listen address that cannot be used (one line; exit 2)."""


def parse_listen(text: str | None) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``PORT`` (on loopback); None: ``127.0.0.1:9101``."""
    if text is None:
        return DEFAULT_HOST, DEFAULT_PORT
    text = text.strip()
    if text.isascii() and text.isdigit():
        return DEFAULT_HOST, _port(text, text)
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise ServeError(f"listen address {text!r}: write an IPv6 address as [ADDR]:PORT")
        port = rest[1:]
    else:
        host, sep, port = text.rpartition(":")
        if not sep:
            raise ServeError(f"listen address {text!r}: give HOST:PORT, [ADDR]:PORT or PORT")
        if ":" in host:
            raise ServeError(f"listen address {text!r}: write an IPv6 address as [ADDR]:PORT")
    if not host:
        raise ServeError(f"listen address {text!r} has no host: 0.0.0.0:PORT listens on every "
                         "interface, PORT alone on loopback")
    return host, _port(port, text)


def _port(port: str, text: str) -> int:
    number = decimal_int(port, 0, MAX_PORT)
    if number is None:
        raise ServeError(f"listen address {text!r}: the port must be a number from 0 to {MAX_PORT}")
    return number


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0] for info in found}
    return bool(addresses) and all(ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses)

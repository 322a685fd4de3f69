"""Which network addresses a tool may connect to on a model's behalf.

A tool that connects to an address a model chose (janito-system's GetUrl) asks
:func:`private_reason` about every address it is about to connect to, after resolving
the name itself, and refuses the connection when the address is private and
:func:`private_network_allowed` says no. Private means everything that is not a public
internet address: loopback, RFC 1918 private ranges, carrier-grade NAT, link-local
(with the cloud metadata service at 169.254.169.254), unique-local IPv6 (with
fd00:ec2::254), unspecified, multicast and reserved ranges, and IPv6 forms that embed
one of those IPv4 addresses.

The policy: a local command allows private addresses (the person at the shell reaches
them anyway); a server such as ``janito mcp serve`` refuses them unless told otherwise,
since its callers would otherwise reach what only the host can. ``JANITO_PRIVATE_NETWORK``
(``allow`` or ``refuse``) sets it for every command; a host sets it for the calls it
makes with :func:`private_network`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

ENV_VAR = "JANITO_PRIVATE_NETWORK"

#: Addresses of the metadata services of cloud providers (AWS, GCP and Azure share the
#: first; the second is AWS's IPv6 one; the last Alibaba's), named in refusals.
METADATA_ADDRESSES = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200"})

_allowed: ContextVar[bool | None] = ContextVar("janito_private_network", default=None)


def env_choice() -> bool | None:
    """What ``JANITO_PRIVATE_NETWORK`` says: True (allow), False (refuse), None (unset).

    Raises ValueError for any other value, so a typo never silently opens the network.
    """
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    if value in ("allow", "allowed", "1", "yes", "true"):
        return True
    if value in ("refuse", "refused", "deny", "0", "no", "false"):
        return False
    raise ValueError(f"{ENV_VAR}={os.environ[ENV_VAR]!r}: use 'allow' or 'refuse'")


def private_network_allowed() -> bool:
    """Whether a call running here may connect to private addresses.

    The host's choice (:func:`private_network`) first, then ``JANITO_PRIVATE_NETWORK``,
    else allowed. An unreadable environment value refuses.
    """
    chosen = _allowed.get()
    if chosen is not None:
        return chosen
    try:
        from_env = env_choice()
    except ValueError:
        return False
    return True if from_env is None else from_env


@contextmanager
def private_network(allowed: bool) -> Iterator[None]:
    """Within the block (this thread or task and what it starts), set the policy."""
    token = _allowed.set(bool(allowed))
    try:
        yield
    finally:
        _allowed.reset(token)


def private_reason(address: str) -> str | None:
    """Why the IP address ``address`` is not a public internet address, or None when it is.

    The text completes "``address`` is ...", e.g. "a loopback address". A string that is
    not an IP address is refused too (a tool must resolve names before asking).
    """
    import ipaddress

    try:
        ip: Any = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    return _reason(ip, ipaddress)


def _reason(ip: Any, ipaddress: Any) -> str | None:
    if ip.version == 6:
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in ipaddress.ip_network("64:ff9b::/96"):  # NAT64
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            inner = _reason(embedded, ipaddress)
            return None if inner is None else f"an IPv6 form of {embedded}, {inner}"
    if str(ip) in METADATA_ADDRESSES:
        return "a cloud metadata service address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "the unspecified address (it reaches this host)"
    if ip.is_link_local:
        return "a link-local address"
    if ip.version == 6 and ip in ipaddress.ip_network("fc00::/7"):
        return "a unique-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private network address"
    if not ip.is_global:
        return "a reserved or shared address, not a public one"
    return None

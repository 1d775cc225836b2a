"""Endpoints as programs, roles and launchers write them: 'host:port', an IPv6 host in brackets
('[::1]:6174'), a port in 1..65535. One check for every place that takes one."""

from __future__ import annotations

import ipaddress


def endpoint_problem(endpoint: str) -> str:
    """What is wrong with one endpoint, to follow its repr ("'h:0' has port 0, ..."), or ''."""
    host, sep, port = str(endpoint).rpartition(":")
    if not sep or not host:
        return "is not ip:port"
    if not port.isdigit() or not 0 < int(port) < 65536:
        return f"has port {port!r}, expected one in 1..65535"
    return host_problem(host)


def host_problem(host: str) -> str:
    """What is wrong with a host as an endpoint names it, to follow the endpoint's repr, or ''."""
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return f"names {host}, which is not an IPv6 address"
        return ""
    if ":" in host:
        return f"has a ':' in its host {host!r} (one port only; an IPv6 address goes in brackets: [::1]:6174)"
    if not host or any(c.isspace() for c in host) or "," in host:
        return f"has {host!r} for a host"
    return ""


def is_loopback(host: str) -> bool:
    """Whether a host names this machine's loopback: localhost, 127/8, [::1]."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False

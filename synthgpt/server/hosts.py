"""Which `Host` headers a served app accepts, and when serving should warn that its admin routes are open.

A page in a browser can rebind its own domain name to 127.0.0.1 and then talk to a server on the
developer's machine as if it were same-origin; the only trace is the `Host` header, which still names
the attacker's domain. A server bound to a loopback address therefore accepts only loopback names by
default; one bound to another address is meant to be reached by names synthgpt cannot know, so it
accepts any (`--allowed-hosts` narrows it).
"""

from __future__ import annotations

import ipaddress

__all__ = [
    "LOOPBACK_HOSTS",
    "check_host_pattern",
    "default_allowed_hosts",
    "is_loopback",
    "open_admin_warning",
]

LOOPBACK_HOSTS = ("localhost", "*.localhost", "127.0.0.1", "[::1]")
"""Names that reach the loopback interface only: browsers resolve `*.localhost` to loopback themselves."""


def is_loopback(host: str) -> bool:
    """Whether a bind address (or name) is reachable from this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _as_host_header(host: str) -> str:
    return f"[{host.strip('[]')}]" if ":" in host else host.lower()


def default_allowed_hosts(bind_host: str) -> tuple[str, ...]:
    """Loopback names (and the bound address itself) for a loopback bind, else any host."""
    if not is_loopback(bind_host):
        return ("*",)
    own = _as_host_header(bind_host)
    return LOOPBACK_HOSTS if own in LOOPBACK_HOSTS else (*LOOPBACK_HOSTS, own)


def check_host_pattern(pattern: str) -> str:
    """`pattern` if Starlette's TrustedHostMiddleware can use it (a host, `*.domain` or `*`); else ValueError
    saying what is accepted."""
    if (
        not pattern
        or ("*" in pattern[1:])
        or (pattern.startswith("*") and pattern != "*" and not pattern.startswith("*."))
    ):
        raise ValueError(
            f"{pattern!r} is not a host pattern: give a host name or address (IPv6 in brackets), "
            "`*.example.com` or `*`"
        )
    return pattern


def open_admin_warning(bind_host: str, admin: bool, token: str | None) -> str | None:
    """The warning to print when anyone on the network could read and clear the journal, else None."""
    if not admin or token or is_loopback(bind_host):
        return None
    return (
        f"listening on {bind_host} without --admin-token: anyone who can reach this port can read every "
        "journaled request and clear the journal (/_synthgpt/calls). Set --admin-token (or "
        "SYNTHGPT_ADMIN_TOKEN), or --no-admin to remove those routes."
    )

"""The local-only guard: refuse every network operation in this process.

Denpex promises that nothing leaves the machine. Rather than trusting every dependency
to behave, the server (and its drift worker) installs a ``sys.addaudithook`` that turns
each socket operation aimed at a network into an exception before it happens. Audit
hooks cannot be removed, so once installed the promise holds for the process lifetime.

UNIX-domain sockets stay allowed: they are local IPC (the asyncio self-pipe, a local
process pool), not network access.
"""

from __future__ import annotations

import socket
import sys
import threading
from typing import Any

# Audit events (CPython's socket module) that reach or prepare to reach a network.
_SOCKET_ADDRESS_EVENTS = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"}
_RESOLVER_EVENTS = {
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyname_ex",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
}


class NetworkRefused(PermissionError):
    """Raised in place of a network operation: Denpex runs local-only."""


_lock = threading.Lock()
_installed = False
_refused = 0
_last: str | None = None
_reporting = threading.local()


def refused_count() -> int:
    return _refused


def last_refused() -> str | None:
    return _last


def _is_local_ipc(args: tuple[Any, ...]) -> bool:
    sock = args[0] if args else None
    family = getattr(sock, "family", None)
    return family is not None and family == getattr(socket, "AF_UNIX", object())


def _describe(event: str, args: tuple[Any, ...]) -> str:
    if event in _SOCKET_ADDRESS_EVENTS:
        target = args[1] if len(args) > 1 else "?"
    else:
        target = args[0] if args else "?"
    return f"{event} {target!r}"


def _hook(event: str, args: tuple[Any, ...]) -> None:
    global _refused, _last
    if event not in _SOCKET_ADDRESS_EVENTS and event not in _RESOLVER_EVENTS:
        return
    if event in _SOCKET_ADDRESS_EVENTS and _is_local_ipc(args):
        return
    what = _describe(event, args)
    with _lock:
        _refused += 1
        _last = what
    # Writing to stderr cannot raise socket events, but guard against re-entry anyway.
    if not getattr(_reporting, "active", False):
        _reporting.active = True
        try:
            sys.stderr.write(f"denpex: local-only: refused network access ({what})\n")
            sys.stderr.flush()
        finally:
            _reporting.active = False
    raise NetworkRefused(f"denpex runs local-only: refused {what}")


def install() -> None:
    """Install the guard once for this process (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    sys.addaudithook(_hook)


def self_test() -> str:
    """Attempt one outbound connection and say what happened ("refused" is the good answer).

    Lets a user (or a test) check that the guard is active in a running server.
    """
    try:
        with socket.create_connection(("192.0.2.1", 9), timeout=0.5):  # TEST-NET-1, never routed
            return "connected"
    except NetworkRefused:
        return "refused"
    except OSError as exc:
        return f"not refused by the guard ({exc.__class__.__name__})"

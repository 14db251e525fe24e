"""The children of a live process, read from /proc (Linux only)."""

from __future__ import annotations

from pathlib import Path


def children(pid: int, cmdline_has: bytes = b"") -> list[int]:
    """The pids of ``pid``'s children whose command line contains ``cmdline_has``.

    A thread or child can exit between listing and reading: that entry is skipped,
    never an error (the server's threads come and go while a test looks)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = (task / "children").read_text().split()
        except OSError:  # the thread exited meanwhile
            continue
        for child in kids:
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:  # the child exited meanwhile
                continue
            if cmdline_has in cmdline:
                out.append(int(child))
    return out

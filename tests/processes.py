"""The children and CPU time of a live process, read from /proc (Linux only)."""

from __future__ import annotations

import os
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


def cpu_seconds(pid: int) -> float:
    """CPU time the process's live threads have run, from the scheduler's own clock.

    ``/proc/PID/schedstat`` counts nanoseconds on the CPU. The utime/stime of ``/proc/PID/stat``
    are sampled at timer ticks instead, and a process that wakes on timers is often the one
    running when a tick lands: on CI's VM that read an idle `denpex watch` at 8.4% of a core
    where the scheduler's clock says under 1%. Falls back to the ticks where schedstat is
    missing (a kernel without CONFIG_SCHED_INFO)."""
    if not Path(f"/proc/{pid}/schedstat").exists():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except OSError:  # the thread exited meanwhile
            continue
    return total / 1e9

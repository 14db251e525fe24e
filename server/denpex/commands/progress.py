"""Progress of a long comparison on stderr: a redrawn bar on a terminal, else nothing.

stdout stays clean for the report (and for ``--json``); a log file gets no carriage-return
noise.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


class ProgressBar:
    """Callable as ``progress(done_bytes, total_bytes)``; redraws at most 10 times a second."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._last = 0.0
        self._start = time.monotonic()
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        frac = min(1.0, done / total) if total else 1.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        rate = done / max(1e-9, now - self._start)
        self.stream.write(f"\r[{bar}] {frac:4.0%} {_gb(done)}/{_gb(total)} {_gb(int(rate))}/s ")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False

"""Log diagnosis: which failure happened, which rank started it, which ranks are collateral.

    scanner = LogScanner()
    scanner.feed_lines("train.log", lines)      # again with new tail lines as they come
    scanner.findings()                          # root cause first

``diagnose_text`` and ``diagnose_paths`` are the one-shot forms.
"""

from __future__ import annotations

import sys
from pathlib import Path

from denpex.diagnosis.scanner import LogScanner
from denpex.errors import InputError
from denpex.finding import Finding

__all__ = ["LogScanner", "diagnose_paths", "diagnose_text"]


def diagnose_text(text: str, source: str = "<text>") -> list[Finding]:
    scanner = LogScanner()
    # Only "\n" ends a line: a tqdm "\r" redraws within one (str.splitlines would split it).
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    scanner.feed_lines(source, lines)
    return scanner.findings()


def diagnose_paths(paths: list[str], scanner: LogScanner | None = None) -> list[Finding]:
    """Diagnose files ("-" is stdin) together, as one job. A missing or unreadable file is an
    InputError naming it; binary files are skipped with a notice on ``scanner.notices``."""
    scanner = scanner if scanner is not None else LogScanner()
    for path in paths:
        if path != "-" and not Path(path).is_file():
            reason = "is a directory" if Path(path).is_dir() else "no such file"
            raise InputError(f"{path}: {reason}")
    for path in paths:
        if path == "-":
            scanner.feed_stream("<stdin>", sys.stdin.buffer)
            continue
        try:
            scanner.feed_file(path)
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from None
    return scanner.findings()

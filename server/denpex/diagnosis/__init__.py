"""Log diagnosis: which failure happened, which rank started it, which ranks are collateral.

    scanner = LogScanner()
    scanner.feed_lines("train.log", lines)      # again with new tail lines as they come
    scanner.findings()                          # root cause first

``diagnose_text`` and ``diagnose_paths`` are the one-shot forms.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from denpex.diagnosis.flight_recorder import (
    DumpSet,
    merge_findings,
    read_dumps_beside,
    read_if_dump,
)
from denpex.diagnosis.numbers import to_int
from denpex.diagnosis.scanner import LogScanner
from denpex.errors import InputError
from denpex.finding import Finding

__all__ = [
    "DumpSet",
    "LogScanner",
    "diagnose_paths",
    "diagnose_text",
    "log_files",
]


def diagnose_text(text: str, source: str = "<text>") -> list[Finding]:
    scanner = LogScanner()
    # Only "\n" ends a line: a tqdm "\r" redraws within one (str.splitlines would split it).
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    scanner.feed_lines(source, lines)
    return scanner.findings()


def log_files(paths: list[str]) -> list[str]:
    """The inputs with each directory replaced by the files under it (a job's log folder),
    hidden ones left out, in natural order (rank_2 before rank_10)."""
    out: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = [
                f
                for f in p.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            ]
            if not found:
                raise InputError(f"{path}: directory holds no files")
            out.extend(str(f) for f in sorted(found, key=_natural))
        elif path == "-" or p.exists():  # files, and pipes: `denpex diagnose <(kubectl logs …)`
            out.append(path)
        else:
            raise InputError(f"{path}: no such file")
    return out


def _natural(path: Path) -> list[tuple[int, int | str]]:
    parts = [(t, to_int(t)) for t in re.split(r"(\d+)", str(path))]
    return [(0, n) if n is not None else (1, t) for t, n in parts]


def diagnose_paths(
    paths: list[str],
    scanner: LogScanner | None = None,
    dumps: DumpSet | None = None,
    *,
    look_beside: bool = False,
) -> list[Finding]:
    """Diagnose files ("-" is stdin) together, as one job; directories stand for the files
    under them. A missing or unreadable file is an InputError naming it; binary files are
    skipped with a notice on ``scanner.notices``. Flight Recorder dumps among them (known by
    content) are analysed across ranks and merged with the logs' findings (kept on ``dumps``);
    with ``look_beside``, a log's folder is searched for them when none was given."""
    scanner = scanner if scanner is not None else LogScanner()
    dumps = dumps if dumps is not None else DumpSet()
    for given in paths:
        for path in log_files([given]):
            if path == "-":
                if sys.stdin is None:  # started with `<&-`
                    raise InputError("-: standard input is closed")
                scanner.feed_stream("<stdin>", sys.stdin.buffer)
                continue
            try:
                if not read_if_dump(path, dumps, scanner.notices, in_folder=path != given):
                    scanner.feed_file(path)
            except OSError as exc:
                raise InputError(f"{path}: {exc.strerror or exc}") from None
    if look_beside and not len(dumps):
        read_dumps_beside(paths, dumps, scanner.notices)
    findings = scanner.findings()
    if len(dumps):
        topo = scanner.topology
        findings = merge_findings(findings, dumps, topo.world_size, topo.rank_host, topo.rank_gpu)
    return findings

"""Log diagnosis: which failure happened, which rank started it, which ranks are collateral.

    scanner = LogScanner()
    scanner.feed_lines("train.log", lines)      # again with new tail lines as they come
    scanner.findings()                          # root cause first

``diagnose_text`` and ``diagnose_paths`` are the one-shot forms.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from denpex.diagnosis.flight_recorder import DumpSet, NotADump, merge_findings, read_dump, sniff
from denpex.diagnosis.scanner import LogScanner
from denpex.errors import InputError
from denpex.finding import Finding

__all__ = [
    "DumpSet",
    "LogScanner",
    "diagnose_paths",
    "diagnose_text",
    "log_files",
    "read_dumps_beside",
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
                scanner.feed_stream("<stdin>", sys.stdin.buffer)
                continue
            try:
                if not _read_if_dump(path, dumps, scanner.notices, in_folder=path != given):
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


SIBLINGS_SNIFFED = 1024


def read_dumps_beside(paths: list[str], dumps: DumpSet, notices: list[str]) -> None:
    """Logs given as files, no dump among the inputs: the dumps of a job usually sit beside
    its log, so the log's folder is looked at (first bytes of each file, no subfolders)."""
    given = {os.path.realpath(p) for p in paths if p != "-"}
    folders = {
        os.path.dirname(os.path.realpath(p)) for p in paths if p != "-" and os.path.isfile(p)
    }
    for folder in sorted(folders):
        with os.scandir(folder) as it:
            siblings = sorted(
                (e.path for e in it if not e.name.startswith(".") and e.is_file()), key=_natural_str
            )[:SIBLINGS_SNIFFED]
        found = 0
        for path in siblings:
            if os.path.realpath(path) not in given:
                found += _read_if_dump(path, dumps, notices, in_folder=True)
        if found:
            notices.append(f"{folder}: read {found} Flight Recorder dump(s) beside the log")


def _natural_str(path: str) -> list[tuple[int, int | str]]:
    return _natural(Path(path))


def _read_if_dump(path: str, dumps: DumpSet, notices: list[str], *, in_folder: bool) -> bool:
    """True when ``path`` is a Flight Recorder dump (read into ``dumps``, or refused). A dump
    refused inside a folder is skipped with a notice, so the rest of the job is still read; a
    dump named on the command line is an InputError (exit 2)."""
    if not os.path.isfile(path):
        return False  # a pipe: read once, as a log
    with open(path, "rb") as f:
        kind = sniff(f.read(4096))
    if kind is None:
        return False
    try:
        dump = read_dump(path, kind)
    except NotADump:
        return False  # another pickle (skipped as binary) or JSON text
    except InputError as exc:
        if not in_folder:
            raise
        notices.append(f"skipped: {exc}")
        return True
    notice = dumps.add(dump)
    if notice:
        notices.append(notice)
    return True

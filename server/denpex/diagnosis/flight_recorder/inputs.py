"""Which inputs are dumps: a file is one by its first bytes, not its name; a job's dumps
usually sit beside its log."""

from __future__ import annotations

import os

from denpex.diagnosis.flight_recorder.merge import DumpSet
from denpex.diagnosis.flight_recorder.reading import NotADump, read_dump, sniff
from denpex.errors import InputError

SIBLINGS_SNIFFED = 1024
HEAD_BYTES = 4096


def read_if_dump(path: str, dumps: DumpSet, notices: list[str], *, in_folder: bool) -> bool:
    """True when ``path`` is a Flight Recorder dump (read into ``dumps``, or refused). A dump
    refused inside a folder is skipped with a notice, so the rest of the job is still read; a
    dump named on the command line is an InputError (exit 2)."""
    if not os.path.isfile(path):
        return False  # a pipe: read once, as a log
    with open(path, "rb") as f:
        kind = sniff(f.read(HEAD_BYTES))
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


def siblings(log_path: str) -> list[str]:
    """The other files in a log's folder (no subfolders, hidden ones left out), at most
    SIBLINGS_SNIFFED of them."""
    own = os.path.realpath(log_path)
    folder = os.path.dirname(own)
    try:
        with os.scandir(folder) as it:
            paths = sorted(e.path for e in it if not e.name.startswith(".") and e.is_file())
    except OSError:
        return []
    return [p for p in paths if os.path.realpath(p) != own][:SIBLINGS_SNIFFED]


def may_be_dump(path: str) -> bool:
    """The first bytes only: cheap enough for the language server's own process."""
    try:
        with open(path, "rb") as f:
            return sniff(f.read(HEAD_BYTES)) is not None
    except OSError:
        return False


def read_dumps_beside(paths: list[str], dumps: DumpSet, notices: list[str]) -> None:
    """The dumps in the folders of the logs given as files (the inputs themselves excepted)."""
    given = {os.path.realpath(p) for p in paths if p != "-"}
    logs = [p for p in paths if p != "-" and os.path.isfile(p)]
    seen: set[str] = set()
    for log in logs:
        folder = os.path.dirname(os.path.realpath(log))
        if folder in seen:
            continue
        seen.add(folder)
        found = sum(
            read_if_dump(p, dumps, notices, in_folder=True)
            for p in siblings(log)
            if os.path.realpath(p) not in given
        )
        if found:
            notices.append(f"{folder}: read {found} Flight Recorder dump(s) beside the log")

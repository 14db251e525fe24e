"""Flight Recorder dumps beside an open log, merged into its diagnostics.

The dumps are read by ``denpex.lsp.dump_worker`` in a child process (untrusted input, like
checkpoints); the server keeps the worker's verdicts per folder until the folder's listing
changes, and merges them with each scan's findings (see flight_recorder.merge).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from pathlib import Path
from typing import Any

from denpex.diagnosis.flight_recorder import may_be_dump, merge_verdict, siblings
from denpex.errors import InputError
from denpex.finding import Finding
from denpex.lsp.diagnostics import Placer, Published, build
from denpex.lsp.workers import WorkerFailed, run_once

log = logging.getLogger(__name__)

WORKER_TIMEOUT = 60.0
# A whole job folder may hold gigabytes of logs; past this, the CLI (which streams any size
# and shows its progress) is the better tool.
FOLDER_TIMEOUT = 300.0
Verdicts = list[tuple[Finding, list[int]]]


class DumpsBeside:
    def __init__(self) -> None:
        # folder -> (its listing when read, the verdicts)
        self._cache: dict[str, tuple[tuple[tuple[str, int, float], ...], Verdicts]] = {}

    async def merge(self, log_path: str | None, findings: list[Finding]) -> list[Finding]:
        if log_path is None or not os.path.isfile(log_path):
            return findings
        verdicts = await self._verdicts(log_path)
        out: list[Finding] = []
        rest = findings
        for finding, waiting in verdicts:
            merged, rest = merge_verdict(rest, copy.deepcopy(finding), waiting)
            out.append(merged)
        return out + rest

    async def _verdicts(self, log_path: str) -> Verdicts:
        folder = os.path.dirname(os.path.abspath(log_path))
        listing = _listing(folder)
        cached = self._cache.get(folder)
        if cached is not None and cached[0] == listing:
            return cached[1]
        loop = asyncio.get_running_loop()
        # Only the first bytes are looked at here; a folder with no dump costs no process.
        if await loop.run_in_executor(None, _may_hold_dumps, log_path):
            verdicts = await _run_worker(log_path)
        else:
            verdicts = []
        self._cache[folder] = (listing, verdicts)
        return verdicts


def folder_diagnostics(findings: list[Finding], folder: str) -> dict[str, Published]:
    """Diagnostics of a job folder's findings on its logs' lines, by uri. Dumps are left out
    (binary; their evidence has no line), as are sources outside the folder."""
    root = os.path.realpath(folder)
    sources = {e.source for f in findings for e in f.evidence}
    out: dict[str, Published] = {}
    for source in sorted(sources):
        real = os.path.realpath(source)
        if os.path.commonpath([root, real]) != root or not os.path.isfile(real):
            continue
        if may_be_dump(real):
            continue
        uri = Path(source).resolve().as_uri()
        out[uri] = build(findings, source, uri, Placer())
    return out


def _may_hold_dumps(log_path: str) -> bool:
    return any(may_be_dump(p) for p in siblings(log_path))


def _listing(folder: str) -> tuple[tuple[str, int, float], ...]:
    """Names, sizes and times of the folder's files: a new or rewritten dump changes it."""
    try:
        with os.scandir(folder) as it:
            stats = [(e.name, e.stat()) for e in it if e.is_file()]
    except OSError:
        return ()
    return tuple(sorted((n, s.st_size, s.st_mtime) for n, s in stats))


async def run_worker(job: dict[str, str], timeout: float = WORKER_TIMEOUT) -> dict[str, Any]:
    """One job for ``denpex.lsp.dump_worker`` in a child process; its answer."""
    return await run_once("denpex.lsp.dump_worker", job, timeout)


async def _run_worker(log_path: str) -> Verdicts:
    try:
        msg = await run_worker({"log": log_path})
        for notice in msg.get("notices", []):
            log.info("%s", notice)
        return [(Finding.from_json(v["finding"]), list(v["waiting"])) for v in msg["verdicts"]]
    except (WorkerFailed, InputError, KeyError, TypeError, ValueError) as exc:
        log.warning("dumps beside %s not read: %s", log_path, exc)
        return []

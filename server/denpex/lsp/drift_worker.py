"""The drift worker: one checkpoint comparison in its own process.

Started by the language server as ``python -m denpex.lsp.drift_worker`` with the job as
one JSON object on stdin. It writes JSON lines on stdout: ``{"progress": {"done", "total"}}``
while it works, then ``{"report": <drift report>, "places": {step: {path, line}}}`` or
``{"error": "<one line>"}``. torch (and CUDA, with ``device: "cuda"``) are initialised
here and never in the server; a crash here costs one comparison, not the server.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, TextIO

from denpex.errors import InputError
from denpex.lsp import guard


def _emit(out: TextIO, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _step_places(run: str, replicas: bool, report: dict[str, Any]) -> dict[str, Any]:
    """step -> where a drift diagnostic goes: ``{path, line}`` (line 1-based)."""
    from denpex.checkpoints.discover import find_checkpoints
    from denpex.fingerprints.records import RankFile, file_name, fingerprint_files

    files = fingerprint_files(run)
    if files:  # probe output: every step is a line in each rank's file
        rank = report.get("faulty_rank")
        faulty = [f for f in files if rank is not None and f.name == file_name(rank)]
        chosen = RankFile((faulty or files)[0])  # the faulty rank's file, else the first
        return {
            str(step): {"path": str(chosen.path), "line": line}
            for step, line in chosen.lines.items()
        }
    return {
        str(c.step): {"path": str(c.path), "line": 1}
        for c in find_checkpoints(run, replicas=replicas)
    }


class _Throttled:
    """The engine reports bytes after every block; a few updates a second are plenty."""

    def __init__(self, out: TextIO, interval: float = 0.2) -> None:
        self._out = out
        self._interval = interval
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self._last >= self._interval:
            self._last = now
            _emit(self._out, {"progress": {"done": done, "total": total}})


def run_job(job: dict[str, Any], out: TextIO) -> int:
    from denpex.drift.api import drift_report, replicas_report

    progress = _Throttled(out)
    device = job.get("device", "auto")
    cache = job.get("cacheDir")
    replicas = not job.get("reference")
    if replicas:
        report = replicas_report(job["run"], device=device, progress=progress, cache_dir=cache)
    else:
        report = drift_report(
            job["run"],
            job["reference"],
            noise_ref=job.get("noiseReference"),
            device=device,
            progress=progress,
            cache_dir=cache,
        )
    _emit(out, {"report": report, "places": _step_places(job["run"], replicas, report)})
    return 0


def main() -> int:
    guard.install()
    # The protocol owns stdout; anything the engines print goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr
    try:
        job = json.loads(sys.stdin.read())
        return run_job(job, out)
    except InputError as exc:
        _emit(out, {"error": str(exc)})
        return 2
    except (OSError, ValueError) as exc:
        _emit(out, {"error": f"{exc.__class__.__name__}: {exc}"})
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""The drift worker: one checkpoint comparison in its own process.

Started by the language server as ``python -m denpex.lsp.drift_worker`` with the job as
one JSON object on stdin. It writes JSON lines on stdout: ``{"progress": {"done", "total"}}``
while it works, then ``{"report": <drift report>, "checkpoints": {step: path}}`` or
``{"error": "<one line>"}``. torch (and CUDA, with ``device: "cuda"``) are initialised
here and never in the server; a crash here costs one comparison, not the server.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from denpex.errors import InputError
from denpex.lsp import guard


def _emit(out: TextIO, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _step_paths(run: str) -> dict[str, str]:
    from denpex.drift.discover import find_checkpoints

    return {str(c.step): str(c.path) for c in find_checkpoints(run)}


def run_job(job: dict[str, Any], out: TextIO) -> int:
    from denpex.drift.api import drift_report, replicas_report

    def progress(done: int, total: int) -> None:
        _emit(out, {"progress": {"done": done, "total": total}})

    if job.get("reference"):
        report = drift_report(
            job["run"],
            job["reference"],
            noise_ref=job.get("noiseReference"),
            device=job.get("device", "auto"),
            progress=progress,
            cache_dir=job.get("cacheDir"),
        )
    else:
        report = replicas_report(job["run"], progress=progress)
    _emit(out, {"report": report, "checkpoints": _step_paths(job["run"])})
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

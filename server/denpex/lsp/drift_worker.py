"""The drift worker: one checkpoint comparison in its own process.

Started by the language server as ``python -m denpex.lsp.drift_worker`` with the job as
one JSON object on stdin. It follows the run with a ``DriftSession``, as ``denpex watch``
does, so both agree on when a checkpoint is complete and share the step cache. It writes JSON
lines on stdout: ``{"progress": {"done", "total"}}`` while it works, then
``{"report": <drift report>, "alarm": {message, code, rootCause, onsetStep, path, line} | null}``
or ``{"error": "<one line>"}``. A job with ``"once": true`` is one comparison of the run
against its reference as ``denpex drift RUN --ref REF [--noise-ref N] --json`` makes it (two
single checkpoints included): ``{"report": <drift report>}``, the noise run's points in it.
torch (and CUDA, with ``device: "cuda"``) are initialised here and never in the server; a
crash here costs one comparison, not the server.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from denpex.errors import InputError
from denpex.lsp.workers import emit, serve

if TYPE_CHECKING:  # the engine is imported when a job runs
    from denpex.drift.report import DriftReport

SETTLE_S = 1.0  # a checkpoint's files unchanged this long are complete (``Stability``)
MAX_WAIT_S = 5.0  # a checkpoint still changing then waits for the next check


def _alarm(report: DriftReport) -> dict[str, Any] | None:
    """What the editor shows for a flagged report: the sentence, the finding, and the file
    (and line: a probe record's) of the onset step, the faulty rank's when there is one."""
    from denpex.drift.report import alarm_text

    if not report.flagged:
        return None
    onset = report.onset_step
    place = report.place(onset) if onset is not None else None
    finding = report.finding
    return {
        "message": alarm_text(report),
        "code": finding.id if finding is not None else "sdc-gradual-parameter-drift",
        "rootCause": finding.root_cause if finding is not None else "",
        "onsetStep": onset,
        "path": place.path if place is not None else None,
        "line": place.line if place is not None else 1,
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
            emit(self._out, {"progress": {"done": done, "total": total}})


def compare_once(job: dict[str, Any], out: TextIO) -> int:
    from denpex.drift.api import drift_report

    report = drift_report(
        str(job["run"]),
        str(job["reference"]),
        noise_ref=job.get("noiseReference"),
        device=job.get("device", "auto"),
        cache_dir=job.get("cacheDir"),
    )
    if report.verdict == "not_comparable":  # nothing compared: an error, as the CLI's exit 2
        raise InputError(report.assessment.notes[0])
    emit(out, {"report": report.to_json()})
    return 0


def run_job(job: dict[str, Any], out: TextIO) -> int:
    if job.get("once"):
        return compare_once(job, out)
    from denpex.drift.cache import StepCache, default_dir
    from denpex.drift.compare import Kernel
    from denpex.drift.session import DriftSession, Stability
    from denpex.drift.sources import resolve_device

    run = job["run"]
    kernel = Kernel(resolve_device(job.get("device", "auto")))
    session = DriftSession(
        run,
        ref=job.get("reference"),
        noise_ref=job.get("noiseReference"),
        cache=StepCache(job.get("cacheDir") or default_dir()),
        kernel=kernel,
        stability=Stability(SETTLE_S),
        progress=_Throttled(out),
    )
    warnings: list[str] = []
    try:
        # The first look notes every checkpoint's files; those unchanged a settle time
        # later are complete (the stability rule `denpex watch` applies between polls).
        deadline = time.monotonic() + MAX_WAIT_S
        warnings += session.update().warnings
        while (due := session.stability.due()) is not None and time.monotonic() + due < deadline:
            time.sleep(due)
            warnings += session.update().warnings
    finally:
        kernel.close()
    report = session.last
    if report is None:
        why = "; ".join(dict.fromkeys(warnings))[:400]
        raise InputError(f"{run}: nothing complete to compare yet{': ' + why if why else ''}")
    report.warnings = list(dict.fromkeys(warnings))
    emit(out, {"report": report.to_json(), "alarm": _alarm(report)})
    return 0


def main() -> int:
    return serve(run_job)


if __name__ == "__main__":
    sys.exit(main())

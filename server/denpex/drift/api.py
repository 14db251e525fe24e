"""The drift engine's entry points: a run against a reference, or replicas of one run.

Both return a typed ``DriftReport`` (``to_json()``: shared-schema/drift-report.schema.json);
the CLI prints it, the language server calls these in a worker process. The run's data
comes from a ``Source`` (checkpoints or probe fingerprints, ``sources``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.replica_verdict import assess_replicas
from denpex.drift.report import DriftReport, Point
from denpex.drift.sources import Progress, Series, open_source, resolve_device
from denpex.drift.verdict import Assessment, assess
from denpex.errors import InputError


def check_tolerance(tolerance: float) -> None:
    """NaN would compare false with every difference and forgive it; Inf forgives all."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise InputError(f"--tolerance {tolerance}: expected a finite number >= 0")


def drift_report(
    run: str,
    ref: str,
    *,
    noise_ref: str | None = None,
    device: str = "auto",
    key: str | None = None,
    progress: Progress | None = None,
    cache_dir: str | None = None,
    gpu: int | None = None,
    host: str | None = None,
) -> DriftReport:
    """RUN against REF step by step, judged by the verdict (``--noise-ref`` calibrates it).

    ``gpu``/``host``: where the run trained, when known; they fill the finding's
    verification commands (``dcgmi diag -r 3 -i <gpu>``). Given, they win over what the
    source knows."""
    source = open_source(run, device=device, key=key, cache_dir=cache_dir, progress=progress)
    return reference_report(
        run,
        ref,
        source.against(ref, noise_ref),
        noise_ref=noise_ref,
        gpu=gpu,
        host=host,
        against_noise=(lambda: source.against(noise_ref, None).steps) if noise_ref else None,
    )


def reference_report(
    run: str,
    ref: str,
    series: Series[StepDiff],
    *,
    noise_ref: str | None = None,
    gpu: int | None = None,
    host: str | None = None,
    against_noise: Callable[[], list[StepDiff]] | None = None,
) -> DriftReport:
    """The verdict on a compared series, as a report. ``against_noise``: the run compared
    with its noise run, asked for only when the verdict needs it (``noise_twin``)."""
    from denpex.drift.noise_twin import rejudged
    from denpex.drift.one_point import one_point
    from denpex.drift.per_rank import judge_ranks, replica_evidence

    trained_on, trained_at = gpu if gpu is not None else series.gpu, host or series.host

    def judge(steps: list[StepDiff], noise: list[StepDiff] | None) -> Assessment:
        return assess(steps, noise or None, run=run, ref=ref, gpu=trained_on, host=trained_at)

    shown, places = series.steps, series.places
    replicas = replica_evidence(series.replicas, run) if series.replicas else None
    if series.ranks:  # per-rank layouts: the rank that departs (else the lowest) is shown
        verdicts = {
            r: judge(s, series.noise_ranks.get(r, series.noise)) for r, s in series.ranks.items()
        }
        rank, assessment = judge_ranks(verdicts, replicas)
        shown = series.ranks[rank]
        places = {s: by[rank] for s, by in series.rank_places.items() if rank in by}
    else:
        assessment = judge(series.steps, series.noise)
        if series.one_point:
            noise_point = series.noise[0] if series.noise else None
            assessment = one_point(series.steps[0], assessment, noise_point)
        elif against_noise is not None and noise_ref:
            assessment = rejudged(
                assessment, against_noise, run=run, noise_ref=noise_ref, gpu=trained_on,
                host=trained_at,
            )  # fmt: skip
    return DriftReport(
        mode="reference",
        run=run,
        reference=ref,
        points=[Point(s, places.get(s.step)) for s in shown],
        assessment=assessment,
        warnings=series.warnings,
        device=series.device,
        noise_reference=noise_ref,
        noise_points=[Point(s, series.noise_places.get(s.step)) for s in series.noise or []],
        transient=series.transient,
        replicas=replicas,
    )


def replicas_report(
    run: str,
    *,
    device: str = "auto",
    key: str | None = None,
    tolerance: float = 0.0,
    progress: Progress | None = None,
    cache_dir: str | None = None,
    gpus_per_node: int | None = None,
) -> DriftReport:
    """Every step's data-parallel replicas against their majority.

    ``gpus_per_node`` maps the faulty rank to its local GPU for the verification commands."""
    check_tolerance(tolerance)
    source = open_source(run, device=device, key=key, cache_dir=cache_dir, progress=progress)
    return replica_report(
        run, source.replicas(tolerance), tolerance=tolerance, gpus_per_node=gpus_per_node
    )


def replica_report(
    run: str,
    series: Series[ReplicaStep],
    *,
    tolerance: float | None = None,
    gpus_per_node: int | None = None,
) -> DriftReport:
    """The verdict on compared replicas, as a report."""
    assessment = assess_replicas(
        series.steps, run=run, gpus_per_node=gpus_per_node or series.gpus_per_node
    )
    return DriftReport(
        mode="replicas",
        run=run,
        reference=None,
        points=[
            Point(s, series.places.get(s.step), series.rank_places.get(s.step, {}))
            for s in series.steps
        ],
        assessment=assessment,
        warnings=series.warnings,
        device=series.device,
        tolerance=tolerance,
        transient=series.transient,
    )


__all__ = [
    "check_tolerance",
    "drift_report",
    "reference_report",
    "replica_report",
    "replicas_report",
    "resolve_device",
]

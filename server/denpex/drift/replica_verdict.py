"""Judging data-parallel replicas, which must stay bitwise identical: a rank that departs
from the majority is a fault (replica mode of docs/drift-statistics.md). The reference-mode
verdict is in verdict.py; both give an ``Assessment``.
"""

from __future__ import annotations

from typing import Any

from denpex.drift import explain
from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.verdict import Assessment, growth_trend
from denpex.errors import InputError
from denpex.finding import Evidence


def assess_replicas(
    series: list[ReplicaStep],
    *,
    run: str = "",
    gpus_per_node: int | None = None,
) -> Assessment:
    """Data-parallel replicas are bitwise identical in a healthy job, so any rank that differs
    from the majority (beyond the per-tensor tolerance the comparison applied) is a finding.

    ``gpus_per_node`` maps the faulty rank to its local GPU index (rank modulo it) for the
    diagnostic commands; without it those commands are left out.
    """
    series = sorted(series, key=lambda s: s.step)
    if not series:
        raise InputError("no checkpoint step with replicas to compare")
    trend: dict[str, Any] = {"fingerprint": "replicas"}
    notes: list[str] = []
    ranks = sorted({r for s in series for r in (*s.ranks, *s.absent)})
    if series[-1].absent:
        # The newest step may still be landing (watch, a probe mid-write): its missing ranks
        # are named, not judged. Absent at any earlier step, a rank disagrees.
        late = series[-1]
        notes.append(
            f"step {late.step}, the last, lacks ranks {', '.join(map(str, sorted(late.absent)))}: "
            "not judged there (still being written?)"
        )
        late.absent = {}
    if not any(len(s.ranks) >= 2 for s in series):
        # No step had two readable replicas: agreement was never tested, so never "identical".
        return Assessment(
            "not_comparable", False, None, None, trend, None,
            ["nothing was compared: no step has two readable replicas"],
        )  # fmt: skip
    first_off: dict[int, int] = {}
    steps_off: dict[int, int] = {}
    for s in series:
        for r in ranks:
            if s.disagrees(r):
                first_off.setdefault(r, s.step)
                steps_off[r] = steps_off.get(r, 0) + 1
    trend["ranks"] = ranks
    trend["disagreeing_ranks"] = {str(r): first_off[r] for r in sorted(first_off)}
    for s in series:
        notes.extend(s.ties)
    notes.extend(explain.replica_gaps(series))
    if not first_off:
        notes.append(f"all {len(ranks)} replicas agree at every compared step")
        return Assessment("identical", False, None, None, trend, None, notes)
    onset = min(first_off.values())
    # The odd one out: first to disagree, then most often.
    faulty = min(first_off, key=lambda r: (first_off[r], -steps_off[r], r))
    ambiguous = len(first_off) * 2 >= len(ranks)
    if ambiguous:
        notes.append(
            f"{len(first_off)} of {len(ranks)} replicas disagree: no clear majority, "
            f"rank {faulty} named because it differed first"
        )
    others = sorted(r for r in first_off if r != faulty)
    series_l2 = [s.ranks[faulty].l2 if faulty in s.ranks else 0.0 for s in series]
    steps = [s.step for s in series]
    trend.update(growth_trend(steps, series_l2, onset))
    trend["onset_step"] = onset
    # The faulty rank's last step of disagreement (it may be absent there: no tensors).
    last = next(
        (s.ranks.get(faulty, StepDiff(s.step)) for s in reversed(series) if s.disagrees(faulty)),
        StepDiff(onset),
    )
    trend["suspect_tensors"] = [
        {
            "name": t.name,
            "l2": explain.finite(t.l2),
            "max_abs": explain.finite(t.max_abs),
            "mismatched": t.mismatched,
            "top_row": t.top_row,
            "top_row_share": explain.finite(round(t.top_row_share, 4)),
            "top_col": t.top_col,
            "top_col_share": explain.finite(round(t.top_col_share, 4)),
        }
        for t in last.top_tensors(5)
        if t.differs
    ]
    top = (
        trend["suspect_tensors"][0]["name"]
        if trend["suspect_tensors"]
        else next((t.name for t in last.not_compared), "its checkpoint is absent")
    )
    notes.append(
        f"rank {faulty} disagrees with the majority from step {onset} (most in {top}); "
        "healthy replicas are bitwise identical, so its local update or memory went wrong"
    )
    if others:
        notes.append(f"also disagreeing: ranks {', '.join(map(str, others))}")
    notes.append(
        "replica comparison cannot see corruption in the all-reduced gradient; compare with a "
        "reference run for that"
    )
    gpu = faulty % gpus_per_node if gpus_per_node else None
    evidence = [
        Evidence(
            source=explain.step_path(explain.rank_series(series, faulty), onset, "run_path")
            or f"step {onset}",
            line=1,
            text=f"step {onset}: rank {faulty} differs from the majority ({top})",
            rank=faulty,
            role="initiating",
        )
    ]
    finding = explain.finding(
        "dp-replica-divergence", 0.6 if ambiguous else 0.9, evidence, run, "", gpu, None, faulty
    )
    finding.suspect_ranks = [faulty, *others]
    return Assessment("replica_divergence", True, onset, faulty, trend, finding, notes)

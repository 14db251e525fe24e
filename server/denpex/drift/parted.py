"""Runs that part wholesale: past that point no comparison with a reference sees a fault.

Some trainings amplify round-off until two healthy reruns are different models: real
MobileNetV2 reruns (SGD with momentum at lr 0.05 through BatchNorm) stand with their median
tensor 30% of its own norm apart at the first checkpoint and about 100% from the second on,
and a BatchNorm scale moving by half its norm between two checkpoints is then chance, not a
fault. Round-off that stays round-off keeps the median tensor far closer: at most 1.4% of its
norm on every healthy rerun of the tuning architectures (OPT's ReLU MLP; 5e-3 on the others),
and at most 0.4% before the onset of every fault they detect. So once the median tensor stands
a tenth of its norm apart, what the verdict finds *later* says nothing; what it found up to
that checkpoint (a run bit-identical to its reference until a fault, a jump that parted them)
still does. Runs already apart at their *first* compared checkpoint give nothing to judge:
neither a fault (a chaotic rerun looks the same) nor health.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from denpex.drift.model import StepDiff
from denpex.drift.sudden import Jump, StepChange
from denpex.drift.tracks import Departure

PARTED = 0.1  # the median tensor's distance from the reference, relative to its own norm
DIFFERENT = 0.5  # ... and, at the first checkpoint, the share of compared elements that differ


def median_rel(step: StepDiff) -> float | None:
    """The median compared tensor's relative distance (lower median); None when no tensor
    with a norm compared finitely."""
    rels = sorted(
        t.rel_l2
        for t in step.tensors
        if t.ref_sq > 0 and math.isfinite(t.diff_sq) and math.isfinite(t.ref_sq)
    )
    return rels[(len(rels) - 1) // 2] if rels else None


def parted_step(series: Sequence[StepDiff]) -> int | None:
    """The first checkpoint where the run and the reference are different models."""
    for step in series:
        rel = median_rel(step)
        if rel is not None and rel >= PARTED:
            return step.step
    return None


@dataclass
class Kept:
    """What the verdict may still weigh: the departures found up to the parting."""

    levers: list[Departure]
    jumps: list[Jump]
    change: StepChange | None
    step: int | None  # where the runs parted; None: they never did
    dropped: bool  # something found after the parting was set aside


def before_parting(
    series: Sequence[StepDiff],
    levers: list[Departure],
    jumps: list[Jump],
    change: StepChange | None,
) -> Kept:
    split = parted_step(series)
    if split is None:
        return Kept(levers, jumps, change, None, False)
    kept = Kept(
        [lv for lv in levers if lv.onset <= split],
        # a jump to NaN/Inf is never chance
        [j for j in jumps if j.step <= split or not math.isfinite(j.max_abs)],
        change if change is None or change.step <= split else None,
        split,
        False,
    )
    count = len(kept.levers) + len(kept.jumps) + (kept.change is not None)
    kept.dropped = count < len(levers) + len(jumps) + (change is not None)
    return kept


def from_start(series: Sequence[StepDiff]) -> tuple[int, float] | None:
    """The first compared checkpoint and its median tensor's relative distance, when the run
    and the reference are already different models there (the median tensor ``PARTED`` apart
    and ``DIFFERENT`` of the compared elements changed: a few corrupted elements in small
    tensors are not another model); None when they are not."""
    for step in sorted(series, key=lambda s: s.step):
        rel = median_rel(step)
        if rel is None:
            continue
        apart = rel >= PARTED and step.mismatched >= DIFFERENT * step.numel
        return (step.step, rel) if apart else None
    return None


def from_start_note(apart: tuple[int, float]) -> str:
    step, rel = apart
    return (
        "the run and the reference are different models from the first compared checkpoint "
        f"(step {step}: the median tensor stands {rel:.0%} of its norm apart): they did not "
        "start from the same weights and data, or the training parts healthy reruns within one "
        "checkpoint interval. No comparison with this reference can tell a fault there: compare "
        "two healthy reruns to know which, and save earlier checkpoints"
    )


def noise_from_start_note(apart: tuple[int, float]) -> str:
    step, rel = apart
    return (
        f"the noise run is another model than the reference from its first compared checkpoint "
        f"(step {step}: the median tensor {rel:.0%} of its norm apart): it gives no envelope, "
        "self-calibration is used instead"
    )


def note(split: int) -> str:
    return (
        f"from step {split} on the run and the reference are different models (the median "
        f"tensor stands {PARTED:.0%} of its norm apart or more), as healthy reruns of a chaotic "
        "training are: what departs after that cannot be told from chance; compare two healthy "
        "reruns (--noise-ref) to see how far they part"
    )

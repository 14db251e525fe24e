"""A run judged again against its noise run, when it shares that run's arithmetic.

A run that reproduced its noise run bit for bit and then departed from it (lever 6,
``bit_exact.noise_departure``) is the same configuration on the same kind of hardware, so
the noise run is a bit-exact reference for it. Against the reference, which both runs had
parted from by round-off long before, a bit flip that moves its element less than that
round-off reads as drift (lever 6 sees that the run changed, not how); against the noise run
the flipped element is the whole difference (or, once the steps since spread round-off from
it, still its row and its column: ``sudden._origin``), and the jump tests see it as they do in
a run bit-identical to its reference. So when lever 6 made the verdict, the run is compared with
its noise run once more, and a jump found there in a matrix is the verdict. Anything else
found there adds nothing: the drift is already called.

Only in a matrix or kernel (several elements per output channel): a persistent fault on one
channel moves one element of every per-channel vector it touches at once, and that element
then holds, which is a flip's footprint. Measured on the corpus's faults against their twins
(2026-12-07): x2 channel faults jumped in norm gains and biases, and faults of 1e-3 in front
of a BatchNorm (which cancels them in the forward pass) only in its running variance; in a
matrix the same fault moves a row or a column, and only the flips jumped there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from denpex.drift.model import StepDiff
from denpex.drift.verdict import Assessment, assess
from denpex.errors import InputError


def rejudged(
    assessment: Assessment,
    against_noise: Callable[[], list[StepDiff]],
    *,
    run: str,
    noise_ref: str,
    gpu: int | None,
    host: str | None,
) -> Assessment:
    """``assessment`` (the run against its reference), or the jump the run made against its
    noise run (``against_noise``: that comparison, made only when it is needed)."""
    levers = assessment.trend.get("levers", ())
    if assessment.verdict != "gradual_drift" or "noise_exact_departure" not in levers:
        return assessment
    try:
        steps = against_noise()
    except InputError:  # e.g. the noise run's files changed since: keep the verdict found
        return assessment
    jumped = assess(steps, None, run=run, ref=noise_ref, gpu=gpu, host=host)
    if jumped.verdict != "sudden_jump" or not _in_matrix(steps, jumped.trend["jump"]):
        return assessment
    jumped.trend["judged_against"] = "noise_reference"
    jumped.notes.insert(
        0,
        "the run matched the noise reference bit for bit and then departed from it, so the "
        "two share their arithmetic: judged against the noise reference, one element jumped "
        "(against the reference, which both runs had parted from by round-off, it reads as "
        "drift)",
    )
    return jumped


def _in_matrix(steps: list[StepDiff], jump: dict[str, Any]) -> bool:
    step = jump["between_steps"][1]
    at = next(
        (t for s in steps if s.step == step for t in s.tensors if t.name == jump["tensor"]), None
    )
    # Several elements per output channel (row): a matrix, or a kernel, depthwise ones too.
    return at is not None and at.numel > at.rows

"""What the noise run (a second healthy run against the same reference) says of a channel.

A fault in the run cannot show in another run: where the noise run concentrates too, in the
same channel or by taking its own lone channel in the same tensor, the run's channel is one
the model makes sensitive, unless the run stands far beyond the noise run there. Used by the
localised levers (``departures``); the same holds for one element's jump (``made_it_too``).
"""

from __future__ import annotations

import math

from denpex.drift.model import TensorDiff
from denpex.drift.sudden import Jump
from denpex.drift.thresholds import (
    CALIBRATION,
    DOMINANT,
    ENVELOPE,
    LIFT_MIN,
    MAX_SHARE_BAR,
    SELF_FACTOR,
)
from denpex.drift.tracks import localised, top_index, top_share


def holds_it_too(
    track: list[TensorDiff | None], ntrack: list[TensorDiff | None], axis: str
) -> bool:
    """The noise run's difference sits on the run's top channel at most of the first
    CALIBRATION checkpoints where both differ: the concentration is the model's."""
    pairs = [
        (t, nt)
        for t, nt in zip(track[:CALIBRATION], ntrack[:CALIBRATION], strict=False)
        if t is not None and nt is not None and t.diff_sq > 0 and nt.diff_sq > 0
    ]
    same = sum(top_index(t, axis) == top_index(nt, axis) for t, nt in pairs)
    return bool(pairs) and 2 * same > len(pairs)


def bar_at(bar: float, n: int, axis: str, noise: TensorDiff | None) -> float:
    """The lift bar at one step: the noise run's own concentration there raises it."""
    if noise is None or noise.diff_sq <= 0:
        return bar
    return min(max(bar, SELF_FACTOR * n * top_share(noise, axis)), MAX_SHARE_BAR * n)


def same_channel(t: TensorDiff | None, axis: str, n: int, noise: TensorDiff | None) -> bool:
    """The second healthy run concentrates in the same channel at this step. A fault in the
    run cannot show in another run, so that channel is one the model itself makes sensitive:
    a channel starved of gradient random-walks under Adam and amplifies every rerun's
    round-off in the same place (ConvNeXt's last pointwise conv, row 28, held 0.6-0.99 of its
    tensor in every healthy rerun and in the noise run alike; Qwen2-MoE's shared expert)."""
    if t is None or noise is None or not localised(noise):
        return False
    # The bar a run's own channel must pass (``localisation``): capped on a short axis, where
    # a lift of 10 would be more than 10/16 of a 16-column conv (UnivNet's input column 2
    # held 0.5-0.8 of its tensor in the noise run and in every healthy rerun, rotation 19).
    bar = min(LIFT_MIN, MAX_SHARE_BAR * n)
    return top_index(noise, axis) == top_index(t, axis) and n * top_share(noise, axis) >= bar


def lone_channel(ntrack: list[TensorDiff | None], axis: str) -> bool:
    """The second healthy run lets one channel of this tensor take over its difference at
    some checkpoint, whichever channel: the tensor makes such channels by chance, so one in
    the run is a fault only where the run stands ``ENVELOPE`` times beyond the noise run in
    that tensor (``beyond``). FSMT's decoder query/key weights: a head dimension took 0.9 of
    both in healthy reruns, row 21 in one, 33 in another and in the noise run, at the noise
    run's distance (rotation 27, looked at after its measurement)."""
    return any(localised(nt) and top_share(nt, axis) >= DOMINANT for nt in ntrack)


def explains(t: TensorDiff | None, axis: str, n: int, noise: TensorDiff | None, lone: bool) -> bool:
    """The noise run accounts for the run's channel at this step: it concentrates in the same
    channel (``same_channel``), or the tensor makes lone channels (``lone``, from
    ``lone_channel``) and the run stands within ``ENVELOPE`` of the noise run there."""
    return same_channel(t, axis, n, noise) or (lone and not beyond(t, noise))


def beyond(t: TensorDiff | None, noise: TensorDiff | None) -> bool:
    """The tensor stands ``ENVELOPE`` times further from the reference than the noise run."""
    return t is not None and noise is not None and 0 < ENVELOPE**2 * noise.diff_sq <= t.diff_sq


def made_it_too(jump: Jump, noise_jump: Jump | None) -> bool:
    """The noise run made a jump of its own in the same tensor at the same checkpoint, as far
    (within ``ENVELOPE``): an event of the training, not a flip, which no other run makes.
    SuperPoint's reruns on one CPU (2026-12-07) and its noise run alike moved one bias element
    of the descriptor head by 0.0085-0.013 between steps 24 and 36, from 1e-8. Where the noise
    run merely stands far from the reference (it parted), a flip there is still a flip. A
    value turned NaN/Inf is never excused."""
    return (
        noise_jump is not None
        and math.isfinite(jump.max_abs)
        and ENVELOPE * noise_jump.max_abs >= jump.max_abs
    )

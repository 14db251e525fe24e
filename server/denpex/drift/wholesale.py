"""Wholesale departure: a run apart from its reference by round-off leaps away all at once.

One of the levers of ``departures`` (lever 7 in docs/drift-statistics.md). Round-off between
two reruns grows smoothly once it has spread: past the calibration window the whole distance
of a healthy rerun rose at most 9.7x over one checkpoint interval (SwinV2; 231 reruns of 27
architectures). A fault that changes what the model computes changes every gradient
downstream at once, so the whole distance leaps and most tensors leap with it. A discrete
choice that round-off flips does the same: healthy Granite-hybrid reruns whose
mixture-of-experts router chose otherwise than the reference leapt 273-358x (rotation 26), so
only a leap of 1000x, a doubled channel's size (3,000-55,000x), is taken for a fault; the
smaller leaps of faults look like a flip. Both the whole distance and most tensors must leap:
a chaotic rerun can lift most *tensors* thirtyfold in one interval while the whole distance
stays put (Parakeet's channels-last rerun, step 48), and one tensor's leap is a local event the
other levers judge. Without a noise run this is the only lever that sees a fault spread over
the model in a run already apart by round-off. A leap that continues a divergence already
rising fast is chaos: a healthy SuperPoint rerun (rotation 25) leapt 83x after an interval of
193x; the interval before a fault's leap had risen 1.1-5.7x on every run on disk this lever
finds, but one (a GPT-OSS norm fault whose own first interval had risen 52x).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from denpex.drift.model import StepDiff
from denpex.drift.thresholds import (
    CALIBRATION,
    MIN_MISMATCHED,
    WHOLESALE_HOLD,
    WHOLESALE_LEAP,
    WHOLESALE_PRIOR_RISE,
    WHOLESALE_RISE,
    WHOLESALE_SHARE,
)
from denpex.drift.tracks import Departure, Tracks


def departure(series: Sequence[StepDiff], tracks: Tracks) -> Departure | None:
    """The first checkpoint past the calibration window where the whole distance rose
    ``WHOLESALE_LEAP`` times over one interval, together with most of the tensors apart
    before it (each ``WHOLESALE_RISE`` times), and stayed."""
    l2 = [math.sqrt(s.diff_sq) if math.isfinite(s.diff_sq) else math.inf for s in series]
    for i in range(max(1, CALIBRATION), len(series)):
        if not (0 < l2[i - 1] <= l2[i] < math.inf) or l2[i] < WHOLESALE_LEAP * l2[i - 1]:
            continue  # (a value turned NaN/Inf is the jump's to report)
        if i >= 2 and l2[i - 1] >= WHOLESALE_PRIOR_RISE * l2[i - 2]:
            continue  # a divergence already under way, not a leap from round-off
        rises = _rises(tracks, i)
        if not rises or sum(r >= WHOLESALE_RISE for _, r in rises) < WHOLESALE_SHARE * len(rises):
            continue
        if any(later < WHOLESALE_HOLD * l2[i] for later in l2[i + 1 :]):
            continue
        # A leap of the whole model does not locate its cause: the tensor that rose most is
        # named as the one to look at first (PEGASUS-X's doubled query channel: its layer's
        # key weight; its doubled fc1 channel: a norm bias of the layer before).
        name, rise = max(rises, key=lambda nr: nr[1])
        detail: dict[str, Any] = {
            "rise": round(l2[i] / l2[i - 1], 1),
            "tensor_rise": round(rise, 1),
            "previous_step": series[i - 1].step,
        }
        return Departure(
            tensor=name,
            lever="wholesale_departure",
            onset=series[i].step,
            excess=[d if k >= i else 0.0 for k, d in enumerate(l2)],
            detail=detail,
        )
    return None


def _rises(tracks: Tracks, i: int) -> list[tuple[str, float]]:
    """Each tensor apart at checkpoint i-1 (most of its elements differing) and its rise."""
    out = []
    for name, track in tracks.items():
        before, now = track[i - 1], track[i]
        if before is None or now is None or before.diff_sq <= 0:
            continue
        if before.mismatched < MIN_MISMATCHED * before.numel:
            continue  # a sparse difference filling in rises by chance
        if math.isfinite(now.diff_sq) and math.isfinite(before.diff_sq):
            out.append((name, math.sqrt(now.diff_sq / before.diff_sq)))
    return out

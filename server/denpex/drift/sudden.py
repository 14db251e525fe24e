"""Departures that appear at one checkpoint: a jump (one element far outside its tensor's
range, a bit flip) and a step change (a tensor, or the whole model, moved by the order of its
own norm and stayed there). Round-off creeps up over many checkpoints; these do not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from denpex.drift import bit_exact
from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.thresholds import (
    JUMP_FACTOR,
    JUMP_NOISY_FACTOR,
    JUMP_NOISY_NUMEL,
    JUMP_NOISY_OWN,
    JUMP_NOISY_RISE,
    JUMP_NOISY_SCALE,
    JUMP_NOISY_SHARE,
    JUMP_ORIGIN_OWN,
    JUMP_ORIGIN_SHARE,
    JUMP_PRIOR_RISE,
    JUMP_SCALE,
    JUMP_SETTLE,
    JUMP_SINGLE,
    MIN_AXIS,
    STEP_HOLD,
    STEP_REL,
    STEP_RISE,
)
from denpex.drift.tracks import Tracks


@dataclass
class StepChange:
    """A distance of the order of the weights themselves, appearing at one checkpoint."""

    step: int
    previous_step: int | None
    tensors: list[str]  # empty: the whole model (at the first checkpoint, or spread thin)
    rel_l2: float
    held_until: int


@dataclass
class Jump:
    tensor: str
    step: int
    previous_step: int | None
    max_abs: float
    before: float
    rms: float


def size(j: Jump) -> float:
    """How far the element moved against its tensor's RMS (inf for NaN/Inf)."""
    return j.max_abs / j.rms if j.rms > 0 else math.inf


def jumps(steps: list[int], tracks: Tracks) -> list[Jump]:
    """Per tensor, its first jump."""
    out = []
    departed = bit_exact.departed_at(tracks)
    for name, track in tracks.items():
        for i, t in enumerate(track):
            if t is None or t.diff_sq <= 0 or t.numel == 0:
                continue
            prev = track[i - 1] if i > 0 else None
            rms = math.sqrt(t.ref_sq / t.numel)
            before = prev.max_abs if prev is not None else 0.0
            if not (math.isfinite(t.diff_sq) and math.isfinite(t.max_abs)):
                # A value turned NaN/Inf: an exponent bit flipped, or worse. Never gradual.
                out.append(Jump(name, steps[i], steps[i - 1] if i else None, math.inf, before, rms))
                break
            if prev is None:
                # No earlier comparison of this tensor: nothing shows that the element was
                # ever closer. Sparse first differences (rare-token embedding rows after one
                # accumulation split or another) look like a jump from nothing; they are not.
                continue
            if t.numel < MIN_AXIS:
                # A tensor of a few elements (a learnable scalar scale or bias: HGNetV2's
                # "lab" blocks) has no range for one element to leave: its value moving is the
                # tensor moving, which the levers judge. Held-out rotation 14 showed it.
                continue
            if _diverging(track, i):
                continue
            added = t.diff_sq - prev.diff_sq
            if t.max_abs >= JUMP_SCALE * rms and (
                (
                    t.max_abs >= JUMP_FACTOR * max(before, 1e-6 * rms)
                    and t.max_abs**2 >= JUMP_SINGLE * added
                )
                or _stands_out(t, prev, rms)
                or (i == departed and _origin(t))
            ):
                later = [u.max_abs for u in track[i + 1 :] if u is not None]
                # A run that blows up to NaN afterwards is still a one-off corruption.
                if all(m <= JUMP_SETTLE * t.max_abs or not math.isfinite(m) for m in later):
                    out.append(
                        Jump(name, steps[i], steps[i - 1] if i else None, t.max_abs, before, rms)
                    )
                break
    return out


def _diverging(track: list[TensorDiff | None], i: int) -> bool:
    """The tensor's largest difference already grew ``JUMP_PRIOR_RISE`` times over the
    interval before checkpoint ``i``: a chaotic divergence under way, which the next interval
    continues, not a flip landing in round-off."""
    if i < 2:
        return False
    a, b = track[i - 1], track[i - 2]
    if a is None or b is None or b.max_abs <= 0:
        return False
    return a.max_abs >= JUMP_PRIOR_RISE * b.max_abs


def _stands_out(t: TensorDiff, prev: TensorDiff, rms: float) -> bool:
    """One element leaving the round-off of a run already apart from its reference: round-off
    spreads over a tensor's elements, a flipped one takes a share of its own at once. The
    element must also be most of its row's and column's excess: a faulty channel (a row
    scaled x2) lifts a whole row, whose largest element then holds a fifth of it. And it must
    move by a visible part of the tensor's scale: chaos can gather in one element too, but
    small."""
    if t.numel < JUMP_NOISY_NUMEL or prev.diff_sq <= 0 or t.max_abs < JUMP_NOISY_SCALE * rms:
        return False
    share, before = t.max_abs**2 / t.diff_sq, prev.max_abs**2 / prev.diff_sq
    return (
        t.max_abs >= JUMP_NOISY_FACTOR * prev.max_abs
        and share >= JUMP_NOISY_SHARE
        and share >= JUMP_NOISY_RISE * before
        and _owns_lines(t, share, JUMP_NOISY_OWN)
    )


def _origin(t: TensorDiff) -> bool:
    """Where a run bit-identical to its reference until then departs: a matrix
    with one element that is still its row and its column, the element the departure started
    from (a flip), though the steps since spread round-off from it over the tensor (bf16, two
    threads). A channel fault lifts a whole row or column instead. Both lines must hold
    several elements: in a depthwise kernel (one input channel per filter) any element is most
    of its column, and a few taps are its whole row."""
    if t.numel < JUMP_NOISY_NUMEL or t.rows < 2 or t.cols < 2:
        return False
    share = t.max_abs**2 / t.diff_sq
    return share >= JUMP_ORIGIN_SHARE and _owns_lines(t, share, JUMP_ORIGIN_OWN)


def _owns_lines(t: TensorDiff, share: float, least: float) -> bool:
    """The largest element holds ``least`` of its row's and of its column's share or more."""
    tops = [top for n, top in ((t.rows, t.top_row_share), (t.cols, t.top_col_share)) if n > 1]
    return all(share >= least * top for top in tops)


def step_change(series: Sequence[StepDiff], tracks: Tracks) -> StepChange | None:
    """The first checkpoint where a tensor, or the whole model, moved by the order of its own
    norm and stayed there: zeroed, scaled, sign-flipped or replaced weights. Round-off creeps
    up over many checkpoints; this appears at one. Single-element moves are jumps instead."""
    steps = [s.step for s in series]
    found: StepChange | None = None

    def spread(diff_sq: float, max_abs: float) -> bool:
        return max_abs * max_abs < JUMP_SINGLE * diff_sq

    def held(rels: list[float | None]) -> list[int | None]:
        """Per index: the last index the change holds to when it appears there (None when
        it falls back below the bar later). One backward pass: linear in the steps."""
        out: list[int | None] = [None] * len(rels)
        last: int | None = None
        holds = True
        for k in range(len(rels) - 1, -1, -1):
            out[k] = (last if last is not None else k) if holds else None
            r = rels[k]
            if r is not None:
                last = k if last is None else last
                holds = holds and r >= STEP_HOLD * STEP_REL
        return out

    def rises(rels: list[float | None], i: int) -> bool:
        r, before = rels[i], rels[i - 1] if i else None
        if r is None or before is None:
            return False
        return r >= STEP_REL and before <= STEP_REL / STEP_RISE

    # The whole model: also at the first checkpoint (the runs were never the same weights).
    whole: list[float | None] = [
        s.rel_l2 if s.ref_sq > 0 and math.isfinite(s.diff_sq) else None for s in series
    ]
    for i, s in enumerate(series):
        r = whole[i]
        if r is None or r < STEP_REL or not spread(s.diff_sq, s.max_abs):
            continue
        if i and not rises(whole, i):
            continue
        until = held(whole)[i]
        if until is not None:
            found = StepChange(s.step, steps[i - 1] if i else None, [], r, steps[until])
        break
    for name, track in tracks.items():
        rels: list[float | None] = [
            t.rel_l2 if t is not None and t.ref_sq > 0 and math.isfinite(t.diff_sq) else None
            for t in track
        ]
        holds: list[int | None] | None = None
        for i in range(1, len(track)):
            t = track[i]
            if found is not None and steps[i] > found.step:
                break
            if t is None or t.numel < MIN_AXIS or not rises(rels, i):
                continue
            if not spread(t.diff_sq, t.max_abs):
                continue
            earlier = track[i - 1]
            if earlier is not None and not earlier.differs:
                # From bit-identical to the order of its norm: how every gradient-null
                # parameter (a key bias) starts its random walk once the runs differ at all,
                # since Adam turns its round-off gradient into full-size steps.
                continue
            holds = holds or held(rels)
            until = holds[i]
            if until is None:
                continue
            rel = rels[i] or 0.0
            if found is None or steps[i] < found.step:
                found = StepChange(steps[i], steps[i - 1], [name], rel, steps[until])
            elif steps[i] == found.step and found.tensors:
                found.tensors.append(name)
                found.rel_l2 = max(found.rel_l2, rel)
            break
    return found

"""Departures: the tensors that left their noise floor, and from which checkpoint.

Two healthy runs drift apart steadily (reduction-order round-off, amplified by Adam in
parameters whose true gradient is near zero), so the verdict looks at *where* the divergence
sits. A tensor leaves its floor by any of these levers, each held at ``PERSIST`` consecutive
checkpoints:
- localisation: inside a matrix, one row or column holds far more than its uniform
  share of the difference (one element of a vector only against a noise run). Round-off
  spreads; a faulty matmul output column lands in one weight row (and the consumer's
  column) every step. The bar is self-calibrated on the tensor's first checkpoints and
  raised by the noise reference's own concentration.
- corroboration: the same channel index concentrated in two tensors of different ops at
  once (a faulty output column j shows in its weight's row j and in the consumer's column
  j; ``_same_op`` says which tensors are one op).
- noise envelope (``noise`` given): the tensor is ``ENVELOPE`` times further from the
  reference than the healthy second run is at the same step.
- bit-exact departure: the run matched the reference bit for bit at the first
  checkpoints and then departs.
- wholesale departure: a run apart by round-off leaps away, whole and in most tensors, over
  one interval (``wholesale``).
Without a noise run, localised channels that are the only evidence must include one holding
nearly all of its tensor (``LONE_SHARE``); otherwise they are reported, not departures
(``UNCONFIRMED``): a row starved of gradient takes most of its tensor in healthy reruns too.
A localised lever must also hold its concentration to the end (``HOLD_LIFT``), and the
envelope is self-calibrated: random walks spread, wander and differ by chance from the
start; a fault keeps its place and grows. A tensor whose whole difference grows faster than
the others' is no lever without a noise run: gradient-null parameters (key biases, position
embeddings, norm parameters) random-walk that way in healthy reruns. Whether the departures
amount to drift is the verdict's call (``verdict``); their words are ``explain``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from denpex.drift import bit_exact, envelope, noise_channels, wholesale
from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.thresholds import (
    ARRIVAL,
    CALIBRATION,
    CORROBORATED,
    DOMINANT,
    HOLD_LIFT,
    LIFT_MIN,
    LONE_SHARE,
    MAX_SHARE_BAR,
    SELF_FACTOR,
)
from denpex.drift.tracks import (
    HELD,
    UNCONFIRMED,
    Departure,
    Tracks,
    axes,
    is_vector,
    localised,
    persistent_from,
    top_index,
    top_share,
)


def _excess(t: TensorDiff, n: int, share: float) -> float:
    """L2 of the top row/col above what a typical other row/col holds."""
    # A share summed in floating point can come out a hair above 1 when one row holds all of
    # the difference (TimesFM's doubled MLP channel, rotation 16): not a negative remainder.
    share = min(max(share, 0.0), 1.0)
    other = t.diff_sq * (1 - share) / max(1, n - 1)
    return max(0.0, math.sqrt(t.diff_sq * share) - math.sqrt(other))


def localisation(
    steps: list[int],
    tracks: Tracks,
    noise: Tracks | None,
) -> list[Departure]:
    out = []
    for name, track in tracks.items():
        first = next((t for t in track if t is not None and t.diff_sq > 0), None)
        if first is None:
            continue
        for axis, n, _, _ in axes(first, vectors=True):
            shares = [top_share(t, axis) for t in track]
            early = [n * s for t, s in zip(track, shares, strict=True) if localised(t)][
                :CALIBRATION
            ]
            base = sorted(early)[len(early) // 2] if early else 0.0
            bar = min(max(LIFT_MIN, SELF_FACTOR * base), MAX_SHARE_BAR * n)
            ntrack = noise.get(name) if noise is not None else None
            if _concentrated_from_start(track, shares, n, bar) and (
                ntrack is None or noise_channels.holds_it_too(track, ntrack, axis)
            ):
                # The cap met a concentration the tensor held from the first checkpoints: the
                # lever has no room left to see a rise. Whose it is, only a noise run says: on
                # RegNet's squeeze-excitation conv (8 input columns) one column held 0.7 from
                # step 12 in every healthy rerun and in the noise run alike; a fault older than
                # the comparison is in the run only, and is kept when a noise run shows that.
                if noise is None:
                    out.append(_held(name, steps, track, axis))
                continue
            if noise is None and is_vector(first):
                # One element of a vector alone, with no noise run to compare: each element of
                # a bias random-walks on its own, and one can grow in place by chance (three
                # healthy UnivNet reruns, rotation 19: element 2 of a 64-element bias took 0.9
                # of it). A faulty channel also lands in its op's weight, which
                # ``corroborated`` pairs it with.
                continue
            lone = ntrack is not None and noise_channels.lone_channel(ntrack, axis)
            flags = [
                localised(t)
                and shares[i] >= DOMINANT
                and n * shares[i]
                >= noise_channels.bar_at(bar, n, axis, ntrack[i] if ntrack else None)
                and not noise_channels.explains(t, axis, n, ntrack[i] if ntrack else None, lone)
                for i, t in enumerate(track)
            ]
            start = _same_index(track, axis, flags)
            # A fed fault keeps its channel dominant to the end; a lumpy channel of the model
            # fades (real Qwen2-MoE reruns: the shared expert's channel 52 held 0.6 of
            # gate_proj at step 12 and 0.41-0.47 at step 120, by 3/4 of its lift or less).
            if start is None or _diluted([n * sh for sh in shares], start) or shares[-1] < DOMINANT:
                continue
            if _settling(start, axis, ntrack):
                out.append(_held(name, steps, track, axis))
                continue
            if _crept_in(track, shares, axis, start, ntrack):
                continue
            top = track[start]
            assert top is not None  # flagged steps are localised, hence present
            excess = [_excess(t, n, top_share(t, axis)) if t is not None else 0.0 for t in track]
            out.append(
                Departure(
                    tensor=name,
                    lever="localisation",
                    onset=steps[start],
                    excess=excess,
                    detail={
                        "axis": axis,
                        "index": top_index(top, axis),
                        "share": round(top_share(top, axis), 4),
                        "uniform_share": round(1 / n, 6),
                        "bar_share": round(bar / n, 4),
                        "baseline_lift": round(base, 2),
                    },
                )
            )
    return out


def _settling(start: int, axis: str, ntrack: list[TensorDiff | None] | None) -> bool:
    """A channel that took its tensor over inside the calibration window (the first
    CALIBRATION checkpoints compared) is held, not a departure, unless a noise run kept that
    tensor spread throughout. Without a noise run, a fault older than the comparison and the
    model's own channel look alike. Inside the window every tensor is still finding its
    level, and chaos may pick a channel by chance: FocalNet's healthy reruns each gave one
    hidden channel 0.7-0.9 of a tensor by step 36 (24 in some, 27 in others) and the noise
    run did the same in that tensor, at times later, so its picking another channel does not
    make the run's a fault; a noise run that never concentrated the tensor does. Faults
    found on the tuning corpus began after the window."""
    if start >= CALIBRATION:
        return False
    if ntrack is None:
        return True
    return noise_channels.lone_channel(ntrack, axis)


def _held(name: str, steps: list[int], track: list[TensorDiff | None], axis: str) -> Departure:
    """A channel that took its tensor's difference over inside the calibration window
    (``_settling``): reported (HELD), never flagged."""
    last = next(t for t in reversed(track) if t is not None)
    return Departure(
        tensor=name,
        lever=HELD,
        onset=steps[0],
        excess=[0.0] * len(steps),
        detail={
            "axis": axis,
            "index": top_index(last, axis),
            "share": round(top_share(last, axis), 4),
        },
    )


def _concentrated_from_start(
    track: list[TensorDiff | None], shares: list[float], n: int, bar: float
) -> bool:
    """The tensor's top channel already held the bar at the series' first CALIBRATION
    checkpoints (those where it differs enough to say). A run equal to its reference, or
    differing sparsely, until a fault is not: the fault's rise comes later and is kept."""
    lifts = [n * s for t, s in zip(track[:CALIBRATION], shares, strict=False) if localised(t)]
    return bool(lifts) and sorted(lifts)[len(lifts) // 2] >= bar


def _arrived(track: list[TensorDiff | None], shares: list[float], start: int) -> bool:
    """Did the channel's amplitude jump when it took over its tensor (``start`` > 0)? A fault
    arrives: 22x and more over the two checkpoints up to its onset on every faulty run this
    lever found (two: a fault that began just before a checkpoint is split over two
    intervals), while a channel the model makes sensitive takes over gradually: ConvNeXt's row
    28 in every healthy rerun (at most 8.9x over two), WavLM's query/key head dimension 45 in a
    two-thread rerun (12.4x over two: 3.8x, then 3.3x), and ConvBERT's, where one input column
    of a 1x1 conv took 0.6 of its tensor in reruns more than in the noise run, so that a noise
    run does not excuse it. A run equal to its reference before arrives. A channel that held
    its tensor from the first checkpoint compared (``start`` 0) shows no arrival at all: the
    model's own (an LSTM LM's head row and the residual channel feeding it, in eight healthy
    reruns of nine), or a fault older than the comparison, which only a noise run can tell
    apart (the callers report it as held without one)."""
    t = track[start]
    earlier = [k for k in (start - 2, start - 1) if k >= 0 and track[k] is not None]
    if not earlier:
        return True  # the tensor was missing before: nothing to rise from
    before = track[earlier[0]]
    assert before is not None
    if t is None or before.diff_sq <= 0:
        return True
    return math.sqrt(t.diff_sq * shares[start] / (before.diff_sq * shares[earlier[0]])) >= ARRIVAL


def _crept_in(
    track: list[TensorDiff | None],
    shares: list[float],
    axis: str,
    start: int,
    ntrack: list[TensorDiff | None] | None,
) -> bool:
    """The channel took its tensor over gradually after the first checkpoint (it did not
    arrive): the model's own, unless a noise run confirms a fault older than the comparison,
    growing in place from the first checkpoint. The noise run tells them apart by the
    tensor's distance, not by where its own top channel sits: Time Series Transformer's
    decoder query/key row 6 was top from step 12 in every healthy rerun, at 0.2-0.7 of its
    tensor, while the noise run's top rows wandered at 1.5-2x less distance (rotation 23); a
    fault carrying its tensor stands ``ENVELOPE`` times beyond the noise run (the demo
    simulator's channel faulty before its first checkpoint: 20x). A vector's elements
    random-walk one by one and must arrive even so (a healthy ProphetNet rerun: element 26
    of a value bias, top from the start, 0.62 of its vector by step 48)."""
    if start == 0 or _arrived(track, shares, start):
        return False
    first = next((t for t in track if t is not None), None)
    if ntrack is None or (first is not None and is_vector(first)):
        return True
    return not (
        _in_place_from_start(track, axis, start)
        and noise_channels.beyond(track[start], ntrack[start])
    )


def _in_place_from_start(track: list[TensorDiff | None], axis: str, start: int) -> bool:
    """The channel that took its tensor over gradually was its top channel at every checkpoint
    compared before. One that took over from another late in the run (ConvBERT's reruns:
    columns 33, 53, then 24 from step 72) is round-off finding a sensitive channel."""
    index = top_index(track[start], axis)
    return all(
        top_index(t, axis) == index for t in track[:start] if t is not None and t.diff_sq > 0
    )


def _diluted(lifts: Sequence[float], start: int) -> bool:
    """True when the concentration found at ``start`` dissolves by the last checkpoint. The
    first differences between healthy reruns are sparse and often cluster in one row (the
    first ulp that differed, then its neighbours); as the rest of the tensor catches up the
    top row's lift falls several-fold. A faulty channel is fed every step: its lift holds or
    grows. (Corroborated pairs: each of the two must hold.)"""
    return lifts[-1] < HOLD_LIFT * lifts[start]


def corroborated(steps: list[int], tracks: Tracks, noise: Tracks | None = None) -> list[Departure]:
    """The same channel concentrated in two different tensors at once: a faulty output column
    j of a matmul lands in its weight's row j and in the consumer's column j (or the paired
    q/k row j). Round-off concentrations are weak and land on unrelated indices, so the bar
    can sit far lower than for one tensor alone and needs no calibration window."""
    # (axis length, index) -> {step index: {tensor: member}}. Sparse: the top
    # index wanders from step to step, so a dense list per group grew with steps squared.
    groups: dict[tuple[int, int], dict[int, dict[str, _Member]]] = {}
    for name, track in tracks.items():
        ntrack = noise.get(name) if noise is not None else None
        lone = {
            ax: ntrack is not None and noise_channels.lone_channel(ntrack, ax)
            for ax in ("row", "col")
        }
        for i, t in enumerate(track):
            if t is None or not localised(t):
                continue
            for axis, n, idx, share in axes(t, vectors=True):
                if ntrack is not None and noise_channels.explains(
                    t, axis, n, ntrack[i], lone[axis]
                ):
                    continue
                members = groups.setdefault((n, idx), {}).setdefault(i, {})
                lift = n * share
                if name not in members or lift > members[name].lift:
                    members[name] = _Member(lift, axis, _excess(t, n, share), is_vector(t))
    out = []
    for (n, idx), per_step in groups.items():
        if len(per_step) < 2 or not any(len(m) >= 2 for m in per_step.values()):
            continue  # a lever needs a pair at two checkpoints at least
        pairs = [_pair(per_step[i]) if i in per_step else [] for i in range(len(steps))]
        start = persistent_from(
            [
                len(p) == 2 and p[0][1].lift >= DOMINANT * n and p[1][1].lift >= CORROBORATED
                for p in pairs
            ]
        )
        if start is None or any(
            _diluted([p[k][1].lift if len(p) == 2 else 0.0 for p in pairs], start) for k in (0, 1)
        ):
            continue
        # A faulty channel also lands in a matrix (its op's weight, or the consumer's); a
        # residual channel amplifying round-off can show in the vectors that write into it
        # alone (six post-norm biases at index 2 of 32 in a healthy SwinV2 rerun, rotation 21;
        # PP-LCNetV3's BatchNorm statistics across parallel branches, rotation 20).
        if not any(not m.vector and m.lift >= CORROBORATED for m in per_step[start].values()):
            continue
        at = pairs[start]
        lead, axis = at[0][0], at[0][1].axis
        nlead = noise.get(lead) if noise is not None else None
        if _settling(start, axis, nlead):
            out.append(_held(lead, steps, tracks[lead], axis))
            continue
        shares = [top_share(t, axis) for t in tracks[lead]]
        if _crept_in(tracks[lead], shares, axis, start, nlead):
            continue
        excess = [
            math.sqrt(math.fsum(m.excess**2 for _, m in p)) if len(p) == 2 else 0.0 for p in pairs
        ]
        out.append(
            Departure(
                tensor=at[0][0],
                lever="corroborated_localisation",
                onset=steps[start],
                excess=excess,
                detail={
                    "index": idx,
                    "axis": at[0][1].axis,
                    "share": round(at[0][1].lift / n, 4),
                    "uniform_share": round(1 / n, 6),
                    "also": f"{at[1][0]} {at[1][1].axis} {idx}",
                    "also_share": round(at[1][1].lift / n, 4),
                },
            )
        )
    return out


class _Member(NamedTuple):
    """One tensor's concentration on a channel at one checkpoint."""

    lift: float  # the channel's share of the tensor's difference, over the uniform share
    axis: str
    excess: float
    vector: bool


def _pair(members: dict[str, _Member]) -> list[tuple[str, _Member]]:
    """The two most concentrated tensors at one step that belong to different ops. A
    weight's row j and its own bias's element j move together whenever output channel j is
    starved of gradient (Adam random-walks both: UnivNet's kernel predictor, channel 2, in a
    healthy rerun, rotation 19); a faulty channel also reaches the op that consumes it."""
    ranked = sorted(members.items(), key=lambda kv: -kv[1].lift)
    for a in range(len(ranked)):
        for b in range(a + 1, len(ranked)):
            if not _same_op(ranked[a], ranked[b]):
                return [ranked[a], ranked[b]]
    return ranked[:1]


def _same_op(a: tuple[str, _Member], b: tuple[str, _Member]) -> bool:
    """Two tensors of one module, or a vector of a module that holds the other's module. A
    parent's vector indexed by the child's output channel adds into the same pre-activation,
    so a starved channel random-walks in both: Kimi Linear's forget gate, whose ``dt_bias[2]``
    moved with its ``f_b_proj`` row 2 in two healthy reruns (rotation 30)."""
    (na, ma), (nb, mb) = a, b
    moda, modb = na.rpartition(".")[0], nb.rpartition(".")[0]
    if moda == modb:
        return True
    return (ma.vector and modb.startswith(moda + ".")) or (
        mb.vector and moda.startswith(modb + ".")
    )


def _same_index(track: list[TensorDiff | None], axis: str, flags: list[bool]) -> int | None:
    """Start of a persistent run of flags that also stays on the same row/col: a faulty lane
    hits the same slice every step, round-off clusters wander."""
    held = list(flags)
    for i in range(1, len(held)):
        if held[i] and held[i - 1] and top_index(track[i], axis) != top_index(track[i - 1], axis):
            held[i] = False
    return persistent_from(held)


def find(series: Sequence[StepDiff], tracks: Tracks, noise: Tracks | None) -> list[Departure]:
    """Every tensor that left its noise floor, by every lever that applies (and, without a
    noise run, the channels held from the start, lever HELD, and the unconfirmed ones, lever
    UNCONFIRMED)."""
    steps = [s.step for s in series]
    found = localisation(steps, tracks, noise)
    found += corroborated(steps, tracks, noise)
    if noise is not None:
        found += envelope.departures(steps, tracks, noise)
    departure = bit_exact.departure(series, tracks)
    if departure is not None:
        found.append(departure)
    if noise is not None and (shared := bit_exact.noise_departure(series, tracks, noise)):
        found.append(shared)
    if (leap := wholesale.departure(series, tracks)) is not None:
        found.append(leap)
    return found if noise is not None else _unconfirmed(found)


def _unconfirmed(found: list[Departure]) -> list[Departure]:
    """Without a noise run, localised channels that are the only evidence, none holding
    nearly all of its tensor (``LONE_SHARE``), are reported as UNCONFIRMED, not departures:
    a healthy row starved of gradient random-walks with full Adam steps and takes most of its
    tensor's difference the same way."""
    levers = [d for d in found if d.lever != HELD]
    if any(d.lever != "localisation" or d.detail["share"] >= LONE_SHARE for d in levers):
        return found
    return [replace(d, lever=UNCONFIRMED) if d.lever == "localisation" else d for d in found]

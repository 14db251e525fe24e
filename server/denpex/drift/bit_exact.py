"""Bit-exact departure: the run matched the reference bit for bit, then departs.

One of the levers of ``departures`` (lever 5 in docs/drift-statistics.md), with the channel
it names: a fault is fed at one channel every step, while round-off wanders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.thresholds import EXACT_MIN
from denpex.drift.tracks import Departure, Tracks, axes


def departure(series: Sequence[StepDiff], tracks: Tracks) -> Departure | None:
    """The run matched the reference bit for bit at the first checkpoints (``EXACT_MIN`` at
    least) and then departs. Real nondeterminism (threads, reduction order, kernels) shows
    from the first optimizer steps, or a checkpoint later when it surfaces late, so a
    reference that reproduced the run exactly for a while proves the two share their
    arithmetic; a departure after that is a change in the run, however small and
    however chaotic the training is afterwards (in a BatchNorm CNN a 1e-4 fault is soon
    spread over every tensor at round-off level, and no localisation can see it)."""
    first = departed_at(tracks)
    if first is None:
        return None
    detail: dict[str, Any] = {"identical_until": series[first - 1].step}
    channel = held_channel(tracks, first)
    if channel is not None:
        name = channel.pop("tensor")
        detail["channel"] = channel
    else:
        at = [(n, t) for n, tr in tracks.items() if (t := tr[first]) is not None and t.differs]
        # The tensor where the difference is most concentrated: a faulty channel shows in
        # its own weights first, while propagation has spread it thin elsewhere.
        name, _ = max(
            at,
            key=lambda nt: (
                max((n * sh for _, n, _, sh in axes(nt[1])), default=0.0),
                nt[1].rel_l2,
            ),
        )
    at_first = tracks[name][first]
    detail["rel_l2"] = at_first.rel_l2 if at_first is not None else 0.0
    return Departure(
        tensor=name,
        lever="bit_exact_departure",
        onset=series[first].step,
        excess=[s.l2 if i >= first else 0.0 for i, s in enumerate(series)],
        detail=detail,
    )


def departed_at(tracks: Tracks) -> int | None:
    """The checkpoint where the run first differs from a reference it matched bit for bit at
    every checkpoint before, ``EXACT_MIN`` of them at least; None when it never differs,
    differs too soon to tell, or a checkpoint before compared nothing (no evidence of
    equality)."""
    for i in range(max((len(tr) for tr in tracks.values()), default=0)):
        compared = [t for tr in tracks.values() if (t := tr[i]) is not None]
        if not compared:
            return None
        if any(t.differs for t in compared):
            return i if i >= EXACT_MIN else None
    return None


def held_channel(tracks: Tracks, first: int) -> dict[str, Any] | None:
    """The row or column that holds its place from checkpoint ``first`` on: the faulty
    channel of a run that departs from a bit-exact reference. A fault is fed at the same
    channel every step, while propagation and round-off concentrate by chance and wander; so
    per (tensor, axis, index), its shares at the checkpoints where it is the top one are
    summed, and the largest sum names the channel (top at two checkpoints at least)."""
    held: dict[tuple[str, str, int], list[float]] = {}
    checkpoints = 0
    for name, track in tracks.items():
        after = track[first:]
        checkpoints = max(checkpoints, len(after))
        for t in after:
            if t is None or not t.differs:
                continue
            for axis, _, index, share in axes(t):
                if math.isfinite(share) and share > 0:
                    held.setdefault((name, axis, index), []).append(share)
    (name, axis, index), shares = max(
        held.items(), key=lambda kv: (len(kv[1]) >= 2, math.fsum(kv[1])), default=(("", "", 0), [])
    )
    if len(shares) < 2:
        return None
    also = sorted(
        f"{n} {a} {i}"
        for (n, a, i), sh in held.items()
        if i == index and n != name and len(sh) >= 2
    )
    return {
        "tensor": name,
        "axis": axis,
        "index": index,
        "share": round(math.fsum(shares) / len(shares), 4),
        "held": len(shares),
        "checkpoints": checkpoints,
        "also": also[:3],
    }


def noise_departure(series: Sequence[StepDiff], tracks: Tracks, noise: Tracks) -> Departure | None:
    """The run reproduced the noise reference bit for bit at the first checkpoints, then
    departs from it. Two runs that hold the same weights stand at the same distance from
    the reference, tensor by tensor, to the last bit of every sum; two runs that do not
    hold the same weights almost never do. So a run whose distances equal the noise run's
    exactly, at ``EXACT_MIN`` checkpoints at least, shares that run's arithmetic (the
    same configuration rerun on the same kind of hardware), even when both are far from a
    reference that does not, and a departure after that is a change in the run, however
    deep under their shared round-off (a 1e-3 fault in a two-thread BatchNorm run). No
    other pass over the checkpoints is needed: the comparison with the reference already
    holds the evidence."""
    first = None
    with_reference = True  # the run also equal to the reference at every checkpoint so far
    for i in range(len(series)):
        pairs = [(t, noise[name][i]) for name, tr in tracks.items() if (t := tr[i]) is not None]
        pairs = [(t, n) for t, n in pairs if t.status == "ok"]
        if not pairs or any(n is None for _, n in pairs):
            return None  # a step the noise run lacks: no evidence either way
        if not all(n is not None and _same(t, n) for t, n in pairs):
            first = i
            break
        with_reference = with_reference and not any(t.differs for t, _ in pairs)
    if first is None or first < EXACT_MIN:  # never apart, or apart too soon to tell
        return None
    if with_reference:
        # Equal to the reference too until the departure: bit_exact.departure's case. Not
        # when the run and its noise run parted from the reference together too soon for
        # that lever (Ergo's two-thread runs, equal to the one-thread reference at one
        # checkpoint): the noise run is then the only bit-exact reference the run has.
        return None
    # The tensor whose distance from the reference moved most against the noise run's.
    name, t = max(
        ((name, t) for name, tr in tracks.items() if (t := tr[first]) is not None),
        key=lambda nt: _moved(nt[1], noise[nt[0]][first]),
    )
    return Departure(
        tensor=name,
        lever="noise_exact_departure",
        onset=series[first].step,
        excess=[
            math.sqrt(abs(s.diff_sq - _noise_sq(noise, i))) if i >= first else 0.0
            for i, s in enumerate(series)
        ],
        detail={"identical_until": series[first - 1].step, "rel_l2": t.rel_l2},
    )


def _same(t: TensorDiff, n: TensorDiff) -> bool:
    # A NaN equals nothing, not even the noise run's NaN: it is never evidence of equal weights.
    return (
        n.status == "ok"
        and t.diff_sq == n.diff_sq
        and t.max_abs == n.max_abs
        and t.mismatched == n.mismatched
    )


def _moved(t: TensorDiff, n: TensorDiff | None) -> float:
    if n is None or not math.isfinite(t.diff_sq) or not math.isfinite(n.diff_sq):
        return 0.0
    return abs(math.sqrt(t.diff_sq) - math.sqrt(n.diff_sq)) / max(math.sqrt(t.ref_sq), 1e-30)


def _noise_sq(noise: Tracks, i: int) -> float:
    return math.fsum(
        t.diff_sq for tr in noise.values() if (t := tr[i]) is not None and t.status == "ok"
    )

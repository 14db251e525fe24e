"""Per-tensor tracks of a compared series, and the record of a tensor that left its floor.

Shared by the levers (``departures``, ``bit_exact``), the one-checkpoint checks (``sudden``)
and the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.thresholds import MIN_AXIS, MIN_MISMATCHED, MIN_VECTOR, PERSIST

Tracks = dict[str, list[TensorDiff | None]]
# The levers whose excess is one channel's own (the rest measure a whole tensor's distance).
LOCALISED = frozenset({"localisation", "corroborated_localisation"})
# Not a departure: a channel concentrated from the first checkpoint compared, without a noise
# run (the model's own or a fault older than the comparison; departures._held).
HELD = "held_from_start"
# Not a departure either: without a noise run, a channel holding part of its tensor's
# difference, with no other evidence beside it (departures._unconfirmed).
UNCONFIRMED = "unconfirmed_channel"


@dataclass
class Departure:
    """One tensor that left its noise floor: from which step, why, and how far."""

    tensor: str
    # localisation | corroborated_localisation | noise_envelope | bit_exact_departure
    # | noise_exact_departure | wholesale_departure
    # | held_from_start (HELD), unconfirmed_channel (UNCONFIRMED): reported, not departures
    lever: str
    onset: int
    excess: list[float]  # per step of the series, in L2 units above the floor (0 when under)
    detail: dict[str, Any]


def _ok(t: TensorDiff | None) -> TensorDiff | None:
    return t if t is not None and t.status == "ok" else None


def tracks_of(series: Sequence[StepDiff]) -> Tracks:
    """Per tensor name, its TensorDiff at each step (None where missing or unreadable)."""
    names: dict[str, None] = {}
    for s in series:
        for t in s.tensors:
            names.setdefault(t.name)
    by_step = [{t.name: t for t in s.tensors} for s in series]
    return {n: [_ok(m.get(n)) for m in by_step] for n in names}


def is_vector(t: TensorDiff) -> bool:
    """A 1-D tensor (rows=numel, cols=1) long enough for one element to localise."""
    return t.cols == 1 and t.rows == t.numel >= MIN_VECTOR


def axes(t: TensorDiff, vectors: bool = False) -> list[tuple[str, int, int, float]]:
    """(axis, groups, top index, top share) for the axes that can show localisation; the
    uniform share is 1/groups (the axis's length unless fingerprints folded it). With
    ``vectors``, a 1-D tensor's elements are its rows (the levers; naming a channel keeps
    to matrices)."""
    out = []
    for axis, n, groups, idx, share in (
        ("row", t.rows, t.row_groups, t.top_row, t.top_row_share),
        ("col", t.cols, t.col_groups, t.top_col, t.top_col_share),
    ):
        spread = n >= MIN_AXIS and t.numel // max(1, n) >= MIN_AXIS
        if spread or (vectors and axis == "row" and is_vector(t)):
            out.append((axis, groups or n, idx, share))
    return out


def localised(t: TensorDiff | None) -> bool:
    """Most elements differ: early, sparse differences cluster and say nothing of place."""
    return t is not None and t.diff_sq > 0 and t.mismatched >= MIN_MISMATCHED * t.numel


def top_index(t: TensorDiff | None, axis: str) -> int:
    """The top row's or column's index (-1 for a missing tensor)."""
    if t is None:
        return -1
    return t.top_row if axis == "row" else t.top_col


def top_share(t: TensorDiff | None, axis: str) -> float:
    """The top row's or column's share of the difference (0 for a missing tensor)."""
    if t is None:
        return 0.0
    return t.top_row_share if axis == "row" else t.top_col_share


def persistent_from(flags: Sequence[bool]) -> int | None:
    """Index where the first run of PERSIST consecutive True starts; a run reaching the end
    of the series counts when it covers at least two checkpoints."""
    n = len(flags)
    i = 0
    while i < n:
        if flags[i]:
            j = i
            while j < n and flags[j]:
                j += 1
            if j - i >= PERSIST or (j == n and j - i >= 2):
                return i
            i = j
        else:
            i += 1
    return None

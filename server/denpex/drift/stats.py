"""Trend statistics for drift series: Mann-Kendall with tie correction, Sen's slope and a
growth-shape label. numpy only (no scipy): the normal tail comes from ``math.erfc``.

Both stay near-linear in the number of steps: Mann-Kendall's S is counted with a Fenwick
tree over ranks (O(n log n), O(n) memory) rather than over all n²/2 pairs, and Sen's slope
takes at most ``SEN_POINTS`` evenly spaced points (the pairwise slopes of 5,000 steps held
hundreds of MB).

These tests say whether a series keeps growing; they do not say whether the growth is a
fault. Two healthy reruns also drift apart monotonically (Mann-Kendall tau 0.8-0.94), so
``verdict`` only runs them on the part of a series that has already left the noise floor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SEN_POINTS = 1024  # Sen's slope over at most this many points: ~520k pairwise slopes


@dataclass(frozen=True)
class MannKendall:
    n: int
    s: int  # sum of sign(x_j - x_i) over i < j
    var_s: float  # variance of s under "no trend", corrected for ties
    z: float  # continuity-corrected normal score
    tau: float  # Kendall's tau-b against time
    p_increasing: float  # one-sided p-value for an upward trend
    p_two_sided: float


def mann_kendall(values: Sequence[float]) -> MannKendall:
    """Mann-Kendall trend test on equally ordered observations.

    Ties (common: a tensor stays bit-identical for several checkpoints) shrink the variance
    by sum t(t-1)(2t+5)/18 over tie groups of size t, and tau-b divides by the untied pairs.
    Non-finite values (a NaN checkpoint) carry no order and are left out.
    """
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n < 2:
        return MannKendall(n, 0, 0.0, 0.0, 0.0, 1.0, 1.0)
    s = _s_statistic(x)
    _, counts = np.unique(x, return_counts=True)
    ties = counts[counts > 1].astype(np.float64)
    var_s = (n * (n - 1) * (2 * n + 5) - float((ties * (ties - 1) * (2 * ties + 5)).sum())) / 18.0
    if var_s <= 0:  # every value equal: no information about a trend
        return MannKendall(n, s, 0.0, 0.0, 0.0, 1.0, 1.0)
    z = (s - math.copysign(1.0, s)) / math.sqrt(var_s) if s != 0 else 0.0
    pairs = n * (n - 1) / 2
    tied_pairs = float((ties * (ties - 1) / 2).sum())
    tau = s / math.sqrt(pairs * (pairs - tied_pairs))
    p_up = 0.5 * math.erfc(z / math.sqrt(2))
    p_two = math.erfc(abs(z) / math.sqrt(2))
    return MannKendall(n, s, var_s, z, tau, p_up, min(1.0, p_two))


def _s_statistic(x: np.ndarray) -> int:
    """S = sum of sign(x_j - x_i) over i < j: for each j, the earlier values below it minus
    those above it, counted in a Fenwick tree indexed by rank (ties count neither way)."""
    _, ranks = np.unique(x, return_inverse=True)
    size = int(ranks.max()) + 1 if ranks.size else 0
    tree = [0] * (size + 1)

    def earlier_up_to(rank: int) -> int:  # earlier values with rank < ``rank``
        total = 0
        while rank > 0:
            total += tree[rank]
            rank -= rank & -rank
        return total

    s = 0
    for j, r in enumerate(ranks.tolist()):
        below, not_above = earlier_up_to(r), earlier_up_to(r + 1)
        s += below - (j - not_above)
        k = r + 1
        while k <= size:
            tree[k] += 1
            k += k & -k
    return s


def sen_slope(times: Sequence[float], values: Sequence[float]) -> float:
    """Theil-Sen slope: the median of the pairwise slopes (robust to a few outliers), over
    at most ``SEN_POINTS`` evenly spaced points of a longer series."""
    t = np.asarray(times, dtype=np.float64)
    x = np.asarray(values, dtype=np.float64)
    if t.size != x.size:
        raise ValueError("times and values differ in length")
    keep = np.isfinite(t) & np.isfinite(x)
    t, x = t[keep], x[keep]
    if t.size > SEN_POINTS:
        pick = np.unique(np.linspace(0, t.size - 1, SEN_POINTS).round().astype(np.int64))
        t, x = t[pick], x[pick]
    if t.size < 2:
        return 0.0
    i, j = np.triu_indices(t.size, k=1)
    dt = t[j] - t[i]
    keep = dt != 0
    if not keep.any():
        return 0.0
    return float(np.median((x[j] - x[i])[keep] / dt[keep]))


def growth_shape(times: Sequence[float], values: Sequence[float]) -> str:
    """ "linear", "accelerating" or "saturating": Sen's slope of the later half of the
    series against the earlier half (halves share the middle point). Fewer than four
    points carry no shape: "linear"."""
    n = len(values)
    if n < 4:
        return "linear"
    mid = n // 2
    early = sen_slope(times[: mid + 1], values[: mid + 1])
    late = sen_slope(times[mid:], values[mid:])
    if early <= 0 and late <= 0:
        return "saturating"
    if early <= 0 or late > 2.0 * early:
        return "accelerating"
    if late < 0.5 * early:
        return "saturating"
    return "linear"

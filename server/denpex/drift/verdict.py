"""Judging a drift series: benign round-off, or a fault?

Two healthy runs drift apart steadily: reduction-order round-off is amplified by Adam in
parameters whose true gradient is near zero (attention key biases), which random-walk and
carry almost all of the global distance. A trend test on the global L2 fires on every such
rerun, so the verdict looks at *where* the divergence sits rather than how much there is:

0. not_comparable: no tensor could be compared at any step (never "identical").
1. identical: every compared element equal at every step (NaN/Inf never is).
2. step_change: a tensor, or the whole model, moves by the order of its own norm at one
   checkpoint and stays there (zeroed, rescaled, sign-flipped or replaced weights).
   sudden_jump: between two checkpoints one element of one tensor moves far outside the
   tensor's healthy range (a bit flip), and the tensor does not keep growing afterwards.
3. gradual_drift: a tensor's divergence leaves its noise floor and stays out, and the excess
   keeps growing (Mann-Kendall on the excess, Sen's slope, growth shape). Leaving the floor
   means any of these levers, each held at ``PERSIST`` consecutive checkpoints:
   - localisation: inside a matrix, one row or column holds far more than its uniform
     share of the difference. Round-off spreads; a faulty matmul output column lands in one
     weight row (and the consumer's column) every step. The bar is self-calibrated on the
     tensor's first checkpoints and raised by the noise reference's own concentration.
   - corroboration: the same channel index concentrated in two tensors at once (a faulty
     output column j shows in its weight's row j and in the consumer's column j).
   - noise envelope (``noise`` given): the tensor is ``ENVELOPE`` times further from the
     reference than the healthy second run is at the same step.
   - peer self-calibration (no noise reference): the tensor's distance relative to the
     median tensor grows ``PEER_FACTOR`` times beyond its ratio over the first checkpoints.
   - bit-exact departure: the run matched the reference bit for bit at the first
     checkpoints and then departs.
   A localised lever must also hold its concentration to the end (``HOLD_LIFT``), and the
   envelope is self-calibrated: random walks spread, wander and differ by chance from the
   start; a fault keeps its place and grows.
4. within_noise: anything else that differs. Not flagged.

The thresholds are set on the tuning architectures of the real-training corpus and the rates
measured on the held-out ones (``bench/false_alarms.py``, docs/drift-statistics.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from denpex import catalog
from denpex.drift import stats
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff
from denpex.errors import InputError
from denpex.finding import Evidence, Finding, Role

_UNFILLED = re.compile(r"<\w+>")

ALPHA = 0.01  # one-sided Mann-Kendall level for "keeps growing"
PERSIST = 3  # consecutive checkpoints a lever must hold (fewer only at the end of a series)
LIFT_MIN = 10.0  # top row/col must hold >= 10x its uniform share; healthy runs stay under ~7
SELF_FACTOR = 3.0  # ... and >= 3x the tensor's own early concentration (self-calibration)
MAX_SHARE_BAR = 0.5  # never demand more than half of the tensor in one row/col
MIN_AXIS = 8  # rows/cols fewer than this, or holding fewer elements, say nothing about spread
MIN_MISMATCHED = 0.5  # localisation needs most elements to differ: early, sparse diffs cluster
CALIBRATION = 3  # checkpoints used to learn a tensor's own baseline
CORROBORATED = 5.0  # same index in two tensors, both >= 5x uniform; healthy pairs stay < 3.2
ENVELOPE = 4.0  # healthy reruns stayed within 2.4x of the noise run, per tensor and step
PEER_FACTOR = 8.0  # healthy peer ratios moved up to 3.2x from their early value
HOLD_LIFT = 0.5  # a localised lever's last lift keeps >= half its lift at onset (no dilution)
ONSET_RISE = 3.0  # one checkpoint earlier counts when its excess is 3x all before it
JUMP_FACTOR = 100.0  # max |diff| of a tensor grows 100x between two checkpoints
JUMP_SCALE = 1e-3  # ... to at least 0.1% of the tensor's RMS value
JUMP_SINGLE = 0.5  # ... one element carrying at least half of the added energy
JUMP_SETTLE = 2.0  # afterwards max |diff| stays within 2x: no steady growth
STEP_REL = 0.5  # a step change: the distance reaches half the reference's own norm ...
STEP_RISE = 10.0  # ... from a tenth of that or less one checkpoint before (round-off creeps)
STEP_HOLD = 0.5  # ... and stays above half of that at every later checkpoint
_STATUS_WORDS = {
    "missing_in_run": "missing in the run",
    "missing_in_ref": "missing in the reference",
    "shape_mismatch": "with different shapes",
    "unreadable": "unreadable",
}


@dataclass
class Assessment:
    # not_comparable | identical | within_noise | gradual_drift | sudden_jump | step_change |
    # replica_divergence
    verdict: str
    flagged: bool
    onset_step: int | None
    faulty_rank: int | None
    trend: dict[str, Any]
    finding: Finding | None
    notes: list[str] = field(default_factory=list)


@dataclass
class _Lever:
    """One tensor that left its noise floor: from which step, why, and how far."""

    tensor: str
    # localisation | corroborated_localisation | noise_envelope | peer_ratio | bit_exact_departure
    lever: str
    onset: int
    excess: list[float]  # per step of the series, in L2 units above the floor (0 when under)
    detail: dict[str, Any]


@dataclass
class _Change:
    """A distance of the order of the weights themselves, appearing at one checkpoint."""

    step: int
    previous_step: int | None
    tensors: list[str]  # empty: the whole model (at the first checkpoint, or spread thin)
    rel_l2: float
    held_until: int


@dataclass
class _Jump:
    tensor: str
    step: int
    previous_step: int | None
    max_abs: float
    before: float
    rms: float


def _ok(t: TensorDiff | None) -> TensorDiff | None:
    return t if t is not None and t.status == "ok" else None


def _tracks(series: Sequence[StepDiff]) -> dict[str, list[TensorDiff | None]]:
    """Per tensor name, its TensorDiff at each step (None where missing or unreadable)."""
    names: dict[str, None] = {}
    for s in series:
        for t in s.tensors:
            names.setdefault(t.name)
    by_step = [{t.name: t for t in s.tensors} for s in series]
    return {n: [_ok(m.get(n)) for m in by_step] for n in names}


def _axes(t: TensorDiff) -> list[tuple[str, int, int, float]]:
    """(axis, size, top index, top share) for the axes that can show localisation."""
    out = []
    for axis, n, idx, share in (
        ("row", t.rows, t.top_row, t.top_row_share),
        ("col", t.cols, t.top_col, t.top_col_share),
    ):
        if n >= MIN_AXIS and t.numel // max(1, n) >= MIN_AXIS:
            out.append((axis, n, idx, share))
    return out


def _localised(t: TensorDiff | None) -> bool:
    return t is not None and t.diff_sq > 0 and t.mismatched >= MIN_MISMATCHED * t.numel


def _excess(t: TensorDiff, n: int, share: float) -> float:
    """L2 of the top row/col above what a typical other row/col holds."""
    other = t.diff_sq * (1 - share) / max(1, n - 1)
    return max(0.0, math.sqrt(t.diff_sq * share) - math.sqrt(other))


def _runs(flags: Sequence[bool]) -> int | None:
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


def _localisation_levers(
    steps: list[int],
    tracks: dict[str, list[TensorDiff | None]],
    noise: dict[str, list[TensorDiff | None]] | None,
) -> list[_Lever]:
    out = []
    for name, track in tracks.items():
        first = next((t for t in track if t is not None and t.diff_sq > 0), None)
        if first is None:
            continue
        for axis, n, _, _ in _axes(first):
            shares = [_share(t, axis) for t in track]
            early = [n * s for t, s in zip(track, shares, strict=True) if _localised(t)][
                :CALIBRATION
            ]
            base = sorted(early)[len(early) // 2] if early else 0.0
            bar = min(max(LIFT_MIN, SELF_FACTOR * base), MAX_SHARE_BAR * n)
            ntrack = noise.get(name) if noise is not None else None
            flags = [
                _localised(t)
                and n * shares[i] >= _noise_bar(bar, n, axis, ntrack[i] if ntrack else None)
                for i, t in enumerate(track)
            ]
            start = _same_index(track, axis, flags)
            if start is None or _diluted([n * sh for sh in shares], start):
                continue
            top = track[start]
            assert top is not None  # flagged steps are localised, hence present
            excess = [_excess(t, n, _share(t, axis)) if t is not None else 0.0 for t in track]
            out.append(
                _Lever(
                    tensor=name,
                    lever="localisation",
                    onset=steps[start],
                    excess=excess,
                    detail={
                        "axis": axis,
                        "index": top.top_row if axis == "row" else top.top_col,
                        "share": round(_share(top, axis), 4),
                        "uniform_share": round(1 / n, 6),
                        "bar_share": round(bar / n, 4),
                        "baseline_lift": round(base, 2),
                    },
                )
            )
    return out


def _diluted(lifts: Sequence[float], start: int) -> bool:
    """True when the concentration found at ``start`` dissolves by the last checkpoint. The
    first differences between healthy reruns are sparse and often cluster in one row (the
    first ulp that differed, then its neighbours); as the rest of the tensor catches up the
    top row's lift falls several-fold. A faulty channel is fed every step: its lift holds or
    grows. (Corroborated pairs: each of the two must hold.)"""
    return lifts[-1] < HOLD_LIFT * lifts[start]


def _noise_bar(bar: float, n: int, axis: str, noise: TensorDiff | None) -> float:
    """The lift bar at one step: the noise run's own concentration there raises it."""
    if noise is None or noise.diff_sq <= 0:
        return bar
    return min(max(bar, SELF_FACTOR * n * _share(noise, axis)), MAX_SHARE_BAR * n)


def _share(t: TensorDiff | None, axis: str) -> float:
    if t is None:
        return 0.0
    return t.top_row_share if axis == "row" else t.top_col_share


def _corroborated_levers(
    steps: list[int], tracks: dict[str, list[TensorDiff | None]]
) -> list[_Lever]:
    """The same channel concentrated in two different tensors at once: a faulty output column
    j of a matmul lands in its weight's row j and in the consumer's column j (or the paired
    q/k row j). Round-off concentrations are weak and land on unrelated indices, so the bar
    can sit far lower than for one tensor alone and needs no calibration window."""
    # (axis length, index) -> {step index: {tensor: (lift, axis, excess)}}. Sparse: the top
    # index wanders from step to step, so a dense list per group grew with steps squared.
    groups: dict[tuple[int, int], dict[int, dict[str, tuple[float, str, float]]]] = {}
    for name, track in tracks.items():
        for i, t in enumerate(track):
            if t is None or not _localised(t):
                continue
            for axis, n, idx, share in _axes(t):
                members = groups.setdefault((n, idx), {}).setdefault(i, {})
                lift = n * share
                if lift > members.get(name, (0.0, "", 0.0))[0]:
                    members[name] = (lift, axis, _excess(t, n, share))
    out = []
    for (n, idx), per_step in groups.items():
        if len(per_step) < 2 or not any(len(m) >= 2 for m in per_step.values()):
            continue  # a lever needs a pair at two checkpoints at least
        pairs = [
            sorted(per_step[i].items(), key=lambda kv: -kv[1][0])[:2] if i in per_step else []
            for i in range(len(steps))
        ]
        start = _runs([len(p) == 2 and p[1][1][0] >= CORROBORATED for p in pairs])
        if start is None or any(
            _diluted([p[k][1][0] if len(p) == 2 else 0.0 for p in pairs], start) for k in (0, 1)
        ):
            continue
        at = pairs[start]
        excess = [
            math.sqrt(math.fsum(v[2] ** 2 for _, v in p)) if len(p) == 2 else 0.0 for p in pairs
        ]
        out.append(
            _Lever(
                tensor=at[0][0],
                lever="corroborated_localisation",
                onset=steps[start],
                excess=excess,
                detail={
                    "index": idx,
                    "axis": at[0][1][1],
                    "share": round(at[0][1][0] / n, 4),
                    "uniform_share": round(1 / n, 6),
                    "also": f"{at[1][0]} {at[1][1][1]} {idx}",
                    "also_share": round(at[1][1][0] / n, 4),
                },
            )
        )
    return out


def _same_index(track: list[TensorDiff | None], axis: str, flags: list[bool]) -> int | None:
    """Start of a persistent run of flags that also stays on the same row/col: a faulty lane
    hits the same slice every step, round-off clusters wander."""

    def index(t: TensorDiff | None) -> int:
        return -1 if t is None else (t.top_row if axis == "row" else t.top_col)

    held = list(flags)
    for i in range(1, len(held)):
        if held[i] and held[i - 1] and index(track[i]) != index(track[i - 1]):
            held[i] = False
    return _runs(held)


def _envelope_levers(
    steps: list[int],
    tracks: dict[str, list[TensorDiff | None]],
    noise: dict[str, list[TensorDiff | None]],
) -> list[_Lever]:
    out = []
    for name, track in tracks.items():
        ntrack = noise.get(name)
        if ntrack is None:
            continue
        ratios = [
            math.sqrt(t.diff_sq / nt.diff_sq)
            if t is not None and nt is not None and nt.diff_sq > 0
            else 0.0
            for t, nt in zip(track, ntrack, strict=True)
        ]
        # Self-calibrated like localisation: two independent random walks (a gradient-null
        # parameter, e.g. a conv bias ahead of BatchNorm) differ several-fold in size by
        # chance, and that ratio shows from the first checkpoints on. A fault moves the
        # tensor away from the noise run *after* a time when the two were alike.
        early = [r for r in ratios if r > 0][:CALIBRATION]
        bar = max(ENVELOPE, SELF_FACTOR * sorted(early)[len(early) // 2]) if early else ENVELOPE
        excess = [
            max(0.0, t.l2 - bar * nt.l2) if t is not None and nt is not None else 0.0
            for t, nt in zip(track, ntrack, strict=True)
        ]
        start = _runs([r >= bar for r in ratios])
        if start is None:
            continue
        out.append(
            _Lever(
                tensor=name,
                lever="noise_envelope",
                onset=steps[start],
                excess=excess,
                detail={"ratio_to_noise": round(max(ratios[start:]), 2), "envelope": round(bar, 2)},
            )
        )
    return out


def _peer_levers(steps: list[int], tracks: dict[str, list[TensorDiff | None]]) -> list[_Lever]:
    """Self-calibration without a noise run: healthy tensors diverge together (round-off is
    coupled through the network), so each tensor's distance relative to the median tensor
    holds roughly still; one that climbs far above its early ratio is out of its range."""
    logs: dict[str, list[float | None]] = {
        n: [math.log(t.l2) if t is not None and t.diff_sq > 0 else None for t in tr]
        for n, tr in tracks.items()
    }
    medians: list[float | None] = []
    for i in range(len(steps)):
        col = sorted(x for v in logs.values() if (x := v[i]) is not None)
        medians.append(col[len(col) // 2] if col else None)
    out = []
    for name, values in logs.items():
        rel = [
            v - m if v is not None and m is not None else None
            for v, m in zip(values, medians, strict=True)
        ]
        known = [r for r in rel if r is not None]
        if len(known) < CALIBRATION + 2:
            continue
        early = sorted(known[:CALIBRATION])[CALIBRATION // 2]
        bar = early + math.log(PEER_FACTOR)
        start = _runs([r is not None and r >= bar for r in rel])
        if start is None:
            continue
        track = tracks[name]
        excess = [
            max(0.0, t.l2 - math.exp(early + m)) if t is not None and m is not None else 0.0
            for t, m in zip(track, medians, strict=True)
        ]
        out.append(
            _Lever(
                tensor=name,
                lever="peer_ratio",
                onset=steps[start],
                excess=excess,
                detail={"growth_over_early_ratio": round(math.exp(max(known) - early), 2)},
            )
        )
    return out


def _departure_lever(
    series: Sequence[StepDiff], tracks: dict[str, list[TensorDiff | None]]
) -> _Lever | None:
    """The run matched the reference bit for bit at the first checkpoints and then departs.
    Real nondeterminism (threads, reduction order, kernels) shows from the first optimizer
    steps, so a reference that reproduced the run exactly for a while proves the two share
    their arithmetic; a departure after that is a change in the run, however small and
    however chaotic the training is afterwards (in a BatchNorm CNN a 1e-4 fault is soon
    spread over every tensor at round-off level, and no localisation can see it)."""
    first = None
    for i, s in enumerate(series):
        compared = [t for t in s.tensors if t.status == "ok"]
        if any(t.differs for t in compared):
            first = i
            break
        if not compared:
            return None  # a step with nothing compared is not evidence of equality
    if not first:  # differs from the first checkpoint, or never
        return None
    at = [(name, t) for name, tr in tracks.items() if (t := tr[first]) is not None and t.differs]
    # Name the tensor where the difference is most concentrated: a faulty channel shows in
    # its own weights first, while propagation has spread it thin elsewhere.
    name, top = max(
        at,
        key=lambda nt: (max((n * sh for _, n, _, sh in _axes(nt[1])), default=0.0), nt[1].rel_l2),
    )
    return _Lever(
        tensor=name,
        lever="bit_exact_departure",
        onset=series[first].step,
        excess=[s.l2 if i >= first else 0.0 for i, s in enumerate(series)],
        detail={"identical_until": series[first - 1].step, "rel_l2": top.rel_l2},
    )


def _jumps(steps: list[int], tracks: dict[str, list[TensorDiff | None]]) -> list[_Jump]:
    out = []
    for name, track in tracks.items():
        for i, t in enumerate(track):
            if t is None or t.diff_sq <= 0 or t.numel == 0:
                continue
            prev = track[i - 1] if i > 0 else None
            rms = math.sqrt(t.ref_sq / t.numel)
            before = prev.max_abs if prev is not None else 0.0
            if not (math.isfinite(t.diff_sq) and math.isfinite(t.max_abs)):
                # A value turned NaN/Inf: an exponent bit flipped, or worse. Never gradual.
                out.append(
                    _Jump(name, steps[i], steps[i - 1] if i else None, math.inf, before, rms)
                )
                break
            added = t.diff_sq - (prev.diff_sq if prev is not None else 0.0)
            if (
                t.max_abs >= JUMP_FACTOR * max(before, 1e-6 * rms)
                and t.max_abs >= JUMP_SCALE * rms
                and t.max_abs**2 >= JUMP_SINGLE * added
            ):
                later = [u.max_abs for u in track[i + 1 :] if u is not None]
                # A run that blows up to NaN afterwards is still a one-off corruption.
                if all(m <= JUMP_SETTLE * t.max_abs or not math.isfinite(m) for m in later):
                    out.append(
                        _Jump(name, steps[i], steps[i - 1] if i else None, t.max_abs, before, rms)
                    )
                break
    return out


def _coverage(series: Sequence[StepDiff]) -> tuple[dict[str, int], str]:
    """How many tensors were compared at every step, and why the others were not (words)."""
    status: dict[str, str] = {}
    for s in series:
        for t in s.tensors:
            if status.get(t.name, "ok") == "ok":
                status[t.name] = t.status
    counts = {"tensors": len(status), "compared": 0, **dict.fromkeys(_STATUS_WORDS, 0)}
    named: dict[str, list[str]] = {k: [] for k in _STATUS_WORDS}
    for name, st in status.items():
        counts["compared" if st == "ok" else st] += 1
        if st != "ok":
            named[st].append(name)
    parts = []
    for st, names in named.items():
        if names:
            shown = ", ".join(sorted(names)[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else ""
            )
            parts.append(f"{len(names)} {_STATUS_WORDS[st]} ({shown})")
    if not status:
        parts.append("neither side holds any tensor")
    return counts, "; ".join(parts)


def _step_change(
    series: Sequence[StepDiff], tracks: dict[str, list[TensorDiff | None]]
) -> _Change | None:
    """The first checkpoint where a tensor, or the whole model, moved by the order of its own
    norm and stayed there: zeroed, scaled, sign-flipped or replaced weights. Round-off creeps
    up over many checkpoints; this appears at one. Single-element moves are jumps instead."""
    steps = [s.step for s in series]
    found: _Change | None = None

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
            found = _Change(s.step, steps[i - 1] if i else None, [], r, steps[until])
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
            holds = holds or held(rels)
            until = holds[i]
            if until is None:
                continue
            rel = rels[i] or 0.0
            if found is None or steps[i] < found.step:
                found = _Change(steps[i], steps[i - 1], [name], rel, steps[until])
            elif steps[i] == found.step and found.tensors:
                found.tensors.append(name)
                found.rel_l2 = max(found.rel_l2, rel)
            break
    return found


def _changed(case: _Case, change: _Change) -> Assessment:
    series, trend, notes = case.series, case.trend, case.notes
    trend["shape"] = "step"
    trend["onset_step"] = change.step
    what = (
        f"{len(change.tensors)} tensor(s) ({', '.join(change.tensors[:3])}"
        + (f" and {len(change.tensors) - 3} more" if len(change.tensors) > 3 else "")
        + ")"
        if change.tensors
        else "the whole model"
    )
    trend["step_change"] = {
        "tensors": change.tensors[:20],
        "between_steps": [change.previous_step, change.step],
        "rel_l2": round(change.rel_l2, 4),
        "held_until_step": change.held_until,
    }
    since = (
        f"between steps {change.previous_step} and {change.step}"
        if change.previous_step is not None
        else f"from the first compared checkpoint (step {change.step})"
    )
    text = (
        f"{what} moved by {change.rel_l2:.2g} of the reference's own norm {since}, and stayed "
        f"there up to step {change.held_until}: zeroed, rescaled, sign-flipped or replaced "
        "weights, not round-off"
    )
    notes.append(text)
    if change.previous_step is None:
        notes.append(
            "the run and the reference differ wholesale from the start: check that they are the "
            "same model and run, or whether the corruption predates the first compared checkpoint"
        )
    if change.held_until == change.step:
        notes.append("seen at the last compared checkpoint only: whether it persists is unknown")
    evidence = [_step_evidence(series, change.step, text, "initiating")]
    finding = case.finding("sdc-transient-corruption", 0.8, evidence)
    return Assessment("step_change", True, change.step, None, trend, finding, notes)


def _trend(steps: list[int], excess: list[float], onset: int) -> dict[str, Any]:
    mk = stats.mann_kendall(excess)
    after = [(s, e) for s, e in zip(steps, excess, strict=True) if s >= onset]
    ts, es = [s for s, _ in after], [e for _, e in after]
    return {
        "mann_kendall": {"tau": round(mk.tau, 4), "p": mk.p_increasing, "n": mk.n},
        "sen_slope_per_step": stats.sen_slope(ts, es),
        "shape": stats.growth_shape(ts, es),
    }


def _global_trend(series: Sequence[StepDiff]) -> dict[str, Any]:
    """What a naive monitor would say; reported so users see why it is not used alone."""
    mk = stats.mann_kendall([s.l2 for s in series])
    return {
        "tau": round(mk.tau, 4),
        "p": mk.p_increasing,
        "sen_slope_per_step": stats.sen_slope([s.step for s in series], [s.l2 for s in series]),
    }


def _benign_summary(series: Sequence[StepDiff]) -> list[dict[str, Any]]:
    last = series[-1]
    total = last.diff_sq
    return [
        {
            "name": t.name,
            "l2": t.l2,
            "share_of_distance": round(t.diff_sq / total, 4) if total > 0 else 0.0,
            "top_row_share": round(t.top_row_share, 4),
            "uniform_row_share": round(1 / max(1, t.rows), 6),
        }
        for t in last.top_tensors(3)
    ]


def assess(
    series: list[StepDiff],
    noise: list[StepDiff] | None = None,
    *,
    run: str = "",
    ref: str = "",
    gpu: int | None = None,
    host: str | None = None,
) -> Assessment:
    """The verdict on a run compared with its reference, checkpoint by checkpoint.

    ``noise``: the same comparison for a second healthy run against the same reference (the
    noise envelope); steps it lacks fall back to self-calibration.
    """
    series = sorted(series, key=lambda s: s.step)
    if not series:
        raise InputError("no checkpoint step to judge: run and reference share no step")
    steps = [s.step for s in series]
    tracks = _tracks(series)
    coverage, gaps = _coverage(series)
    trend: dict[str, Any] = {"fingerprint": "reference", "coverage": coverage}
    notes: list[str] = []
    if not any(t is not None for tr in tracks.values() for t in tr):
        trend["method"] = "none"
        return Assessment(
            "not_comparable", False, None, None, trend, None, [f"nothing was compared: {gaps}"]
        )
    if gaps:
        notes.append(
            f"compared {coverage['compared']} of {coverage['tensors']} tensors at every step; "
            f"not compared: {gaps}"
        )
    naive = _global_trend(series)
    trend["global_l2"] = naive
    if not any(t is not None and t.differs for tr in tracks.values() for t in tr):
        trend["method"] = "bitwise"
        notes.insert(0, "every compared element is equal")
        return Assessment("identical", False, None, None, trend, None, notes)

    noise_tracks: dict[str, list[TensorDiff | None]] | None = None
    if noise:
        by_step = {s.step: s for s in noise}
        missing = [s for s in steps if s not in by_step]
        aligned = [by_step.get(s, StepDiff(step=s)) for s in steps]
        noise_tracks = _tracks(aligned)
        for name in tracks:
            noise_tracks.setdefault(name, [None] * len(steps))
        if missing:
            notes.append(
                f"noise reference lacks steps {_steps_text(missing)}: self-calibration there"
            )
        if all(s.diff_sq == 0 for s in aligned):
            notes.append(
                "the noise reference is bit-identical to the reference: it gives no envelope "
                "(pass a second healthy run, not a copy)"
            )
    trend["method"] = (
        "noise_envelope+localisation" if noise_tracks else "self_calibration+localisation"
    )

    levers = _localisation_levers(steps, tracks, noise_tracks)
    levers += _corroborated_levers(steps, tracks)
    if noise_tracks is not None:
        levers += _envelope_levers(steps, tracks, noise_tracks)
    else:
        levers += _peer_levers(steps, tracks)
    departure = _departure_lever(series, tracks)
    if departure is not None:
        levers.append(departure)
    jumps = _jumps(steps, tracks)
    first_lever = min((lv.onset for lv in levers), default=None)
    first_jump = min(jumps, key=lambda j: j.step) if jumps else None
    change = _step_change(series, tracks)

    case = _Case(series, trend, notes, run, ref, gpu, host)
    if (
        change is not None
        and (first_jump is None or change.step < first_jump.step)
        and (first_lever is None or change.step <= first_lever)
    ):
        return _changed(case, change)
    if first_jump is not None and (first_lever is None or first_jump.step <= first_lever):
        return _sudden(case, first_jump, levers)
    if levers:
        result = _gradual(case, levers)
        if result is not None:
            return result
    trend["benign_top_tensors"] = _benign_summary(series)
    notes.append(
        "the run differs from the reference but no tensor left its noise floor: "
        "the divergence is spread, as round-off is"
    )
    if naive["p"] < ALPHA:
        notes.append(
            f"the global distance grows steadily (Mann-Kendall tau {naive['tau']:.2f}) as it does "
            "between healthy reruns; it is not used alone"
        )
    return Assessment("within_noise", False, None, None, trend, None, notes)


@dataclass
class _Case:
    """What a verdict is about: the series, where the report is being built, and what is
    known about the run for the finding's verification commands."""

    series: list[StepDiff]
    trend: dict[str, Any]
    notes: list[str]
    run: str
    ref: str
    gpu: int | None
    host: str | None

    def finding(self, entry_id: str, confidence: float, evidence: list[Evidence]) -> Finding:
        return _finding(
            entry_id, confidence, evidence, self.run, self.ref, self.gpu, self.host, None
        )


def _gradual(case: _Case, levers: list[_Lever]) -> Assessment | None:
    series, trend, notes = case.series, case.trend, case.notes
    steps = [s.step for s in series]
    ordered = sorted(levers, key=lambda lv: (lv.onset, -max(lv.excess)))
    onset = _refine_onset(steps, [lv for lv in levers if lv.onset == ordered[0].onset])
    # The excess of every tensor that left its floor, summed in quadrature per step.
    combined = [math.sqrt(math.fsum(lv.excess[i] ** 2 for lv in levers)) for i in range(len(steps))]
    growth = _trend(steps, combined, onset)
    trend.update(growth)
    trend["onset_step"] = onset
    trend["suspect_tensors"] = _suspects(ordered)
    trend["levers"] = sorted({lv.lever for lv in levers})
    mk_p = growth["mann_kendall"]["p"]
    if mk_p >= ALPHA or growth["sen_slope_per_step"] <= 0:
        notes.append(
            f"{len(levers)} tensor(s) left the noise floor from step {onset} but their excess does "
            f"not keep growing (Mann-Kendall p {mk_p:.2g}): not called drift"
        )
        return None
    head = ordered[0]
    notes.append(
        f"from step {onset}, {head.tensor} left its noise floor ({_describe(head)}); the excess "
        f"grows ({growth['shape']}, Mann-Kendall tau {growth['mann_kendall']['tau']:.2f}, "
        f"p {mk_p:.2g})"
    )
    if trend["global_l2"]["p"] >= ALPHA:
        notes.append("the global distance alone shows no significant trend: the fault is local")
    confidence = 0.9 if len({lv.lever for lv in levers}) > 1 else 0.75
    evidence = [
        _step_evidence(
            series,
            lv.onset,
            f"{lv.tensor}: {_describe(lv)}",
            "initiating" if lv is head else "context",
        )
        for lv in ordered[:5]
    ]
    finding = case.finding("sdc-gradual-parameter-drift", confidence, evidence)
    return Assessment("gradual_drift", True, onset, None, trend, finding, notes)


def _sudden(case: _Case, jump: _Jump, levers: list[_Lever]) -> Assessment:
    series, trend, notes = case.series, case.trend, case.notes
    trend["shape"] = "step"
    trend["onset_step"] = jump.step
    finite = math.isfinite(jump.max_abs)
    trend["jump"] = {
        "tensor": jump.tensor,
        "between_steps": [jump.previous_step, jump.step],
        "max_abs": jump.max_abs if finite else None,  # JSON has no Infinity
        "non_finite": not finite,
        "max_abs_before": jump.before,
        "tensor_rms": jump.rms,
    }
    after = len([lv for lv in levers if lv.onset >= jump.step])
    moved = f"one element moved by {jump.max_abs:.3g}" if finite else "values became NaN/Inf"
    text = (
        f"{jump.tensor}: {moved} (tensor RMS {jump.rms:.3g}, "
        f"largest difference before {jump.before:.3g}) between steps "
        f"{jump.previous_step if jump.previous_step is not None else 'start'} and {jump.step}"
        + (", and did not keep growing" if finite else "")
    )
    notes.append(text)
    if after:
        notes.append(
            f"{after} other tensor(s) diverge after the jump: the corrupted value propagated "
            "through training"
        )
    evidence = [_step_evidence(series, jump.step, text, "initiating")]
    finding = case.finding("sdc-transient-corruption", 0.85, evidence)
    return Assessment("sudden_jump", True, jump.step, None, trend, finding, notes)


def _refine_onset(steps: list[int], first: list[_Lever]) -> int:
    """A lever confirms only after PERSIST checkpoints; a fault that began late in an
    interval often shows already one checkpoint earlier, standing well clear of every
    checkpoint before it. Move the onset back then (by one checkpoint at most)."""
    i = steps.index(first[0].onset)
    if i < 2:  # nothing before to compare with
        return steps[i]
    excess = [math.sqrt(math.fsum(lv.excess[k] ** 2 for lv in first)) for k in range(i)]
    floor = max(excess[: i - 1])
    if excess[i - 1] > 0 and excess[i - 1] >= ONSET_RISE * floor:
        return steps[i - 1]
    return steps[i]


def _suspects(levers: list[_Lever]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for lv in levers:
        entry = seen.setdefault(
            lv.tensor, {"name": lv.tensor, "onset_step": lv.onset, "levers": [], "excess_l2": 0.0}
        )
        entry["levers"].append({"lever": lv.lever, **lv.detail})
        entry["onset_step"] = min(entry["onset_step"], lv.onset)
        entry["excess_l2"] = max(entry["excess_l2"], max(lv.excess))
    return sorted(seen.values(), key=lambda e: (e["onset_step"], -e["excess_l2"]))[:10]


def _describe(lv: _Lever) -> str:
    d = lv.detail
    if lv.lever in ("localisation", "corroborated_localisation"):
        text = (
            f"{d['axis']} {d['index']} holds {d['share']:.0%} of its difference "
            f"(uniform {d['uniform_share']:.2%})"
        )
        if "also" in d:
            text += f", and {d['also']} holds {d['also_share']:.0%}: the same channel"
        return text
    if lv.lever == "bit_exact_departure":
        return (
            f"the run was bit-identical to the reference up to step {d['identical_until']} and "
            f"then departs (this tensor by {d['rel_l2']:.2g} of its norm)"
        )
    if lv.lever == "noise_envelope":
        return f"{d['ratio_to_noise']:.1f}x the healthy noise run's distance"
    return f"its distance relative to the other tensors grew {d['growth_over_early_ratio']:.1f}x"


def _step_evidence(series: Sequence[StepDiff], step: int, text: str, role: Role) -> Evidence:
    """A verdict's evidence line: the run's checkpoint file of that step (else the step)."""
    source = _path(series, step, "run_path") or f"step {step}"
    return Evidence(source=source, line=1, text=f"step {step}: {text}", rank=None, role=role)


def _path(series: Sequence[StepDiff], step: int, attr: str) -> str:
    for s in series:
        if s.step == step:
            return str(getattr(s, attr))
    return ""


def _steps_text(steps: list[int]) -> str:
    shown = ", ".join(map(str, steps[:5]))
    return shown + (f" and {len(steps) - 5} more" if len(steps) > 5 else "")


def _finding(
    entry_id: str,
    confidence: float,
    evidence: list[Evidence],
    run: str,
    ref: str,
    gpu: int | None,
    host: str | None,
    rank: int | None,
) -> Finding:
    entry = catalog.get(entry_id)
    values = {"run": run or None, "ref": ref or None, "gpu": gpu, "host": host, "rank": rank}
    # A command is only useful with its blanks filled: fill_template leaves an unknown value
    # as <name>; drop those commands rather than hand the user a template.
    commands = [
        c for c in catalog.verification_commands(entry, values) if not _UNFILLED.search(c.text)
    ]
    return Finding(
        id=entry_id,
        title=entry["title"],
        category=entry["category"],
        confidence=confidence,
        initiating_rank=rank,
        suspect_ranks=[rank] if rank is not None else [],
        host=host,
        gpu=gpu,
        evidence=evidence,
        root_cause=entry["quick_answer"].strip(),
        fix=" ".join(f"{i}. {step}" for i, step in enumerate(entry["fix"], 1)),
        verification=[c.text for c in commands],
        related=list(entry.get("related", [])),
        verification_runnable=[c.runnable for c in commands],
    )


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
        notes.extend(w for w in s.warnings if "no majority" in w)
    notes.extend(_replica_gaps(series))
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
    trend.update(_trend(steps, series_l2, onset))
    trend["onset_step"] = onset
    # The faulty rank's last step of disagreement (it may be absent there: no tensors).
    last = next(
        (s.ranks.get(faulty, StepDiff(s.step)) for s in reversed(series) if s.disagrees(faulty)),
        StepDiff(onset),
    )
    trend["suspect_tensors"] = [
        {
            "name": t.name,
            "l2": _finite(t.l2),
            "max_abs": _finite(t.max_abs),
            "mismatched": t.mismatched,
            "top_row": t.top_row,
            "top_row_share": _finite(round(t.top_row_share, 4)),
            "top_col": t.top_col,
            "top_col_share": _finite(round(t.top_col_share, 4)),
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
            source=_path(_rank_series(series, faulty), onset, "run_path") or f"step {onset}",
            line=1,
            text=f"step {onset}: rank {faulty} differs from the majority ({top})",
            rank=faulty,
            role="initiating",
        )
    ]
    finding = _finding(
        "dp-replica-divergence", 0.6 if ambiguous else 0.9, evidence, run, "", gpu, None, faulty
    )
    finding.suspect_ranks = [faulty, *others]
    return Assessment("replica_divergence", True, onset, faulty, trend, finding, notes)


def _finite(x: float) -> float | None:
    """JSON has no NaN/Infinity (a browser's JSON.parse rejects them): null instead."""
    return x if math.isfinite(x) else None


def _replica_gaps(series: Sequence[ReplicaStep]) -> list[str]:
    """In words: ranks absent at a step, tensors a rank lacks or holds alone, NaN/Inf."""
    out: list[str] = []
    for s in series:
        for r, why in sorted(s.absent.items()):
            out.append(f"rank {r} disagrees at step {s.step}: {why}")
        for r, d in sorted(s.ranks.items()):
            gaps = d.not_compared
            if gaps:
                shown = ", ".join(f"{t.name} ({t.note or t.status})" for t in gaps[:3])
                more = f" and {len(gaps) - 3} more" if len(gaps) > 3 else ""
                out.append(f"rank {r} disagrees at step {s.step}: {shown}{more}")
            bad = [t.name for t in d.tensors if t.status == "ok" and t.non_finite]
            if bad:
                more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
                out.append(
                    f"rank {r} holds non-finite values (NaN/Inf) at step {s.step} in "
                    f"{', '.join(bad[:3])}{more}: they agree with nothing"
                )
    if len(out) > 20:  # one line per gap reads well for a few; a long run needs the count
        out = [*out[:20], f"... and {len(out) - 20} more disagreements of this kind"]
    return out


def _rank_series(series: Sequence[ReplicaStep], rank: int) -> list[StepDiff]:
    return [s.ranks[rank] for s in series if rank in s.ranks]

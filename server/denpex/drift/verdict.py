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
3. gradual_drift: tensors left their noise floor (``departures``: localisation,
   corroboration, noise envelope, bit-exact departure, each held at ``PERSIST``
   consecutive checkpoints) and the excess keeps growing (Mann-Kendall on the excess, Sen's
   slope, growth shape).
4. within_noise: anything else that differs. Not flagged.

Where each tensor left its floor is found in ``departures`` (gradual) and ``sudden`` (one
checkpoint); this module decides what that amounts to; ``explain`` puts it into words. The
thresholds and what healthy runs measured for each are in ``thresholds``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from denpex.drift import departures, explain, noise_channels, parted, stats, sudden
from denpex.drift.model import StepDiff
from denpex.drift.sudden import Jump, StepChange
from denpex.drift.thresholds import ALPHA, ONSET_RISE
from denpex.drift.tracks import HELD, LOCALISED, UNCONFIRMED, Departure, Tracks, tracks_of
from denpex.errors import InputError
from denpex.finding import Evidence, Finding


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


def _changed(case: _Case, change: StepChange) -> Assessment:
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
    evidence = [explain.step_evidence(series, change.step, text, "initiating")]
    finding = case.finding("sdc-transient-corruption", 0.8, evidence)
    return Assessment("step_change", True, change.step, None, trend, finding, notes)


def growth_trend(steps: list[int], excess: list[float], onset: int) -> dict[str, Any]:
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
    tracks = tracks_of(series)
    coverage, gaps = explain.coverage(series)
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

    jumps = sudden.jumps(steps, tracks)
    apart = parted.from_start(series)
    if apart is not None and all(math.isfinite(j.max_abs) for j in jumps):
        # Nothing to judge, neither a fault (a chaotic rerun looks the same) nor health; a
        # value turned NaN/Inf is never chance and is still judged below.
        trend["method"] = "none"
        trend["parted_step"] = apart[0]
        return Assessment(
            "not_comparable", False, None, None, trend, None,
            [parted.from_start_note(apart), *notes],
        )  # fmt: skip

    noise_tracks: Tracks | None = None
    noise_apart = parted.from_start(noise) if noise else None
    if noise_apart is not None:
        # Any departure would sit inside the envelope of a run that is another model.
        notes.append(parted.noise_from_start_note(noise_apart))
        noise = None
    if noise:
        by_step = {s.step: s for s in noise}
        missing = [s for s in steps if s not in by_step]
        aligned = [by_step.get(s, StepDiff(step=s)) for s in steps]
        noise_tracks = tracks_of(aligned)
        for name in tracks:
            noise_tracks.setdefault(name, [None] * len(steps))
        if missing:
            notes.append(
                f"noise reference lacks steps {explain.steps_text(missing)}: self-calibration there"
            )
        if all(s.diff_sq == 0 for s in aligned):
            notes.append(
                "the noise reference is bit-identical to the reference: it gives no envelope "
                "(pass a second healthy run, not a copy)"
            )
        noise_jumps = {(j.tensor, j.step): j for j in sudden.jumps(steps, noise_tracks)}
        made = [
            j for j in jumps if noise_channels.made_it_too(j, noise_jumps.get((j.tensor, j.step)))
        ]
        if made:
            jumps = [j for j in jumps if j not in made]
            notes.append(explain.jumps_in_noise(made))
    trend["method"] = (
        "noise_envelope+localisation" if noise_tracks else "self_calibration+localisation"
    )

    found = departures.find(series, tracks, noise_tracks)
    levers = [lv for lv in found if lv.lever not in (HELD, UNCONFIRMED)]
    change = sudden.step_change(series, tracks)
    kept = parted.before_parting(series, levers, jumps, change)
    levers, jumps, change = kept.levers, kept.jumps, kept.change
    if kept.dropped and kept.step is not None:
        trend["parted_step"] = kept.step
        notes.append(parted.note(kept.step))
    first_lever = min((lv.onset for lv in levers), default=None)
    # Several tensors can jump at one checkpoint: the flipped element, and the ones its first
    # step after the flip moved (a Persimmon flip in a query-key-value weight also moved one
    # element of the layer's input LayerNorm bias). The flip is the largest against its RMS.
    first_jump = min(jumps, key=lambda j: (j.step, -sudden.size(j))) if jumps else None

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
    trend["benign_top_tensors"] = explain.benign_summary(series)
    notes += explain.spread_notes(series)
    notes += explain.held_notes([lv for lv in found if lv.lever == HELD], noise_tracks is not None)
    notes += explain.unconfirmed_channel_notes([lv for lv in found if lv.lever == UNCONFIRMED])
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
        return explain.finding(
            entry_id, confidence, evidence, self.run, self.ref, self.gpu, self.host, None
        )


def _gradual(case: _Case, levers: list[Departure]) -> Assessment | None:
    series, trend, notes = case.series, case.trend, case.notes
    steps = [s.step for s in series]
    ordered = sorted(levers, key=lambda lv: (lv.onset, -max(lv.excess)))
    onset = _refine_onset(steps, [lv for lv in levers if lv.onset == ordered[0].onset])
    # The excess of every tensor that left its floor, summed in quadrature per step.
    combined = [math.sqrt(math.fsum(lv.excess[i] ** 2 for lv in levers)) for i in range(len(steps))]
    growth = growth_trend(steps, combined, onset)
    trend.update(growth)
    trend["onset_step"] = onset
    trend["suspect_tensors"] = explain.suspects(ordered)
    trend["levers"] = sorted({lv.lever for lv in levers})
    mk_p = growth["mann_kendall"]["p"]
    # Two departures are evidence by themselves, growing or not: a run that reproduced its
    # reference bit for bit and then departs (``bit_exact.departure``), and one
    # channel holding most of its tensor at the same index throughout (a localised lever).
    # A large fault that Adam absorbs, or one that the learning-rate decay freezes, leaves an
    # excess that stops growing or shrinks, which the growth test would clear.
    if any(lv.lever == "bit_exact_departure" for lv in levers):
        evidence_alone = "the run was bit-identical to the reference before"
    elif any(lv.lever == "noise_exact_departure" for lv in levers):
        evidence_alone = "the run was bit-identical to the noise reference before"
    elif leap := next((lv for lv in levers if lv.lever == "wholesale_departure"), None):
        evidence_alone = (
            f"the whole distance leapt {leap.detail['rise']:.0f}x in one checkpoint interval"
        )
    elif any(lv.lever in LOCALISED for lv in levers):
        evidence_alone = "one channel holds most of its tensor's difference throughout"
    else:
        evidence_alone = ""
    grows = mk_p < ALPHA and growth["sen_slope_per_step"] > 0
    if not evidence_alone and not grows:
        notes.append(
            f"{len(levers)} tensor(s) left the noise floor from step {onset} but their excess does "
            f"not keep growing (Mann-Kendall p {mk_p:.2g}): not called drift"
        )
        return None
    head = ordered[0]
    notes.append(
        f"from step {onset}, {head.tensor} left its noise floor ({explain.describe(head)}); "
        + (
            "the excess grows"
            if grows
            else f"the excess does not keep growing, but {evidence_alone}"
        )
        + f" ({growth['shape']}, Mann-Kendall tau {growth['mann_kendall']['tau']:.2f}, "
        f"p {mk_p:.2g})"
    )
    if trend["global_l2"]["p"] >= ALPHA:
        notes.append("the global distance alone shows no significant trend: the fault is local")
    notes += explain.unconfirmed(levers, noise=trend["method"].startswith("noise"))
    confidence = 0.9 if len({lv.lever for lv in levers}) > 1 else 0.75
    evidence = [
        explain.step_evidence(
            series,
            lv.onset,
            f"{lv.tensor}: {explain.describe(lv)}",
            "initiating" if lv is head else "context",
        )
        for lv in ordered[:5]
    ]
    finding = case.finding("sdc-gradual-parameter-drift", confidence, evidence)
    return Assessment("gradual_drift", True, onset, None, trend, finding, notes)


def _sudden(case: _Case, jump: Jump, levers: list[Departure]) -> Assessment:
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
    evidence = [explain.step_evidence(series, jump.step, text, "initiating")]
    finding = case.finding("sdc-transient-corruption", 0.85, evidence)
    return Assessment("sudden_jump", True, jump.step, None, trend, finding, notes)


def _refine_onset(steps: list[int], first: list[Departure]) -> int:
    """A lever confirms only after PERSIST checkpoints; a fault that began late in an
    interval often shows already one checkpoint earlier, standing well clear of every
    checkpoint before it. Move the onset back then (by one checkpoint at most)."""
    # A channel's excess is the fault's own signal; a spread excess (the noise envelope)
    # also carries whatever the healthy divergence does at that checkpoint, such as a chaotic
    # bifurcation of training in the interval before the fault.
    first = [lv for lv in first if lv.lever in LOCALISED] or first
    i = steps.index(first[0].onset)
    if i < 2:  # nothing before to compare with
        return steps[i]
    excess = [math.sqrt(math.fsum(lv.excess[k] ** 2 for lv in first)) for k in range(i)]
    floor = max(excess[: i - 1])
    if excess[i - 1] > 0 and excess[i - 1] >= ONSET_RISE * floor:
        return steps[i - 1]
    return steps[i]

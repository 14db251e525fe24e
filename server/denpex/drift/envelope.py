"""The noise envelope lever (with a noise run): a tensor standing ``ENVELOPE`` times further
from the reference than the healthy second run does at the same step, after a time when the
two were alike. ``departures`` gathers it with the other levers."""

from __future__ import annotations

import math

from denpex.drift.model import TensorDiff
from denpex.drift.thresholds import CALIBRATION, ENVELOPE, MIN_VECTOR, SELF_FACTOR
from denpex.drift.tracks import Departure, Tracks, persistent_from


def departures(
    steps: list[int],
    tracks: Tracks,
    noise: Tracks,
) -> list[Departure]:
    raw = {
        name: [
            math.sqrt(t.diff_sq / nt.diff_sq)
            if t is not None and nt is not None and nt.diff_sq > 0
            else 0.0
            for t, nt in zip(track, ntrack, strict=True)
        ]
        for name, track in tracks.items()
        if (ntrack := noise.get(name)) is not None
    }
    # A noise run that stayed in a quieter regime than the run (real T5 reruns either stay
    # within 1e-8 of the reference or bifurcate to 1e-3, by chance) puts *every* tensor of a
    # healthy run outside its envelope alike. A fault lifts the tensors it touches above the
    # rest, so each tensor is measured against the step's median tensor when that is out too.
    scale = []
    for i in range(len(steps)):
        col = sorted(r[i] for r in raw.values() if r[i] > 0)
        scale.append(max(1.0, col[(len(col) - 1) // 2]) if col else 1.0)  # lower median
    out = []
    for name, raw_ratios in raw.items():
        track, ntrack = tracks[name], noise[name]
        if _too_few(track):
            continue
        ratios = [r / k for r, k in zip(raw_ratios, scale, strict=True)]
        # Self-calibrated like localisation: two independent random walks (a gradient-null
        # parameter, e.g. a conv bias ahead of BatchNorm) differ several-fold in size by
        # chance, and that ratio shows from the first checkpoints on. A fault moves the
        # tensor away from the noise run *after* a time when the two were alike.
        early = [r for r in ratios if r > 0][:CALIBRATION]
        bar = max(ENVELOPE, SELF_FACTOR * sorted(early)[len(early) // 2]) if early else ENVELOPE
        excess = [
            max(0.0, t.l2 - bar * k * nt.l2) if t is not None and nt is not None else 0.0
            for t, nt, k in zip(track, ntrack, scale, strict=True)
        ]
        start = persistent_from([r >= bar for r in ratios])
        if start is None:
            continue
        out.append(
            Departure(
                tensor=name,
                lever="noise_envelope",
                onset=steps[start],
                excess=excess,
                detail={"ratio_to_noise": round(max(ratios[start:]), 2), "envelope": round(bar, 2)},
            )
        )
    return out


def _too_few(track: list[TensorDiff | None]) -> bool:
    """Fewer than MIN_VECTOR elements: the L2 of so few random-walking elements is itself a
    chance draw, and two healthy runs' differ several-fold (WavLM's 8-element relative-position
    gate bias stood 4.3-6.9x its noise run's distance in five healthy reruns of nine, rotation
    18). The tensors a fault writes into beside it (the op's weight) carry the envelope."""
    first = next((t for t in track if t is not None), None)
    return first is None or first.numel < MIN_VECTOR

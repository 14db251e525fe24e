"""Lever 7, the wholesale departure: a run apart from its reference by round-off leaps away all
at once. Each series is shaped as measured on the real-training corpus (bench/trainings,
docs/drift-statistics.md): the whole distance of a run, relative to the reference's norm, at
its ten checkpoints."""

from __future__ import annotations

from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.verdict import assess
from drift.verdict_shapes import STEPS, N, matrix

REF_SQ = N * N * 4e-4  # matrix()'s reference norm, squared

# PEGASUS-X, one fc1 output channel doubled from step 50 in a two-thread rerun (rotation 22,
# missed without a noise run before this lever): round-off, then a leap of 6,100x.
DOUBLED = [1.80e-8, 3.61e-8, 5.31e-8, 6.94e-8, 4.24e-4, 1.00e-3, 1.21e-3, 1.23e-3, 1.24e-3, 1.25e-3]
# Gemma 3n, a healthy four-thread rerun: the steepest healthy rise after the calibration
# window on the 29 architectures with runs on disk, 6.5x (step 84).
GEMMA3N = [1.93e-8, 6.42e-8, 1.32e-7, 2.12e-7, 1.08e-6, 1.96e-6, 1.28e-5, 1.26e-5, 2.18e-5, 3.14e-5]


def _run(rel: list[float], tensors: int = 4) -> list[StepDiff]:
    """The whole distance ``rel`` at each checkpoint, spread over ``tensors`` matrices."""
    return [
        StepDiff(
            step=s,
            tensors=[matrix(f"layer.{k}.weight", r * r * REF_SQ / tensors) for k in range(tensors)],
        )
        for s, r in zip(STEPS, rel, strict=True)
    ]


def test_a_run_apart_by_round_off_that_leaps_wholesale_is_a_fault_without_a_noise_run() -> None:
    verdict = assess(_run(DOUBLED))
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60
    assert verdict.trend["levers"] == ["wholesale_departure"]
    assert any("leapt" in n for n in verdict.notes), verdict.notes


def test_the_steepest_healthy_rise_measured_is_not_a_leap() -> None:
    verdict = assess(_run(GEMMA3N))
    assert not verdict.flagged, verdict.notes


def test_most_tensors_leaping_while_the_whole_distance_stays_is_chaos_not_a_fault() -> None:
    # Parakeet's channels-last rerun (healthy): at step 48 most tensors rose thirtyfold and
    # more in one interval, while the few that carry the whole distance stayed where they were.
    def step(i: int) -> list[TensorDiff]:
        small = 1e-14 if i < 3 else 1e-14 * 100**2
        return [matrix("big.weight", 1e-8 * REF_SQ)] + [
            matrix(f"small.{k}.weight", small) for k in range(3)
        ]

    verdict = assess([StepDiff(step=s, tensors=step(i)) for i, s in enumerate(STEPS)])
    assert not verdict.flagged, verdict.notes


def test_a_leap_continuing_a_fast_divergence_is_chaos_not_a_fault() -> None:
    # SuperPoint, a healthy one-thread rerun in four shuffled micro-batches (rotation 25,
    # flagged by this lever before, looked at after the measurement): 83x from step 36 to
    # 48, after 193x from 24 to 36. Before a fault's leap the interval rose 1.1-5.7x.
    superpoint = [6.65e-7, 8.54e-7, 1.58e-4, 1.23e-2, 2.39e-2, 3.79e-2, 5.15e-2, 5.69e-2,
                  5.95e-2, 6.21e-2]  # fmt: skip
    verdict = assess(_run(superpoint))
    assert not verdict.flagged, verdict.notes


def test_a_router_choice_flipped_by_round_off_leaps_less_than_a_doubled_channel() -> None:
    # Granite-hybrid, a healthy four-thread rerun (rotation 26, flagged by this lever at its
    # first bar, 30x, looked at after the measurement): its mixture-of-experts router chose
    # otherwise than the reference's between steps 60 and 72, and the whole distance leapt
    # 355x with most tensors and kept growing. Two other reruns did the same, to the digit.
    granite = [2.43e-8, 5.20e-8, 8.06e-8, 1.04e-7, 1.21e-7, 4.29e-5, 2.05e-4, 3.53e-4, 4.60e-4,
               5.35e-4]  # fmt: skip
    verdict = assess(_run(granite))
    assert not verdict.flagged, verdict.notes


def test_a_leap_that_falls_back_is_not_a_wholesale_departure() -> None:
    fallen = DOUBLED[:5] + [1e-4] * 5  # below half of the leap at every later checkpoint
    verdict = assess(_run(fallen))
    assert "wholesale_departure" not in verdict.trend.get("levers", []), verdict.notes


def test_a_leap_inside_the_calibration_window_is_not_judged_by_this_lever() -> None:
    # Healthy ViTDet reruns rose 41x from step 12 to 24: round-off spreading from its first ulps.
    early = [3.7e-7, 1.5e-5, 1.6e-5, 1.7e-5, 1.8e-5, 1.9e-5, 2.0e-5, 2.1e-5, 2.2e-5, 2.3e-5]
    verdict = assess(_run(early))
    assert not verdict.flagged, verdict.notes

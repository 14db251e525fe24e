"""A jump the noise run made too (``noise_channels.made_it_too``). SuperPoint's healthy reruns,
retrained on one CPU (2026-12-07), and its noise run alike moved element 36 of the descriptor
head's first bias by 0.0085 between steps 24 and 36, from 1e-8, and the whole model parted
from the reference after it: an event of that training, which round-off tipped, read as a bit
flip in 9 of 9 reruns with ``--noise-ref``. Tracks as measured (the rerun with two threads,
and the noise run), per checkpoint 12 to 120: the bias's L2 difference, its largest element
difference and that element's share of the difference."""

from __future__ import annotations

from denpex.drift.model import TensorDiff
from drift.verdict_shapes import STEPS, measured, with_noise

_BIAS = "net.descriptor_decoder.conv_descriptor_a.bias"
_RMS = [0.0341, 0.0345, 0.0353, 0.0369, 0.0387, 0.0396, 0.04, 0.0401, 0.0401, 0.0401]
_RERUN = (
    [1.37e-8, 2.07e-8, 0.00853, 0.0124, 0.0211, 0.0217, 0.0234, 0.0234, 0.0232, 0.0228],
    [7.45e-9, 7.45e-9, 0.00847, 0.0115, 0.0124, 0.0124, 0.0134, 0.0133, 0.0125, 0.0122],
    [0.30, 0.13, 0.99, 0.86, 0.34, 0.33, 0.33, 0.32, 0.29, 0.29],
)
_NOISE = (
    [1.46e-8, 2.72e-8, 0.00853, 0.0123, 0.0158, 0.0183, 0.0177, 0.0172, 0.0175, 0.0174],
    [5.59e-9, 1.49e-8, 0.00847, 0.0115, 0.0124, 0.0123, 0.012, 0.0117, 0.0116, 0.0113],
    [0.15, 0.30, 0.99, 0.88, 0.62, 0.45, 0.46, 0.46, 0.44, 0.42],
)
# A noise run that made no such move: its bias stays at round-off.
_QUIET = ([1.5e-8 * (1 + i) for i in range(10)], [6e-9 * (1 + i) for i in range(10)], [0.2] * 10)
# A noise run that parted from the reference early and stands as far in that bias as the jump,
# having got there step by step, with no jump of its own.
_PARTED = (
    [0.004, 0.008, 0.012, 0.015, 0.017, 0.018, 0.019, 0.02, 0.02, 0.02],
    [0.002, 0.004, 0.006, 0.008, 0.009, 0.01, 0.011, 0.011, 0.011, 0.011],
    [0.1] * 10,
)


def _bias(track: tuple[list[float], list[float], list[float]]) -> list[list[TensorDiff]]:
    l2, top, share = track
    return [
        [measured(_BIAS, l2[i], (64, 1), (36, share[i]), top[i], _RMS[i])]
        for i in range(len(STEPS))
    ]


def test_a_jump_the_noise_run_made_too_is_the_trainings_own() -> None:
    verdict = with_noise(_bias(_RERUN), _bias(_NOISE))
    assert not verdict.flagged, verdict.notes
    assert any("noise reference moved an element" in n for n in verdict.notes), verdict.notes


def test_the_same_jump_against_a_noise_run_that_made_none_is_a_flip() -> None:
    for noise in (_QUIET, _PARTED):
        verdict = with_noise(_bias(_RERUN), _bias(noise))
        assert verdict.verdict == "sudden_jump", verdict.notes
        assert verdict.onset_step == 36

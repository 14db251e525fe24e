"""The verdict on rotation 27's false alarms with ``--noise-ref`` (looked at after its
measurement): FSMT's decoder self-attention, where one head dimension of the query and key
weights takes over their difference in healthy reruns and in the noise run alike, each run
on its own row. Tracks as measured (a rerun with eight micro-batches against the reference,
and the noise run): per checkpoint, steps 12 to 120, the tensor's L2 difference and its top
row's (index, share); the L2 in units of 1e-6."""

from __future__ import annotations

from denpex.drift.model import TensorDiff
from drift.verdict_shapes import STEPS, matrix, with_noise

_RERUN = {
    "q": ([18, 18, 21, 21, 21, 21, 21, 21, 21, 21],
          [0.13, 0.12, 0.33, 0.8, 0.94, 0.95, 0.95, 0.94, 0.94, 0.94],
          [0.07, 0.18, 0.38, 1.6, 4.9, 7.4, 9.1, 10, 11, 11]),
    "k": ([28, 1, 21, 21, 21, 21, 21, 21, 21, 21],
          [0.06, 0.05, 0.16, 0.71, 0.94, 0.96, 0.96, 0.95, 0.94, 0.94],
          [0.095, 0.27, 0.51, 1.3, 4.3, 7, 8.7, 9.5, 10, 10]),
}  # fmt: skip
_NOISE = {
    "q": ([18, 46, 14, 33, 33, 33, 33, 33, 33, 33],
          [0.11, 0.06, 0.09, 0.62, 0.79, 0.89, 0.92, 0.94, 0.94, 0.95],
          [0.066, 0.15, 0.3, 1.2, 3.4, 6.5, 9.2, 11, 13, 14]),
    "k": ([48, 54, 33, 33, 33, 33, 33, 33, 33, 33],
          [0.05, 0.04, 0.05, 0.52, 0.71, 0.86, 0.91, 0.94, 0.95, 0.95],
          [0.084, 0.23, 0.43, 1, 2.6, 5.6, 8.4, 11, 12, 13]),
}  # fmt: skip


def _attention(tracks: dict[str, tuple[list[int], list[float], list[float]]],
               scale: list[float] | None = None) -> list[list[TensorDiff]]:  # fmt: skip
    """The query and key weights (64 x 64) at each checkpoint, their L2 times ``scale``."""
    scale = scale or [1.0] * len(STEPS)
    return [
        [
            matrix(
                f"decoder.layers.1.self_attn.{p}_proj.weight",
                (1e-6 * l2[i] * scale[i]) ** 2,
                row=(rows[i], share[i]),
            )
            for p, (rows, share, l2) in tracks.items()
        ]
        for i in range(len(STEPS))
    ]


def test_a_head_dimension_the_noise_run_takes_over_too_on_its_own_row_is_the_models() -> None:
    verdict = with_noise(_attention(_RERUN), _attention(_NOISE))
    assert not verdict.flagged, verdict.notes


def test_a_head_dimension_far_beyond_the_noise_runs_distance_is_a_fault() -> None:
    # The same channel fed by a fault from step 50: from step 60 the query and key stand tens
    # of times beyond the noise run's distance in those tensors.
    fed = [1.0, 1.0, 1.0, 1.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
    verdict = with_noise(_attention(_RERUN, fed), _attention(_NOISE))
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step in (48, 60)  # within one interval of the fault (step 50)

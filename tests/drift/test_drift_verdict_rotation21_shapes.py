"""The verdict on rotation 21's false alarms (looked at after its measurement): channels a
healthy rerun concentrated, shaped as measured, each with the faulty counterpart the rule
still flags. Tracks: per checkpoint (steps 12 to 120) the tensor's L2 difference from the
reference, its top row (index, share) and its largest element difference.
"""

from __future__ import annotations

import tomllib

from denpex.drift.model import TensorDiff
from drift.verdict_shapes import judged, matrix, measured
from paths import FIXTURES

_TRACKS = tomllib.loads((FIXTURES / "rotation21_tracks.toml").read_text(encoding="utf-8"))


def _track(key: str) -> list[TensorDiff]:
    """A tensor's measured track (tests/fixtures/rotation21_tracks.toml)."""
    entry = _TRACKS[key]
    shape = (entry["shape"][0], entry["shape"][1])
    return [
        measured(entry["name"], float(l2), shape, (int(row), float(share)), float(m), entry["rms"])
        for l2, row, share, m in (line.split() for line in entry["track"].strip().splitlines())
    ]


def _steps(*keys: str, extra: list[TensorDiff] | None = None) -> list[list[TensorDiff]]:
    tracks = [_track(k) for k in keys] + ([extra] if extra else [])
    return [list(at_step) for at_step in zip(*tracks, strict=True)]


# Gemma 3n, a healthy rerun with four micro-batches: a per-layer embedding row (a rare token)
# and an MLP row took 0.76 and 0.70 of their tensors' difference from step 84, after other
# rows had led them, and nothing else departed. GPT-OSS, a query projection's channel off by
# 1e-3 from step 50: row 3 of the key weight took 0.99 of its difference at the first
# checkpoint after it and kept it.


def test_rows_holding_part_of_their_tensors_alone_are_no_drift_without_a_noise_run() -> None:
    verdict = judged(_steps("gemma3n_embedding_row", "gemma3n_mlp_row"))
    assert not verdict.flagged, verdict.notes
    # The user is told which channels, and what would tell them apart.
    told = " ".join(verdict.notes)
    assert "model.layers.0.mlp.up_proj.weight (row 18: 70% of its difference" in told
    assert "--noise-ref" in told


def test_a_row_holding_nearly_all_of_its_tensor_is_still_drift_alone() -> None:
    verdict = judged(_steps("gptoss_key_row"))
    assert verdict.verdict == "gradual_drift" and verdict.onset_step == 60, verdict.notes


# SwinV2 (residual post-norm), a healthy rerun on two threads: residual channel 2 of 32 took
# half or more of the difference of the biases that write into it, in both blocks, from step
# 60; no weight matrix concentrated on it.
_SWIN = (
    "swinv2_blocks_0_layernorm_after_bias",
    "swinv2_blocks_1_attention_output_dense_bias",
    "swinv2_blocks_1_layernorm_before_bias",
)


def _key_column_3() -> list[TensorDiff]:
    # SEW-D, its feature projection's output channel 3 off by 1e-3 from step 50: column 3 of
    # the first layer's key weight (64 x 64), the op that reads that channel.
    l2 = [1.340e-08, 4.691e-08, 1.357e-07, 2.353e-07, 2.369e-05, 3.938e-05, 5.671e-05,
          5.861e-05, 6.114e-05, 6.350e-05]  # fmt: skip
    share = [0.155, 0.037, 0.044, 0.068, 0.609, 0.315, 0.319, 0.339, 0.391, 0.406]
    return [
        matrix(
            "sew_d.encoder.encoder.layer.0.attention.self.key_proj.weight",
            d * d,
            row=(20, 0.07),
            col=(3 if i >= 4 else 51, s),
            max_abs=d * s**0.5 / 8,
        )
        for i, (d, s) in enumerate(zip(l2, share, strict=True))
    ]


def test_one_channel_in_vectors_alone_is_a_residual_channel_not_a_fault() -> None:
    verdict = judged(_steps(*_SWIN))
    assert not verdict.flagged, verdict.notes


def test_a_channel_in_a_vector_and_in_the_weight_that_reads_it_is_a_fault() -> None:
    # SEW-D's faulty channel 3: with no weight matrix, its feature projection's bias and the
    # next layer norm's scale are no evidence...
    vectors = ("sewd_feature_projection_bias", "sewd_layer_norm_scale")
    assert not judged(_steps(*vectors)).flagged
    # ... the key weight's column 3 beside them is.
    verdict = judged(_steps(*vectors, extra=_key_column_3()))
    assert verdict.verdict == "gradual_drift" and verdict.onset_step == 60, verdict.notes

"""The verdict on the shapes healthy reruns of real models showed (bench/trainings), which the
rules once called faults. Each series is the per-step comparison the verdict receives, shaped
as measured on the real-training corpus (docs/drift-statistics.md); a faulty counterpart
checks the rule still sees what it should.
"""

from __future__ import annotations

from denpex.drift.model import TensorDiff
from drift.verdict_shapes import (
    STEPS,
    N,
    grow,
    judged,
    matrix,
    measured,
    vector,
    with_noise,
)


def test_a_channel_holding_a_third_of_two_tensors_is_a_healthy_concentration() -> None:
    # BERT reruns: attention.output.dense col 43 and value row 43 held 0.15-0.41 of their
    # tensors' difference at one index for the whole run (lift ~19): an unstable channel
    # amplifies round-off, but shares its tensor with the rest of it.
    extra = [
        [
            matrix("attn.out.weight", grow(i), col=(43, 0.3)),
            matrix("attn.value.weight", grow(i), row=(43, 0.3)),
        ]
        for i in range(len(STEPS))
    ]
    verdict = judged(extra)
    assert verdict.verdict == "within_noise", verdict.notes


def test_a_channel_carrying_its_tensors_is_a_fault() -> None:
    fault = [i >= 4 for i in range(len(STEPS))]  # from the checkpoint after step 50
    size = [grow(i) * (1 + 100 * (i - 3) * f) for i, f in enumerate(fault)]
    share = [0.95 if f else 0.2 for f in fault]
    extra = [
        [
            matrix("mlp.up.weight", size[i], row=(3, share[i])),
            matrix("mlp.down.weight", size[i], col=(3, share[i])),
        ]
        for i in range(len(STEPS))
    ]
    verdict = judged(extra)
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60


def test_a_concentration_fading_from_the_first_checkpoint_is_the_models_own() -> None:
    # Qwen2-MoE reruns: the shared expert's channel 52 held 0.9 of up/gate_proj at the first
    # checkpoint, fading to 0.5 by the end while the rest of the tensors caught up.
    share = [0.9 - 0.4 * min(1.0, i / 5) for i in range(len(STEPS))]
    extra = [
        [
            matrix("expert.up.weight", grow(i), row=(52, share[i])),
            matrix("expert.gate.weight", grow(i), row=(52, share[i])),
        ]
        for i in range(len(STEPS))
    ]
    verdict = judged(extra)
    assert not verdict.flagged, verdict.notes


def test_sparse_first_differences_are_not_a_jump() -> None:
    # Qwen2 reruns (bf16): at the first checkpoint a few rare-token embedding rows differ and
    # one element holds most of the difference; nothing was compared before it.
    extra = [
        [
            matrix(
                "embed.weight",
                1e-9 * (1 + i),
                row=(7, 0.9 if i == 0 else 0.05),
                max_abs=3e-5 if i == 0 else 4e-5,
            )
        ]
        for i in range(len(STEPS))
    ]
    verdict = judged(extra)
    assert verdict.verdict != "sudden_jump", verdict.notes
    assert not verdict.flagged, verdict.notes


def test_a_bias_leaving_bit_identity_is_a_random_walk_not_a_step_change() -> None:
    # ViT reruns: key biases (gradient-null: Adam turns their round-off gradient into full
    # steps) were bit-identical at step 12 and 0.5-1.2 of their norm apart from step 24 on.
    rel = [0.0, 0.5, 0.9, 1.0, 1.0, 1.1, 1.1, 1.0, 1.1, 1.1]
    bias_ref_sq = 64 * 1e-6

    def bias(r: float) -> TensorDiff:
        return TensorDiff(
            name="attn.k.bias",
            numel=64,
            diff_sq=r * r * bias_ref_sq,
            ref_sq=bias_ref_sq,
            max_abs=r * 3e-4,
            mismatched=64 if r else 0,
            rows=64,
            cols=1,
            top_row=5,
            top_row_share=0.06 if r else 0.0,
            top_col=0,
            top_col_share=1.0 if r else 0.0,
        )

    verdict = judged([[bias(r)] for r in rel])
    assert verdict.verdict != "step_change", verdict.notes
    assert not verdict.flagged, verdict.notes


def test_a_run_leaving_a_bit_exact_reference_is_flagged_even_when_the_gap_shrinks() -> None:
    # Qwen2 (bf16), an up_proj channel doubled from step 50 in a run bit-identical until
    # then: Adam absorbs the fault, and the difference stops growing within two checkpoints.
    size = [0.0, 0.0, 0.0, 0.0, 9e-8, 8e-8, 7e-8, 6e-8, 5e-8, 4e-8]
    extra = [[matrix(f"layer.{k}.weight", d * (1 + k / 4)) for k in range(4)] for d in size]
    verdict = judged(extra, background=False)
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60
    assert any("bit-identical" in n for n in verdict.notes), verdict.notes


def test_a_channel_held_while_training_freezes_is_still_a_fault() -> None:
    # ViT (bf16), a q_proj channel doubled from step 50 in a run with its own round-off: the
    # channel holds 0.95 of q and k rows 3 from step 60, and the difference peaks at step 72
    # and then shrinks a little as the cosine schedule decays (Sen's slope after it < 0).
    size = [1e-12 * (1 + i) for i in range(4)] + [4e-10, 7e-10, 6.5e-10, 6e-10, 5.8e-10, 5.6e-10]
    share = [0.1] * 4 + [0.95] * 6
    extra = [
        [
            matrix("attn.q.weight", size[i], row=(3, share[i])),
            matrix("attn.k.weight", size[i], row=(3, share[i])),
        ]
        for i in range(len(STEPS))
    ]
    verdict = judged(extra)
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60
    assert any("one channel holds" in n for n in verdict.notes), verdict.notes


def _channel(index: int, share: list[float], scale: float = 1.0) -> list[list[TensorDiff]]:
    return [[matrix("stage.pwconv2.weight", scale * grow(i), row=(index, s))] for i, s in
            enumerate(share)]  # fmt: skip


def test_a_channel_the_noise_run_concentrates_in_too_is_the_models_own() -> None:
    # ConvNeXt reruns (rotation 3): row 28 of the last pointwise conv (a channel starved of
    # gradient) rose to 0.6-0.99 of its tensor from step 48 in every healthy rerun and in the
    # noise run alike. A fault in the run cannot show in another run.
    rise = [0.1, 0.1, 0.2, 0.6, 0.9, 0.95, 0.97, 0.97, 0.97, 0.97]
    verdict = with_noise(_channel(28, rise), _channel(28, rise, scale=0.5))
    assert not verdict.flagged, verdict.notes


def test_a_channel_arriving_only_in_the_run_is_a_fault_with_a_noise_run() -> None:
    share = [0.1, 0.1, 0.2, 0.2, 0.9, 0.95, 0.97, 0.97, 0.97, 0.97]
    size = [1.0, 1.0, 1.0, 1.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    run = [[matrix("stage.pwconv2.weight", grow(i) * size[i], row=(3, share[i]))]
           for i in range(len(STEPS))]  # fmt: skip
    rise = [0.1, 0.1, 0.2, 0.6, 0.9, 0.95, 0.97, 0.97, 0.97, 0.97]
    verdict = with_noise(run, _channel(28, rise, scale=0.5))
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60


def _tst_query(index: list[int], share: list[float], l2: list[float]) -> list[list[TensorDiff]]:
    """A 32x32 query weight as measured: its top row and that row's share, and its L2."""
    return [[matrix("decoder.layers.0.self_attn.q_proj.weight", d * d, n=32, row=(r, sh),
                    col=(1, 0.1), max_abs=d / 8, ref_sq=1.0)]
            for r, sh, d in zip(index, share, l2, strict=True)]  # fmt: skip


def test_a_channel_growing_in_place_from_the_start_is_the_models_own_with_a_noise_run() -> None:
    # Time Series Transformer (rotation 23, looked at after its measurement): query row 6 of
    # the first decoder layer was top from step 12 in every healthy rerun, at 0.2-0.7 of its
    # tensor, growing with it; this four-thread rerun's took 0.69 by step 24. The noise run's
    # top rows wandered under 0.25. Flagged with a noise run until every channel had to arrive.
    run = _tst_query(
        [6] * 10,
        [0.158, 0.69, 0.715, 0.704, 0.738, 0.742, 0.715, 0.706, 0.696, 0.685],
        [1.56e-7, 5.59e-7, 7.31e-7, 8.89e-7, 1.12e-6, 1.40e-6, 1.45e-6, 1.56e-6, 1.61e-6, 1.64e-6],
    )
    noise = _tst_query(
        [20, 4, 22, 22, 22, 18, 18, 22, 22, 22],
        [0.133, 0.24, 0.251, 0.251, 0.184, 0.228, 0.213, 0.215, 0.22, 0.229],
        [1.50e-7, 2.76e-7, 4.38e-7, 5.73e-7, 7.08e-7, 8.68e-7, 9.38e-7, 1.0e-6, 1.05e-6, 1.07e-6],
    )
    verdict = with_noise(run, noise)
    assert not verdict.flagged, verdict.notes


# A healthy rerun that bifurcates away from the reference after a few checkpoints (squared).
# It is twice as far as the quiet noise run from the first checkpoint: another configuration,
# never bit-identical to it (a run that is, then departs, has changed: lever 6).
BIFURCATE = [4.0, 4.0, 1e2, 1e4, 1e6, 1e7, 1e8, 1e8, 1e8, 1e8]


def test_a_noise_run_quieter_than_every_tensor_of_the_run_is_no_envelope() -> None:
    # T5 reruns (rotation 3): the noise run stayed within 6e-8 of the reference while healthy
    # reruns bifurcated to 1e-3, every tensor alike and none localised. Each tensor sat 10^4
    # times outside the envelope; measured against the run's median tensor none stands out.
    loud = [[matrix(f"block.{k}.weight", BIFURCATE[i] * grow(i)) for k in range(6)]
            for i in range(10)]  # fmt: skip
    quiet = [[matrix(f"block.{k}.weight", grow(i)) for k in range(6)] for i in range(10)]
    verdict = with_noise(loud, quiet)
    assert not verdict.flagged, verdict.notes


def test_a_tensor_rising_above_a_loud_run_leaves_the_envelope() -> None:
    # The same loud run with one tensor pushed up from the checkpoint after step 50.
    def lift(i: int, k: int) -> float:
        return 100.0 * (i - 3) if k == 0 and i >= 4 else 1.0

    loud = [[matrix(f"block.{k}.weight", BIFURCATE[i] * grow(i) * lift(i, k)) for k in range(6)]
            for i in range(10)]  # fmt: skip
    quiet = [[matrix(f"block.{k}.weight", grow(i)) for k in range(6)] for i in range(10)]
    verdict = with_noise(loud, quiet)
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60


def test_a_channel_that_stops_dominating_its_tensor_is_the_models_own() -> None:
    # Qwen2-MoE (rotation 3's re-run): the shared expert's channel 52 held 0.62-0.67 of
    # gate_proj over the first checkpoints, then 0.5 and under from step 60 to the end, by
    # just over 3/4 of its lift in one rerun. A fed fault keeps its channel dominant.
    share = [0.62, 0.67, 0.62, 0.56, 0.5, 0.48, 0.47, 0.47, 0.46, 0.47]
    extra = [[matrix("expert.gate.weight", grow(i), row=(52, sh))] for i, sh in enumerate(share)]
    verdict = judged(extra)
    assert not verdict.flagged, verdict.notes


def test_a_channel_concentrating_gradually_is_the_models_own_without_a_noise_run() -> None:
    # ConvNeXt reruns (rotation 4's re-run): the same row 28 in every healthy rerun, judged
    # without a noise run. Its energy grew 1.2-3.7x per checkpoint as it took over the tensor;
    # a fault arrives: its channel jumped 45x or more on every faulty run found this way.
    rise = [0.1, 0.1, 0.2, 0.6, 0.9, 0.95, 0.97, 0.97, 0.97, 0.97]
    verdict = judged(_channel(28, rise))
    assert not verdict.flagged, verdict.notes


def test_a_channel_arriving_in_a_diverging_run_is_a_fault_without_a_noise_run() -> None:
    share = [0.1, 0.1, 0.2, 0.2, 0.9, 0.95, 0.97, 0.97, 0.97, 0.97]
    size = [1.0, 1.0, 1.0, 1.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    extra = [[matrix("stage.pwconv2.weight", grow(i) * size[i], row=(3, share[i]))]
             for i in range(len(STEPS))]  # fmt: skip
    verdict = judged(extra)
    assert verdict.verdict == "gradual_drift", verdict.notes
    assert verdict.onset_step == 60


def test_a_channel_taking_over_late_from_another_is_the_models_own_with_a_noise_run() -> None:
    # ConvBERT reruns (rotation 9, looked at after its measurement): column 24 of a 1x1 conv
    # took 0.6-0.7 of its tensor gradually from step 72, after columns 33 and 53 had led it,
    # while the noise run's concentration sat elsewhere. A fault arrives, or grows in place
    # from the first checkpoint compared; this channel did neither.
    index = [12, 33, 53, 53, 53, 24, 24, 24, 24, 24]
    share = [0.05, 0.05, 0.08, 0.46, 0.34, 0.44, 0.62, 0.69, 0.71, 0.71]
    run = [[matrix("conv.pointwise.weight", grow(i) * (1 + i), row=(index[i], share[i]))]
           for i in range(len(STEPS))]  # fmt: skip
    rise = [0.1, 0.1, 0.2, 0.6, 0.9, 0.95, 0.97, 0.97, 0.97, 0.97]
    verdict = with_noise(run, _channel(28, rise, scale=0.5))
    assert not verdict.flagged, verdict.notes


def _focal(index: int, share: list[float], amp: list[float]) -> list[list[TensorDiff]]:
    """FocalNet's projection_context weight as measured: a hidden channel's amplitude
    (sqrt of its share of the squared difference) and share per checkpoint."""
    return [[matrix("stage.modulation.projection_context.weight", (a * a) / s, row=(index, s))]
            for a, s in zip(amp, share, strict=True)]  # fmt: skip


# A healthy FocalNet rerun (rotation 12, looked at after its measurement): hidden channel 27
# rose 63x over steps 12-36 to hold 0.71-0.84 of projection_context's difference; the noise
# run concentrated the same tensor in channel 24 instead (0.89 at step 24, fading to 0.37).
_RERUN = (
    [0.13, 0.21, 0.71, 0.84, 0.82, 0.78, 0.78, 0.78, 0.77, 0.78],
    [4.5e-4, 3.5e-3, 2.8e-2, 6.7e-2, 7.8e-2, 8.1e-2, 8.7e-2, 8.8e-2, 9.0e-2, 9.1e-2],
)
_NOISE = (
    [0.07, 0.89, 0.63, 0.55, 0.48, 0.42, 0.39, 0.38, 0.37, 0.37],
    [3.0e-4, 1.8e-2, 4.0e-2, 5.3e-2, 5.7e-2, 6.0e-2, 6.1e-2, 6.2e-2, 6.3e-2, 6.3e-2],
)


def test_a_channel_taking_over_inside_the_calibration_window_is_held_not_flagged() -> None:
    alone = judged(_focal(27, *_RERUN))
    assert not alone.flagged, alone.notes
    held = [n for n in alone.notes if "within the first 3 checkpoints compared" in n]
    assert len(held) == 1 and "(row 27)" in held[0] and "--noise-ref" in held[0], alone.notes
    # The noise run concentrated that tensor too, in another channel: chance, not a fault
    # (``noise_channels.lone_channel``: the run stands within 4x of the noise run there).
    noise = with_noise(_focal(27, *_RERUN), _focal(24, *_NOISE))
    assert not noise.flagged, noise.notes


def test_a_window_channel_is_flagged_when_the_noise_run_kept_the_tensor_spread() -> None:
    spread_noise = [[matrix("stage.modulation.projection_context.weight", a * a * N / 2)]
                    for a in _NOISE[1]]  # fmt: skip
    verdict = with_noise(_focal(27, *_RERUN), spread_noise)
    assert verdict.verdict == "gradual_drift" and verdict.flagged, verdict.notes


def test_a_query_key_channel_taking_over_in_two_fast_steps_is_the_models_own() -> None:
    # A healthy WavLM rerun on two threads (rotation 18), judged without a noise run: element
    # 45 of layer 1's query bias and row 45 of its key weight (the same head dimension) took
    # their tensors over from step 24 to 48, the bias element's amplitude rising 12.4x over
    # those two checkpoints (3.8x, then 3.3x). A fault arrives at once: 22x and more.
    key_l2 = [4.88e-8, 1.22e-7, 2.15e-7, 3.18e-7, 4.51e-7, 5.66e-7, 6.16e-7, 6.38e-7, 6.51e-7,
              6.59e-7]  # fmt: skip
    key_share = [0.054, 0.081, 0.21, 0.378, 0.498, 0.578, 0.557, 0.549, 0.529, 0.521]
    bias_l2 = [2.27e-9, 7.48e-9, 1.8e-8, 3.89e-8, 5.42e-8, 6.27e-8, 6.6e-8, 6.83e-8, 6.89e-8,
               6.88e-8]  # fmt: skip
    bias_share = [0.111, 0.097, 0.241, 0.55, 0.652, 0.693, 0.648, 0.648, 0.637, 0.639]
    extra = [
        [
            matrix("attention.k_proj.weight", key_l2[i] ** 2, row=(48 if i == 0 else 45, ks)),
            vector("attention.q_proj.bias", bias_l2[i] ** 2, N, (34 if i == 0 else 45, bs)),
        ]
        for i, (ks, bs) in enumerate(zip(key_share, bias_share, strict=True))
    ]
    verdict = judged(extra)
    assert not verdict.flagged, verdict.notes


def _gate_bias(ratio: list[float], n: int) -> list[list[TensorDiff]]:
    return [[vector("attention.gru_rel_pos_linear.bias", r * r * grow(i), n, (0, 0.3))]
            for i, r in enumerate(ratio)]  # fmt: skip


# A healthy WavLM rerun against its noise run (rotation 18): the 8-element relative-position
# gate bias, a random walk, stood 1-2x the noise run's distance at first and 4.3-6.9x late.
_GATE = [1.0, 1.5, 1.2, 2.0, 3.0, 4.0, 5.0, 6.0, 6.6, 6.6]


def test_a_tiny_tensor_outside_the_noise_envelope_is_chance() -> None:
    verdict = with_noise(_gate_bias(_GATE, 8), _gate_bias([1.0] * 10, 8))
    assert not verdict.flagged, verdict.notes


def test_a_vector_of_enough_elements_outside_the_noise_envelope_departs() -> None:
    verdict = with_noise(_gate_bias(_GATE, N), _gate_bias([1.0] * 10, N))
    assert verdict.verdict == "gradual_drift", verdict.notes


# UnivNet (rotation 19): a vocoder whose convolution kernels and biases are predicted from the
# spectrogram frame by frame. Its healthy reruns, judged after its measurement, moved the rule
# four ways; each shape below is a rerun's as measured, with a counterpart the rule still sees.


def _transposed_conv_bias(max_abs: list[float]) -> list[list[TensorDiff]]:
    # resblocks.1.convt_pre.bias, 16 elements, RMS 0.0101-0.0109: one element holds 0.6-0.9
    # of the difference from the jump on.
    l2 = [5.98e-9, 4.59e-7, 2.45e-4, 2.23e-4, 3.17e-4, 3.22e-4, 2.99e-4, 3.3e-4, 3.57e-4,
          3.28e-4]  # fmt: skip
    return [
        [measured("convt_pre.bias", l2[i], (16, 1), (5, min(1.0, (m / l2[i]) ** 2)), m, 0.0105)]
        for i, m in enumerate(max_abs)
    ]


def test_a_jump_that_continues_a_chaotic_divergence_is_not_a_flip() -> None:
    # The healthy rerun: the element's difference grew 60x from step 12 to 24, then 827x to 36.
    grown = [4.66e-9, 2.79e-7, 2.31e-4, 2.07e-4, 2.81e-4, 2.73e-4, 2.5e-4, 2.82e-4, 3.1e-4,
             2.81e-4]  # fmt: skip
    verdict = judged(_transposed_conv_bias(grown))
    assert verdict.verdict != "sudden_jump" and not verdict.flagged, verdict.notes
    # The same move landing in round-off that crept 1.6x the interval before: a flip.
    crept = [4.66e-9, 7.5e-9, *grown[2:]]
    flipped = judged(_transposed_conv_bias(crept))
    assert flipped.verdict == "sudden_jump" and flipped.onset_step == 36, flipped.notes


# resblocks.0.kernel_predictor.bias_conv: its output channel 2 is starved of gradient. In a
# healthy one-thread rerun with eight micro-batches its bias's element 2 (64 elements) took
# 0.67-0.91 of the bias's difference from step 48, and its weight's row 2 (64 rows of 16
# columns) 0.46-0.63 from step 60.
_BIAS_L2 = [1.2e-6, 6.45e-5, 2.7e-4, 1.06e-3, 3.26e-3, 4.34e-3, 4.62e-3, 4.55e-3, 4.21e-3,
            3.95e-3]  # fmt: skip
_BIAS_TOP = [(13, 0.614), (44, 0.135), (7, 0.133), (2, 0.671), (2, 0.903), (2, 0.913), (2, 0.905),
             (2, 0.887), (2, 0.856), (2, 0.827)]  # fmt: skip
_WEIGHT_L2 = [2.88e-5, 1.15e-3, 5.61e-3, 0.0135, 0.0308, 0.0394, 0.043, 0.0436, 0.0422, 0.0415]
_WEIGHT_TOP = [(34, 0.242), (34, 0.156), (18, 0.307), (18, 0.368), (2, 0.557), (2, 0.625),
               (2, 0.617), (2, 0.569), (2, 0.504), (2, 0.455)]  # fmt: skip


def _starved_bias(name: str) -> list[TensorDiff]:
    return [
        measured(name, l2, (64, 1), top, l2 * top[1] ** 0.5, 6.5e-3)
        for l2, top in zip(_BIAS_L2, _BIAS_TOP, strict=True)
    ]


def _starved_weight(name: str) -> list[TensorDiff]:
    return [
        measured(name, l2, (64, 16), top, l2 * top[1] ** 0.5 / 4, 0.0117)
        for l2, top in zip(_WEIGHT_L2, _WEIGHT_TOP, strict=True)
    ]


def test_one_element_of_a_vector_alone_is_no_lever_without_a_noise_run() -> None:
    bias = [[b] for b in _starved_bias("kernel_predictor.bias_conv.bias")]
    verdict = judged(bias)
    assert not verdict.flagged, verdict.notes
    # Against a noise run that kept the bias spread, the same element departs.
    spread_bias = [[vector("kernel_predictor.bias_conv.bias", 1e-10, N, (i, 0.1))]
                   for i in range(len(STEPS))]  # fmt: skip
    assert with_noise(bias, spread_bias).flagged


def test_a_weights_row_and_its_own_bias_are_no_corroborating_pair() -> None:
    own = _starved_pair("kernel_predictor.bias_conv.bias", "kernel_predictor.bias_conv.weight")
    verdict = judged(own)
    assert not verdict.flagged, verdict.notes
    # The same channel in another module's weight (the op that consumes it) corroborates.
    other = _starved_pair("kernel_predictor.bias_conv.bias", "kernel_predictor.lvc.weight")
    assert judged(other).verdict == "gradual_drift"


def test_a_weights_row_and_its_parent_modules_vector_are_no_corroborating_pair() -> None:
    # Kimi Linear's forget gate (rotation 30): dt_bias, a vector of the gate module itself,
    # adds into the pre-activation its child f_b_proj writes, so a starved channel 2
    # random-walks in both (two healthy reruns flagged until the pair counted as one op).
    verdict = judged(_starved_pair("forget_gate.dt_bias", "forget_gate.f_b_proj.weight"))
    assert not verdict.flagged, verdict.notes
    # A vector of a sibling module (another op that reads or writes the channel) still does.
    sibling = _starved_pair("forget_gate.norm.bias", "forget_gate.f_b_proj.weight")
    assert judged(sibling).verdict == "gradual_drift"


def _starved_pair(bias: str, weight: str) -> list[list[TensorDiff]]:
    return [list(p) for p in zip(_starved_bias(bias), _starved_weight(weight), strict=True)]


def _input_column(share: list[float], partner: list[float]) -> list[list[TensorDiff]]:
    # resblocks.0.resblocks.1.conv.weight: 16 output rows, 16 input columns.
    out = []
    for i, (s, p) in enumerate(zip(share, partner, strict=True)):
        conv = TensorDiff(name="resblocks.0.resblocks.1.conv.weight", numel=768,
                          diff_sq=1e-6 * (i + 1), ref_sq=768 * 1e-4, max_abs=1e-4,
                          mismatched=768, rows=16, cols=16, top_row=8, top_row_share=0.08,
                          top_col=2, top_col_share=s)  # fmt: skip
        out.append([conv])
        if p:
            out[-1].append(measured("resblocks.0.convt_pre.weight", 1e-3 * (i + 1) ** 0.5,
                                     (16, 16), (2, p), 1e-4, 0.02))  # fmt: skip
    return out


def test_a_short_axis_channel_the_noise_run_also_concentrates_is_the_models_own() -> None:
    # A healthy two-thread rerun: input column 2 of a 16-column conv held 0.65-0.75 of its
    # difference from step 12, paired with another conv's channel 2 (0.31-0.40) from step 48;
    # the noise run held 0.51-0.78 on the same column, under the old bar of 10/16.
    run = _input_column([0.65, 0.75, 0.75, 0.71, 0.70, 0.73, 0.74, 0.75, 0.75, 0.75],
                        [0, 0, 0, 0.36, 0.40, 0.35, 0.31, 0.36, 0.38, 0.38])  # fmt: skip
    noise = _input_column([0.78, 0.59, 0.53, 0.52, 0.51, 0.52, 0.54, 0.54, 0.54, 0.54], [0] * 10)
    verdict = with_noise(run, noise)
    assert not verdict.flagged, verdict.notes

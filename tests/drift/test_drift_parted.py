"""Runs that part wholesale (drift/parted.py) and tensors outgrowing the others, on the shapes real
healthy reruns showed in rotation 4 (docs/measurements/drift-rotation4/): MobileNetV2 reruns
that are different models from the first checkpoint, OPT's ReLU MLP whose share of the
divergence grows 14x. Faulty counterparts check the rules still see what they should.
"""

from __future__ import annotations

from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.verdict import assess
from drift.verdict_shapes import STEPS, N, matrix

REF_SQ = N * N * 4e-4  # every weight's squared norm


def weight(name: str, rel: float, *, max_abs: float | None = None) -> TensorDiff:
    """A 64x64 weight ``rel`` of its norm from the reference, the difference spread evenly."""
    return matrix(
        name, rel * rel * REF_SQ, row=(3, 2 / N), col=(5, 2 / N), max_abs=max_abs, ref_sq=REF_SQ
    )


def series(rels: dict[str, list[float]], **max_abs: list[float]) -> list[StepDiff]:
    return [
        StepDiff(
            step=s,
            tensors=[
                weight(name, r[i], max_abs=max_abs[name.replace(".", "_")][i])
                if name.replace(".", "_") in max_abs
                else weight(name, r[i])
                for name, r in rels.items()
            ],
        )
        for i, s in enumerate(STEPS)
    ]


# MobileNetV2 reruns: the median tensor 0.3 of its norm apart at step 12, about 1 after.
CHAOTIC = [0.3, 0.9, 1.0, 1.0, 1.1, 1.0, 1.0, 1.1, 1.0, 1.0]


def test_a_batchnorm_scale_moving_after_the_runs_parted_is_chance() -> None:
    # In a MobileNetV2 rerun a BatchNorm scale moved by 0.56 of its norm between steps 12 and
    # 24, after the two runs had already parted wholesale: called step_change before.
    rels = {f"block.{k}.conv.weight": CHAOTIC for k in range(5)}
    rels["block.2.bn.weight"] = [0.03, 0.56, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    verdict = assess(series(rels))
    assert not verdict.flagged, (verdict.verdict, verdict.notes)
    assert verdict.trend["parted_step"] == 12
    assert any("different models" in n for n in verdict.notes), verdict.notes


def test_a_fault_that_parts_the_runs_is_still_found() -> None:
    # A run bit-identical to its reference until a fault at step 50, which then parts them
    # wholesale: the departure is at the parting, not after it.
    rels = {
        f"block.{k}.conv.weight": [0.0] * 4 + [0.5 + 0.1 * i for i in range(6)] for k in range(5)
    }
    verdict = assess(series(rels))
    assert verdict.flagged, verdict.notes
    assert verdict.onset_step == 60


def test_values_turning_nan_after_the_runs_parted_are_still_flagged() -> None:
    rels = {f"block.{k}.conv.weight": CHAOTIC for k in range(5)}
    nan = [float("nan") if i >= 6 else 0.01 for i in range(len(STEPS))]
    rels["block.4.conv.weight"] = CHAOTIC
    verdict = assess(series(rels, block_4_conv_weight=nan))
    assert verdict.flagged, verdict.notes
    assert verdict.verdict == "sudden_jump"
    assert verdict.onset_step == 84


def _one_tensor_outgrowing_its_peers(growth: list[float]) -> list[StepDiff]:
    """Five weights diverging together, and layer 1's fc1 ``growth`` times their distance."""
    median = [1e-5 * (1 + i) for i in range(len(STEPS))]
    rels = {f"layer.{k}.weight": median for k in range(5)}
    rels["layer.1.fc1.weight"] = [m * g for m, g in zip(median, growth, strict=True)]
    return series(rels)


def test_a_relu_tensors_share_growing_fourteenfold_is_round_off() -> None:
    # OPT reruns with another accumulation split: layer 1's fc1 went from the median
    # tensor's distance to 14.5x it (ReLU units switching), spread over the tensor.
    growth = [1, 1, 1, 2, 5, 9, 12, 14, 14.5, 14.5]
    verdict = assess(_one_tensor_outgrowing_its_peers(growth))
    assert not verdict.flagged, (verdict.verdict, verdict.notes)


def test_a_tensor_outgrowing_its_peers_evenly_needs_a_noise_run() -> None:
    # A whole tensor pulling away from the others is what a gradient-null parameter's random
    # walk does in healthy reruns (rotation 10: PatchTST's key bias 72x, Nystromformer's
    # position embeddings 93x), so alone it is no departure; a noise run that stayed with the
    # other tensors shows this one left it.
    growth = [1, 1, 1, 1, 60, 120, 180, 240, 300, 360]
    run = _one_tensor_outgrowing_its_peers(growth)
    alone = assess(run)
    assert not alone.flagged, alone.notes
    judged = assess(run, _one_tensor_outgrowing_its_peers([1.0] * len(STEPS)))
    assert judged.flagged, judged.notes
    assert judged.onset_step == 60

"""The drift verdict on real training runs of the tiny model (CPU, a couple of seconds each).

Comparisons are computed here in float64 straight from the state dicts, so these tests
exercise the judging half alone; the checkpoint readers have their own tests.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from functools import cache

import pytest

torch = pytest.importorskip("torch")

from denpex.demo.tinyrun import FaultSpec, simulate_replicas, simulate_run  # noqa: E402
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff  # noqa: E402
from denpex.drift.replica_verdict import assess_replicas  # noqa: E402
from denpex.drift.stats import mann_kendall  # noqa: E402
from denpex.drift.verdict import assess  # noqa: E402
from denpex.errors import InputError  # noqa: E402

STEPS = 100
EVERY = 10
ROUND_OFF = 0.1  # fraction of gradient elements moved by one ulp each step

State = dict[str, "torch.Tensor"]


def tensor_diff(name: str, run: torch.Tensor, ref: torch.Tensor) -> TensorDiff:
    a, b = run.double(), ref.double()
    sq = (a - b) ** 2
    rows = sq.reshape(-1) if sq.dim() <= 1 else sq.reshape(sq.shape[0], -1).sum(1)
    cols = (
        sq.reshape(-1).sum(0, keepdim=True)
        if sq.dim() <= 1
        else sq.reshape(-1, sq.shape[-1]).sum(0)
    )
    total = float(sq.sum())
    r, c = int(rows.argmax()), int(cols.argmax())
    return TensorDiff(
        name=name,
        numel=sq.numel(),
        diff_sq=total,
        ref_sq=float((b * b).sum()),
        max_abs=float((a - b).abs().max()),
        mismatched=int((a != b).sum()),
        rows=rows.numel(),
        cols=cols.numel(),
        top_row=r,
        top_row_share=float(rows[r]) / total if total else 0.0,
        top_col=c,
        top_col_share=float(cols[c]) / total if total else 0.0,
    )


def step_diff(step: int, run: State, ref: State) -> StepDiff:
    return StepDiff(step=step, tensors=[tensor_diff(k, run[k], ref[k]) for k in ref])


@cache
def trained(noise_seed: int, fault: FaultSpec | None = None) -> tuple[tuple[int, State], ...]:
    return tuple(
        simulate_run(
            steps=STEPS,
            save_every=EVERY,
            fault=fault,
            nondeterminism=ROUND_OFF,
            noise_seed=noise_seed,
        )
    )


def series(noise_seed: int, fault: FaultSpec | None = None) -> list[StepDiff]:
    ref = trained(1)
    return [
        step_diff(s, run, r)
        for (s, run), (_, r) in zip(trained(noise_seed, fault), ref, strict=True)
    ]


def noise() -> list[StepDiff]:
    return series(2)


PERMANENT = FaultSpec("compute", 47, target="blocks.0.mlp.fc1", index=21, eps=1e-4)
FLIP = FaultSpec("bitflip", 64, target="blocks.1.attn.q.weight", index=5 * 32 + 9, bit=26)


def test_same_seed_same_round_off_is_identical() -> None:
    a = assess(series(1), run="runs/a", ref="runs/ref")
    assert (a.verdict, a.flagged, a.onset_step, a.finding) == ("identical", False, None, None)


def test_benign_rerun_drifts_monotonically_yet_is_not_flagged() -> None:
    healthy = series(3)
    # The trap: the global distance of a healthy rerun grows steadily, enough for a naive
    # trend test to fire. (How steadily depends on the CPU's kernels: tau 0.69-0.9 seen.)
    naive = mann_kendall([s.l2 for s in healthy])
    assert naive.tau > 0.5 and naive.p_increasing < 0.01
    for judged in (assess(healthy), assess(healthy, noise())):
        assert judged.verdict == "within_noise", judged.notes
        assert not judged.flagged and judged.finding is None and judged.onset_step is None
        assert judged.trend["global_l2"]["p"] < 0.01
    # The engine says where the benign distance sits: key biases, random-walking under Adam.
    top = assess(healthy).trend["benign_top_tensors"][0]
    assert top["name"].endswith("attn.k.bias") and top["share_of_distance"] > 0.4


def test_permanent_compute_fault_is_gradual_drift() -> None:
    judged = assess(series(4, PERMANENT), noise(), run="runs/bad", ref="runs/ref")
    assert judged.verdict == "gradual_drift" and judged.flagged, judged.notes
    assert judged.onset_step is not None
    assert PERMANENT.step <= judged.onset_step <= PERMANENT.step + EVERY
    # Localised: the faulty fc1 output column is fc1's weight row 21 and fc2's weight column 21.
    places = {
        (lever.get("axis"), lever.get("index"), s["name"])
        for s in judged.trend["suspect_tensors"]
        for lever in s["levers"]
    }
    assert ("row", 21, "blocks.0.mlp.fc1.weight") in places or (
        "col",
        21,
        "blocks.0.mlp.fc2.weight",
    ) in places
    assert judged.trend["mann_kendall"]["p"] < 0.01 and judged.trend["sen_slope_per_step"] > 0
    assert judged.trend["shape"] in {"linear", "accelerating", "saturating"}
    f = judged.finding
    assert f is not None and f.id == "sdc-gradual-parameter-drift"
    assert "denpex drift runs/bad --ref runs/ref" in f.verification
    # Commands needing the GPU or host are left out: neither is known for a reference run.
    assert not any("{" in c or "<gpu>" in c or "<host>" in c for c in f.verification)
    assert f.evidence and f.evidence[0].role == "initiating"


@pytest.mark.parametrize(("eps", "late"), [(1e-3, 0), (1e-4, 1)])
def test_fault_before_the_first_checkpoint_of_the_window_needs_a_noise_reference(
    eps: float, late: int
) -> None:
    # A value channel: in the simulator a query channel's fault spreads over its head's rows
    # through the softmax (top row 0.42 of q's distance, under DOMINANT; see the docs' Limits).
    # Faulty from step 5, before the first checkpoint: its channel holds v's difference from
    # the first checkpoint compared, as a healthy model's own sensitive channel does (real
    # LSTM and RegNet reruns). Alone, the verdict cannot tell them apart: not flagged, named,
    # and a bit-identical reference asked for. With a noise run that kept v spread, it is found.
    early = FaultSpec("compute", 5, target="blocks.1.attn.v", index=3, eps=eps)
    alone = assess(series(5, early))
    assert alone.verdict == "within_noise" and not alone.flagged, alone.notes
    held = [n for n in alone.notes if "within the first 3 checkpoints compared" in n]
    assert len(held) == 1 and "blocks.1.attn.v" in held[0] and "bit-identical" in held[0], held
    judged = assess(series(5, early), noise())
    assert judged.verdict == "gradual_drift", judged.notes
    assert judged.onset_step is not None
    assert judged.onset_step <= early.step + (1 + late) * EVERY


def test_single_bit_flip_is_a_sudden_jump() -> None:
    judged = assess(series(6, FLIP), noise(), run="runs/flip", ref="runs/ref")
    assert judged.verdict == "sudden_jump" and judged.flagged, judged.notes
    assert judged.onset_step == 70  # the first checkpoint after iteration 64
    jump = judged.trend["jump"]
    assert jump["tensor"] == "blocks.1.attn.q.weight" and jump["between_steps"] == [60, 70]
    assert jump["max_abs"] > 1000 * jump["max_abs_before"]
    assert judged.finding is not None and judged.finding.id == "sdc-transient-corruption"


def test_flip_that_blows_the_run_up_is_a_sudden_jump_with_json_safe_trend() -> None:
    # Bit 30 of a small float32 multiplies it by 2**128: the next steps turn everything NaN.
    flip = FaultSpec("bitflip", 25, target="head.weight", index=3, bit=30)
    ref = trained(1)[:4]
    run = simulate_run(
        steps=40, save_every=EVERY, fault=flip, nondeterminism=ROUND_OFF, noise_seed=1
    )
    judged = assess([step_diff(s, a, b) for (s, a), (_, b) in zip(run, ref, strict=True)])
    assert (judged.verdict, judged.onset_step) == ("sudden_jump", 30), judged.notes
    json.dumps(judged.trend, allow_nan=False)


def test_a_channel_alone_without_noise_reference_is_named_not_flagged() -> None:
    # Only the weight's row says so, holding 0.70 of its difference. The bias's element 21
    # alone is no lever without a noise run, nor is it a pair with its own weight's row 21 (a
    # starved channel moves both); fc2's column 21 pairs with the row for a while, then fades
    # below 3/4 of its lift. Healthy Gemma 3n and SEW-D reruns (rotation 21) put 0.65-0.76
    # of a tensor in one starved row just like this: without a noise run it is not flagged,
    # but named, and a noise reference asked for, which tells the two apart.
    alone = assess(series(4, PERMANENT))
    assert alone.verdict == "within_noise" and not alone.flagged, alone.notes
    told = [n for n in alone.notes if "blocks.0.mlp.fc1.weight (row 21: 70% of" in n]
    assert len(told) == 1 and "--noise-ref" in told[0], alone.notes
    calibrated = assess(series(4, PERMANENT), noise())
    assert calibrated.verdict == "gradual_drift"
    assert not any("--noise-ref" in n for n in calibrated.notes)


def test_noise_reference_with_fewer_steps_falls_back_and_says_so() -> None:
    partial = [s for s in noise() if s.step <= 60]
    judged = assess(series(4, PERMANENT), partial)
    assert judged.verdict == "gradual_drift"
    assert any("noise reference lacks steps" in n for n in judged.notes)


def test_a_copy_of_the_reference_as_noise_reference_is_called_out() -> None:
    judged = assess(series(4, PERMANENT), series(1))
    assert judged.verdict == "gradual_drift"  # localisation still finds it
    assert any("bit-identical to the reference" in n for n in judged.notes)


def test_no_common_step_is_an_input_error() -> None:
    with pytest.raises(InputError):
        assess([])


# --- replicas --------------------------------------------------------------------------


def _digest(state: State) -> str:
    h = hashlib.sha256()
    for k in sorted(state):
        h.update(k.encode())
        h.update(state[k].numpy().tobytes())
    return h.hexdigest()


def replica_series(states: Iterator[tuple[int, list[State]]]) -> list[ReplicaStep]:
    """Each rank against the majority (the group of bitwise-equal replicas), as the compare
    side does it."""
    out = []
    for step, ranks in states:
        digests = [_digest(s) for s in ranks]
        majority = max(set(digests), key=lambda d: (digests.count(d), -digests.index(d)))
        ref = ranks[digests.index(majority)]
        out.append(
            ReplicaStep(step=step, ranks={r: step_diff(step, s, ref) for r, s in enumerate(ranks)})
        )
    return out


def test_healthy_replicas_stay_bitwise_identical() -> None:
    states = simulate_replicas(steps=60, save_every=20, nondeterminism=ROUND_OFF)
    judged = assess_replicas(replica_series(states), run="runs/ddp")
    assert (judged.verdict, judged.flagged, judged.faulty_rank) == ("identical", False, None)


def test_one_faulty_replica_is_named() -> None:
    fault = FaultSpec(
        "replica_update", 35, target="blocks.0.attn.v.weight", index=4, eps=1e-3, rank=2
    )
    states = simulate_replicas(steps=80, save_every=10, fault=fault, nondeterminism=ROUND_OFF)
    judged = assess_replicas(replica_series(states), run="runs/ddp", gpus_per_node=2)
    assert judged.verdict == "replica_divergence" and judged.flagged, judged.notes
    assert judged.faulty_rank == 2 and judged.onset_step == 40
    assert judged.trend["fingerprint"] == "replicas"
    assert judged.trend["suspect_tensors"][0]["name"] == "blocks.0.attn.v.weight"
    assert judged.trend["suspect_tensors"][0]["top_row"] == 4
    f = judged.finding
    assert f is not None and f.id == "dp-replica-divergence" and f.initiating_rank == 2
    assert f.gpu == 0  # rank 2 with two GPUs per node
    assert "dcgmi diag -r 3 -i 0" in f.verification and "denpex replicas runs/ddp" in f.verification


def test_replica_gpu_commands_are_left_out_when_the_gpu_is_unknown() -> None:
    fault = FaultSpec("replica_update", 10, target="head.weight", index=0, eps=1e-2, rank=1)
    states = simulate_replicas(steps=20, save_every=10, replicas=2, fault=fault)
    judged = assess_replicas(replica_series(states), run="runs/ddp")
    assert judged.faulty_rank == 1 and judged.finding is not None
    assert not any("dcgmi" in c for c in judged.finding.verification)


# Shapes seen on the real-training corpus (bench/trainings/), built here from state dicts so
# each mechanism is tested alone. Every tensor differs at every element (as round-off does).

SHAPE_STEPS = list(range(10, 110, 10))


def _shape_series(diffs: dict[str, list[torch.Tensor | None]]) -> list[StepDiff]:
    """One StepDiff per step: run = ref + diff (None: bit-identical at that step)."""
    gen = torch.Generator().manual_seed(7)
    shapes = {k: next(d for d in v if d is not None).shape for k, v in diffs.items()}
    refs = {
        k: torch.randn(shape, generator=gen, dtype=torch.float64) for k, shape in shapes.items()
    }
    out = []
    for i, step in enumerate(SHAPE_STEPS):
        run = {k: refs[k] + (d[i] if d[i] is not None else 0.0) for k, d in diffs.items()}
        out.append(step_diff(step, run, refs))
    return out


def _spread(shape: tuple[int, ...], scale: float, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return scale * torch.randn(shape, generator=gen, dtype=torch.float64)


def test_an_early_cluster_that_dilutes_is_not_a_fault() -> None:
    # Real GPT-2 reruns: the first differences cluster in row 2 of mlp.c_proj (and column 2
    # of c_fc), lift ~50 at the first checkpoint, then the rest of the tensor catches up and
    # the lift falls below half. A faulty channel's lift holds or grows.
    w1, w2, other = [], [], []
    for i in range(len(SHAPE_STEPS)):
        c, s = 1e-4 * (1 + 0.3 * i), 1e-4 * 0.06 * (1 + i)
        row = torch.zeros(64, 64, dtype=torch.float64)
        row[2] = c
        w1.append(row + _spread((64, 64), s, i))
        w2.append(row.T + _spread((64, 64), s, 100 + i))
        other.append(_spread((64, 64), s, 200 + i))
    a = assess(_shape_series({"w1": w1, "w2": w2, "other": other}))
    assert a.verdict == "within_noise", (a.verdict, a.notes)


def test_departure_from_a_bit_exact_reference_is_flagged_at_its_onset() -> None:
    # The faulty run shared the reference's arithmetic (identical up to step 40); from step
    # 50 it differs, spread thin over every tensor as in a chaotic BatchNorm CNN.
    diffs: dict[str, list[torch.Tensor | None]] = {}
    for k, name in enumerate(("a", "b", "c")):
        diffs[name] = [
            None if step < 50 else _spread((32, 32), 1e-6 * (step - 40), 10 * k + i)
            for i, step in enumerate(SHAPE_STEPS)
        ]
    a = assess(_shape_series(diffs))
    assert a.verdict == "gradual_drift", (a.verdict, a.notes)
    assert a.onset_step == 50
    assert "bit_exact_departure" in a.trend["levers"]


def _shared_round_off(
    fault: float, start: int = 50, parted: int = SHAPE_STEPS[0]
) -> tuple[list[StepDiff], list[StepDiff]]:
    """A two-thread BatchNorm run and a noise run of the same configuration: both apart from
    a one-thread reference by the same round-off, to the last bit, from ``parted`` on (equal
    to it before), until the run gets a fault ``fault`` times that round-off's size, spread
    over every tensor, from ``start``."""
    shared: dict[str, list[torch.Tensor | None]] = {}
    faulty: dict[str, list[torch.Tensor | None]] = {}
    for k, name in enumerate(("conv", "bn", "head")):
        walk = [
            _spread((32, 32), 1e-4 * (1 + 0.2 * i), 10 * k + i) if step >= parted else None
            for i, step in enumerate(SHAPE_STEPS)
        ]
        shared[name] = list(walk)
        faulty[name] = [
            None
            if w is None
            else w + (_spread((32, 32), fault * 1e-4, 500 + 10 * k + i) if step >= start else 0.0)
            for i, (w, step) in enumerate(zip(walk, SHAPE_STEPS, strict=True))
        ]
    return _shape_series(faulty), _shape_series(shared)


def test_departure_from_a_noise_run_that_shared_the_arithmetic_is_flagged() -> None:
    run, noise = _shared_round_off(0.05)  # a twentieth of the round-off: no envelope sees it
    assert assess(run).verdict == "within_noise"
    judged = assess(run, noise)
    assert judged.verdict == "gradual_drift", (judged.verdict, judged.notes)
    assert judged.onset_step == 50
    assert judged.trend["levers"] == ["noise_exact_departure"]
    assert any("exactly where the noise reference stood" in n for n in judged.notes)


def test_a_run_equal_to_its_noise_run_throughout_is_not_a_departure() -> None:
    run, noise = _shared_round_off(0.0)
    assert assess(run, noise).verdict == "within_noise"
    # A healthy rerun of another configuration is apart from the noise run from the start.
    other, _ = _shared_round_off(0.0)
    other = [
        StepDiff(s.step, [replace(t, diff_sq=t.diff_sq * 1.01) for t in s.tensors]) for s in other
    ]
    assert assess(other, noise).verdict == "within_noise"


def test_one_equal_checkpoint_is_not_enough_to_share_the_arithmetic() -> None:
    # FocalNet: healthy reruns with another micro-batch order equal to the noise run at the
    # first checkpoint, apart from the second on.
    run, noise = _shared_round_off(0.05, start=SHAPE_STEPS[1])
    assert assess(run, noise).verdict == "within_noise"
    run, noise = _shared_round_off(0.05, start=SHAPE_STEPS[2])
    assert assess(run, noise).onset_step == SHAPE_STEPS[2]


def test_one_equal_checkpoint_with_the_reference_is_not_enough_either() -> None:
    # Ergo (rotation 40): a healthy two-thread bf16 rerun equal to its one-thread reference
    # at the first checkpoint and apart from the second on, where a latent difference surfaced.
    def departing(start: int) -> list[StepDiff]:
        diffs: dict[str, list[torch.Tensor | None]] = {
            name: [
                None if step < start else _spread((32, 32), 1e-6 * (step - 10), 10 * k + i)
                for i, step in enumerate(SHAPE_STEPS)
            ]
            for k, name in enumerate(("a", "b", "c"))
        }
        return _shape_series(diffs)

    assert assess(departing(SHAPE_STEPS[1])).verdict == "within_noise"
    two_equal = assess(departing(SHAPE_STEPS[2]))
    assert (two_equal.verdict, two_equal.onset_step) == ("gradual_drift", SHAPE_STEPS[2])
    assert "bit_exact_departure" in two_equal.trend["levers"]


def test_a_noise_run_that_parted_from_the_reference_with_the_run_is_its_bit_exact_reference() -> (
    None
):
    # Ergo's faulty two-thread runs and their twin: all three equal at the first checkpoint,
    # the two two-thread runs apart from the reference together from the second (too soon for
    # the reference to count as bit-exact), then the faulty one apart from its twin.
    run, noise = _shared_round_off(0.05, start=50, parted=SHAPE_STEPS[1])
    judged = assess(run, noise)
    assert (judged.verdict, judged.onset_step) == ("gradual_drift", 50), judged.notes
    assert judged.trend["levers"] == ["noise_exact_departure"]


def _apart_by_round_off(moved: torch.Tensor, creep: float) -> dict[str, list[torch.Tensor | None]]:
    """A rerun apart by round-off, its difference creeping 10% a checkpoint (the weights' RMS
    is 1); ``moved`` is added to q from step 60 on."""
    q, other = [], []
    for i, step in enumerate(SHAPE_STEPS):
        c = creep * (1 + 0.1 * i)
        q.append(_spread((32, 32), c, i) + (moved if step >= 60 else 0.0))
        other.append(_spread((32, 32), c, 100 + i))
    return {"q": q, "other": other}


def test_a_flip_in_a_run_apart_by_round_off_is_a_sudden_jump() -> None:
    # Swin's bit-22 flip in a two-thread run: one element moves to 3.6x the largest
    # difference round-off had reached and holds 12% of the tensor's difference; no healthy
    # rerun's element did so (tuning: 0 of 204). The 100x rule alone missed it. Here it moves
    # 10% of the weights' RMS, 20x round-off's largest.
    moved = torch.zeros(32, 32, dtype=torch.float64)
    moved[0, 22] = 0.1
    a = assess(_shape_series(_apart_by_round_off(moved, 1e-3)))
    assert (a.verdict, a.onset_step) == ("sudden_jump", 60), (a.verdict, a.notes)
    assert a.trend["jump"]["tensor"] == "q"


def test_chaos_gathering_in_one_small_element_is_no_jump() -> None:
    # Held-out Kimi Linear (rotation 30): late in healthy reruns one short-convolution element
    # rose 6-9x in an interval and held most of its tensor's difference, but at 0.7-2.1% of
    # the tensor's RMS; the flips the same test found moved 13.5-281% of it. Here 0.5%.
    moved = torch.zeros(32, 32, dtype=torch.float64)
    moved[0, 22] = 5e-3
    a = assess(_shape_series(_apart_by_round_off(moved, 1.5e-4)))
    assert a.verdict != "sudden_jump", (a.verdict, a.notes)


def test_a_channel_lifted_at_once_is_not_a_jump() -> None:
    # A x2 fault on one output channel (Swin's fc1) lifts a whole row at once; its largest
    # element holds a fifth to a quarter of the row, not most of it: a channel, not a flip.
    moved = torch.zeros(32, 32, dtype=torch.float64)
    moved[3] = 1.2e-3
    moved[3, 7] = 4e-3
    a = assess(_shape_series(_apart_by_round_off(moved, 1.5e-4)))
    assert a.verdict != "sudden_jump", (a.verdict, a.notes)


def test_a_scalar_parameter_moving_is_no_jump() -> None:
    # Held-out HGNetV2's learnable scale (one element, RMS 1.9): in a healthy channels-last
    # rerun its difference went from 0.0013 to 0.157 between steps 12 and 24 and stayed. A
    # tensor of one element has no range for an element to leave; rule 7cf154e called it a
    # sudden jump.
    scale: list[torch.Tensor | None] = []
    for step in SHAPE_STEPS:
        scale.append(torch.tensor([0.0013 if step < 20 else 0.157], dtype=torch.float64))
    other = [_spread((32, 32), 1e-4 * (1 + 0.1 * i), i) for i in range(len(SHAPE_STEPS))]
    a = assess(_shape_series({"lab.scale": scale, "other": other}))
    assert a.verdict != "sudden_jump", (a.verdict, a.notes)


@pytest.mark.parametrize("from_start", [True, False])
def test_noise_envelope_calibrates_on_a_random_walk_but_sees_a_rise(from_start: bool) -> None:
    # A gradient-null parameter (a conv bias ahead of BatchNorm) random-walks: in one healthy
    # rerun it sat 8-16x further from the reference than in the noise run, from the first
    # checkpoint on. A fault moves a tensor away from the noise run after they were alike.
    def diffs(factor: list[float]) -> dict[str, list[torch.Tensor | None]]:
        return {
            "bias": [_spread((64,), 1e-6 * (1 + i) * f, i) for i, f in enumerate(factor)],
            "w": [_spread((32, 32), 1e-6 * (1 + i), 50 + i) for i in range(len(factor))],
        }

    n = len(SHAPE_STEPS)
    factor = [10.0] * n if from_start else [1.0] * 3 + [10.0 * (k + 1) for k in range(n - 3)]
    a = assess(_shape_series(diffs(factor)), _shape_series(diffs([1.0] * n)))
    assert a.flagged is not from_start, (a.verdict, a.notes)

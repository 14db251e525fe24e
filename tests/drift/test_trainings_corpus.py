"""bench/trainings/corpus.py: the real-training corpus has the structure docs/drift-statistics.md
reports figures on (every architecture tuned on or held out, never both; a reference, a noise
reference, healthy reruns and faults at the standard sites), and every fault strikes what its
label says on the real model: one output channel of the site, one lane of the weight."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch import nn

from paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from denpex.checkpoints import find_checkpoints, open_checkpoint
from trainings.corpus import HELD_OUT, TUNING, Run, family
from trainings.faults import Fault, Injector
from trainings.models import ARCHS
from trainings.save import save_checkpoint
from trainings.train import train
from trainings.twin import same_weights, twin


def test_every_architecture_is_tuned_on_or_held_out_never_both() -> None:
    assert set(TUNING) | set(HELD_OUT) == set(ARCHS)
    assert not set(TUNING) & set(HELD_OUT)
    # The acceptance (issue 9) is measured on >= 40 healthy pairs over >= 5 held-out archs.
    assert len(HELD_OUT) >= 5
    assert sum(r.role == "healthy" for a in HELD_OUT for r in family(a)) >= 40


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_a_family_has_its_references_reruns_and_faults_at_every_site(arch: str) -> None:
    runs = family(arch)
    assert [r.role for r in runs[:2]] == ["ref", "noise"]
    assert sum(r.role == "healthy" for r in runs) >= 6
    faults = [r.spec.fault for r in runs if r.role == "fault"]
    assert all(f is not None for f in faults)
    compute = {f.site for f in faults if f and f.kind == "compute"}
    assert compute == set(ARCHS[arch].sites.values())
    kinds = {f.kind for f in faults if f}
    assert {"compute", "lane", "flip"} <= kinds
    # Healthy reruns and the faulty runs' own noise differ from the reference's settings only.
    assert len({r.path for r in runs}) == len(runs)


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_an_architecture_saves_in_its_format_and_denpex_reads_it(arch: str, tmp_path) -> None:
    # Rotation 26's SigLIP wrapper crashed at its first checkpoint: "hf" needs save_pretrained.
    fmt = family(arch)[0].spec.fmt
    torch.manual_seed(0)
    model = ARCHS[arch].build()
    save_checkpoint(model, fmt, tmp_path, 12)
    [found] = find_checkpoints(tmp_path)
    reader = open_checkpoint(str(found.path))
    try:
        assert found.step == 12 and reader.tensors, (arch, fmt)
    finally:
        reader.close()


def _out_channels(module: nn.Module) -> int | None:
    if isinstance(module, nn.Linear):
        return module.out_features
    if isinstance(module, nn.Conv1d | nn.Conv2d):
        return module.out_channels
    if isinstance(module, nn.Embedding):
        return module.embedding_dim
    # A residual MLP block (TimesFM's patch embedding): its output is its shortcut's.
    if isinstance(getattr(module, "residual_layer", None), nn.Linear):
        return module.residual_layer.out_features
    # Experts stacked as (experts, out, in), one Linear each (JetMoE's): their output size.
    if isinstance(getattr(module, "output_size", None), int):
        return module.output_size
    # Fused experts stacked as (experts, in, out) (GPT-OSS's): their hidden size.
    if getattr(module, "is_transposed", False):
        return module.hidden_size
    # Norms (weight of one per channel) and fused experts (..., hidden): the last dim. A norm
    # without a weight (HRM-Text's RMSNorm) keeps its input's channels: any axis may be it.
    weight = next(module.parameters(), None)
    return None if weight is None else weight.shape[-1]


def _site_output(arch: str, fault: Fault | None) -> dict[str, torch.Tensor]:
    spec = ARCHS[arch]
    torch.manual_seed(0)
    model = spec.build()
    inject = Injector(fault, model, torch.optim.SGD(model.parameters(), lr=0.1))
    inject.step = 1
    seen: dict[str, torch.Tensor] = {}
    modules = dict(model.named_modules())

    def keep_first(name: str, out: torch.Tensor) -> None:
        # The first call's output only: a module called again (ALBERT's shared layer) then
        # reads an input the fault has already changed everywhere. A copy: the model may add
        # to the output in place afterwards (TimesFM's positions onto its patch embedding).
        seen.setdefault(name, out.detach().clone())

    for name in spec.sites.values():
        # Registered after the injector's hook, so this sees the faulty output.
        modules[name].register_forward_hook(lambda _m, _i, out, name=name: keep_first(name, out))
    batch = next(spec.batches(0))
    with torch.no_grad():
        spec.loss(model, batch, len(batch[1]) if isinstance(batch, tuple) else len(batch))
    return seen


@pytest.mark.parametrize(
    ("arch", "site"), [(a, s) for a in sorted(ARCHS) for s in ARCHS[a].sites.values()]
)
def test_a_compute_fault_scales_one_output_channel_of_its_site(arch: str, site: str) -> None:
    fault = Fault("compute", site, onset=1, eps=1.0)
    clean, faulty = _site_output(arch, None)[site], _site_output(arch, fault)[site]
    channels = _out_channels(dict(ARCHS[arch].build().named_modules())[site])
    changed = faulty != clean

    def at_channel(d: int) -> torch.Tensor:
        shape = [-1 if i == d else 1 for i in range(clean.dim())]
        index = torch.arange(clean.shape[d]).reshape(shape)
        # Zeros stay zeros (BERT's padding embedding row).
        return (index == fault.channel) & (clean != 0)

    # Exactly the elements at index `fault.channel` of the channel axis, doubled.
    axes = [d for d, size in enumerate(clean.shape)
            if channels in (None, size) and torch.equal(changed, at_channel(d))]  # fmt: skip
    assert axes, f"{site}: the fault did not strike channel {fault.channel} of {channels}"
    torch.testing.assert_close(faulty[changed], 2 * clean[changed])


def test_a_lane_fault_in_fused_experts_strikes_one_row_of_each_expert() -> None:
    site = ARCHS["mixtral"].sites["mlp"] + "." + ARCHS["mixtral"].lane_weight
    torch.manual_seed(0)
    model = ARCHS["mixtral"].build()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fault = Fault("lane", site, onset=1, eps=1.0)
    inject = Injector(fault, model, opt)
    inject.step = 1
    weight = dict(model.named_parameters())[site]
    weight.grad = torch.ones_like(weight)
    before = weight.detach().clone()
    inject.before_update()
    opt.step()
    inject.after_update()
    moved = (weight.detach() - before).abs()
    row = fault.channel
    torch.testing.assert_close(moved[:, row], 2 * moved[:, row + 1])
    others = torch.ones(weight.shape[1], dtype=torch.bool)
    others[row] = False
    torch.testing.assert_close(moved[:, others], torch.full_like(moved[:, others], 0.1))


def _fault_run(arch: str, site: str, eps: float) -> Run:
    # The fault at its site and size, sharing the reference's nondeterminism.
    runs = family(arch)
    ref = runs[0]
    fault = next(
        r.spec.fault
        for r in runs
        if r.spec.fault and r.spec.fault.kind == "compute" and site in r.spec.fault.site
    )
    spec = replace(ref.spec, fault=replace(fault, eps=eps))
    return Run(spec, "fault", spec.fault.label if spec.fault else "")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Run], Path]:
    """Trains a run once per module into a temporary folder, not the corpus cache."""
    root = tmp_path_factory.mktemp("runs")
    done: dict[str, Path] = {}

    def run_path(run: Run) -> Path:
        key = run.spec.key()
        if key not in done:
            train(run.spec, root / key)
            done[key] = root / key
        return done[key]

    return run_path


@pytest.mark.parametrize(
    "arch, site, eps, null",
    [
        # Qwen2's v_proj runs in bf16 under autocast, whose rounding step is 2^-8..2^-7 of the
        # value: 1 + 1e-3 gives back the same bits, 1 + 1e-2 does not.
        ("qwen2", "v_proj", 1e-3, True),
        ("qwen2", "v_proj", 1e-2, False),
        # MobileBERT's fault channel in its first stacked MLP is a dead ReLU unit by step 50:
        # doubling it changes its (negative) pre-activation but nothing the ReLU passes on.
        ("mobilebert", "ffn.0.intermediate.dense", 1.0, True),
        ("mobilebert", "attention.self.query", 1e-3, False),
    ],
)
def test_a_fault_is_null_when_its_run_is_bit_for_bit_its_twin(
    trained: Callable[[Run], Path], arch: str, site: str, eps: float, null: bool
) -> None:
    runs = family(arch)
    run = _fault_run(arch, site, eps)
    twin_run = twin(run, runs)
    assert twin_run.role == "ref"  # same nondeterminism, no fault
    assert same_weights(trained(run), trained(twin_run)) is null


def test_same_weights_needs_every_step_and_every_bit(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    for name in ("a", "b", "c", "d"):
        for step in (12, 24):
            save_checkpoint(model, "safetensors", tmp_path / name, step)
    assert same_weights(tmp_path / "a", tmp_path / "b")
    save_checkpoint(model, "safetensors", tmp_path / "c", 36)  # one step more
    assert not same_weights(tmp_path / "a", tmp_path / "c")
    with torch.no_grad():
        bits = model.weight.view(torch.int32)
        bits[1, 2] ^= 1  # the lowest bit of one value
    save_checkpoint(model, "safetensors", tmp_path / "d", 24)
    assert not same_weights(tmp_path / "a", tmp_path / "d")
    nan = nn.Linear(4, 3)
    with torch.no_grad():
        nan.weight.fill_(float("nan"))
    for name in ("e", "f"):
        save_checkpoint(nan, "safetensors", tmp_path / name, 12)
    # Same bits are the same run, NaN or not: this is about what a fault changed, not a verdict.
    assert same_weights(tmp_path / "e", tmp_path / "f")
    (tmp_path / "empty").mkdir()
    assert not same_weights(tmp_path / "a", tmp_path / "empty")

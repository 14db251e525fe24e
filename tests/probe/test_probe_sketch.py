"""Fingerprint maths: the exact hash and the sketch's distance estimate, on real tensors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from denpex.drift import fingerprints  # noqa: E402
from denpex.probe import DriftProbe  # noqa: E402
from denpex.probe.sketch import BLOCK, Sketcher  # noqa: E402


def _hash(t: torch.Tensor) -> int:
    return Sketcher().fingerprint("t", t).hash


def test_hash_is_deterministic_and_sees_every_single_bit_flip() -> None:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3 * BLOCK + 17, generator=g)  # spans blocks and ends in a partial one
    h = _hash(a)
    assert _hash(a.clone()) == h
    big = torch.cat([torch.zeros(3), a])
    assert _hash(big[3:]) == h  # same values in a view at a storage offset
    for index in (0, 5, BLOCK - 1, BLOCK, 2 * BLOCK + 3, a.numel() - 1):
        for bit in (0, 13, 31):
            b = a.clone()
            b.view(torch.int32)[index] ^= 1 << bit if bit < 31 else -(1 << 31)
            assert _hash(b) != h, (index, bit)
    # Swapping two elements keeps the multiset of values but not the tensor.
    c = a.clone()
    c[[1, 2]] = c[[2, 1]]
    assert _hash(c) != h


def test_hash_covers_the_tail_of_odd_length_half_precision_tensors() -> None:
    a = torch.randn(1001).to(torch.bfloat16)  # 2002 bytes: half a word at the end
    b = a.clone()
    b[-1] = -b[-1]
    assert _hash(a) != _hash(b)
    assert _hash(a) == _hash(a.clone())


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(128, 4, 512, batch_first=True)


def _perturb(model: torch.nn.Module, kind: str, rel: float, seed: int) -> dict[str, torch.Tensor]:
    """A perturbation of global L2 = rel * ||params||, shaped like the faults that matter."""
    g = torch.Generator().manual_seed(seed)
    params = {n: p.detach() for n, p in model.named_parameters()}
    total = math.sqrt(sum(float(p.double().square().sum()) for p in params.values()))
    delta = {n: torch.zeros_like(p, dtype=torch.float64) for n, p in params.items()}
    if kind == "spread":  # every element moves (benign-noise-like)
        for n, p in params.items():
            delta[n] = torch.randn(p.shape, generator=g, dtype=torch.float64)
    elif kind == "one_tensor":  # spread inside one weight matrix
        w = "linear1.weight"
        delta[w] = torch.randn(params[w].shape, generator=g, dtype=torch.float64)
    elif kind == "one_row":  # one output row of one matmul (the compute fault's footprint)
        w = "linear2.weight"
        delta[w][7] = torch.randn(params[w].shape[1], generator=g, dtype=torch.float64)
    elif kind == "sparse":  # a handful of elements
        w = "self_attn.in_proj_weight"
        flat = delta[w].view(-1)
        flat[torch.randint(0, flat.numel(), (5,), generator=g)] = 1.0
    scale = rel * total / math.sqrt(sum(float(d.square().sum()) for d in delta.values()))
    return {n: (p.double() + scale * delta[n]).to(p.dtype) for n, p in params.items()}


def _probe(model: torch.nn.Module, out: Path) -> None:
    with DriftProbe(model, out, every=1) as probe:
        probe.step(0)


@pytest.mark.parametrize("kind", ["spread", "one_tensor", "one_row", "sparse"])
def test_sketch_estimates_distance_within_10_percent_from_1e6_to_1e1(
    tmp_path: Path, kind: str
) -> None:
    model = _model()
    ref_state = {n: p.detach().clone() for n, p in model.named_parameters()}
    _probe(model, tmp_path / "ref")
    for i, rel in enumerate([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]):
        new = _perturb(model, kind, rel, seed=i)
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(new[n])
        run_dir = tmp_path / f"run{i}"
        _probe(model, run_dir)
        true = math.sqrt(
            sum(float((new[n].double() - ref_state[n].double()).square().sum()) for n in new)
        )
        (est,) = fingerprints.compare(run_dir, tmp_path / "ref")
        # The perturbation went through dtype rounding: measure against what was stored.
        assert true > 0
        assert abs(est.l2 / true - 1) < 0.10, (kind, rel, est.l2, true)
        if kind in ("one_tensor", "one_row", "sparse"):
            assert est.top_tensors(1)[0].name in (
                "linear1.weight",
                "linear2.weight",
                "self_attn.in_proj_weight",
            )
            assert est.top_tensors(1)[0].diff_sq > 0.95 * est.diff_sq
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(ref_state[n])


def test_identical_parameters_give_exactly_zero(tmp_path: Path) -> None:
    model = _model()
    _probe(model, tmp_path / "a")
    _probe(model, tmp_path / "b")
    (d,) = fingerprints.compare(tmp_path / "a", tmp_path / "b")
    assert d.diff_sq == 0.0 and d.mismatched == 0

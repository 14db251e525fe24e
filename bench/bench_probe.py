"""Drift probe: overhead on a >= 100M-parameter model, record size, and sketch accuracy.

Overhead: a stack of transformer-MLP blocks (d=1024, 4x expansion, 12 blocks: 100.7M
parameters) trained with Adam. One probe call is timed against one training step; at
``every=100`` the probe's share of training time is probe / (100 x step). Runs on CUDA when
present (timed with synchronisation), else on the CPU, and says which. Few steps are enough:
both figures are per call.

Accuracy: the sketch estimate of the L2 distance against the true distance computed from
the full tensors, over many random perturbations of a real layer's parameters (spread over
every tensor, or one row of one matrix) at 1e-6 and 1e-2 of the parameter norm: the error
of the step's distance (what drift reports) and of single tensors' shares.

    python bench/bench_probe.py [--steps 3] [--trials 40]
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from denpex.drift import fingerprints
from denpex.probe import DriftProbe


def _model(d: int, blocks: int) -> torch.nn.Module:
    layers: list[torch.nn.Module] = []
    for _ in range(blocks):
        layers += [
            torch.nn.LayerNorm(d),
            torch.nn.Linear(d, 4 * d),
            torch.nn.GELU(),
            torch.nn.Linear(4 * d, d),
        ]
    return torch.nn.Sequential(*layers)


def _sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def overhead(steps: int, batch: int) -> None:
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = _model(1024, 12).to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = sum(1 for _ in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(batch, 1024, device=dev)

    def train_step() -> None:
        opt.zero_grad(set_to_none=True)
        model(x).square().mean().backward()
        opt.step()

    train_step()  # warm-up: allocates Adam state
    _sync(dev)
    step_times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        train_step()
        _sync(dev)
        step_times.append(time.perf_counter() - t0)
    with tempfile.TemporaryDirectory() as out:
        probe = DriftProbe(model, out, every=1)
        probe.step(0)  # warm-up: builds the device tables
        probe_times = []
        for i in range(1, steps + 1):
            _sync(dev)
            t0 = time.perf_counter()
            probe.step(i)
            _sync(dev)
            probe_times.append(time.perf_counter() - t0)
        record = probe.last_record_bytes
        probe.close()
    step_t, probe_t = statistics.median(step_times), statistics.median(probe_times)
    where = "GPU" if dev.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(f"device: {dev} ({where})")
    print(
        f"model: {n_params / 1e6:.1f}M parameters in {n_tensors} tensors; batch {batch}x1024, Adam"
    )
    print(f"training step:  {step_t * 1e3:9.1f} ms (median of {steps})")
    per_param = probe_t / n_params * 1e9
    print(
        f"probe call:     {probe_t * 1e3:9.1f} ms (median of {steps}; {per_param:.2f} ns/parameter)"
    )
    for every in (100, 1000):
        print(f"overhead at every={every}: {probe_t / (every * step_t):.4%} of training time")
    print(f"record: {record} bytes per step per rank = {record / n_tensors:.0f} bytes per tensor")


def _perturbed_estimates(
    model: torch.nn.Module, kind: str, rel: float, seed: int, root: Path
) -> tuple[float, float]:
    """(relative error of the step distance, relative error of the top tensor's distance)."""
    g = torch.Generator().manual_seed(seed)
    params = {n: p.detach() for n, p in model.named_parameters()}
    total = math.sqrt(sum(float(p.double().square().sum()) for p in params.values()))
    delta = {n: torch.zeros_like(p, dtype=torch.float64) for n, p in params.items()}
    if kind == "spread":
        delta = {
            n: torch.randn(p.shape, generator=g, dtype=torch.float64) for n, p in params.items()
        }
    else:
        row = int(torch.randint(0, params["linear1.weight"].shape[0], (1,), generator=g))
        delta["linear1.weight"][row] = torch.randn(
            params["linear1.weight"].shape[1], generator=g, dtype=torch.float64
        )
    scale = rel * total / math.sqrt(sum(float(d.square().sum()) for d in delta.values()))
    new = {n: (p.double() + scale * delta[n]).to(p.dtype) for n, p in params.items()}
    true = {n: float((new[n].double() - p.double()).square().sum()) for n, p in params.items()}
    with torch.no_grad():
        backup = {n: p.clone() for n, p in params.items()}
        for n, p in model.named_parameters():
            p.copy_(new[n])
        with DriftProbe(model, root / f"run{seed}", every=1) as probe:
            probe.step(0)
        for n, p in model.named_parameters():
            p.copy_(backup[n])
    (est,) = fingerprints.compare(root / f"run{seed}", root / "ref")
    top = max(true, key=lambda n: true[n])
    est_top = next(t.diff_sq for t in est.tensors if t.name == top)
    return (
        est.l2 / math.sqrt(sum(true.values())) - 1,
        math.sqrt(est_top / true[top]) - 1,
    )


def accuracy(trials: int) -> None:
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
    n = sum(p.numel() for p in model.parameters())
    print(f"\nsketch accuracy: {n / 1e6:.2f}M-parameter transformer layer, {trials} draws each")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with DriftProbe(model, root / "ref", every=1) as probe:
            probe.step(0)
        for kind in ("spread", "one_row"):
            for rel in (1e-6, 1e-2):
                errs = np.array(
                    [_perturbed_estimates(model, kind, rel, s, root) for s in range(trials)]
                )
                step_err, top_err = np.abs(errs[:, 0]), np.abs(errs[:, 1])
                print(
                    f"  {kind:8s} at {rel:.0e} of the norm: step distance error "
                    f"max {step_err.max():.2%} (median {np.median(step_err):.2%}); "
                    f"largest tensor's error max {top_err.max():.2%} "
                    f"(90th pct {np.percentile(top_err, 90):.2%})"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3, help="timed training steps and probe calls")
    ap.add_argument("--batch", type=int, default=64, help="rows per training batch")
    ap.add_argument("--trials", type=int, default=40, help="perturbations per accuracy case")
    args = ap.parse_args()
    overhead(args.steps, args.batch)
    accuracy(args.trials)


if __name__ == "__main__":
    main()

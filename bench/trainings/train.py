"""One training run: a real model, a real optimizer, checkpoints in a real layout."""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import nn

from .faults import Fault, Injector
from .models import ARCHS
from .save import save_checkpoint

STEPS, EVERY = 120, 12


@dataclass(frozen=True)
class Recipe:
    optimizer: str = "adamw"  # adamw | sgd
    lr: float = 2e-3
    weight_decay: float = 0.1
    clip: float | None = 1.0
    warmup: int = 10  # then cosine decay to 10%
    bf16: bool = False


@dataclass(frozen=True)
class Nondeterminism:
    """Real sources of round-off differences between two healthy runs of one setup."""

    threads: int = 1  # intra-op threads: parallel reductions split differently
    accum: int = 2  # micro-batches per step: the same gradient summed in other pieces
    order_seed: int = 0  # nonzero: micro-batches accumulated in a shuffled order
    onednn: bool = True  # oneDNN kernels on or off (convolutions, some matmuls)
    channels_last: bool = False  # NHWC kernels for the CNN

    def tag(self) -> str:
        return (
            f"t{self.threads}a{self.accum}o{self.order_seed}"
            f"{'' if self.onednn else 'N'}{'C' if self.channels_last else ''}"
        )


@dataclass(frozen=True)
class RunSpec:
    arch: str
    recipe: Recipe
    fmt: str  # pt | safetensors | hf | deepspeed | dcp | per-rank (ddp.py)
    nd: Nondeterminism = field(default_factory=Nondeterminism)
    fault: Fault | None = None
    steps: int = STEPS
    every: int = EVERY
    seed: int = 0  # the family's init and data seed

    def key(self) -> str:
        import hashlib

        blob = json.dumps(asdict(self), sort_keys=True, default=str).encode()
        return f"{self.arch}-{self.nd.tag()}-{hashlib.sha256(blob).hexdigest()[:10]}"


def _schedule(recipe: Recipe, steps: int) -> object:
    def factor(i: int) -> float:
        if i < recipe.warmup:
            return (i + 1) / recipe.warmup
        progress = (i - recipe.warmup) / max(1, steps - recipe.warmup)
        return 0.1 + 0.45 * (1 + math.cos(math.pi * progress))

    return factor


def train(spec: RunSpec, out: Path) -> None:
    """Train ``spec`` and write its checkpoints under ``out`` (every ``spec.every`` steps).
    The thread count and oneDNN switch it sets are process-wide: they are put back after,
    so that a test process training a run in-process computes everything else as before."""
    threads, onednn = torch.get_num_threads(), torch.backends.mkldnn.enabled
    torch.set_num_threads(spec.nd.threads)
    torch.backends.mkldnn.enabled = spec.nd.onednn
    try:
        _train(spec, out)
    finally:
        torch.set_num_threads(threads)
        torch.backends.mkldnn.enabled = onednn


def _train(spec: RunSpec, out: Path) -> None:
    arch, nd, recipe = ARCHS[spec.arch], spec.nd, spec.recipe
    torch.manual_seed(spec.seed)
    model = arch.build()
    if nd.channels_last:
        model = model.to(memory_format=torch.channels_last)
    model.train()
    if recipe.optimizer == "sgd":
        opt: torch.optim.Optimizer = torch.optim.SGD(
            model.parameters(), lr=recipe.lr, momentum=0.9, weight_decay=recipe.weight_decay
        )
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _schedule(recipe, spec.steps))  # type: ignore[arg-type]
    inject = Injector(spec.fault, model, opt)
    order = random.Random(nd.order_seed)
    for step, batch in zip(range(1, spec.steps + 1), arch.batches(spec.seed), strict=False):
        inject.step = step
        micro = _split(batch, nd.accum, nd.channels_last)
        if nd.order_seed:
            order.shuffle(micro)
        opt.zero_grad(set_to_none=True)
        total = len(batch[1]) if isinstance(batch, tuple) else len(batch)
        for mb in micro:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=recipe.bf16):
                loss = arch.loss(model, mb, total)
            loss.backward()
        update(model, opt, sched, inject, recipe.clip)
        if step % spec.every == 0:
            save_checkpoint(model, spec.fmt, out, step)


def update(
    model: nn.Module,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LRScheduler,
    inject: Injector,
    clip: float | None,
) -> None:
    """One optimizer step, with the injector's hooks on either side of the update (shared by
    the single-process and the data-parallel runs, so both corrupt the same moment)."""
    if clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip)
    inject.before_update()
    opt.step()
    inject.after_update()
    sched.step()


def _split(batch: object, parts: int, channels_last: bool) -> list[object]:
    if isinstance(batch, tuple):
        images, labels = batch
        if channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        return list(zip(images.chunk(parts), labels.chunk(parts), strict=True))
    assert isinstance(batch, torch.Tensor)
    return list(batch.chunk(parts))

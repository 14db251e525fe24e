"""Data-parallel runs: one model trained by DistributedDataParallel over gloo, one process per
rank, each rank saving its own checkpoint (``step_N/rank_k.pt``).

Every rank sees its shard of the family's batch; DDP all-reduces the gradient in the backward
of the last micro-batch, then every rank runs its own optimizer step. So a fault has two very
different places to strike (issue 9):

- before the all-reduce (``compute`` on the faulty rank's forward): the corrupted gradient is
  averaged into every replica alike; the replicas stay bitwise identical and only the
  reference shows the drift. No rank can be named from the weights.
- after it (``lane``, ``flip`` on the faulty rank's local update or weights): that rank's
  weights part from the other replicas', and it is the one to name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

from .faults import Injector
from .models import ARCHS
from .train import RunSpec, _schedule, _split, update


@dataclass(frozen=True)
class DdpSpec(RunSpec):
    world: int = 3  # three or more replicas: a majority to depart from
    faulty_rank: int = 1  # the rank ``fault`` strikes (ignored without a fault)

    def key(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True, default=str).encode()
        tag = self.nd.tag()
        return f"{self.arch}-ddp{self.world}-{tag}-{hashlib.sha256(blob).hexdigest()[:10]}"


def train_ddp(spec: DdpSpec, out: Path) -> None:
    """Train ``spec`` with ``spec.world`` gloo processes; checkpoints under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rendezvous = out / ".rendezvous"  # file:// init: no port to race other builds for
    rendezvous.unlink(missing_ok=True)
    try:
        mp.spawn(_rank, args=(spec, out, rendezvous), nprocs=spec.world, join=True)
    finally:
        rendezvous.unlink(missing_ok=True)


def _rank(rank: int, spec: DdpSpec, out: Path, rendezvous: Path) -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group(
        "gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=spec.world
    )
    try:
        _loop(rank, spec, out)
    finally:
        dist.destroy_process_group()


def _loop(rank: int, spec: DdpSpec, out: Path) -> None:
    arch, nd, recipe = ARCHS[spec.arch], spec.nd, spec.recipe
    torch.set_num_threads(nd.threads)
    torch.manual_seed(spec.seed)  # every replica starts from the same weights
    model = arch.build()
    model.train()
    ddp = DistributedDataParallel(model)
    assert recipe.optimizer == "adamw", "DDP runs use the GPT-2 family's recipe"
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _schedule(recipe, spec.steps))  # type: ignore[arg-type]
    inject = Injector(spec.fault if rank == spec.faulty_rank else None, model, opt)
    order = random.Random(nd.order_seed)
    for step, batch in zip(range(1, spec.steps + 1), arch.batches(spec.seed), strict=False):
        inject.step = step
        assert isinstance(batch, torch.Tensor)
        total = len(batch)
        micro = _split(batch.chunk(spec.world)[rank], nd.accum, False)
        if nd.order_seed:
            order.shuffle(micro)
        opt.zero_grad(set_to_none=True)
        for i, mb in enumerate(micro):
            last = i == len(micro) - 1
            # DDP averages over ranks; times world, every rank's share of the batch sum counts once.
            with ddp.no_sync() if not last else contextlib.nullcontext():
                loss = arch.loss(ddp, mb, total) * spec.world
                loss.backward()
        update(model, opt, sched, inject, recipe.clip)
        if step % spec.every == 0:
            folder = out / f"step_{step}"
            folder.mkdir(exist_ok=True)
            state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
            torch.save(state, folder / f"rank_{rank}.pt")

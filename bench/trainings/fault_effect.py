"""Does a fault change anything at all? A compute fault scales one channel of a layer's output
by 1 + eps; under bf16 autocast that output is bf16, whose rounding step is 2^-8 to 2^-7 of the
value, so any eps below 2^-9 rounds back to the very same bits. Such a run is a healthy rerun in
effect: no detector can see it, and none should. This measures it rather than assuming it: one
forward pass of the run's model on its first micro-batch, with the fault live, counts the
output elements the fault changed (the rounding depends only on the output's dtype, not on the
step, so the first batch speaks for every later one).
"""

from __future__ import annotations

import torch

from .faults import Injector
from .models import ARCHS
from .train import RunSpec, _split


def changes_output(spec: RunSpec) -> bool:
    """False when the run's fault is a compute fault that changed no element of its site's
    output; True for every other fault (lane faults and bit flips write fp32 weights and
    optimizer state directly)."""
    fault = spec.fault
    if fault is None or fault.kind != "compute":
        return fault is not None
    arch = ARCHS[spec.arch]
    torch.manual_seed(spec.seed)
    model = arch.build()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)  # the injector needs one; never stepped
    inject = Injector(fault, model, opt)
    inject.step = fault.onset
    batch = next(iter(arch.batches(spec.seed)))
    total = len(batch[1]) if isinstance(batch, tuple) else len(batch)
    micro = _split(batch, spec.nd.accum, spec.nd.channels_last)[0]
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=spec.recipe.bf16):
        arch.loss(model, micro, total)
    return inject.changed > 0

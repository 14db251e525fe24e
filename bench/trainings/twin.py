"""Does a fault change anything at all? Its run is compared with its twin: the run of the same
family with the same recipe and nondeterminism and no fault. Each is deterministic on one
machine, so they share every bit up to the onset (checked on every run on disk, 2026-12-07),
and a fault that leaves every checkpoint bit for bit as the twin wrote it changed nothing the
training kept. No detector can see such a run and none should: it is a healthy rerun in effect.

Two causes in the corpus:
- bf16 rounding: scaling a bf16 activation by 1 + eps below its rounding step (2^-8 to 2^-7 of
  the value) gives back the same bits;
- a dead unit: MobileBERT's fault channel is negative before its ReLU for every input by the
  onset, so scaling it, even doubling it, changes neither what the ReLU passes on nor any
  gradient. A count of the site's changed outputs (the check used before) misses this one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from denpex.checkpoints import find_checkpoints, open_checkpoint

from .corpus import Run


def twin(run: Run, family: list[Run]) -> Run:
    """The run of ``family`` that differs from ``run`` only by having no fault."""
    return next(r for r in family if r.spec.fault is None and r.spec.nd == run.spec.nd)


def same_weights(a: Path, b: Path) -> bool:
    """Whether two runs wrote the same steps, each with the same tensors bit for bit."""
    steps_a = {c.step: c.path for c in find_checkpoints(a)}
    steps_b = {c.step: c.path for c in find_checkpoints(b)}
    if not steps_a or steps_a.keys() != steps_b.keys():
        return False
    return all(_same_checkpoint(steps_a[s], steps_b[s]) for s in steps_a)


def _same_checkpoint(a: Path, b: Path) -> bool:
    ra, rb = open_checkpoint(a), open_checkpoint(b)
    try:
        if ra.tensors != rb.tensors:  # names, shapes, dtypes
            return False
        return all(
            _same_bits(ra.block(n, 0, m.rows), rb.block(n, 0, m.rows))
            for n, m in ra.tensors.items()
        )
    finally:
        ra.close()
        rb.close()


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    # Bits, not values: NaN == NaN here, and -0.0 != 0.0.
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))

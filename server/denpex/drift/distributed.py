"""`torchrun --nproc-per-node N -m denpex drift RUN --ref REF`: one comparison, N processes.

Under torchrun every rank runs the ordinary command. The tensors of each checkpoint step are
split among the ranks (greedily by bytes, in the order the comparison visits them, which
every rank sees identically); a rank reads and reduces only its own tensors and leaves
zeros for the others. At the end of each step one ``torch.distributed.all_reduce`` (SUM)
over a float64 matrix of every tensor's figures (squared sums, max |Δ|, counts, row/column
localisation) fills in everyone's zeros, so every rank holds the same exact per-tensor
numbers a single process computes (adding zeros is exact), and the step totals are summed
from them the same way. Statuses and notes of the few tensors whose comparison failed on
their owner travel in one ``all_gather_object``. gloo on CPU, NCCL when ``--device`` is
CUDA (each rank on its ``LOCAL_RANK`` GPU). Across nodes it is any torchrun job.

Only rank 0 writes the report to stdout; all ranks exit with the same code. torch is
imported only when torchrun's environment is present.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from denpex.drift.compare import Kernel, _precision_note
from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.readers import Reader

# Figures of a TensorDiff carried by the all_reduce, in this order.
_FIELDS = (
    "diff_sq",
    "ref_sq",
    "max_abs",
    "mismatched",
    "top_row",
    "top_row_share",
    "top_col",
    "top_col_share",
    "non_finite",
)
_COUNTS = ("mismatched", "top_row", "top_col", "non_finite")


def is_torchrun() -> bool:
    """True inside a process that torchrun (torch.distributed.run) started."""
    return "TORCHELASTIC_RUN_ID" in os.environ or all(
        k in os.environ for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    )


def _initialised() -> bool:
    dist = sys.modules.get("torch.distributed")
    return bool(
        dist is not None
        and dist.is_available()
        and dist.is_initialized()
        and dist.get_world_size() > 1
    )


def make_kernel(device: str) -> Kernel:
    """The comparison kernel: sharded across ranks when a process group is up."""
    if not _initialised():
        return Kernel(device)
    if device.startswith("cuda") and ":" not in device:
        device = f"cuda:{os.environ.get('LOCAL_RANK', '0')}"
    return ShardedKernel(device)


def combine(kernel: Kernel, diff: StepDiff) -> StepDiff:
    """A step compared with ``kernel``, completed across ranks when the kernel is sharded."""
    return kernel.combine(diff) if isinstance(kernel, ShardedKernel) else diff


class ShardedKernel(Kernel):
    """Reduces this rank's share of the tensors; ``combine`` completes each step."""

    def __init__(self, device: str) -> None:
        import torch.distributed as dist

        super().__init__(device)
        self._dist = dist
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()
        self._load = [0] * self.world
        self._owner: dict[str, int] = {}

    def _assign(self, name: str, nbytes: int) -> int:
        # Least-loaded rank so far; the same decision on every rank (same call sequence).
        if name not in self._owner:
            rank = min(range(self.world), key=lambda r: (self._load[r], r))
            self._load[rank] += nbytes
            self._owner[name] = rank
        return self._owner[name]

    def tensor(
        self, run: Reader, ref: Reader, name: str, target: str, on_bytes: Callable[[int], None]
    ) -> TensorDiff:
        a, b = run.tensors[name], ref.tensors[name]
        if self._assign(name, a.nbytes + b.nbytes) == self.rank:
            return super().tensor(run, ref, name, target, on_bytes)
        return TensorDiff(
            name=name,
            numel=b.numel,
            diff_sq=0.0,
            ref_sq=0.0,
            max_abs=0.0,
            mismatched=0,
            rows=b.rows,
            cols=b.cols,
            compared_dtype=target,
            note=_precision_note(a.dtype, b.dtype, target),
        )

    def combine(self, diff: StepDiff) -> StepDiff:
        """Sum every rank's figures into every rank's copy of the step (one all_reduce)."""
        import torch

        owned = [t for t in diff.tensors if t.name in self._owner]
        mine = [t for t in owned if self._owner[t.name] == self.rank]
        figures = torch.tensor(
            [
                [float(getattr(t, f)) if self._owner[t.name] == self.rank else 0.0 for f in _FIELDS]
                for t in owned
            ],
            dtype=torch.float64,
        ).reshape(len(owned), len(_FIELDS))
        dev = (
            torch.device(self.device) if self._dist.get_backend() == "nccl" else torch.device("cpu")
        )
        figures = figures.to(dev)
        self._dist.all_reduce(figures, op=self._dist.ReduceOp.SUM)
        for t, row in zip(owned, figures.cpu().tolist(), strict=True):
            for f, v in zip(_FIELDS, row, strict=True):
                setattr(t, f, int(v) if f in _COUNTS else v)
        # A comparison that failed on its owner (status/note) is rare and small: gather it.
        failed = {t.name: (t.status, t.note) for t in mine if t.status != "ok"}
        gathered: list[Any] = [None] * self.world
        self._dist.all_gather_object(gathered, failed)
        for part in gathered:
            for t in owned:
                if t.name in part:
                    t.status, t.note = part[t.name]
        return diff


@contextlib.contextmanager
def session(device: str) -> Iterator[int]:
    """Join torchrun's process group for one command; yields this rank (0 outside torchrun).

    Ranks other than 0 write nothing to stdout: rank 0 prints the report for all.
    """
    if not is_torchrun():
        yield 0
        return
    import torch
    import torch.distributed as dist

    cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl" if cuda else "gloo")
    rank = dist.get_rank()
    saved = sys.stdout
    try:
        if rank != 0:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - closed below
        yield rank
        # Every rank done before any tears gloo down: a rank leaving while a peer is still
        # connected can abort the peer. Not after an error: the others may never get here.
        dist.barrier()
    finally:
        if sys.stdout is not saved:
            sys.stdout.close()
            sys.stdout = saved
        dist.destroy_process_group()

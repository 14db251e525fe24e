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

Only rank 0 writes the report to stdout; all ranks exit with the same code.

Distributed mode is entered only under a real torchrun launch (torchrun's agent is the parent
process and set ``TORCHELASTIC_RUN_ID``) or when asked with ``--distributed``. ``RANK``,
``WORLD_SIZE`` and ``MASTER_ADDR`` alone are common in job shells: obeying them made a plain
``denpex drift`` open a store on every interface, resolve and connect to MASTER_ADDR and wait
for peers for half an hour. Under torchrun the agent owns the store; with ``--distributed``
rank 0 creates it, listening on MASTER_ADDR's address only (loopback when unset). torch is
imported only in distributed mode.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

from denpex.checkpoints.reader import TensorMeta
from denpex.drift.compare import Kernel
from denpex.drift.model import StepDiff
from denpex.errors import InputError

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


_LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch")
# --distributed outside torchrun: how long ranks wait for each other to join.
JOIN_TIMEOUT = datetime.timedelta(minutes=5)


def launched_by_torchrun() -> bool:
    """True inside a worker that torchrun started: its elastic agent is our parent process.
    The variables alone are not enough: a job shell, or a training script that runs
    ``denpex`` as a subprocess, passes them on."""
    if "TORCHELASTIC_RUN_ID" not in os.environ:
        return False
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as fh:
            parent = fh.read(4096).replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:  # no /proc (macOS): the agent's variables are all there is to go on
        return True
    return any(name in parent for name in _LAUNCHERS)


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

    def owns(self, run: TensorMeta, ref: TensorMeta) -> bool:
        return self._assign(ref.name, run.nbytes + ref.nbytes) == self.rank

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
def session(device: str, requested: bool = False) -> Iterator[int]:
    """Join a process group for one command; yields this rank (0 when not distributed).

    ``requested``: ``--distributed`` was given. Ranks other than 0 write nothing to stdout:
    rank 0 prints the report for all.
    """
    torchrun = launched_by_torchrun()
    if not (torchrun or requested):
        yield 0
        return
    import torch
    import torch.distributed as dist

    cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    if cuda:
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    backend = "nccl" if cuda else "gloo"
    if torchrun:
        dist.init_process_group(backend)
    else:
        rank, world = _rank_and_world()
        dist.init_process_group(
            backend, store=_store(rank, world), rank=rank, world_size=world, timeout=JOIN_TIMEOUT
        )
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


def _rank_and_world() -> tuple[int, int]:
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError) as exc:
        raise InputError(
            "--distributed outside torchrun needs RANK and WORLD_SIZE (integers) in the "
            "environment, and MASTER_PORT (MASTER_ADDR defaults to 127.0.0.1)"
        ) from exc
    if not 0 <= rank < world:
        raise InputError(f"--distributed: RANK {rank} is not within WORLD_SIZE {world}")
    return rank, world


def _store(rank: int, world: int) -> Any:
    """The rendezvous store; rank 0 listens on MASTER_ADDR's address only, never on all."""
    import torch.distributed as dist

    addr = os.environ.get("MASTER_ADDR") or "127.0.0.1"
    try:
        port = int(os.environ["MASTER_PORT"])
    except (KeyError, ValueError) as exc:
        raise InputError("--distributed: MASTER_PORT must be set to a port number") from exc
    listen = None
    if rank == 0:
        try:
            listen = socket.create_server((addr, port))
        except OSError as exc:
            raise InputError(f"--distributed: cannot listen on {addr}:{port}: {exc}") from exc
    try:
        return dist.TCPStore(
            addr,
            port,
            world,
            rank == 0,
            JOIN_TIMEOUT,
            master_listen_fd=listen.detach() if listen is not None else None,
        )
    except (RuntimeError, OSError) as exc:  # torch's DistStoreError derives from RuntimeError
        raise InputError(f"--distributed: no store at {addr}:{port}: {exc}") from exc

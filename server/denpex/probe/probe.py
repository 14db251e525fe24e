"""DriftProbe: fingerprints a model's parameters every N steps during training.

    probe = DriftProbe(model, "runs/exp1/fingerprints", every=100, group=dp_group)
    for step, batch in enumerate(loader):
        ...; optimizer.step(); probe.step(step)
    probe.finish()  # every rank, at the end of training (close() where a rank may have raised)

Each probed step appends one JSON line per rank (see ``records``) that ``denpex drift RUN
--ref REF`` and ``denpex replicas RUN`` read like checkpoints, and, with a data-parallel
``group``, checks that the replicas are still bitwise identical (see ``replica``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import torch
import torch.distributed as dist

from denpex.checkpoints.keys import normalise_key
from denpex.fingerprints.records import (
    AXIS_FOLDS,
    AXIS_SUB,
    FORMAT,
    RecordWriter,
    encode_sketch,
)
from denpex.probe import replica
from denpex.probe.sketch import BLOCK, Fingerprint, Sketcher

log = logging.getLogger("denpex.probe")


@contextlib.contextmanager
def _one_cpu_thread() -> Iterator[None]:
    """Run the probe's CPU work on one intra-op thread.

    The probe works in cache-sized chunks of cheap integer ops; torch's thread pool
    splits each op again and, on a busy machine, its threads wait for each other: measured
    66x slower with 2 threads than with 1 under load (20 s vs 0.3 s for 4M elements).
    The training loop's own setting is restored afterwards.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class ProbeOptions:
    """A probe's settings, as the framework callbacks take them before the model exists."""

    out_dir: str | None = None  # default: the framework's output directory + /denpex-fingerprints
    every: int = 100
    # A process group, or "world": the default group once training starts (the frameworks
    # initialise torch.distributed after the callback is built).
    group: Any = None
    raise_on_mismatch: bool = False

    def open(self, model: torch.nn.Module, framework_dir: str) -> DriftProbe:
        out = self.out_dir or os.path.join(framework_dir, "denpex-fingerprints")
        group = self.group
        if isinstance(group, str) and group == "world":
            group = dist.group.WORLD if dist.is_available() and dist.is_initialized() else None
        return DriftProbe(model, out, self.every, group, self.raise_on_mismatch)


class ReplicaMismatchError(RuntimeError):
    """Raised by ``probe.step`` with ``raise_on_mismatch=True`` (after the record is written)."""


class DriftProbe:
    def __init__(
        self,
        model: torch.nn.Module,
        out_dir: str | os.PathLike[str],
        every: int = 100,
        group: Any = None,
        raise_on_mismatch: bool = False,
        fsync: bool = False,
    ):
        if every < 1:
            raise ValueError("every must be >= 1")
        self.model = model
        self.every = every
        self.group = group
        self.raise_on_mismatch = raise_on_mismatch
        distributed = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank() if distributed else int(os.environ.get("RANK", 0))
        self.world_size = (
            dist.get_world_size() if distributed else int(os.environ.get("WORLD_SIZE", 1))
        )
        self.host = socket.gethostname()
        self._sketcher = Sketcher()
        self._writer = RecordWriter(out_dir, self.rank, fsync=fsync)
        self.path = self._writer.path
        # Local sketches of tensors at the last probe where every replica agreed (tie rule).
        self._agreed: dict[str, torch.Tensor] = {}
        self.last_replica: replica.ReplicaVerdict | None = None
        self.last_record_bytes = 0
        self._last_step: int | None = None

    def _parameters(self) -> list[tuple[str, torch.Tensor]]:
        seen: set[int] = set()
        out: list[tuple[str, torch.Tensor]] = []
        # Tied weights appear once (named_parameters already dedupes; keep it explicit).
        for name, p in self.model.named_parameters():
            if id(p) not in seen:
                seen.add(id(p))
                out.append((normalise_key(name), p))
        return out

    def step(self, step: int) -> dict[str, Any] | None:
        """Probe at every ``every``-th step; returns the record written, or None.

        A step probed just before is not probed again (gradient accumulation calls the
        framework hooks several times per optimizer step).
        """
        if step % self.every or step == self._last_step:
            return None
        self._last_step = step
        params = self._parameters()
        self._sketcher.begin(len(params))
        with _one_cpu_thread():
            prints = [self._sketcher.fingerprint(name, p) for name, p in params]
        verdict = self._check_replicas(prints) if self.group is not None else None
        record = self._record(step, prints, params, verdict)
        self.last_record_bytes = self._writer.append(record)
        if verdict is not None and not verdict.agree:
            log.warning("step %d: %s", step, verdict.message())
            if self.raise_on_mismatch:
                raise ReplicaMismatchError(f"step {step}: {verdict.message()}")
        return record

    def _check_replicas(self, prints: list[Fingerprint]) -> replica.ReplicaVerdict:
        names = [f.name for f in prints]
        hashes = replica.gather_hashes(names, [f.hash for f in prints], self.group)
        verdict, ties = replica.vote(names, hashes, replica.group_ranks(self.group))
        if ties:
            # Every rank saw the same hashes, so all agree on `ties` and join this collective.
            known = all(names[i] in self._agreed for i in ties)
            moves = torch.tensor(
                [
                    float(((prints[i].local - self._agreed[names[i]]) ** 2).sum()) if known else 0.0
                    for i in ties
                ]
            )
            gathered = replica.gather_moves(moves, self.group)
            replica.break_ties(verdict, names, hashes, ties, gathered if known else None)
        disagreeing = set(verdict.tensors)
        for f in prints:
            if f.name not in disagreeing:
                self._agreed[f.name] = f.local
        self.last_replica = replica.collect_odd_ranks(verdict)
        return self.last_replica

    def _record(
        self,
        step: int,
        prints: list[Fingerprint],
        params: list[tuple[str, torch.Tensor]],
        verdict: replica.ReplicaVerdict | None,
    ) -> dict[str, Any]:
        gpu = next((p.device.index for _, p in params if p.device.type == "cuda"), None)
        record: dict[str, Any] = {
            "step": step,  # first key: readers index files by it
            "format": FORMAT,
            "rank": self.rank,
            "world_size": self.world_size,
            "host": self.host,
            "local_gpu": gpu,
            "time": round(time.time(), 3),
            "sketch": {
                "local": self._sketcher.local_size,
                "global_per_tensor": self._sketcher.global_size,
                "block": BLOCK,
                "axis_folds": list(AXIS_FOLDS),
                "axis_sub": AXIS_SUB,
            },
            "global": encode_sketch(self._sketcher.global_sketch().numpy()),
            "tensors": [
                {
                    "name": f.name,
                    "shape": list(f.shape),
                    "dtype": f.dtype,
                    "norm": f.norm,
                    "max": f.max_abs,
                    "hash": f"{f.hash:016x}",
                    "sk": encode_sketch(f.local.numpy()),
                    **({"exact": True} if f.exact else {}),
                    **({"ax": encode_sketch(f.axes.numpy())} if f.axes is not None else {}),
                }
                for f in prints
            ],
        }
        if verdict is not None:
            record["replica"] = verdict.to_json()
        return record

    def close(self) -> None:
        """Close the fingerprint file. No collective: each replica check has finished, and
        the backend has let go of its tensors, before ``step`` returns (see
        ``replica.wait_released``), so the process group may be destroyed at once, or the
        interpreter exit, on every rank in any order; never calling close() is safe too."""
        self._writer.close()

    def finish(self) -> None:
        """The end of training, on every rank: close, then let the backend settle.

        One small collective (``replica.settle_backend``), so every rank must reach it; a rank
        that raised does not, which is why ``close`` has none. It also covers collectives that
        are not the probe's: torch's own DDP gradient all-reduce in the steps after the last
        probe aborts a rank at exit now and then with no probe attached (gloo, 3 processes,
        GIL switch interval 0.5 s: 4 runs in 6; with this settle 0 in 8). The callbacks call
        it at the framework's end-of-training hook.
        """
        self.close()
        if dist.is_available() and dist.is_initialized():
            replica.settle_backend(dist.group.WORLD)

    def __enter__(self) -> DriftProbe:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

"""Per-rank steps compared, each step's files opened and read once (``rank_pass``): every
rank against its reference and, when the ranks are replicas, against each other. Also
`denpex replicas` (the ranks alone). Results go through the step cache like any step's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from denpex.checkpoints.discover import Checkpoint
from denpex.checkpoints.layouts import open_checkpoint
from denpex.checkpoints.reader import Reader
from denpex.drift import distributed
from denpex.drift.cache import StepCache, fingerprint
from denpex.drift.compare import Kernel
from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.per_rank import RankStep
from denpex.drift.rank_pass import compare_step
from denpex.errors import InputError


def open_reader(
    path: Path, key: str | None, what: str, step: int, warnings: list[str]
) -> Reader | None:
    try:
        return open_checkpoint(path, key)
    except InputError as exc:
        warnings.append(f"step {step}: {what} not compared: {exc}")
        return None


def compare_replica_steps(
    cps: list[Checkpoint],
    *,
    kernel: Kernel,
    key: str | None,
    tolerance: float,
    cache: StepCache,
    warnings: list[str],
    on_bytes: Callable[[int], None],
) -> list[ReplicaStep]:
    """Each step's replicas against their majority. A rank of the job with no checkpoint at
    a step, or an unreadable one, is ``absent`` there: it disagrees, it is never skipped."""
    steps = [RankStep(cp.step, cp.ranks, {}, replicas=True) for cp in cps]
    found = compare_rank_steps(
        steps, kernel=kernel, key=key, tolerance=tolerance, cache=cache, warnings=warnings,
        on_bytes=on_bytes, job=sorted({r for cp in cps for r in cp.ranks}),
    )  # fmt: skip
    return [r.replicas for r in found if r.replicas is not None]


@dataclass
class RankResult:
    """One step of a per-rank run compared: each rank against its reference, and the ranks
    against their majority when they are replicas."""

    step: int
    against: dict[int, StepDiff]
    replicas: ReplicaStep | None


def compare_rank_steps(
    steps: list[RankStep],
    *,
    kernel: Kernel,
    key: str | None,
    tolerance: float,
    cache: StepCache,
    warnings: list[str],
    on_bytes: Callable[[int], None],
    job: list[int] | None = None,
) -> list[RankResult]:
    """Per-rank steps, each file read once for both comparisons (``rank_pass``). ``job``:
    every rank of the run (default: the step's own); one without a checkpoint at a step, or
    with an unreadable one, is ``absent`` from that step's replicas. Unreadable checkpoints
    become warnings, and a rank with one has no comparison with its reference there."""
    out: list[RankResult] = []
    warned = False
    for st in steps:
        ranks = job or sorted(st.run)
        replicas = st.replicas and len(ranks) >= 2
        if st.replicas and not replicas and not warned:
            warnings.append(f"fewer than two replicas (ranks {ranks})")
            warned = True
        if not replicas and not st.ref:
            continue
        run_fp = {r: fingerprint(p) for r, p in st.run.items()}
        keys = {r: f"ref|{key}|{run_fp[r]}||{fingerprint(p)}" for r, p in st.ref.items()}
        replica_key = f"replicas|{key}|{tolerance}|" + "||".join(
            f"{r}={fp}" for r, fp in run_fp.items()
        )
        absent = {r: f"no checkpoint at step {st.step}" for r in ranks if r not in st.run}
        against = {r: d for r, k in keys.items() if (d := cache.get_step(k)) is not None}
        replica = cache.get_replicas(replica_key) if replicas else None
        if len(against) < len(keys) or (replicas and replica is None):
            against, replica, whole = _rank_pass(
                st, replicas, absent, kernel=kernel, key=key, tolerance=tolerance,
                warnings=warnings, on_bytes=on_bytes,
            )  # fmt: skip
            for r, diff in against.items():
                cache.put(keys[r], diff)
            if replica is not None and whole:  # the cache keeps no absence: whole steps only
                cache.put(replica_key, replica)
        if replica is not None:
            replica.absent = absent
        out.append(RankResult(st.step, against, replica))
    return out


def _rank_pass(
    st: RankStep,
    replicas: bool,
    absent: dict[int, str],
    *,
    kernel: Kernel,
    key: str | None,
    tolerance: float,
    warnings: list[str],
    on_bytes: Callable[[int], None],
) -> tuple[dict[int, StepDiff], ReplicaStep | None, bool]:
    """One step's files opened once and compared; whether every rank's file opened."""
    readers: dict[int, Reader] = {}
    refs: dict[Path, Reader | None] = {}
    try:
        for rank, path in st.run.items():
            try:
                readers[rank] = open_checkpoint(path, key)
            except InputError as exc:  # each comparison that loses the file says so
                if rank in st.ref:
                    warnings.append(f"step {st.step}: run checkpoint not compared: {exc}")
                if replicas:
                    warnings.append(f"step {st.step}: rank {rank} not compared: {exc}")
                absent[rank] = f"checkpoint at step {st.step} unreadable"
        ref: dict[int, Reader] = {}
        for rank, path in st.ref.items():
            if path not in refs:
                refs[path] = open_reader(path, key, "reference checkpoint", st.step, warnings)
            if rank in readers and refs[path] is not None:
                ref[rank] = refs[path]  # type: ignore[assignment]
        if not readers:
            return {}, (ReplicaStep(step=st.step) if replicas else None), False
        against, replica = compare_step(
            st.step, readers, ref, kernel, replicas=replicas, tolerance=tolerance,
            on_bytes=on_bytes,
        )  # fmt: skip
    finally:
        for reader in (*readers.values(), *refs.values()):
            if reader is not None:
                reader.close()
    # A sharded kernel compared its share: each rank's step completed across processes.
    against = {r: distributed.combine(kernel, d) for r, d in sorted(against.items())}
    return against, replica, len(readers) == len(st.run)


__all__ = ["RankResult", "compare_rank_steps", "compare_replica_steps", "open_reader"]

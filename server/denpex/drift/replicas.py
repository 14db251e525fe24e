"""Replica mode: each data-parallel replica against the majority of its peers.

Healthy DDP replicas hold bitwise identical weights (every rank applies the same
all-reduced gradient), so each tensor is hashed exactly on every rank and the largest
group of equal hashes is the majority. A rank outside it is compared with the majority
tensor like a run with its reference. ``tolerance`` forgives a rank whose max |Δ| stays
within it (tied or separately synced weights can differ by ~1e-10 in healthy jobs).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable

import numpy as np

from denpex.checkpoints.reader import Reader, TensorMeta
from denpex.drift.compare import Kernel, blocks, compare_pair, to_compared
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff
from denpex.majority import vote


def _fingerprint(
    reader: Reader, name: str, on_bytes: Callable[[int], None]
) -> tuple[bytes, float, int]:
    """Exact content hash of the stored bytes, the squared norm (float64) and the count of
    non-finite elements (NaN/Inf hash equal on every rank, yet agree on nothing)."""
    meta = reader.tensors[name]
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{meta.dtype}{meta.shape}".encode())
    norm_sq = 0.0
    non_finite = 0
    for r0, r1 in blocks(meta):
        raw = np.ascontiguousarray(reader.block(name, r0, r1))
        h.update(memoryview(raw).cast("B"))  # type: ignore[arg-type]
        x = to_compared(raw, meta.dtype, meta.dtype)
        part = float(np.multiply(x, x, dtype=np.float64).sum())
        if not math.isfinite(part):  # rare: count only then
            non_finite += int(np.count_nonzero(~np.isfinite(x)))
        norm_sq += part
        reader.release(name, r0, r1)
        on_bytes(raw.nbytes)
    return h.digest(), norm_sq, non_finite


def compare_replicas(
    step: int,
    readers: dict[int, Reader],
    kernel: Kernel,
    tolerance: float = 0.0,
    on_bytes: Callable[[int], None] = lambda n: None,
) -> ReplicaStep:
    out = ReplicaStep(
        step=step, ranks={r: StepDiff(step=step, run_path=rd.path) for r, rd in readers.items()}
    )
    for rd in readers.values():
        out.warnings.extend(rd.warnings)
    names = sorted(set().union(*(rd.tensors for rd in readers.values())))
    for name in names:
        holders = {r: rd for r, rd in readers.items() if name in rd.tensors}
        prints = {r: _fingerprint(rd, name, on_bytes) for r, rd in holders.items()}
        result = vote({r: digest for r, (digest, _, _) in prints.items()})
        majority = result.reference
        if result.tied:
            split = " | ".join(",".join(map(str, g)) for g in result.sides)
            out.ties.append(
                f"step {step}: {name}: no majority among ranks ({split}); "
                f"compared with rank {majority[0]}'s"
            )
            out.warnings.append(out.ties[-1])
        rep = majority[0]
        _, ref_sq, rep_non_finite = prints[rep]
        meta = readers[rep].tensors[name]
        # Presence has a majority too: a tensor most ranks hold is missing on the others; one
        # only a minority holds is the holders' oddity. A tie names the ranks without it.
        held_by_most = 2 * len(holders) >= len(readers)
        for r in readers:
            diff_out = out.ranks[r]
            if r not in holders:
                if held_by_most:
                    diff_out.tensors.append(
                        TensorDiff.zero(
                            meta,
                            status="missing_in_run",
                            note=f"not on rank {r}",
                            compared_dtype="float32",
                        )
                    )
                continue
            if not held_by_most:
                only = ",".join(map(str, sorted(holders)))
                diff_out.tensors.append(
                    TensorDiff.zero(
                        meta,
                        status="missing_in_ref",
                        note=f"only on ranks {only}, not the majority",
                        compared_dtype="float32",
                    )
                )
                continue
            if r in majority:
                if rep_non_finite:
                    diff_out.tensors.append(_non_finite(meta, ref_sq, rep_non_finite))
                else:
                    diff_out.tensors.append(TensorDiff.zero(meta, ref_sq=ref_sq))
                continue
            td = compare_pair(
                readers[r], readers[rep], readers[r].tensors[name], meta, kernel, on_bytes
            )
            if td.status == "ok" and not td.non_finite and td.max_abs <= tolerance:
                td = TensorDiff.zero(
                    meta, ref_sq=ref_sq, note=f"within tolerance (max |Δ| {td.max_abs:.3g})"
                )
            diff_out.tensors.append(td)
    return out


def _non_finite(meta: TensorMeta, ref_sq: float, count: int) -> TensorDiff:
    """A rank in the majority whose tensor holds NaN/Inf: bitwise equal, yet no agreement."""
    return TensorDiff(
        name=meta.name,
        numel=meta.numel,
        diff_sq=math.nan,
        ref_sq=ref_sq,
        max_abs=math.nan,
        mismatched=count,
        rows=meta.rows,
        cols=meta.cols,
        compared_dtype=meta.dtype,
        note=f"{count} non-finite value(s) (NaN/Inf)",
        non_finite=count,
    )


__all__ = ["compare_replicas"]

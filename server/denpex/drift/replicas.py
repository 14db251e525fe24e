"""Replica mode: each data-parallel replica against the majority of its peers.

Healthy DDP replicas hold bitwise identical weights (every rank applies the same
all-reduced gradient), so each tensor is hashed exactly on every rank and the largest
group of equal hashes is the majority. A rank outside it is compared with the majority
tensor like a run with its reference. ``tolerance`` forgives a rank whose max |Δ| stays
within it (tied or separately synced weights can differ by ~1e-10 in healthy jobs).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from denpex.drift.compare import Kernel, blocks, compare_pair, to_compared
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff
from denpex.drift.readers import Reader, TensorMeta


def _fingerprint(reader: Reader, name: str, on_bytes: Callable[[int], None]) -> tuple[bytes, float]:
    """Exact content hash of the stored bytes, and the squared norm (float64)."""
    meta = reader.tensors[name]
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{meta.dtype}{meta.shape}".encode())
    norm_sq = 0.0
    for r0, r1 in blocks(meta):
        raw = np.ascontiguousarray(reader.block(name, r0, r1))
        h.update(memoryview(raw).cast("B"))  # type: ignore[arg-type]
        x = to_compared(raw, meta.dtype, meta.dtype)
        norm_sq += float(np.multiply(x, x, dtype=np.float64).sum())
        reader.release(name, r0, r1)
        on_bytes(raw.nbytes)
    return h.digest(), norm_sq


def _agreeing(meta: TensorMeta, ref_sq: float, note: str = "") -> TensorDiff:
    return TensorDiff(
        name=meta.name,
        numel=meta.numel,
        diff_sq=0.0,
        ref_sq=ref_sq,
        max_abs=0.0,
        mismatched=0,
        rows=meta.rows,
        cols=meta.cols,
        compared_dtype=meta.dtype,
        note=note,
    )


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
        groups: dict[bytes, list[int]] = {}
        for r, (digest, _) in prints.items():
            groups.setdefault(digest, []).append(r)
        ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
        majority = ordered[0]
        if len(ordered) > 1 and len(ordered[1]) == len(majority):
            split = " | ".join(",".join(map(str, g)) for g in ordered)
            out.warnings.append(
                f"step {step}: {name}: no majority among ranks ({split}); "
                f"compared with rank {majority[0]}'s"
            )
        rep = majority[0]
        ref_sq = prints[rep][1]
        meta = readers[rep].tensors[name]
        for r in readers:
            diff_out = out.ranks[r]
            if r not in holders:
                diff_out.tensors.append(
                    TensorDiff(
                        name,
                        meta.numel,
                        0.0,
                        0.0,
                        0.0,
                        0,
                        status="missing_in_run",
                        note=f"not on rank {r}",
                    )
                )
                continue
            if r in majority:
                diff_out.tensors.append(_agreeing(meta, ref_sq))
                continue
            td = compare_pair(
                readers[r], readers[rep], readers[r].tensors[name], meta, kernel, on_bytes
            )
            if td.status == "ok" and td.max_abs <= tolerance:
                td = _agreeing(meta, ref_sq, f"within tolerance (max |Δ| {td.max_abs:.3g})")
            diff_out.tensors.append(td)
    return out


__all__ = ["compare_replicas"]

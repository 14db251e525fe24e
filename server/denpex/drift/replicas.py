"""Replica mode: each data-parallel replica against the majority of its peers.

Healthy DDP replicas hold bitwise identical weights (every rank applies the same
all-reduced gradient), so the ranks holding equal bytes of a tensor form a side and the
largest side is the majority. A rank outside it is compared with the majority tensor like a
run with its reference. ``tolerance`` forgives a rank whose max |Δ| stays within it (tied or
separately synced weights can differ by ~1e-10 in healthy jobs). The tensors are read and
compared in ``rank_pass``, each file once; this module turns that into each rank's verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from denpex.checkpoints.reader import TensorMeta
from denpex.drift.model import TensorDiff, columns
from denpex.majority import vote


@dataclass(frozen=True)
class Print:
    """What the vote needs of one rank's tensor: a signature equal exactly when the stored
    tensors are bitwise equal (dtype, shape and bytes), its squared norm (float64) and its
    count of non-finite elements (NaN/Inf are equal on every rank, yet agree on nothing)."""

    signature: Hashable
    norm_sq: float
    non_finite: int


def replica_entries(
    step: int,
    name: str,
    metas: dict[int, TensorMeta],
    prints: dict[int, Print],
    ranks: list[int],
    pair: Callable[[int, int], TensorDiff],
    tolerance: float,
) -> tuple[dict[int, TensorDiff], str]:
    """Tensor ``name`` of every rank of ``ranks`` against the majority: ``metas`` and
    ``prints`` of the ranks holding it, ``pair(r, m)`` compares r with m. Returns the entries
    by rank and, when the sides tie, the warning saying so."""
    out: dict[int, TensorDiff] = {}
    tie = ""
    result = vote({r: p.signature for r, p in prints.items()})
    majority = result.reference
    if result.tied:
        split = " | ".join(",".join(map(str, g)) for g in result.sides)
        tie = (
            f"step {step}: {name}: no majority among ranks ({split}); "
            f"compared with rank {majority[0]}'s"
        )
    rep = majority[0]
    meta = metas[rep]
    # Presence has a majority too: a tensor most ranks hold is missing on the others; one
    # only a minority holds is the holders' oddity. A tie names the ranks without it.
    held_by_most = 2 * len(metas) >= len(ranks)
    for r in ranks:
        if r not in metas:
            if held_by_most:
                out[r] = TensorDiff.zero(
                    meta, status="missing_in_run", note=f"not on rank {r}", compared_dtype="float32"
                )
            continue
        if not held_by_most:
            only = ",".join(map(str, sorted(metas)))
            out[r] = TensorDiff.zero(
                meta,
                status="missing_in_ref",
                note=f"only on ranks {only}, not the majority",
                compared_dtype="float32",
            )
        elif r in majority:
            p = prints[rep]
            out[r] = (
                _non_finite(meta, p.norm_sq, p.non_finite)
                if p.non_finite
                else TensorDiff.zero(meta, ref_sq=p.norm_sq)
            )
        else:
            td = pair(r, rep)
            if td.status == "ok" and not td.non_finite and td.max_abs <= tolerance:
                td = TensorDiff.zero(
                    meta,
                    ref_sq=prints[rep].norm_sq,
                    note=f"within tolerance (max |Δ| {td.max_abs:.3g})",
                )
            out[r] = td
    return out, tie


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
        cols=columns(meta.shape),
        compared_dtype=meta.dtype,
        note=f"{count} non-finite value(s) (NaN/Inf)",
        non_finite=count,
    )


__all__ = ["Print", "replica_entries"]

"""Replica check: data-parallel replicas must hold bitwise-identical parameters.

In a healthy DDP job every replica applies the same all-reduced gradient with the same
optimizer, so parameters stay bitwise equal; a corrupted *local* optimizer update or corrupted
resident memory breaks that on one rank (a fault in forward/backward does not: its gradient
is all-reduced into every replica alike, and only a reference run shows it).

Per probe, each rank contributes its per-tensor 64-bit hashes to one ``all_gather`` over the
DP group. Per tensor, the hash held by more than half of the ranks is the reference and the
other ranks are the odd ones out. Without such a majority (two replicas, or a 2-2 split) the
hashes alone cannot tell which side is wrong; the tie rule then asks which side *moved
farthest* from the state all ranks last agreed on, using the local sketches (one more small
``all_gather``, only on such a tie): a fault adds displacement on top of the shared update,
so the faulty side is usually the one that moved more. It is a heuristic (a fault that
shrinks updates defeats it) and is reported as such; three or more replicas give a real vote.
Before any agreement has been recorded, the largest side is taken as the reference (among
equally large ones the side holding the lowest rank), and the report says so. The vote and
its tie rules are ``denpex.majority``'s, shared with ``denpex replicas``.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from denpex import majority

_U64 = 1 << 64


@dataclass
class ReplicaVerdict:
    """The outcome of one replica check, as stored in the record's ``replica`` field."""

    ranks: list[int]  # global ranks of the group, in group order
    odd_ranks: list[int] = field(default_factory=list)
    tensors: dict[str, list[int]] = field(default_factory=dict)  # tensor -> odd ranks
    rule: str = "agree"  # agree | majority | tie-moved-farthest | tie-lowest-rank-reference

    @property
    def agree(self) -> bool:
        return not self.odd_ranks

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.ranks,
            "agree": self.agree,
            "odd_ranks": self.odd_ranks,
            "tensors": self.tensors,
            "rule": self.rule,
        }

    def message(self, limit: int = 8) -> str:
        names = sorted(self.tensors)
        shown = ", ".join(names[:limit]) + (
            f" and {len(names) - limit} more" if len(names) > limit else ""
        )
        who = ", ".join(str(r) for r in self.odd_ranks)
        return (
            f"replica mismatch: rank {who} differs from the other data-parallel replicas "
            f"in {len(names)} tensor(s): {shown} (rule: {self.rule})"
        )


def _collective_device(group: Any) -> torch.device:
    # NCCL only moves CUDA tensors; gloo (and the rest) take CPU tensors.
    if dist.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


# How long to wait for the backend to let go of a finished collective's tensors (normally
# microseconds with gloo; NCCL's watchdog polls every ~100 ms).
RELEASE_TIMEOUT_S = 10.0


def _all_gather(t: torch.Tensor, group: Any) -> list[torch.Tensor]:
    dev = _collective_device(group)
    t = t.to(dev)
    out = [torch.empty_like(t) for _ in range(dist.get_world_size(group))]
    dist.all_gather(out, t, group=group)
    wait_released([t, *out])
    return [o.cpu() for o in out]


def wait_released(tensors: list[torch.Tensor], timeout: float = RELEASE_TIMEOUT_S) -> None:
    """Wait (at most ``timeout``) until no backend thread holds a reference to ``tensors``.

    A collective returns once its data has arrived, but the backend's own thread (gloo's
    worker, NCCL's watchdog) drops the work object, and with it its references to these
    tensors, a moment later. Dropping a C++ reference to a tensor that Python also holds
    takes the GIL. When the probe ran at the last step and the script then ends (close(),
    destroy_process_group(), interpreter exit), that thread can still be waiting for the
    GIL when the interpreter finalises; Python then ends the thread inside C++ code and the
    process aborts ("terminate called without an active exception", exit -6). Waiting here,
    with the GIL released while sleeping, means that when the probe returns no thread holds
    anything of its: any teardown order the user writes is safe.
    """
    if not hasattr(torch.Tensor, "_use_count"):  # torch < 2.3: nothing to observe
        return
    deadline = time.monotonic() + timeout
    while any(t._use_count() > 1 for t in tensors) and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.0002)  # releases the GIL for the thread that is letting go


def settle_backend(group: Any) -> None:
    """Let the backend drop every finished collective's tensors before the script may end.

    ``wait_released`` covers the probe's own collectives; a framework's collectives after
    the last probe are not ours to observe (HF's Trainer all-gathers its FLOP count after
    the last step, and that alone aborts a rank at exit now and then: 4 runs in 4 under a
    raised GIL switch interval, with no probe attached). One small collective of our own,
    waited for until released, gives a thread still dropping an earlier one the GIL and
    the time to do so. Every rank must call it (the callbacks do, at the end of training).
    """
    _all_gather(torch.zeros(1), group)
    time.sleep(0.01)  # GIL released: a thread that just woke takes it now, not at exit


def gather_hashes(names: list[str], hashes: list[int], group: Any) -> list[list[int]]:
    """Every rank's hashes, in group order. The first word guards against different models."""
    guard = int.from_bytes(
        hashlib.blake2b("\0".join(names).encode(), digest_size=8).digest(), "little"
    )
    words = [(h if h < 1 << 63 else h - _U64) for h in [guard, *hashes]]
    gathered = _all_gather(torch.tensor(words, dtype=torch.int64), group)
    out = [[int(v) % _U64 for v in g.tolist()] for g in gathered]
    if any(g[0] != out[0][0] for g in out):
        raise RuntimeError("replica check: the ranks of the group hold different parameter lists")
    return [g[1:] for g in out]


def vote(
    names: list[str], hashes: list[list[int]], ranks: list[int]
) -> tuple[ReplicaVerdict, list[int]]:
    """Majority vote per tensor. Returns the verdict so far and the indices of tied tensors."""
    verdict = ReplicaVerdict(ranks=ranks)
    ties: list[int] = []
    for i, name in enumerate(names):
        result = majority.vote({g: h[i] for g, h in enumerate(hashes)})
        if len(result.sides) == 1:
            continue
        if result.strict:
            verdict.tensors[name] = [ranks[g] for g in result.odd]
            verdict.rule = "majority"
        else:
            ties.append(i)
    return verdict, ties


def break_ties(
    verdict: ReplicaVerdict,
    names: list[str],
    hashes: list[list[int]],
    ties: list[int],
    moved_sq: list[list[float]] | None,
) -> None:
    """Name the odd side of tensors without a majority (see the module docstring).

    ``moved_sq[g][j]``: squared sketch distance of group member g's tensor ``ties[j]`` from
    the last agreed state, or None when there was no agreed state for some tied tensor.
    """
    for j, i in enumerate(ties):
        column = {g: h[i] for g, h in enumerate(hashes)}
        if moved_sq is None:
            result = majority.vote(column)
            verdict.rule = "tie-lowest-rank-reference"
        else:

            def side_move(members: list[int], j: int = j) -> float:
                return sum(moved_sq[g][j] for g in members) / len(members)

            result = majority.vote(column, moved=side_move)
            if verdict.rule != "majority":
                verdict.rule = "tie-moved-farthest"
        verdict.tensors[names[i]] = [verdict.ranks[g] for g in result.odd]


def collect_odd_ranks(verdict: ReplicaVerdict) -> ReplicaVerdict:
    """Fill ``odd_ranks``: every rank outvoted on at least one tensor."""
    verdict.odd_ranks = sorted({r for odd in verdict.tensors.values() for r in odd})
    return verdict


def gather_moves(moves: torch.Tensor, group: Any) -> list[list[float]]:
    """All ranks' squared moves of the tied tensors (one small all_gather)."""
    return [g.tolist() for g in _all_gather(moves.to(torch.float64), group)]


def group_ranks(group: Any) -> list[int]:
    """Global ranks of the group in group order."""
    return list(dist.get_process_group_ranks(group))

"""One read of a per-rank step: each rank against its reference, and the ranks against each
other, fed from the same blocks.

A data-parallel run saves one checkpoint per rank (``step_400/rank_0.pt`` ... ``rank_3.pt``).
Compared with its reference rank by rank, and rank against rank as `denpex replicas` does,
each file used to be read once per comparison (and a replica apart from the majority once
more). Here each tensor is read block by block, every file's block once, and every comparison
is fed from it: memory holds one row block per file, never a checkpoint.

Within a block, files holding equal bytes form one group, and the kernel reduces each
distinct pair of groups once: healthy replicas against a reference whose ranks agree too cost
one reduction per block whatever the rank count. Equal bytes give equal figures, so every
result is the one comparing that pair on its own gives, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from denpex.checkpoints.reader import Reader, TensorMeta
from denpex.drift.compare import (
    READ_ERRORS,
    Kernel,
    Partial,
    Sums,
    assemble_step,
    blocks,
    compared_dtype,
    not_comparable,
    not_owned,
    unreadable,
)
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff
from denpex.drift.replicas import Print, replica_entries

# A file taking part in a tensor's pass: ("run", rank) or ("ref", index of its reader).
Part = tuple[str, int]
OnBytes = Callable[[int], None]


def compare_step(
    step: int,
    run: dict[int, Reader],
    ref: dict[int, Reader],
    kernel: Kernel,
    *,
    replicas: bool,
    tolerance: float = 0.0,
    on_bytes: OnBytes = lambda n: None,
) -> tuple[dict[int, StepDiff], ReplicaStep | None]:
    """Each rank of ``run`` against ``ref[rank]`` (ranks without one are not compared; one
    reader may serve several ranks), and with ``replicas`` the ranks against their majority
    (``tolerance`` as `denpex replicas`)."""
    refs: list[Reader] = []
    for reader in ref.values():
        if all(reader is not r for r in refs):
            refs.append(reader)
    ref_of = {
        rank: next(i for i, r in enumerate(refs) if r is reader) for rank, reader in ref.items()
    }
    names = sorted(set().union(*(r.tensors for r in (*run.values(), *refs))))
    against: dict[int, dict[str, TensorDiff]] = {rank: {} for rank in ref}
    out = ReplicaStep(step=step) if replicas else None
    if out is not None:
        out.ranks = {r: StepDiff(step=step, run_path=rd.path) for r, rd in run.items()}
        for rd in run.values():
            out.warnings.extend(rd.warnings)
    for name in names:
        result = TensorPass(name, run, refs, ref_of, kernel, replicas, on_bytes)
        for rank, diff in result.against.items():
            against[rank][name] = diff
        if out is not None and result.metas:
            entries, tie = replica_entries(
                step, name, result.metas, result.prints, list(run),
                result.replica_pair, tolerance,
            )  # fmt: skip
            for rank, diff in entries.items():
                out.ranks[rank].tensors.append(diff)
            if tie:
                out.ties.append(tie)
                out.warnings.append(tie)
    steps = {
        rank: assemble_step(run[rank], reader, step, _lookup(against[rank]))
        for rank, reader in ref.items()
    }
    return steps, out


def _lookup(diffs: dict[str, TensorDiff]) -> Callable[[TensorMeta, TensorMeta], TensorDiff]:
    return lambda a, b: diffs[a.name]


@dataclass
class _Span:
    """What one row block of a tensor gave, folded in block order by ``TensorPass``."""

    r0: int
    rows: int
    label: dict[Part, int] = field(default_factory=dict)  # part -> its equal-bytes group
    norms: dict[int, tuple[float, int]] = field(default_factory=dict)  # run group -> norm
    cross: dict[tuple[int, int], Partial | Exception] = field(default_factory=dict)
    selfs: dict[int, Partial | Exception] = field(default_factory=dict)  # non-finite groups
    against: dict[tuple[int, int], Partial | Exception] = field(default_factory=dict)
    errors: dict[Part, Exception] = field(default_factory=dict)


class TensorPass:
    """One tensor of a step through every file that holds it, each block read once.

    ``against``: rank -> its TensorDiff against its reference; a tensor that cannot be read
    is ``unreadable`` there. With replicas: ``metas`` (the ranks holding the tensor),
    ``prints`` (what the majority vote needs of each) and ``replica_pair(r, m)``, rank r
    against rank m. The replicas must all be read: a rank's tensor that cannot be raises its
    error (one line), as `denpex replicas` always has.
    """

    def __init__(
        self,
        name: str,
        run: dict[int, Reader],
        refs: list[Reader],
        ref_of: dict[int, int],
        kernel: Kernel,
        replicas: bool,
        on_bytes: OnBytes,
    ) -> None:
        self.name, self.kernel, self.on_bytes = name, kernel, on_bytes
        self.metas = {r: rd.tensors[name] for r, rd in run.items() if name in rd.tensors}
        self.against: dict[int, TensorDiff] = {}
        self.prints: dict[int, Print] = {}
        self._pairs: dict[tuple[int, int], Sums] = {}
        self._pair_errors: dict[tuple[int, int], Exception] = {}
        self._readers: dict[Part, Reader] = {("run", r): rd for r, rd in run.items()}
        self._readers.update({("ref", i): rd for i, rd in enumerate(refs)})
        # The reference comparisons that read (others are settled from the metadata).
        pairs: dict[int, Part] = {}
        for rank, a in self.metas.items():
            b = refs[ref_of[rank]].tensors.get(name) if rank in ref_of else None
            if b is None:
                continue  # missing in the reference: the step's assembly says so
            early = not_comparable(a, b)
            if early is not None:
                self.against[rank] = early
            elif not kernel.owns(a, b):
                self.against[rank] = not_owned(a, b)
            else:
                pairs[rank] = ("ref", ref_of[rank])
        reading = {("run", r) for r in pairs} | set(pairs.values())
        if replicas:
            reading |= {("run", r) for r in self.metas}
        unread = [p for p in self._readers if p not in reading and name in self._readers[p].tensors]
        on_bytes(sum(self._meta(p).nbytes for p in unread))
        # Files of one shape are read block by block together; other shapes never compare.
        by_shape: dict[tuple[int, ...], list[Part]] = {}
        for part in sorted(reading):
            by_shape.setdefault(self._meta(part).shape, []).append(part)
        for parts in by_shape.values():
            self._read(parts, {r: p for r, p in pairs.items() if ("run", r) in parts}, replicas)

    def _meta(self, part: Part) -> TensorMeta:
        return self._readers[part].tensors[self.name]

    def replica_pair(self, r: int, m: int) -> TensorDiff:
        """Rank r's tensor against rank m's, as ``compare_pair`` gives it."""
        a, b = self.metas[r], self.metas[m]
        early = not_comparable(a, b)
        if early is not None:
            return early
        if (r, m) in self._pair_errors:
            return unreadable(b, self._pair_errors[(r, m)])
        # No block summed: both empty (the dtypes differ, or r would agree with m).
        sums = self._pairs.get((r, m)) or Sums(b.rows, b.cols, self.prints[m].norm_sq)
        return sums.diff(a, b, compared_dtype(a.dtype, b.dtype))

    def _read(self, parts: list[Part], pairs: dict[int, Part], replicas: bool) -> None:
        meta = self._meta(parts[0])
        run = [p[1] for p in parts if p[0] == "run"]
        voters = [r for r in run if replicas]
        target = {r: compared_dtype(self.metas[r].dtype, self._meta(pairs[r]).dtype) for r in pairs}

        def work(span: tuple[int, int]) -> _Span:
            return self._span(span, parts, pairs, target, voters)

        sums = {r: Sums(meta.rows, meta.cols) for r in pairs}
        errors: dict[Part, Exception] = {}
        norm = dict.fromkeys(voters, 0.0)
        non_finite = dict.fromkeys(voters, 0)
        labels: dict[int, list[int]] = {r: [] for r in voters}
        for sp in self.kernel.map(work, list(blocks(meta))):
            for part, error in sp.errors.items():
                if part[0] == "run" and voters:
                    raise error
                errors.setdefault(part, error)
            for r, ref in pairs.items():
                key = (sp.label.get(("run", r), -1), sp.label.get(ref, -1))
                p = sp.against.get(key)
                if isinstance(p, Exception):
                    errors.setdefault(("pair", r), p)
                elif p is not None and not {("run", r), ref, ("pair", r)} & errors.keys():
                    sums[r].add(p)
            self._fold_pairs(sp, voters, meta, norm)
            for r in voters:
                labels[r].append(sp.label[("run", r)])
                n, bad = sp.norms[sp.label[("run", r)]]
                norm[r] += n
                non_finite[r] += bad
        for r, ref in pairs.items():
            exc = errors.get(("run", r)) or errors.get(ref) or errors.get(("pair", r))
            b = self._meta(ref)
            self.against[r] = (
                unreadable(b, exc) if exc else sums[r].diff(self.metas[r], b, target[r])
            )
        for r in voters:
            a = self.metas[r]
            self.prints[r] = Print((a.dtype, a.shape, tuple(labels[r])), norm[r], non_finite[r])

    def _fold_pairs(
        self, sp: _Span, ranks: list[int], meta: TensorMeta, norm: dict[int, float]
    ) -> None:
        """Adds a block to every ordered pair of ranks that has differed so far. A pair is
        summed from the block where it first differs (or holds NaN/Inf): before that its
        blocks were equal and finite, which sum to zeros and the reference's norm."""
        label = {r: sp.label[("run", r)] for r in ranks}
        for r in ranks:
            for m in ranks:
                if r == m:
                    continue
                g, h = label[r], label[m]
                explicit = sp.cross.get((g, h)) if g != h else sp.selfs.get(g)
                sums = self._pairs.get((r, m))
                if explicit is None and sums is None:
                    continue
                if isinstance(explicit, Exception):
                    self._pair_errors.setdefault((r, m), explicit)
                    continue
                if sums is None:  # m's norm so far: the equal blocks' reference sums
                    sums = self._pairs[(r, m)] = Sums(meta.rows, meta.cols, norm[m])
                sums.add(explicit or Partial.equal(sp.r0, sp.rows, meta.cols, sp.norms[h][0]))

    def _span(
        self,
        span: tuple[int, int],
        parts: list[Part],
        pairs: dict[int, Part],
        target: dict[int, str],
        voters: list[int],
    ) -> _Span:
        r0, r1 = span
        sp = _Span(r0, r1 - r0)
        raw: dict[Part, np.ndarray] = {}
        for part in parts:
            try:
                raw[part] = self._readers[part].block(self.name, r0, r1)
            except READ_ERRORS as exc:
                sp.errors[part] = exc
        # Equal bytes (and dtype) form a group, named by its first part.
        firsts: list[Part] = []
        for part, block in raw.items():
            dtype = self._meta(part).dtype
            same = (f for f in firsts if f[0] == part[0] and self._meta(f).dtype == dtype)
            first = next((f for f in same if _equal(raw[f], block)), None)
            if first is None:
                firsts.append(part)
            sp.label[part] = (first or part)[1]
        kernel = self.kernel

        def reduce(x: Part, y: Part, dt: str) -> Partial | Exception:
            try:
                return kernel.partial(
                    raw[x], self._meta(x).dtype, raw[y], self._meta(y).dtype, dt, r0
                )
            except READ_ERRORS as exc:
                return exc

        for r, ref in pairs.items():
            x = ("run", r)
            if x in raw and ref in raw:
                key = (sp.label[x], sp.label[ref])
                if key not in sp.against:
                    sp.against[key] = reduce(("run", key[0]), (ref[0], key[1]), target[r])
        groups = sorted({sp.label[("run", r)] for r in voters if ("run", r) in raw})
        for g in groups:
            dt = self._meta(("run", g)).dtype
            sp.norms[g] = kernel.norm(raw[("run", g)], dt)
            if not math.isfinite(sp.norms[g][0]):  # NaN/Inf: equal bytes still disagree
                sp.selfs[g] = reduce(("run", g), ("run", g), dt)
            for h in groups:
                if h != g:
                    dt_h = self._meta(("run", h)).dtype
                    sp.cross[(g, h)] = reduce(("run", g), ("run", h), compared_dtype(dt, dt_h))
        for part in raw:
            self._readers[part].release(self.name, r0, r1)
        self.on_bytes(sum(x.nbytes for x in raw.values()))
        return sp


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality of two blocks (a NaN equals the same NaN here; the kernel sees it)."""
    if a.nbytes != b.nbytes:
        return False
    wide = np.uint64 if a.nbytes % 8 == 0 else np.uint8
    return bool(np.array_equal(a.reshape(-1).view(wide), b.reshape(-1).view(wide)))


__all__ = ["TensorPass", "compare_step"]

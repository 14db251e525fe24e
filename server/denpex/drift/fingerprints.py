"""Drift from probe fingerprints (``denpex.probe``) instead of full checkpoints.

A fingerprint directory holds one JSONL file per rank; each line fingerprints every
parameter at one step (norm, max |x|, exact content hash, CountSketches). This module turns
two such directories into the same ``StepDiff`` series the checkpoint comparison produces,
and one directory's ranks into ``ReplicaStep``s, so the verdict logic runs unchanged.

What a fingerprint gives, per tensor:
- equal hashes: bitwise identical, distance exactly 0;
- small tensors (stored whole): exact distance, max |Δ| and count of differing elements;
- otherwise the L2 distance estimated from the sketches. Per tensor, the tensor's own
  sketch ranks it; the record's global sketch (many more buckets) then fixes the total and
  the per-tensor estimates are scaled to add up to it, so the step's distance is as tight as
  the global sketch. Where the global difference sits too close to its own float32 rounding
  floor (a distance tiny against the whole model), the per-tensor sketches are used alone.
  max |Δ| is then a lower bound (|max|a| - max|b||) and the count of differing elements is
  unknown (reported as 1: at least one). Each such TensorDiff says so in its note.
- where the difference sits inside a matrix: exact row/column shares for small tensors;
  for sketched ones (records of format 2), the shares of the top fold bucket of each axis,
  over ``row_groups``/``col_groups`` groups, and the one index both folds point at
  (``_axis_share``). Format 1 records carry no axis sketches: shares 0 (unknown).

Run and reference are compared rank by rank at the lowest rank present in both (data
parallel replicas hold the same parameters; ``denpex replicas`` checks that they do).
No torch needed.
"""

from __future__ import annotations

import math
import os
from collections import Counter

import numpy as np

from denpex.drift.compare import compared_dtype, share
from denpex.drift.model import (
    ReplicaStep,
    StepDiff,
    TensorDiff,
    TensorStatus,
    columns,
    fold_columns,
)
from denpex.drift.report import Place
from denpex.drift.sources import Series
from denpex.errors import InputError
from denpex.fingerprints.records import (
    AXIS_FOLDS,
    AXIS_SIZE,
    AXIS_SUB,
    FORMAT,
    Record,
    TensorPrint,
    is_fingerprint_dir,
    open_rank_files,
    rounding_floor,
)
from denpex.majority import vote

SKETCH_NOTE = "estimated from fingerprints: l2 from sketches, max |Δ| a lower bound, count unknown"
# The global sketch is trusted when its squared difference is this far above its rounding floor.
_FLOOR_MARGIN = 100.0
DEVICE = "fingerprints"  # the report's device: nothing was read on a GPU

__all__ = ["FingerprintSource", "compare", "is_fingerprint_dir", "replicas"]


def _shape_dims(shape: tuple[int, ...]) -> tuple[int, int]:
    """(rows, flattened columns): the layout the probe sketched."""
    rows = shape[0] if shape else 1
    return rows, int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1


def _tensor_diff(a: TensorPrint, b: TensorPrint) -> TensorDiff:
    """Run tensor ``a`` against reference tensor ``b`` (same name)."""
    rows, cols = _shape_dims(b.shape)
    target = compared_dtype(a.dtype, b.dtype)
    base = TensorDiff(
        name=b.name,
        numel=b.numel,
        diff_sq=0.0,
        ref_sq=b.norm * b.norm,
        max_abs=0.0,
        mismatched=0,
        rows=rows,
        cols=columns(b.shape),
        compared_dtype=target,
    )
    if a.shape != b.shape:
        base.status = "shape_mismatch"
        base.note = f"run {list(a.shape)} vs reference {list(b.shape)}"
        return base
    if not (math.isfinite(a.norm) and math.isfinite(b.norm)):
        # NaN/Inf weights: equal hashes (NaN against the same NaN) agree on nothing.
        base.diff_sq = base.max_abs = math.nan
        base.mismatched = base.non_finite = 1  # at least one; fingerprints cannot count them
        base.note = "non-finite values (NaN/Inf): at least one element"
        return base
    if a.hash == b.hash and a.dtype == b.dtype:
        return base
    d = a.local - b.local
    if a.exact and b.exact:
        base.diff_sq = float(np.dot(d, d))
        base.max_abs = float(np.max(np.abs(d))) if d.size else 0.0
        base.mismatched = int(np.count_nonzero(d)) or 1  # hashes differ: at least one
        if d.size == rows * cols and base.diff_sq > 0:
            sq = (d * d).reshape(rows, cols)
            base.top_row, base.top_row_share = _top(sq.sum(axis=1))
            base.top_col, base.top_col_share = _top(fold_columns(sq.sum(axis=0), b.shape))
        return base
    if a.local.size != b.local.size:
        base.status = "unreadable"
        base.note = f"sketch sizes differ ({a.local.size} vs {b.local.size}): probes not comparable"
        return base
    base.diff_sq = float(np.dot(d, d))
    base.max_abs = abs(a.max_abs - b.max_abs)
    base.mismatched = 1
    base.note = SKETCH_NOTE
    if a.axes is not None and b.axes is not None:
        ax = a.axes - b.axes
        base.top_row, base.top_row_share, base.row_groups = _axis_share(ax[:AXIS_SIZE], rows)
        if len(b.shape) <= 2:  # the sketch buckets flattened columns: a kernel's taps scatter
            base.top_col, base.top_col_share, base.col_groups = _axis_share(ax[AXIS_SIZE:], cols)
    return base


def _top(energy: np.ndarray) -> tuple[int, float]:
    """The index holding most of ``energy`` and its share of the whole."""
    top = int(np.argmax(energy))
    return top, share(energy, top, float(energy.sum()))


def _axis_share(d: np.ndarray, n: int) -> tuple[int, float, int]:
    """(index, share, groups) of one axis of ``n`` rows or columns from its axis-sketch
    difference (``sketch.py``). Each fold estimates its buckets' energies; the share is the
    smaller of the folds' top shares (both must agree that one group stands out) over as
    many groups as the coarser fold has, and the index is the one below ``n`` that both top
    buckets hold (the smallest such when ``n`` exceeds the folds' product; none: share 0)."""
    tops, shares, offset = [], [], 0
    for k in AXIS_FOLDS:
        energy = (d[offset : offset + k * AXIS_SUB].reshape(k, AXIS_SUB) ** 2).sum(axis=1)
        top, share = _top(energy)
        tops.append(top)
        shares.append(share)
        offset += k * AXIS_SUB
    groups = min(n, *AXIS_FOLDS)
    candidates = np.arange(min(n, math.prod(AXIS_FOLDS)))
    for k, top in zip(AXIS_FOLDS, tops, strict=True):
        candidates = candidates[candidates % k == top]
    if not candidates.size or not all(math.isfinite(sh) for sh in shares):
        return 0, 0.0, groups
    return int(candidates[0]), min(shares), groups


def _rescale(diffs: list[TensorDiff], run: Record, ref: Record) -> str | None:
    """Scale the sketched tensors' estimates to the global sketch's total (module docstring)."""
    sketched = [t for t in diffs if t.note == SKETCH_NOTE]
    local_total = math.fsum(t.diff_sq for t in sketched)
    ga, gb = run.global_sketch, ref.global_sketch
    if not sketched or local_total <= 0 or ga.size != gb.size or ga.size == 0:
        return None
    names_a = {t.name for t in run.tensors if not t.exact}
    names_b = {t.name for t in ref.tensors if not t.exact}
    if names_a != names_b:
        return "global sketch not used: the two records fingerprint different tensors"
    d = ga - gb
    total = float(np.dot(d, d))
    if total < _FLOOR_MARGIN * rounding_floor(ga, gb):
        return None
    scale = total / local_total
    for t in sketched:
        t.diff_sq *= scale
    return None


def step_diff(run: Record, ref: Record) -> StepDiff:
    out = StepDiff(step=ref.step, run_path=run.path, ref_path=ref.path)
    a_by, b_by = run.by_name(), ref.by_name()
    for name in sorted(set(a_by) | set(b_by)):
        a, b = a_by.get(name), b_by.get(name)
        if a is not None and b is not None:
            out.tensors.append(_tensor_diff(a, b))
            continue
        only = a if a is not None else b
        assert only is not None
        rows, _ = _shape_dims(only.shape)
        status: TensorStatus = "missing_in_run" if a is None else "missing_in_ref"
        cols = columns(only.shape)
        out.tensors.append(
            TensorDiff(name, only.numel, 0.0, 0.0, 0.0, 0, rows=rows, cols=cols, status=status)
        )
    note = _rescale(out.tensors, run, ref)
    if note:
        out.warnings.append(f"step {ref.step}: {note}")
    mixed = Counter(
        f"run {a_by[n].dtype}, reference {b_by[n].dtype}"
        for n in set(a_by) & set(b_by)
        if a_by[n].dtype != b_by[n].dtype
    )
    for what, count in mixed.items():
        out.warnings.append(
            f"step {ref.step}: {what} ({count} tensors): fingerprints cannot compare at the lower "
            "precision, so rounding counts as distance here; compare checkpoints instead"
        )
    return out


def compare(
    run: str | os.PathLike[str], ref: str | os.PathLike[str], warnings: list[str] | None = None
) -> list[StepDiff]:
    """Steps fingerprinted in both directories, run versus reference, in step order."""
    series = _compared(run, ref)
    if warnings is not None:
        warnings.extend(series.warnings)
    return series.steps


def _compared(run: str | os.PathLike[str], ref: str | os.PathLike[str]) -> Series[StepDiff]:
    """``compare`` with where each step's record is and which warnings are transient: a
    torn last line, steps one side has not reached yet (normal while a run is written)."""
    notes: list[str] = []
    run_files, ref_files = open_rank_files(run), open_rank_files(ref)
    common = sorted(set(run_files) & set(ref_files))
    if not common:
        raise InputError(
            f"{run} (ranks {sorted(run_files)}) and {ref} (ranks {sorted(ref_files)}) share no rank"
        )
    rank = common[0]
    fa, fb = run_files[rank], ref_files[rank]
    notes.extend(fa.warnings + fb.warnings)
    transient = fa.torn | fb.torn
    only_run = sorted(set(fa.offsets) - set(fb.offsets))
    only_ref = sorted(set(fb.offsets) - set(fa.offsets))
    if only_run:
        notes.append(f"steps only in the run (not compared): {_steps(only_run)}")
        transient.add(notes[-1])
    if only_ref:
        notes.append(f"steps only in the reference (not compared): {_steps(only_ref)}")
        transient.add(notes[-1])
    steps = sorted(set(fa.offsets) & set(fb.offsets))
    return Series(
        [step_diff(fa.read(s), fb.read(s)) for s in steps],
        notes,
        DEVICE,
        places={s: Place(str(fa.path), fa.lines[s]) for s in steps},
        transient=transient,
    )


def _steps(steps: list[int]) -> str:
    return ", ".join(map(str, steps[:8])) + (
        f" and {len(steps) - 8} more" if len(steps) > 8 else ""
    )


def replica_step(records: dict[int, Record], absent: dict[int, str] | None = None) -> ReplicaStep:
    """Every rank of one step against the majority of its peers (by exact hash).

    Presence has a majority too: a tensor most ranks fingerprint is missing on the others;
    one only a minority holds is the holders' oddity. ``absent``: ranks of the job with no
    record at this step (they disagree)."""
    step = next(iter(records.values())).step
    out = ReplicaStep(step=step, absent=dict(absent or {}))
    names = sorted({t.name for r in records.values() for t in r.tensors})
    by_rank = {rank: rec.by_name() for rank, rec in records.items()}
    majority: dict[str, int] = {}  # tensor -> majority hash
    for name in names:
        result = vote({r: by_rank[r][name].hash for r in records if name in by_rank[r]})
        top = result.reference[0]
        if result.tied:
            out.ties.append(
                f"step {step}: {name}: no majority among ranks; compared with rank {top}'s "
                "(see the probe's own replica verdict in the record for its tie rule)"
            )
            out.warnings.append(out.ties[-1])
        majority[name] = by_rank[top][name].hash
    held = {n for n in names if 2 * sum(n in by_rank[r] for r in records) >= len(records)}
    for rank, rec in records.items():
        # Reference: the peer agreeing with the majority on the most tensors.
        peers = [r for r in records if r != rank] or [rank]
        ref_rank = max(
            peers, key=lambda r: (sum(majority[t.name] == t.hash for t in records[r].tensors), -r)
        )
        diff = step_diff(rec, records[ref_rank])
        kept = []
        for t in diff.tensors:
            mine = by_rank[rank].get(t.name)
            if t.name not in held:
                if mine is None:
                    continue  # a tensor the majority lacks too
                t.status, t.note = "missing_in_ref", "only on a minority of the ranks"
            elif mine is None:
                t.status, t.note = "missing_in_run", f"not on rank {rank}"
            elif t.status == "missing_in_ref":  # the chosen peer lacks it: use a holder's
                holder = next(
                    r
                    for r in sorted(records)
                    if by_rank[r].get(t.name) is not None
                    and by_rank[r][t.name].hash == majority[t.name]
                )
                t = _tensor_diff(mine, by_rank[holder][t.name])
            if (
                mine is not None
                and mine.hash == majority[t.name]
                and t.status == "ok"
                and not t.non_finite
            ):
                t.diff_sq, t.max_abs, t.mismatched, t.note = 0.0, 0.0, 0, ""
            kept.append(t)
        diff.tensors = kept
        diff.run_path = rec.path
        out.ranks[rank] = diff
    return out


def replicas(run: str | os.PathLike[str], warnings: list[str] | None = None) -> list[ReplicaStep]:
    """Replica mode over a fingerprint directory written by a probe with several ranks. A rank
    without a record at a step disagrees there."""
    series = _replicas(run)
    if warnings is not None:
        warnings.extend(series.warnings)
    return series.steps


def _replicas(run: str | os.PathLike[str]) -> Series[ReplicaStep]:
    notes: list[str] = []
    files = open_rank_files(run)
    for f in files.values():
        notes.extend(f.warnings)
    if len(files) < 2:
        raise InputError(f"{run}: fingerprints of a single rank; replica mode needs two or more")
    out = []
    places: dict[int, dict[int, Place]] = {}
    for step in sorted(set.union(*(set(f.offsets) for f in files.values()))):
        present = {r: f for r, f in files.items() if step in f.offsets}
        absent = {r: f"no fingerprint at step {step}" for r in files if r not in present}
        out.append(replica_step({r: f.read(step) for r, f in present.items()}, absent))
        places[step] = {r: Place(str(f.path), f.lines[step]) for r, f in present.items()}
    first = files[min(files)]
    return Series(
        out,
        notes,
        DEVICE,
        # The first rank's file, as long as the faulty rank is not known.
        places={s: Place(str(first.path), first.lines[s]) for s in first.lines},
        rank_places=places,
        transient={w for f in files.values() for w in f.torn},
    )


def _first_records(path: str | os.PathLike[str]) -> list[Record]:
    """The first record of every rank: where the run trained (host, local GPU)."""
    files = open_rank_files(path)
    return [f.read(f.steps()[0]) for _, f in sorted(files.items()) if f.steps()]


def _require_fingerprints(path: str | os.PathLike[str] | None, role: str) -> None:
    if path is not None and not is_fingerprint_dir(path):
        raise InputError(
            f"{path}: the run holds probe fingerprints, so the {role} must too "
            "(fingerprints and checkpoints cannot be compared with each other)"
        )


class FingerprintSource:
    """A directory of probe fingerprints (``sources.Source``)."""

    def __init__(self, run: str) -> None:
        self.run = run

    def against(self, ref: str, noise_ref: str | None) -> Series[StepDiff]:
        _require_fingerprints(ref, "reference")
        _require_fingerprints(noise_ref, "noise reference")
        series = _compared(self.run, ref)
        if not series.steps:
            raise InputError(f"{self.run} and {ref} share no fingerprinted step")
        if noise_ref:
            noise = _compared(noise_ref, ref)
            series.noise, series.noise_places = noise.steps, noise.places
            series.warnings += noise.warnings
            series.transient |= noise.transient
        elif series.steps[0].differs:
            # A run bit-identical to its reference at first shows its own departure; one that
            # differs from the start has only its channel shares to go on.
            series.warnings.append(
                "the run differs from the reference from the first fingerprinted step: give "
                "--noise-ref (a healthy rerun's fingerprints) to judge small faults"
            )
        # A compute fault in data-parallel training reaches every rank through the
        # all-reduce: the GPU is known only when a single process trained.
        firsts = _first_records(self.run)
        old = sorted({r.format for r in firsts + _first_records(ref) if r.format != FORMAT})
        if old:
            series.warnings.append(
                f"fingerprints of format {', '.join(old)} (an older probe) hold no axis "
                "sketches: where a difference sits inside a tensor is unknown"
            )
        single = len(firsts) == 1 and firsts[0].world_size == 1
        hosts = {r.host for r in firsts}
        series.gpu = firsts[0].local_gpu if single else None
        series.host = hosts.pop() if len(hosts) == 1 else None
        return series

    def replicas(self, tolerance: float) -> Series[ReplicaStep]:
        series = _replicas(self.run)
        if tolerance > 0:
            series.warnings.insert(
                0, "--tolerance is not applied to fingerprints: their hashes compare bitwise"
            )
        if not series.steps:
            raise InputError(f"{self.run}: no step fingerprinted on every rank")
        firsts = _first_records(self.run)
        on_first_host = [r for r in firsts if r.host == firsts[0].host]
        if all(r.local_gpu is not None for r in firsts):
            series.gpus_per_node = len(on_first_host)
        return series

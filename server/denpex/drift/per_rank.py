"""Per-rank layouts against a reference: which rank's drift departs from the rest.

Each data-parallel rank saves its own checkpoint (``step_400/rank_0.pt`` ... ``rank_3.pt``),
and each is compared with the reference's same rank (or its one checkpoint) on its own, so
every rank has its own series and verdict. Healthy replicas hold the same weights, so their
series agree bit for bit; a rank whose update goes wrong drifts alone. The report shows the
series of the rank that departs (else of the lowest rank) and names it.

When the ranks hold the same tensors (names, shapes, dtypes: data-parallel replicas rather than
shards), the run's own ranks are also compared with each other as `denpex replicas` does
(``ReplicaEvidence``). That comparison is exact (bitwise, by majority), so it, not the
distances to the reference, says which rank parted from the other replicas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from denpex.checkpoints.discover import Checkpoint, Pairs, rank_files
from denpex.checkpoints.layouts import open_checkpoint
from denpex.drift.model import ReplicaStep
from denpex.drift.replica_verdict import assess_replicas
from denpex.drift.verdict import Assessment
from denpex.errors import InputError


def split_ranks(pairs: Pairs, warnings: list[str]) -> dict[int | None, Pairs]:
    """(run, reference) pairs by run rank: each rank of a per-rank step folder against the
    reference's same rank, or against its one checkpoint. Key None: no per-rank layout (a
    per-rank reference then gives its lowest rank)."""
    out: dict[int | None, Pairs] = {}
    for run, ref in pairs:
        run_ranks, ref_ranks = rank_files(run.path), rank_files(ref.path)
        if not run_ranks:
            if ref_ranks:
                ref = Checkpoint(ref.step, ref_ranks[min(ref_ranks)])
            out.setdefault(None, []).append((run, ref))
            continue
        for rank, path in run_ranks.items():
            ref_path = ref_ranks.get(rank) if ref_ranks else ref.path
            if ref_path is None:
                warnings.append(
                    f"step {run.step}: rank {rank} not compared: the reference has no rank {rank}"
                )
                continue
            out.setdefault(rank, []).append(
                (Checkpoint(run.step, path), Checkpoint(ref.step, ref_path))
            )
    if None in out and len(out) > 1:
        raise InputError(
            f"{pairs[0][0].path.parent}: some steps hold per-rank checkpoints (rank_<N>) and "
            "some one checkpoint; point at a run with one layout"
        )
    return out


@dataclass(frozen=True)
class RankStep:
    """One step of a per-rank run as compared in one pass: every rank's checkpoint, each
    rank's reference (a rank the reference lacks has none; ranks may share one) and whether
    the ranks are replicas, compared with each other too."""

    step: int
    run: dict[int, Path]
    ref: dict[int, Path]
    replicas: bool


def rank_steps(by_rank: dict[int | None, Pairs], replicas: list[Checkpoint]) -> list[RankStep]:
    """``split_ranks``' pairs (a per-rank layout) and ``replica_checkpoints``' steps, by step."""
    run: dict[int, dict[int, Path]] = {}
    ref: dict[int, dict[int, Path]] = {}
    for rank, group in by_rank.items():
        assert rank is not None, "a per-rank layout"
        for run_cp, ref_cp in group:
            run.setdefault(run_cp.step, {})[rank] = run_cp.path
            ref.setdefault(run_cp.step, {})[rank] = ref_cp.path
    together = {cp.step: cp.ranks for cp in replicas}
    steps = sorted(set(run) | set(together))
    return [RankStep(s, together.get(s) or run[s], ref.get(s, {}), s in together) for s in steps]


def replica_checkpoints(pairs: Pairs, key: str | None) -> list[Checkpoint]:
    """The run's per-rank checkpoints of ``pairs`` (ranks filled), when its ranks should be
    replicas: they hold the same tensors, judged on the first step. Tensor- or
    pipeline-parallel shards hold different ones and are never compared with each other."""
    cps = [
        Checkpoint(run.step, run.path, ranks) for run, _ in pairs if (ranks := rank_files(run.path))
    ]
    return cps if cps and _same_tensors(cps[0].ranks, key) else []


def _same_tensors(paths: dict[int, Path], key: str | None) -> bool:
    layouts = []
    for path in paths.values():
        try:
            reader = open_checkpoint(path, key)
        except InputError:  # unreadable: the replica comparison names it absent
            continue
        try:
            layouts.append({n: (m.shape, m.dtype) for n, m in reader.tensors.items()})
        finally:
            reader.close()
    return len(layouts) >= 2 and all(x == layouts[0] for x in layouts)


@dataclass(frozen=True)
class ReplicaEvidence:
    """`denpex replicas` on a per-rank run's own ranks: whether they stayed bit-identical at
    each step, and the first step where one differed from the majority, and which."""

    verdict: str  # identical | replica_divergence | not_comparable, as `denpex replicas`
    ranks: list[int]
    steps: list[tuple[int, list[int]]]  # (step, the ranks that differ from the majority)
    onset_step: int | None
    rank: int | None  # the rank that differed first (the majority vote's odd one)
    departing: list[int]  # ranks outside a strict majority at some step
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "ranks": self.ranks,
            "first_divergence_step": self.onset_step,
            "divergent_rank": self.rank,
            "steps": [
                {"step": s, "identical": not off, "disagreeing_ranks": off} for s, off in self.steps
            ],
            "notes": self.notes,
        }


def replica_evidence(steps: list[ReplicaStep], run: str) -> ReplicaEvidence:
    """The replica verdict on ``steps`` (NaN or a missing rank is never identical)."""
    a = assess_replicas(steps, run=run)
    ranks = sorted({r for s in steps for r in (*s.ranks, *s.absent)})
    by_step = [(s.step, [r for r in ranks if s.disagrees(r)]) for s in steps]
    # With two ranks, or half against half, the odd side cannot be told from the other.
    departing = sorted({r for _, off in by_step if 2 * len(off) < len(ranks) for r in off})
    return ReplicaEvidence(
        a.verdict, ranks, by_step, a.onset_step, a.faulty_rank, departing, list(a.notes)
    )


def judge_ranks(
    verdicts: dict[int, Assessment], replicas: ReplicaEvidence | None
) -> tuple[int, Assessment]:
    """The rank whose series the report shows, and the verdict with that rank named."""
    ranks = sorted(verdicts)
    flagged = [r for r in ranks if verdicts[r].flagged]
    apart = [r for r in replicas.departing if r in verdicts] if replicas else []
    each = "per rank: " + ", ".join(f"{r} {_says(verdicts[r])}" for r in ranks)
    # A rank whose weights part from the replicas' is the one that departs, even when the
    # others drift too: its error reaches them through the averaged gradient, but they stay
    # equal to each other.
    departing = [r for r in apart if verdicts[r].flagged] or (
        flagged if len(flagged) < len(ranks) else []
    )
    if departing:
        rank = min(departing, key=lambda r: (_onset(verdicts[r]), r))
        rest = [r for r in ranks if r != rank]
        note = (
            f"rank {rank} departs from the rest: {_says(verdicts[rank])}; ranks {_list(rest)} "
            + ("agree with each other" if rank in apart else "do not drift that way")
        )
        return rank, _with(verdicts[rank], [note, each, *_replicas_say(replicas)], rank)
    if flagged:
        note = (
            f"all {len(ranks)} ranks drift alike ({_says(verdicts[ranks[0]])}): the cause is "
            "common to the replicas (the shared gradient, the data or the reference), not one rank"
        )
        return ranks[0], _with(verdicts[ranks[0]], [note, each, *_replicas_say(replicas)])
    notes = [each, *_replicas_say(replicas)]
    rank = apart[0] if apart else ranks[0]
    if apart:
        notes.insert(
            0,
            f"rank(s) {_list(apart)} differ from the other replicas although none left its "
            "noise floor against the reference: healthy replicas are bitwise identical; "
            "`denpex replicas RUN` compares them with each other",
        )
    return rank, _with(verdicts[rank], notes)


def _replicas_say(replicas: ReplicaEvidence | None) -> list[str]:
    if replicas is None:
        return []
    if replicas.verdict == "identical":
        return [f"replicas: ranks {_list(replicas.ranks)} bit-identical at every compared step"]
    if replicas.onset_step is None:
        return [f"replicas: {replicas.notes[0]}"]
    return [
        f"replicas: rank {replicas.rank} differs from the majority of ranks from step "
        f"{replicas.onset_step} (`denpex replicas`)"
    ]


def _onset(a: Assessment) -> float:
    return math.inf if a.onset_step is None else a.onset_step


def _says(a: Assessment) -> str:
    return a.verdict + (f" from step {a.onset_step}" if a.onset_step is not None else "")


def _list(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))


def _with(a: Assessment, notes: list[str], faulty_rank: int | None = None) -> Assessment:
    return replace(a, notes=[*notes, *a.notes], faulty_rank=faulty_rank)


__all__ = [
    "RankStep",
    "ReplicaEvidence",
    "judge_ranks",
    "rank_steps",
    "replica_checkpoints",
    "replica_evidence",
    "split_ranks",
]

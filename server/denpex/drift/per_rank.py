"""Per-rank layouts against a reference: which rank's drift departs from the rest.

Each data-parallel rank saves its own checkpoint (``step_400/rank_0.pt`` ... ``rank_3.pt``),
and each is compared with the reference's same rank (or its one checkpoint) on its own, so
every rank has its own series and verdict. Healthy replicas hold the same weights, so their
series agree bit for bit; a rank whose update goes wrong drifts alone. The report shows the
series of the rank that departs (else of the lowest rank) and names it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

from denpex.checkpoints.discover import Checkpoint, Pairs, rank_files
from denpex.drift.model import StepDiff
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


def judge_ranks(
    verdicts: dict[int, Assessment], series: dict[int, list[StepDiff]]
) -> tuple[int, Assessment]:
    """The rank whose series the report shows, and the verdict with that rank named."""
    ranks = sorted(verdicts)
    flagged = [r for r in ranks if verdicts[r].flagged]
    apart = _apart(series)
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
        return rank, _with(verdicts[rank], [note, each], faulty_rank=rank)
    if flagged:
        note = (
            f"all {len(ranks)} ranks drift alike ({_says(verdicts[ranks[0]])}): the cause is "
            "common to the replicas (the shared gradient, the data or the reference), not one rank"
        )
        return ranks[0], _with(verdicts[ranks[0]], [note, each])
    notes = [each]
    rank = apart[0] if apart else ranks[0]
    if apart:
        notes.insert(
            0,
            f"rank(s) {_list(apart)} differ from the other replicas although none left its "
            "noise floor against the reference: healthy replicas are bitwise identical; "
            "`denpex replicas RUN` compares them with each other",
        )
    return rank, _with(verdicts[rank], notes)


def _apart(series: dict[int, list[StepDiff]]) -> list[int]:
    """Ranks whose distances to the reference differ, at some step, from those of the
    majority of ranks (replicas that agree bit for bit have equal distances)."""
    by_step: dict[int, dict[int, tuple[float, ...]]] = {}
    for rank, steps in series.items():
        for s in steps:
            by_step.setdefault(s.step, {})[rank] = tuple(
                t.diff_sq for t in sorted(s.tensors, key=lambda t: t.name)
            )
    out: set[int] = set()
    for at_step in by_step.values():
        if len(at_step) < 3:  # two ranks that differ: no majority to depart from
            continue
        common, count = Counter(at_step.values()).most_common(1)[0]
        if count * 2 > len(at_step):
            out |= {r for r, sig in at_step.items() if sig != common or _has_nan(sig)}
    return sorted(out)


def _has_nan(sig: tuple[float, ...]) -> bool:
    return any(math.isnan(x) for x in sig)


def _onset(a: Assessment) -> float:
    return math.inf if a.onset_step is None else a.onset_step


def _says(a: Assessment) -> str:
    return a.verdict + (f" from step {a.onset_step}" if a.onset_step is not None else "")


def _list(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))


def _with(a: Assessment, notes: list[str], faulty_rank: int | None = None) -> Assessment:
    return replace(a, notes=[*notes, *a.notes], faulty_rank=faulty_rank)


__all__ = ["judge_ranks", "split_ranks"]

"""The verdict in words: notes, evidence lines and the catalog finding.

The decision (``verdict``) says what happened and where; this module says it to a person
and fills the finding's verification commands from the catalog.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from denpex import catalog
from denpex.drift import parted
from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.sudden import Jump
from denpex.drift.thresholds import CALIBRATION, LONE_SHARE
from denpex.drift.tracks import LOCALISED, Departure
from denpex.finding import Evidence, Finding, Role

_UNFILLED = re.compile(r"<\w+>")
_STATUS_WORDS = {
    "missing_in_run": "missing in the run",
    "missing_in_ref": "missing in the reference",
    "shape_mismatch": "with different shapes",
    "unreadable": "unreadable",
}


def coverage(series: Sequence[StepDiff]) -> tuple[dict[str, int], str]:
    """How many tensors were compared at every step, and why the others were not (words)."""
    status: dict[str, str] = {}
    for s in series:
        for t in s.tensors:
            if status.get(t.name, "ok") == "ok":
                status[t.name] = t.status
    counts = {"tensors": len(status), "compared": 0, **dict.fromkeys(_STATUS_WORDS, 0)}
    named: dict[str, list[str]] = {k: [] for k in _STATUS_WORDS}
    for name, st in status.items():
        counts["compared" if st == "ok" else st] += 1
        if st != "ok":
            named[st].append(name)
    parts = []
    for st, names in named.items():
        if names:
            shown = ", ".join(sorted(names)[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else ""
            )
            parts.append(f"{len(names)} {_STATUS_WORDS[st]} ({shown})")
    if not status:
        parts.append("neither side holds any tensor")
    return counts, "; ".join(parts)


def benign_summary(series: Sequence[StepDiff]) -> list[dict[str, Any]]:
    last = series[-1]
    total = last.diff_sq
    return [
        {
            "name": t.name,
            "l2": t.l2,
            "share_of_distance": round(t.diff_sq / total, 4) if total > 0 else 0.0,
            "top_row_share": round(t.top_row_share, 4),
            "uniform_row_share": round(1 / max(1, t.rows), 6),
        }
        for t in last.top_tensors(3)
    ]


def spread_notes(series: Sequence[StepDiff]) -> list[str]:
    """Why nothing was flagged, and how far round-off alone has carried the run: a fault that
    moves its tensors by less than that is buried in it. Healthy reruns of some trainings stay
    within 1e-6 of each other; others amplify round-off to 1e-3 and more within fifty steps."""
    notes = [
        "the run differs from the reference but no tensor left its noise floor: "
        "the divergence is spread, as round-off is"
    ]
    rel = parted.median_rel(series[-1])
    if rel:
        notes.append(
            f"at step {series[-1].step} the median tensor stands {rel:.1e} of its norm from the "
            "reference: a fault that moves a tensor by less than that is buried in this run's "
            "round-off. A reference trained with the same thread count, kernels and "
            "micro-batches stays bit-identical until a fault; against it, faults of 1e-4 show"
        )
    return notes


def held_notes(held: list[Departure], noise: bool) -> list[str]:
    """Channels that took their tensor's difference over inside the calibration window
    (``departures._settling``): not flagged, since healthy reruns do it (an LSTM LM's residual
    channel in eight of nine, RegNet's squeeze-excitation conv in all six, FocalNet's hidden
    channels), but a fault older than the comparison looks the same."""
    # One tensor can be held by both localised levers: name each channel once.
    channels = list(
        dict.fromkeys(f"{lv.tensor} ({lv.detail['axis']} {lv.detail['index']})" for lv in held)
    )
    if not channels:
        return []
    names = ", ".join(channels[:3]) + (
        f" and {len(channels) - 3} more" if len(channels) > 3 else ""
    )
    ask = "" if noise else "pass --noise-ref (a second healthy run), "
    return [
        f"{names} took most of the difference within the first {CALIBRATION} checkpoints "
        "compared. Healthy reruns do this in a channel the model makes sensitive, a different "
        "one from rerun to rerun, and so would a fault older than the comparison: it is not "
        f"flagged. To tell them apart, {ask}compare from an earlier checkpoint, or against a "
        "reference trained with the same threads, kernels and micro-batches (bit-identical "
        "until a fault)"
    ]


def unconfirmed_channel_notes(channels: list[Departure]) -> list[str]:
    """Channels that hold part of their tensor's difference, with nothing else departing and
    no noise reference (``departures._unconfirmed``): not flagged, but worth a second look."""
    if not channels:
        return []
    names = "; ".join(
        f"{lv.tensor} ({lv.detail['axis']} {lv.detail['index']}: {lv.detail['share']:.0%} of its "
        f"difference from step {lv.onset})"
        for lv in channels[:3]
    ) + (f"; and {len(channels) - 3} more" if len(channels) > 3 else "")
    return [
        f"{names}. A healthy row or column with almost no gradient does this (Adam takes "
        "full-size steps on it, steered by round-off), and without a noise reference a channel "
        "counts alone "
        f"only when it holds nearly all of its tensor's difference ({LONE_SHARE:.0%}): not "
        "flagged. Pass --noise-ref (a second healthy run) to tell them apart"
    ]


def jumps_in_noise(jumps: list[Jump]) -> str:
    """Jumps the noise run made too (``noise_channels.made_it_too``): not called a flip."""
    where = "; ".join(
        f"{j.tensor}: one element moved by {j.max_abs:.3g} between steps "
        f"{j.previous_step} and {j.step}"
        for j in jumps[:3]
    ) + (f"; and {len(jumps) - 3} more" if len(jumps) > 3 else "")
    return (
        f"{where}. The noise reference moved an element of the same tensor as far at the same "
        "checkpoint: an event of this training (a choice round-off tipped), not a bit flip"
    )


def unconfirmed(levers: list[Departure], noise: bool) -> list[str]:
    """A caution when the only evidence is a channel holding its tensor's difference and no
    noise reference was given: a healthy row with almost no gradient does the same."""
    if noise or any(lv.lever not in LOCALISED for lv in levers):
        return []
    return [
        "no noise reference was given, and only a row or column holding its tensor's "
        "difference shows this: a healthy row with almost no gradient does the same (Adam "
        "takes full-size steps on it, steered by round-off; healthy DeBERTa-v2 and Whisper "
        "reruns, docs/drift-statistics.md). Run it again with --noise-ref (a second healthy "
        "run) before acting on it"
    ]


def suspects(levers: list[Departure]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for lv in levers:
        entry = seen.setdefault(
            lv.tensor, {"name": lv.tensor, "onset_step": lv.onset, "levers": [], "excess_l2": 0.0}
        )
        entry["levers"].append({"lever": lv.lever, **lv.detail})
        entry["onset_step"] = min(entry["onset_step"], lv.onset)
        entry["excess_l2"] = max(entry["excess_l2"], max(lv.excess))
    return sorted(seen.values(), key=lambda e: (e["onset_step"], -e["excess_l2"]))[:10]


def describe(lv: Departure) -> str:
    d = lv.detail
    if lv.lever in ("localisation", "corroborated_localisation"):
        text = (
            f"{d['axis']} {d['index']} holds {d['share']:.0%} of its difference "
            f"(uniform {d['uniform_share']:.2%})"
        )
        if "also" in d:
            text += f", and {d['also']} holds {d['also_share']:.0%}: the same channel"
        return text
    if lv.lever == "bit_exact_departure":
        text = (
            f"the run was bit-identical to the reference up to step {d['identical_until']} and "
            f"then departs (this tensor by {d['rel_l2']:.2g} of its norm)"
        )
        if "channel" in d:
            c = d["channel"]
            text += (
                f"; its {c['axis']} {c['index']} is the top one at {c['held']} of the "
                f"{c['checkpoints']} checkpoints since, holding {c['share']:.0%} of its difference"
                + (f" (the same index in {', '.join(c['also'])})" if c["also"] else "")
            )
        return text
    if lv.lever == "noise_exact_departure":
        return (
            f"the run stood exactly where the noise reference stood, tensor by tensor, up to "
            f"step {d['identical_until']} (the two share their arithmetic) and then departs "
            f"from it (this tensor is {d['rel_l2']:.2g} of its norm from the reference)"
        )
    if lv.lever == "wholesale_departure":
        return (
            f"the whole distance from the reference leapt {d['rise']:.0f}x between steps "
            f"{d['previous_step']} and {lv.onset}, with most tensors, and stayed; this tensor "
            f"rose most, {d['tensor_rise']:.0f}x"
        )
    return f"{d['ratio_to_noise']:.1f}x the healthy noise run's distance"  # noise_envelope


def step_evidence(series: Sequence[StepDiff], step: int, text: str, role: Role) -> Evidence:
    """A verdict's evidence line: the run's checkpoint file of that step (else the step)."""
    source = step_path(series, step, "run_path") or f"step {step}"
    return Evidence(source=source, line=1, text=f"step {step}: {text}", rank=None, role=role)


def step_path(series: Sequence[StepDiff], step: int, attr: str) -> str:
    for s in series:
        if s.step == step:
            return str(getattr(s, attr))
    return ""


def steps_text(steps: list[int]) -> str:
    shown = ", ".join(map(str, steps[:5]))
    return shown + (f" and {len(steps) - 5} more" if len(steps) > 5 else "")


def finding(
    entry_id: str,
    confidence: float,
    evidence: list[Evidence],
    run: str,
    ref: str,
    gpu: int | None,
    host: str | None,
    rank: int | None,
) -> Finding:
    entry = catalog.get(entry_id)
    values = {"run": run or None, "ref": ref or None, "gpu": gpu, "host": host, "rank": rank}
    # A command is only useful with its blanks filled: fill_template leaves an unknown value
    # as <name>; drop those commands rather than hand the user a template.
    commands = [
        c for c in catalog.verification_commands(entry, values) if not _UNFILLED.search(c.text)
    ]
    return Finding(
        id=entry_id,
        title=entry["title"],
        category=entry["category"],
        confidence=confidence,
        initiating_rank=rank,
        suspect_ranks=[rank] if rank is not None else [],
        host=host,
        gpu=gpu,
        evidence=evidence,
        root_cause=entry["quick_answer"].strip(),
        fix=" ".join(f"{i}. {step}" for i, step in enumerate(entry["fix"], 1)),
        verification=[c.text for c in commands],
        related=list(entry.get("related", [])),
        verification_runnable=[c.runnable for c in commands],
    )


def finite(x: float) -> float | None:
    """JSON has no NaN/Infinity (a browser's JSON.parse rejects them): null instead."""
    return x if math.isfinite(x) else None


def replica_gaps(series: Sequence[ReplicaStep]) -> list[str]:
    """In words: ranks absent at a step, tensors a rank lacks or holds alone, NaN/Inf."""
    out: list[str] = []
    for s in series:
        for r, why in sorted(s.absent.items()):
            out.append(f"rank {r} disagrees at step {s.step}: {why}")
        for r, d in sorted(s.ranks.items()):
            gaps = d.not_compared
            if gaps:
                shown = ", ".join(f"{t.name} ({t.note or t.status})" for t in gaps[:3])
                more = f" and {len(gaps) - 3} more" if len(gaps) > 3 else ""
                out.append(f"rank {r} disagrees at step {s.step}: {shown}{more}")
            bad = [t.name for t in d.tensors if t.status == "ok" and t.non_finite]
            if bad:
                more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
                out.append(
                    f"rank {r} holds non-finite values (NaN/Inf) at step {s.step} in "
                    f"{', '.join(bad[:3])}{more}: they agree with nothing"
                )
    if len(out) > 20:  # one line per gap reads well for a few; a long run needs the count
        out = [*out[:20], f"... and {len(out) - 20} more disagreements of this kind"]
    return out


def rank_series(series: Sequence[ReplicaStep], rank: int) -> list[StepDiff]:
    return [s.ranks[rank] for s in series if rank in s.ranks]

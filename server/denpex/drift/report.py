"""The drift report: its JSON form (shared-schema/drift-report.schema.json) and the
compact table a person reads in a terminal."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff
from denpex.drift.per_rank import ReplicaEvidence
from denpex.drift.verdict import Assessment
from denpex.finding import Finding

SCHEMA_VERSION = 3
TOP_K = 5


def _num(x: float) -> float | None:
    """JSON has no NaN/Infinity: a non-finite figure (NaN weights) becomes null."""
    return x if math.isfinite(x) else None


def _tensor_json(t: TensorDiff) -> dict[str, Any]:
    return {
        "name": t.name,
        "l2": _num(t.l2),
        "rel_l2": _num(t.rel_l2),
        "max_abs": _num(t.max_abs),
        "mismatched_elements": t.mismatched,
        "non_finite_elements": t.non_finite,
        "numel": t.numel,
        "rows": t.rows,
        "cols": t.cols,
        "top_row": t.top_row,
        "top_row_share": _num(t.top_row_share),
        "top_col": t.top_col,
        "top_col_share": _num(t.top_col_share),
        "compared_dtype": t.compared_dtype,
    }


def _figures(s: StepDiff) -> dict[str, Any]:
    missing = [
        {"name": t.name, "status": t.status, "note": t.note} for t in s.tensors if t.status != "ok"
    ]
    dtypes = sorted({t.compared_dtype for t in s.tensors if t.status == "ok"})
    compared = sum(1 for t in s.tensors if t.status == "ok")
    # Nothing compared at this step: no distance, rather than a distance of 0.
    known = _num if compared else lambda x: None
    return {
        "l2": known(s.l2),
        "rel_l2": known(s.rel_l2),
        "max_abs": known(s.max_abs),
        "mismatched_elements": s.mismatched,
        "non_finite_elements": s.non_finite,
        "tensors_compared": compared,
        "tensors_missing": missing,
        "compared_dtype": dtypes[0] if len(dtypes) == 1 else "mixed" if dtypes else None,
        "top_tensors": [_tensor_json(t) for t in s.top_tensors(TOP_K) if t.differs],
    }


def _point(item: StepDiff | ReplicaStep) -> dict[str, Any]:
    if isinstance(item, StepDiff):
        return {"step": item.step, **_figures(item), "warnings": list(item.warnings)}
    ranks = {str(r): _figures(s) for r, s in sorted(item.ranks.items())}
    # The step's headline figures are those of the rank farthest from the majority (NaN
    # farthest of all); a step where every rank is absent has none.
    worst = max(
        item.ranks.values(),
        key=lambda s: (math.inf if math.isnan(s.diff_sq) else s.diff_sq, len(s.not_compared)),
        default=StepDiff(item.step),
    )
    head = _figures(worst)
    everyone = sorted({*item.ranks, *item.absent})
    return {
        "step": item.step,
        **{k: v for k, v in head.items() if k != "warnings"},
        "warnings": list(item.warnings),
        "ranks": ranks,
        "disagreeing_ranks": [r for r in everyone if item.disagrees(r)],
        "absent_ranks": {str(r): why for r, why in sorted(item.absent.items())},
    }


@dataclass(frozen=True)
class Place:
    """Where a step's data was read from: a checkpoint (line 1) or a fingerprint record."""

    path: str
    line: int = 1


@dataclass
class Point:
    """One compared step, and where its data came from (per rank in replica mode)."""

    diff: StepDiff | ReplicaStep
    place: Place | None = None
    rank_places: dict[int, Place] = field(default_factory=dict)

    @property
    def step(self) -> int:
        return self.diff.step

    def to_json(self) -> dict[str, Any]:
        out = _point(self.diff)
        if self.place is not None:
            out["file"], out["line"] = self.place.path, self.place.line
        return out


Mode = Literal["reference", "replicas"]


@dataclass
class DriftReport:
    """A judged drift series. ``to_json()`` is the drift-report JSON; the rest is for the
    layers that need more than the JSON says: where each point was read from and the noise
    run's own series (``--noise-ref``)."""

    mode: Mode
    run: str
    reference: str | None
    points: list[Point]
    assessment: Assessment
    warnings: list[str]
    device: str
    noise_reference: str | None = None
    tolerance: float | None = None
    noise_points: list[Point] = field(default_factory=list)
    # Warnings that are expected while a run is still being written (a torn last record, a
    # step the other side has not reached yet): a watcher does not repeat them.
    transient: set[str] = field(default_factory=set)
    # A per-rank run whose ranks are replicas: `denpex replicas` on its own ranks.
    replicas: ReplicaEvidence | None = None

    @property
    def verdict(self) -> str:
        return self.assessment.verdict

    @property
    def flagged(self) -> bool:
        return bool(self.assessment.flagged)

    @property
    def onset_step(self) -> int | None:
        return self.assessment.onset_step

    @property
    def faulty_rank(self) -> int | None:
        return self.assessment.faulty_rank

    @property
    def finding(self) -> Finding | None:
        return self.assessment.finding

    @property
    def all_warnings(self) -> list[str]:
        """The report's warnings and its points', once each (the JSON ``warnings``)."""
        return _unique(self.warnings + [w for p in self.points for w in p.diff.warnings])

    def place(self, step: int) -> Place | None:
        """Where the data of ``step`` came from: the faulty rank's file when there is one."""
        for p in self.points:
            if p.step == step:
                rank = self.faulty_rank
                return p.rank_places.get(rank, p.place) if rank is not None else p.place
        return None

    def to_json(self) -> dict[str, Any]:
        finding = self.finding.to_json() if self.finding is not None else None
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "mode": self.mode,
            "run": self.run,
            "reference": self.reference,
            "points": [p.to_json() for p in self.points],
            "verdict": self.verdict,
            "flagged": self.flagged,
            "onset_step": self.onset_step,
            "faulty_rank": self.faulty_rank,
            "trend": self.assessment.trend,
            "finding": finding,
            "notes": list(self.assessment.notes),
            "warnings": self.all_warnings,
            "device": self.device,
            "noise_reference": self.noise_reference,
        }
        if self.tolerance is not None:
            out["tolerance"] = self.tolerance
        if self.noise_points:
            out["noise_points"] = [p.to_json() for p in self.noise_points]
        if self.replicas is not None:
            out["replicas"] = self.replicas.to_json()
        return out


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- human


def _fmt(x: float | None) -> str:
    return "-" if x is None else "0" if x == 0 else f"{x:.3e}"


def _where(t: dict[str, Any]) -> str:
    """Where a tensor's difference sits, when it is concentrated enough to say."""
    # A 1-D tensor is one column: its "column share" is always 100% and says nothing.
    row = (t.get("top_row_share") or 0.0) if t["rows"] > 1 else 0.0
    col = (t.get("top_col_share") or 0.0) if t["cols"] > 1 else 0.0
    if max(row, col) < 0.25:
        return "spread"
    if row >= col:
        return f"row {t['top_row']} holds {row:.0%}"
    return f"column {t['top_col']} holds {col:.0%}"


def verdict_line(report: DriftReport) -> str:
    line = f"verdict: {report.verdict}" + (" (flagged)" if report.flagged else "")
    if report.onset_step is not None:
        line += f", onset at step {report.onset_step}"
    if report.faulty_rank is not None:
        line += f", faulty rank {report.faulty_rank}"
    return line


def finding_lines(report: DriftReport, *, cause: bool = True) -> list[str]:
    """The finding's title, its cause (unless ``cause`` is False) and verification commands."""
    finding = report.finding
    if finding is None:
        return []
    lines = [f"finding: {finding.title} [{finding.id}]"]
    if cause and finding.root_cause:
        lines.append(f"  cause: {finding.root_cause}")
    lines.extend(f"  verify: {cmd}" for cmd in finding.verification)
    return lines


def alarm_text(report: DriftReport) -> str:
    """One sentence for an editor: what was flagged, in which run, and from when."""
    title = report.finding.title if report.finding is not None else "Parameter drift"
    text = f"{title}: {report.verdict} in {report.run}"
    text += f" from step {report.onset_step}" if report.onset_step is not None else ""
    text += f", faulty rank {report.faulty_rank}" if report.faulty_rank is not None else ""
    return text


def render_human(report: DriftReport) -> str:
    data = report.to_json()
    lines: list[str] = []
    if report.mode == "reference":
        lines.append(f"denpex drift: {report.run}  vs  {report.reference}  ({report.device})")
    else:
        lines.append(f"denpex replicas: {report.run}  ({report.device})")
    head = (
        f"{'step':>8}  {'l2':>10}  {'rel_l2':>10}  {'max|Δ|':>10}  {'mismatched':>11}  top tensor"
    )
    lines.append(head)
    for p in data["points"]:
        top = p["top_tensors"][0]["name"] if p["top_tensors"] else "-"
        extra = ""
        if report.mode == "replicas" and p["disagreeing_ranks"]:
            extra = f"  ranks off: {','.join(map(str, p['disagreeing_ranks']))}"
        lines.append(
            f"{p['step']:>8}  {_fmt(p['l2']):>10}  {_fmt(p['rel_l2']):>10}"
            f"  {_fmt(p['max_abs']):>10}  {p['mismatched_elements']:>11}  {top}{extra}"
        )
    lines.append(verdict_line(report))
    last = next((p for p in reversed(data["points"]) if p["top_tensors"]), None)
    if last:
        lines.append(f"top tensors at step {last['step']}:")
        for t in last["top_tensors"]:
            lines.append(
                f"  {t['name']:<40} l2 {_fmt(t['l2'])}  rel {_fmt(t['rel_l2'])}  {_where(t)}"
            )
    for note in report.assessment.notes:
        lines.append(f"note: {note}")
    lines.extend(finding_lines(report))
    for w in data["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


__all__ = [
    "DriftReport",
    "Place",
    "Point",
    "alarm_text",
    "finding_lines",
    "render_human",
    "verdict_line",
]

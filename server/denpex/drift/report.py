"""The drift report: its JSON form (shared-schema/drift-report.schema.json) and the
compact table a person reads in a terminal."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff

SCHEMA_VERSION = 1
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


def build_report(
    *,
    mode: str,
    run: str,
    reference: str | None,
    series: Sequence[StepDiff | ReplicaStep],
    assessment: Any,
    warnings: list[str],
    device: str,
    noise_ref: str | None = None,
    tolerance: float | None = None,
) -> dict[str, Any]:
    points = [_point(s) for s in series]
    step_warnings = [w for p in points for w in p["warnings"]]
    finding = assessment.finding.to_json() if assessment.finding is not None else None
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "mode": mode,
        "run": run,
        "reference": reference,
        "points": points,
        "verdict": assessment.verdict,
        "flagged": bool(assessment.flagged),
        "onset_step": assessment.onset_step,
        "faulty_rank": assessment.faulty_rank,
        "trend": assessment.trend,
        "finding": finding,
        "notes": list(assessment.notes),
        "warnings": _unique(warnings + step_warnings),
        "device": device,
        "noise_reference": noise_ref,
    }
    if tolerance is not None:
        report["tolerance"] = tolerance
    return report


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


def render_human(report: dict[str, Any]) -> str:
    lines: list[str] = []
    if report["mode"] == "reference":
        lines.append(
            f"denpex drift: {report['run']}  vs  {report['reference']}  ({report['device']})"
        )
    else:
        lines.append(f"denpex replicas: {report['run']}  ({report['device']})")
    head = (
        f"{'step':>8}  {'l2':>10}  {'rel_l2':>10}  {'max|Δ|':>10}  {'mismatched':>11}  top tensor"
    )
    lines.append(head)
    for p in report["points"]:
        top = p["top_tensors"][0]["name"] if p["top_tensors"] else "-"
        extra = ""
        if report["mode"] == "replicas" and p["disagreeing_ranks"]:
            extra = f"  ranks off: {','.join(map(str, p['disagreeing_ranks']))}"
        lines.append(
            f"{p['step']:>8}  {_fmt(p['l2']):>10}  {_fmt(p['rel_l2']):>10}"
            f"  {_fmt(p['max_abs']):>10}  {p['mismatched_elements']:>11}  {top}{extra}"
        )
    verdict = f"verdict: {report['verdict']}" + (" (flagged)" if report["flagged"] else "")
    if report["onset_step"] is not None:
        verdict += f", onset at step {report['onset_step']}"
    if report["faulty_rank"] is not None:
        verdict += f", faulty rank {report['faulty_rank']}"
    lines.append(verdict)
    last = next((p for p in reversed(report["points"]) if p["top_tensors"]), None)
    if last:
        lines.append(f"top tensors at step {last['step']}:")
        for t in last["top_tensors"]:
            lines.append(
                f"  {t['name']:<40} l2 {_fmt(t['l2'])}  rel {_fmt(t['rel_l2'])}  {_where(t)}"
            )
    for note in report["notes"]:
        lines.append(f"note: {note}")
    finding = report["finding"]
    if finding:
        lines.append(f"finding: {finding['title']} [{finding['id']}]")
        if finding["root_cause"]:
            lines.append(f"  cause: {finding['root_cause']}")
        for cmd in finding["verification"]:
            lines.append(f"  verify: {cmd}")
    for w in report["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


__all__ = ["build_report", "render_human"]

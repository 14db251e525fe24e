"""The verdict on one checkpoint pair: two files, or two model folders.

One point shows no trend. Round-off between healthy reruns and a fault both make two
checkpoints differ; only their course over steps tells them apart (docs/drift-statistics.md).
So a pair that differs is neither cleared nor flagged: the report gives how far apart the two
are, where inside each tensor (the point's figures), and which tensors to look at first. A
tensor on one side only, or of another shape, is a difference too: never "identical".
"""

from __future__ import annotations

import math
from dataclasses import replace

from denpex.drift.model import StepDiff
from denpex.drift.thresholds import ENVELOPE
from denpex.drift.verdict import Assessment

_STATUS = {
    "missing_in_run": "missing in the run",
    "missing_in_ref": "missing in the reference",
    "shape_mismatch": "different shapes",
    "unreadable": "unreadable",
}
LOOK_AT = 3  # tensors named in the notes, largest share of the distance first


def one_point(point: StepDiff, judged: Assessment, noise: StepDiff | None) -> Assessment:
    """``judged``: the series verdict on this single point, kept when nothing was compared
    or when the two are bitwise equal; otherwise replaced by ``single_point``."""
    missing = point.not_compared
    apart = "parted_step" in judged.trend  # compared, and found to be two different models
    if (judged.verdict == "not_comparable" and not apart) or (not point.differs and not missing):
        return judged
    notes = [
        "one checkpoint pair: a single point cannot show a trend, so the difference is "
        "neither cleared nor flagged; compare the two runs' checkpoint series (with "
        "--noise-ref, a second healthy run) to judge it"
    ]
    if apart:
        notes.append(judged.notes[0])
    if point.differs:
        notes.append(
            f"global l2 {point.l2:.3g} (relative {point.rel_l2:.3g}), "
            f"{point.mismatched} element(s) differ"
        )
        total = point.diff_sq
        shown = [
            f"{t.name} ({t.diff_sq / total:.0%} of the distance)"
            if total > 0 and math.isfinite(total)
            else t.name
            for t in point.top_tensors(LOOK_AT)
            if t.differs
        ]
        notes.append("look first at: " + ", ".join(shown))
    else:
        notes.append("every compared element is equal")
    if missing:
        listed = ", ".join(f"{t.name} ({_STATUS[t.status]})" for t in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        notes.append(f"{len(missing)} tensor(s) not compared: {listed}{more}")
    if noise is not None:
        notes.append(_against_noise(point, noise))
    trend = dict(judged.trend, method="single_point")
    return replace(
        judged,
        verdict="single_point",
        flagged=False,
        onset_step=None,
        faulty_rank=None,
        trend=trend,
        finding=None,
        notes=notes,
    )


def _against_noise(point: StepDiff, noise: StepDiff) -> str:
    """Tensors farther from the reference than the healthy rerun is, by the envelope factor."""
    floor = {t.name: t.l2 for t in noise.tensors if t.status == "ok"}
    beyond = [
        t.name
        for t in point.top_tensors(len(point.tensors))
        if t.name in floor and not t.l2 <= ENVELOPE * floor[t.name]  # NaN is beyond
    ]
    if not beyond:
        return f"every tensor is within {ENVELOPE:g}x the noise run's distance"
    more = f" and {len(beyond) - 5} more" if len(beyond) > 5 else ""
    return (
        f"{len(beyond)} tensor(s) beyond {ENVELOPE:g}x the noise run's distance: "
        + ", ".join(beyond[:5])
        + more
    )


__all__ = ["one_point"]

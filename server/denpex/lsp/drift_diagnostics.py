"""A drift check's report → what the editor shows: the warnings, the message and the mark.

The only module of the server that reads the drift report's fields (drift-report.schema.json);
the rest of the server passes the report through to ``denpex/driftUpdate`` untouched.
A flagged run gets one message (a pop-up) and, when the onset step's file is known, one
Error diagnostic on it: the faulty rank's probe record line for probe output, else the
top of the checkpoint file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from denpex.lsp.diagnostics import Published, first_sentence

DEFAULT_CODE = "sdc-gradual-parameter-drift"


@dataclass(frozen=True)
class DriftMark:
    """A flagged run: the message, and the diagnostic on the onset step's file if known."""

    message: str
    layer: dict[str, Published]  # uri → its diagnostics (empty: no file to mark)


def warnings(report: dict[str, Any]) -> list[str]:
    """Checkpoints the engine skipped or could not read, one line each."""
    return [str(w) for w in report.get("warnings", [])]


def drift_mark(
    run: str, report: dict[str, Any], places: dict[str, dict[str, Any]]
) -> DriftMark | None:
    """The mark of a flagged report (None when the run is not flagged). ``places`` maps a
    step to where its data is: ``{path, line}`` (line 1-based), from the drift worker."""
    if not report.get("flagged"):
        return None
    onset = report.get("onset_step")
    place = places.get(str(onset), {}) if onset is not None else {}
    finding = report.get("finding") or {}
    rank = report.get("faulty_rank")
    text = f"{finding.get('title') or 'Parameter drift'}: {report.get('verdict')} in {run}"
    text += f" from step {onset}" if onset is not None else ""
    text += f", faulty rank {rank}" if rank is not None else ""
    path = place.get("path")
    if not path:
        return DriftMark(text + ".", {})
    line = max(0, int(place.get("line", 1)) - 1)  # a probe record's line; else the top
    diag = types.Diagnostic(
        range=types.Range(types.Position(line, 0), types.Position(line, 0)),
        severity=types.DiagnosticSeverity.Error,
        source="denpex",
        code=finding.get("id") or DEFAULT_CODE,
        message=text + ". " + first_sentence(finding.get("root_cause", "")),
        data={"run": run, "onset_step": onset},
    )
    return DriftMark(text + ".", {Path(path).resolve().as_uri(): Published(diagnostics=[diag])})

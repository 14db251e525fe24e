"""A drift check's outcome → what the editor shows: the warnings, the message and the mark.

The message and the onset's file come typed from the drift worker (``DriftAlarm``, built
from the ``DriftReport``); the report itself is passed through to ``denpex/driftUpdate``.
A flagged run gets one message (a pop-up) and, when the onset step's file is known, one
Error diagnostic on it: the faulty rank's probe record line for probe output, else the
top of the checkpoint file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from denpex.lsp.checkpoints import DriftAlarm
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


def drift_mark(run: str, alarm: DriftAlarm | None) -> DriftMark | None:
    """The mark of a flagged report (None when the run is not flagged), from the alarm the
    drift worker built out of the typed report."""
    if alarm is None:
        return None
    if not alarm.path:
        return DriftMark(alarm.message + ".", {})
    line = alarm.line - 1  # a probe record's line; else the top
    diag = types.Diagnostic(
        range=types.Range(types.Position(line, 0), types.Position(line, 0)),
        severity=types.DiagnosticSeverity.Error,
        source="denpex",
        code=alarm.code or DEFAULT_CODE,
        message=alarm.message + ". " + first_sentence(alarm.root_cause),
        data={"run": run, "onset_step": alarm.onset_step},
    )
    uri = Path(alarm.path).resolve().as_uri()
    return DriftMark(alarm.message + ".", {uri: Published(diagnostics=[diag])})

"""The Flight Recorder worker: dumps read in their own process.

Started by the language server as ``python -m denpex.lsp.dump_worker`` with one job on
stdin, and writes one JSON line on stdout:

- ``{"log": <path>}`` (the dumps beside an open log):
  ``{"verdicts": [{"finding": <finding>, "waiting": [ranks]}], "notices": [...]}``;
- ``{"folder": <path>}`` (a whole job folder, as ``denpex diagnose DIR``):
  ``{"diagnosis": <diagnosis.schema.json>, "notices": [...]}``;

or ``{"error": "<one line>"}``. Dumps are untrusted pickles; even the restricted unpickler
runs here and never in the server, like checkpoints in the drift worker.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from denpex.errors import InputError
from denpex.lsp.workers import emit, serve


def run_job(job: dict[str, Any], out: TextIO) -> int:
    msg = diagnose_folder(str(job["folder"])) if "folder" in job else dumps_beside(str(job["log"]))
    emit(out, msg)
    return 0


def dumps_beside(log_path: str) -> dict[str, Any]:
    from denpex.diagnosis.flight_recorder import DumpSet, read_dumps_beside, verdict_finding

    dumps = DumpSet()
    notices: list[str] = []
    read_dumps_beside([log_path], dumps, notices)
    verdicts = [
        {"finding": verdict_finding(v, {}, {}).to_json(), "waiting": v.waiting}
        for v in dumps.verdicts(None)
    ]
    return {"verdicts": verdicts, "notices": notices}


def diagnose_folder(folder: str) -> dict[str, Any]:
    """The same reading as ``denpex diagnose DIR``: every file under it, logs and dumps."""
    from denpex.diagnosis import DumpSet, LogScanner, diagnose_paths
    from denpex.finding import diagnosis_json

    if not os.path.isdir(folder):
        raise InputError(f"{folder}: not a folder")
    scanner = LogScanner()
    findings = diagnose_paths([folder], scanner, DumpSet())
    return {"diagnosis": diagnosis_json(findings), "notices": scanner.notices}


def main() -> int:
    return serve(run_job)


if __name__ == "__main__":
    sys.exit(main())

"""The Flight Recorder worker: the dumps beside one log, read in their own process.

Started by the language server as ``python -m denpex.lsp.dump_worker`` with
``{"log": <path>}`` on stdin. It writes one JSON line on stdout:
``{"verdicts": [{"finding": <finding>, "waiting": [ranks]}], "notices": [...]}`` or
``{"error": "<one line>"}``. Dumps are untrusted pickles; even the restricted unpickler
runs here and never in the server, like checkpoints in the drift worker.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

from denpex.errors import InputError
from denpex.lsp import guard


def run_job(job: dict[str, Any], out: TextIO) -> int:
    from denpex.diagnosis.flight_recorder import DumpSet, read_dumps_beside, verdict_finding

    dumps = DumpSet()
    notices: list[str] = []
    read_dumps_beside([str(job["log"])], dumps, notices)
    verdicts = [
        {"finding": verdict_finding(v, {}, {}).to_json(), "waiting": v.waiting}
        for v in dumps.verdicts(None)
    ]
    out.write(json.dumps({"verdicts": verdicts, "notices": notices}) + "\n")
    out.flush()
    return 0


def main() -> int:
    guard.install()
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # the protocol owns stdout
    try:
        return run_job(json.loads(sys.stdin.read()), out)
    except (InputError, OSError, ValueError) as exc:
        out.write(json.dumps({"error": f"{exc.__class__.__name__}: {exc}"}) + "\n")
        out.flush()
        return 2


if __name__ == "__main__":
    sys.exit(main())

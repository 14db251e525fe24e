"""Work-done progress of a drift check, shown by the client while the worker compares.

The drift worker reports bytes compared; ``CheckpointWatcher`` turns them into the phases of
``checkpoints.Progress``, which become ``$/progress`` begin, report and end messages here.
A client without work-done progress support gets none (and is not asked for a token).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from denpex.lsp.checkpoints import Progress


class DriftProgress:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._tokens = itertools.count(1)

    async def __call__(self, run: Path) -> Progress | None:
        window = self._server.client_capabilities.window
        if not (window and window.work_done_progress):
            return None
        token = f"denpex-drift-{next(self._tokens)}"
        progress = self._server.work_done_progress
        try:
            await progress.create_async(token)
        except Exception:  # a client that refuses the token gets no progress
            return None

        def report(phase: str, done: int, total: int) -> None:
            if phase == "begin":
                progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="Denpex: comparing checkpoints", message=str(run), percentage=0
                    ),
                )
            elif phase == "report":
                pct = int(100 * done / total) if total else 0
                progress.report(
                    token, types.WorkDoneProgressReport(message=f"{done}/{total}", percentage=pct)
                )
            else:
                progress.end(token, types.WorkDoneProgressEnd(message="done"))

        return report

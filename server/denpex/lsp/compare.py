"""``denpex/compareCheckpoints``: one run against a reference, once, as the editor's
"Compare Checkpoints…" asks for it.

The comparison is ``denpex drift RUN --ref REF [--noise-ref N] --json`` run in the drift
worker (``"once": true``): off the event loop, torch out of the server, time-limited, and
killed when the request is cancelled. The answer is ``{"report": <drift report>}``, the
noise run's points included, so the editor draws the band without a second comparison.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInternalError

from denpex.drift.cache import default_dir
from denpex.lsp.protocol import CompareCheckpointsParams
from denpex.lsp.workers import WorkerFailed, run_once

# Past this, `denpex drift` in a terminal (progress shown, any size) is the better tool.
COMPARE_TIMEOUT = 900.0


async def compare_checkpoints(
    params: CompareCheckpointsParams, device: str, timeout: float = COMPARE_TIMEOUT
) -> dict[str, Any]:
    job = {
        "once": True,
        "run": params.run,
        "reference": params.ref,
        "noiseReference": params.noise_ref,
        "device": device,
        "cacheDir": str(default_dir()),
    }
    try:
        msg = await run_once("denpex.lsp.drift_worker", job, timeout)
    except WorkerFailed as exc:
        raise JsonRpcInternalError(f"denpex/compareCheckpoints: {exc}") from None
    report = msg.get("report")
    if not isinstance(report, dict):
        raise JsonRpcInternalError("denpex/compareCheckpoints: the worker sent no report")
    return {"report": report}

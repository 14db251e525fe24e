"""Worker processes: untrusted input (checkpoints, Flight Recorder dumps) is read in a child.

``denpex.lsp.drift_worker`` and ``denpex.lsp.dump_worker`` are started the same way: the
server's own interpreter runs the module, the job goes in as one JSON object on stdin, and
JSON lines come back on stdout while stderr keeps whatever the engines print. A one-shot
job (``run_once``) is time-limited and its worker killed when the request is cancelled.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from denpex.errors import InputError
from denpex.lsp import guard


async def start_worker(module: str, job: dict[str, Any]) -> asyncio.subprocess.Process:
    """``python -m module``, its stdin holding ``job`` (and then closed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(job).encode())
    proc.stdin.close()
    return proc


async def end_worker(proc: asyncio.subprocess.Process) -> None:
    """Kill a worker that is still running (timed out, or its request was cancelled)."""
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


def last_line(output: str, default: str = "no output") -> str:
    """The last non-blank line of a worker's output (on stderr: why it died)."""
    lines = output.strip().splitlines()
    return lines[-1] if lines else default


class WorkerFailed(Exception):
    """The worker timed out, died or answered ``{"error": ...}``; the message is one line."""


async def run_once(module: str, job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One job for ``module`` in a child process: its last JSON line, an object."""
    proc = await start_worker(module, job)
    try:
        raw, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        raise WorkerFailed(f"reading took more than {timeout:.0f} s") from None
    finally:  # timed out, or the request was cancelled: the worker goes too
        await end_worker(proc)
    try:
        msg = json.loads(last_line(raw.decode("utf-8", "replace"), ""))
    except ValueError:
        msg = None
    if not isinstance(msg, dict):
        last = last_line(err.decode("utf-8", "replace"), "no answer")
        raise WorkerFailed(f"the worker failed: {last[:500]}")
    if "error" in msg:
        raise WorkerFailed(str(msg["error"]))
    return msg


# -- the worker's side -----------------------------------------------------------------------


def emit(out: TextIO, obj: dict[str, Any]) -> None:
    """One JSON line of a worker's protocol."""
    out.write(json.dumps(obj) + "\n")
    out.flush()


def serve(run_job: Callable[[Any, TextIO], int]) -> int:
    """A worker's ``main``: the network guard on, the job read from stdin, the protocol on
    stdout (anything the engines print goes to stderr), and input that cannot be read
    answered with one ``{"error"}`` line and exit 2."""
    guard.install()
    out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr
    try:
        return run_job(json.loads(sys.stdin.read()), out)
    except InputError as exc:
        emit(out, {"error": str(exc)})
    except (OSError, ValueError) as exc:
        emit(out, {"error": f"{exc.__class__.__name__}: {exc}"})
    return 2

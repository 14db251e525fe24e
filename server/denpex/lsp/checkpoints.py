"""Checkpoint directories watched for drift.

Each folder is first measured off the event loop (``fswatch.too_large``: a bounded walk) and
refused when it holds a large tree such as ``/``; otherwise it is watched recursively for
changes only (``fswatch``: no opens or reads, so the worker's reads cannot trigger a check,
and nothing under the server's cache folder, which the worker writes).
watchdog reports file events on its own thread; they are handed to the event loop, where
each directory coalesces bursts (a checkpoint is many writes) into one check once the
directory has been quiet for a moment. A check runs the drift engine in a separate
process (``denpex.lsp.drift_worker``): torch and CUDA stay out of the server, a slow
comparison does not block it, and a crash costs one check. The worker's ``DriftSession``
decides which checkpoints are complete, with the rule and the step cache
(``drift.cache.default_dir``) that ``denpex watch`` uses.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from denpex.drift import fswatch
from denpex.drift.cache import default_dir
from denpex.lsp.scheduling import Coalescer
from denpex.lsp.settings import Settings
from denpex.lsp.workers import last_line, start_worker

log = logging.getLogger(__name__)

# Event coalescing only: whether a checkpoint is complete is the worker's DriftSession's call
# (its files unchanged for a settle time, as for `denpex watch`).
SETTLE_S = 1.0  # quiet time after the last file event before a check
MAX_SETTLE_S = 5.0
STDERR_TAIL = 4000


@dataclass(frozen=True)
class DriftAlarm:
    """A flagged report as the editor shows it (built by the worker from the typed report)."""

    message: str
    code: str
    root_cause: str
    onset_step: int | None
    path: str | None  # the onset step's file; None when unknown
    line: int  # 1-based: a probe record's line, else 1

    @classmethod
    def from_json(cls, raw: Any) -> DriftAlarm | None:
        if not isinstance(raw, dict):
            return None
        onset, path, line = raw.get("onsetStep"), raw.get("path"), raw.get("line")
        return cls(
            message=str(raw.get("message", "")),
            code=str(raw.get("code", "")),
            root_cause=str(raw.get("rootCause", "")),
            onset_step=onset if isinstance(onset, int) else None,
            path=path if isinstance(path, str) else None,
            line=line if isinstance(line, int) and line > 0 else 1,
        )


@dataclass
class Outcome:
    """What one check produced: a report, or an error line (``crashed`` when the worker died)."""

    run: Path
    report: dict[str, Any] | None = None
    alarm: DriftAlarm | None = None  # set when the report is flagged
    error: str | None = None
    crashed: bool = False


@dataclass
class WatchedDir:
    path: Path
    state: str = "watching"  # or "missing", "deleted", "refused"
    coalescer: Coalescer | None = None
    process: asyncio.subprocess.Process | None = None


Progress = Callable[[str, int, int], None]  # phase ("begin"|"report"|"end"), done, total


class _Handler(FileSystemEventHandler):
    def __init__(
        self, loop: asyncio.AbstractEventLoop, notify: Callable[[Path, bool], None], root: Path
    ):
        self._loop = loop
        self._notify = notify
        self._root = root
        self._ignored = (default_dir().resolve(),)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if not fswatch.is_change(event, self._ignored):
            return  # reads (ours included) and the worker's cache writes are not changes
        gone = event.event_type == "deleted" and Path(os.fsdecode(event.src_path)) == self._root
        self._loop.call_soon_threadsafe(self._notify, self._root, gone)


class CheckpointWatcher:
    def __init__(
        self,
        on_outcome: Callable[[Outcome], Coroutine[Any, Any, None]],
        on_change: Callable[[], None],
        progress: Callable[[Path], Awaitable[Progress | None]],
    ) -> None:
        self._on_outcome = on_outcome
        self._on_change = on_change  # the watched set or a state changed: resend status
        self._progress = progress
        self._observer: Any = None
        self._settings = Settings()
        self._starting: set[asyncio.Task[None]] = set()
        self.dirs: dict[Path, WatchedDir] = {}

    def configure(self, settings: Settings) -> list[str]:
        """Watch the configured directories; returns messages for the user."""
        self.stop()
        self._settings = settings
        messages: list[str] = []
        loop = asyncio.get_running_loop()
        self._observer = Observer()
        for path in settings.watch:
            d = WatchedDir(path)
            d.coalescer = Coalescer(functools.partial(self._check, d), max_wait=MAX_SETTLE_S)
            self.dirs[path] = d
            if not path.is_dir():
                d.state = "missing"
                messages.append(f"checkpoint directory {path} does not exist; not watched")
                continue
            task = loop.create_task(self._start(d, self._observer))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)
        self._observer.start()
        self._on_change()
        return messages

    async def _start(self, d: WatchedDir, observer: Any) -> None:
        """Watch ``d`` unless it holds a large tree; then compare what is already there."""
        why = await asyncio.to_thread(fswatch.too_large, d.path)
        # Made now, before the watch starts: the worker creating it inside a watched folder
        # would otherwise be a change outside the ignored cache folder.
        default_dir().mkdir(parents=True, exist_ok=True)
        if self.dirs.get(d.path) is not d or observer is not self._observer:
            return  # reconfigured meanwhile
        if why:
            d.state = "refused"
            self._on_change()
            error = f"checkpoint directory {d.path}: {why}; not watched (watch a run's own folder)"
            await self._on_outcome(Outcome(d.path, error=error))
            return
        loop = asyncio.get_running_loop()
        fswatch.schedule(observer, _Handler(loop, self._changed, d.path), d.path)
        assert d.coalescer is not None
        d.coalescer.trigger()

    def _changed(self, root: Path, gone: bool) -> None:
        d = self.dirs.get(root)
        if d is None or d.state != "watching" or d.coalescer is None:
            return
        if gone or not root.is_dir():
            self._mark_deleted(d)
            return
        d.coalescer.trigger(SETTLE_S)

    def _mark_deleted(self, d: WatchedDir) -> None:
        d.state = "deleted"
        self._on_change()
        asyncio.get_running_loop().create_task(
            self._on_outcome(
                Outcome(
                    d.path, error=f"checkpoint directory {d.path} was deleted; no longer watched"
                )
            )
        )

    async def _check(self, d: WatchedDir) -> None:
        if d.state != "watching":
            return
        if not d.path.is_dir():
            self._mark_deleted(d)
            return
        s = self._settings
        job = {
            "run": str(d.path),
            "reference": str(s.reference) if s.reference else None,
            "noiseReference": str(s.noise_reference) if s.noise_reference else None,
            "device": s.device,
            "cacheDir": str(default_dir()),
        }
        report = await self._progress(d.path)
        await self._on_outcome(await self._run_worker(d, job, report))

    async def _run_worker(
        self, d: WatchedDir, job: dict[str, Any], progress: Progress | None
    ) -> Outcome:
        proc = await start_worker("denpex.lsp.drift_worker", job)
        d.process = proc
        assert proc.stdout and proc.stderr
        stderr_task = asyncio.ensure_future(proc.stderr.read())
        outcome = Outcome(d.path)
        if progress:
            progress("begin", 0, 0)
        try:
            async for raw in proc.stdout:
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue  # not ours: the protocol lines are whole JSON objects
                if "progress" in msg and progress:
                    progress("report", int(msg["progress"]["done"]), int(msg["progress"]["total"]))
                elif "report" in msg:
                    outcome.report = msg["report"]
                    outcome.alarm = DriftAlarm.from_json(msg.get("alarm"))
                elif "error" in msg:
                    outcome.error = str(msg["error"])
            code = await proc.wait()
        finally:
            d.process = None
            if progress:
                progress("end", 0, 0)
        err = (await stderr_task).decode("utf-8", "replace")[-STDERR_TAIL:]
        if outcome.report is None and outcome.error is None:
            outcome.error = f"drift worker for {d.path} exited with code {code}: {last_line(err)}"
            outcome.crashed = True
            log.warning("drift worker failed (exit %s):\n%s", code, err)
        return outcome

    def status(self) -> tuple[list[str], list[str]]:
        watching = [str(p) for p, d in self.dirs.items() if d.state == "watching"]
        missing = [str(p) for p, d in self.dirs.items() if d.state != "watching"]
        return watching, missing

    def stop(self) -> None:
        for task in self._starting:
            task.cancel()
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        for d in self.dirs.values():
            if d.coalescer:
                d.coalescer.cancel()
            if d.process and d.process.returncode is None:
                d.process.kill()
        self.dirs = {}

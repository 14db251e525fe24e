"""`denpex watch`: follow run directories and print every checkpoint's figures as it lands.

A watchdog observer wakes the loop on changes under the watched folders (``fswatch``: never
on the watcher's own reads, nor on writes to its cache); a poll timer covers file systems
that send no events: it fires once a poll while nothing waits, and as soon as a checkpoint
seen still changing may have settled. Between two scans the loop sleeps at least ``FLOOR_S``
(or half a poll when shorter), so a burst of writes costs one scan and an idle folder a scan
per poll. Each run is a ``DriftSession`` (``drift/session.py``): it decides when a checkpoint is
complete (its files unchanged for one poll interval) and compares it once, through the step
cache (default ``$XDG_CACHE_HOME/denpex``, else ``~/.cache/denpex``), so a restart prints the
known steps again without recomputing them. This module only prints what the sessions find.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from denpex.drift import fswatch
from denpex.drift.cache import StepCache, default_dir
from denpex.drift.compare import Kernel
from denpex.drift.report import DriftReport, finding_lines, verdict_line
from denpex.drift.session import DriftSession, Stability, Update
from denpex.drift.sources import resolve_device
from denpex.errors import InputError
from denpex.notes import Note

MIN_POLL_S = 0.1
FLOOR_S = 0.5


class _Wake(FileSystemEventHandler):
    """watchdog handler: a change under a watched directory wakes the loop."""

    def __init__(self, event: threading.Event, ignored: tuple[Path, ...]) -> None:
        self.event = event
        self.ignored = ignored

    def on_any_event(self, event: FileSystemEvent) -> None:
        if fswatch.is_change(event, self.ignored):
            self.event.set()


def _check_options(poll: float, tolerance: float, exit_after: float | None) -> None:
    if not (math.isfinite(poll) and poll >= MIN_POLL_S):
        raise InputError(f"--poll {poll}: give a number of seconds, at least {MIN_POLL_S}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise InputError(f"--tolerance {tolerance}: give a finite number, 0 or more")
    if exit_after is not None and not (math.isfinite(exit_after) and exit_after >= 0):
        raise InputError(f"--exit-after {exit_after}: give a number of seconds, 0 or more")


def watch(
    dirs: list[str],
    *,
    ref: str | None = None,
    noise_ref: str | None = None,
    tolerance: float = 0.0,
    device: str = "auto",
    key: str | None = None,
    cache_dir: str | None = None,
    poll: float = 2.0,
    as_json: bool = False,
    exit_after: float | None = None,
    out: TextIO | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Runs until interrupted, ``exit_after`` seconds or ``stop`` is set; 1 if anything was
    flagged."""
    from watchdog.observers import Observer

    _check_options(poll, tolerance, exit_after)
    stream = out or sys.stdout
    watched = {*dirs, *(p for p in (ref, noise_ref) if p)}
    for d in sorted(watched):
        if not Path(d).is_dir():
            raise InputError(f"{d}: not a directory")
        why = fswatch.too_large(Path(d))
        if why:
            raise InputError(f"{d}: {why}; watch a run's own folder")
    cache = Path(cache_dir) if cache_dir else default_dir()
    wake = threading.Event()
    observer = Observer()
    for d in watched:
        fswatch.schedule(observer, _Wake(wake, (cache.resolve(),)), Path(d).resolve())
    observer.start()
    kernel = Kernel(resolve_device(device))
    stability = Stability(poll)
    step_cache = StepCache(cache)
    sessions = [
        DriftSession(
            d, ref=ref, noise_ref=noise_ref, tolerance=tolerance, key=key, cache=step_cache,
            kernel=kernel, stability=stability,
        )
        for d in dirs
    ]  # fmt: skip
    printer = _Printer(stream, as_json)
    deadline = math.inf if exit_after is None else time.monotonic() + exit_after
    pause = stop or threading.Event()  # sleeps that a stop request cuts short
    floor = min(FLOOR_S, poll / 2)

    def left(seconds: float) -> float:
        return max(0.0, min(seconds, deadline - time.monotonic()))

    try:
        while time.monotonic() < deadline and not pause.is_set():
            wake.clear()  # changes from here on are seen by this scan or wake the next
            for session in sessions:
                printer.show(session.run, session.update())
            waiting = stability.due()
            timer = poll if waiting is None else min(poll, max(waiting, floor))
            pause.wait(left(floor))  # the floor: no event brings the next scan sooner
            wake.wait(left(timer - floor))
    finally:
        observer.stop()
        observer.join(timeout=5)
        kernel.close()
    return 1 if any(s.alarmed for s in sessions) else 0


class _Printer:
    """Each session's new points, its alarms and its warnings, as lines or JSON events."""

    def __init__(self, stream: TextIO, as_json: bool) -> None:
        self.stream = stream
        self.as_json = as_json
        self._told: set[tuple[str, str]] = set()

    def show(self, root: str, update: Update) -> None:
        for w in update.warnings:
            self._warn(w)
        if update.report is None:
            return
        for point in update.new_points:
            self._point(root, point.to_json())
        if update.alarm:
            self._finding(update.report)

    def _write(self, obj: dict[str, Any], line: str) -> None:
        self.stream.write((json.dumps(obj) if self.as_json else line) + "\n")
        self.stream.flush()

    def _point(self, root: str, point: dict[str, Any]) -> None:
        top = point["top_tensors"][0]["name"] if point["top_tensors"] else "-"
        line = (
            f"{root}: step {point['step']}: l2 {point['l2']:.3e} rel {point['rel_l2']:.3e} "
            f"max|Δ| {point['max_abs']:.3e} top {top}"
            if point["l2"] is not None
            else f"{root}: step {point['step']}: non-finite values"
        )
        self._write({"event": "point", "run": root, "point": point}, line)

    def _finding(self, report: DriftReport) -> None:
        data = report.to_json()
        event = {
            k: data[k]
            for k in ("run", "reference", "verdict", "onset_step", "faulty_rank", "finding")
        }
        lines = [f"{report.run}: {verdict_line(report)}", *finding_lines(report, cause=False)]
        self._write({"event": "finding", **event}, "\n".join(lines))

    def _warn(self, text: str) -> None:
        # Incomplete checkpoints are retried every poll (and their size changes while they
        # grow): say so once per checkpoint and kind, not once per poll.
        topic = (text.kind, text.subject) if isinstance(text, Note) else ("", text)
        if topic not in self._told:
            self._told.add(topic)
            sys.stderr.write(f"denpex watch: {text}\n")


__all__ = ["watch"]

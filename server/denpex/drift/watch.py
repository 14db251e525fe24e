"""`denpex watch`: follow run directories and judge every checkpoint as it lands.

A watchdog observer wakes the loop on changes under the watched folders (``fswatch``: never
on the watcher's own reads, nor on writes to its cache); a poll timer covers file systems
that send no events. Between two scans the loop sleeps at least ``FLOOR_S`` (or half a
poll when shorter), so a burst of writes costs one scan and an idle folder a scan per half
poll. A checkpoint is compared only once it is complete: the static checks of
``discover`` (no temporary name, safetensors header and index whole, DeepSpeed ``latest``
and DCP ``.metadata`` written) *and* the size and mtime of every one of its files
unchanged for at least one poll interval, so a file still being written is never read.
A directory of probe fingerprints (``denpex.probe``) is judged whole whenever its files
change: records are small, and a torn last line is skipped until it is complete.
Results go through the step cache (default ``$XDG_CACHE_HOME/denpex``, else
``~/.cache/denpex``): a restart prints the known steps again without recomputing them.
A checkpoint or fingerprint file that vanishes while it is listed or read is skipped (the
next scan sees the folder as it is then); the watch goes on.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from denpex.checkpoints.discover import Checkpoint, find_checkpoints
from denpex.drift import fingerprints, fswatch
from denpex.drift.api import (
    Pairs,
    compare_replica_steps,
    compare_steps,
    resolve_device,
)
from denpex.drift.cache import StepCache, default_dir
from denpex.drift.compare import Kernel
from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.report import build_report, render_human
from denpex.errors import InputError
from denpex.fingerprints.records import fingerprint_files

_Item = TypeVar("_Item", StepDiff, ReplicaStep)

MIN_POLL_S = 0.1
FLOOR_S = 0.5
# What a file vanishing between a listing and a read raises (a folder replaced by a file,
# or the reverse, gives NotADirectoryError / IsADirectoryError).
_VANISHED = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


def _signature(cp: Checkpoint) -> tuple[tuple[str, int, int], ...]:
    paths = list(cp.ranks.values()) or [cp.path]
    files: list[Path] = []
    try:
        for p in paths:
            files.extend([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()))
    except OSError:  # a folder vanished while listed: not stable
        return ()
    return _stat(files)


def _fingerprint_signature(*dirs: str | None) -> tuple[tuple[str, int, int], ...]:
    return _stat([f for d in dirs if d for f in fingerprint_files(d)])


def _stat(files: list[Path]) -> tuple[tuple[str, int, int], ...]:
    sig = []
    for f in files:
        try:
            st = f.stat()
        except OSError:  # vanished between listing and stat: not stable
            return ()
        sig.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(sig)


class _Stable:
    """Checkpoints whose files have held still for ``poll`` seconds."""

    def __init__(self, poll: float) -> None:
        self.poll = poll
        self._seen: dict[tuple[Path, int], tuple[Any, float]] = {}

    def ready(self, root: str, replicas: bool, warnings: list[str]) -> list[Checkpoint]:
        now = time.monotonic()
        out = []
        try:
            found = find_checkpoints(root, warnings, replicas=replicas)
        except InputError as exc:
            warnings.append(str(exc))
            return []
        except _VANISHED:  # something vanished mid-listing: the next scan lists it afresh
            return []
        for cp in found:
            sig = _signature(cp)
            key = (cp.path, cp.step)
            prev = self._seen.get(key)
            if prev is None or prev[0] != sig or not sig:
                self._seen[key] = (sig, now)
            elif now - prev[1] >= self.poll:
                out.append(cp)
        return out


@dataclass
class _Run:
    root: str
    done: dict[int, StepDiff | ReplicaStep] = field(default_factory=dict)
    shown: set[int] = field(default_factory=set)  # steps already printed
    files: tuple[Any, ...] = ()  # fingerprint files' signature at the last report
    last_alarm: tuple[Any, ...] | None = None


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
    session = _Session(
        stream,
        as_json,
        ref,
        noise_ref,
        tolerance,
        key,
        StepCache(cache),
        Kernel(resolve_device(device)),
        poll,
    )
    runs = [_Run(d) for d in dirs]
    deadline = math.inf if exit_after is None else time.monotonic() + exit_after
    pause = stop or threading.Event()  # sleeps that a stop request cuts short
    floor = min(FLOOR_S, poll / 2)

    def left(seconds: float) -> float:
        return max(0.0, min(seconds, deadline - time.monotonic()))

    try:
        while time.monotonic() < deadline and not pause.is_set():
            wake.clear()  # changes from here on are seen by this scan or wake the next
            for run in runs:
                session.update(run)
            pause.wait(left(floor))  # the floor: no event brings the next scan sooner
            wake.wait(left(poll / 2 - floor))
    finally:
        observer.stop()
        observer.join(timeout=5)
        session.kernel.close()
    return 1 if any(r.last_alarm for r in runs) else 0


class _Session:
    def __init__(
        self,
        stream: TextIO,
        as_json: bool,
        ref: str | None,
        noise_ref: str | None,
        tolerance: float,
        key: str | None,
        cache: StepCache,
        kernel: Kernel,
        poll: float,
    ) -> None:
        self.stream = stream
        self.as_json = as_json
        self.ref = ref
        self.noise_ref = noise_ref
        self.tolerance = tolerance
        self.key = key
        self.cache = cache
        self.kernel = kernel
        self.stable = _Stable(poll)
        self.noise: dict[int, StepDiff] = {}
        self._told: set[str] = set()

    def update(self, run: _Run) -> None:
        report = (
            self._fingerprint_report(run)
            if fingerprints.is_fingerprint_dir(run.root)
            else self._checkpoint_report(run)
        )
        if report is None:
            return
        for point in report["points"]:
            if point["step"] not in run.shown:
                run.shown.add(point["step"])
                self._point(run.root, point)
        alarm = (report["verdict"], report["onset_step"], report["faulty_rank"])
        if report["flagged"] and alarm != run.last_alarm:
            run.last_alarm = alarm
            self._finding(report)

    def _fingerprint_report(self, run: _Run) -> dict[str, Any] | None:
        try:
            files = _fingerprint_signature(run.root, self.ref, self.noise_ref)
        except _VANISHED:
            return None
        if files == run.files:
            return None
        run.files = files
        try:
            if self.ref:
                report = fingerprints.drift_report(run.root, self.ref, noise_ref=self.noise_ref)
            else:
                report = fingerprints.replicas_report(run.root, tolerance=self.tolerance)
        except InputError as exc:  # e.g. no step fingerprinted by both runs yet
            self._warn(str(exc))
            return None
        except _VANISHED:  # a rank's file vanished mid-read: judged again at the next change
            run.files = ()
            return None
        for w in report["warnings"]:
            # A run being written has a torn last line and steps its reference lacks (or
            # the reverse) on most polls: normal while it grows, so not worth a warning.
            if not w.startswith("steps ") and not w.endswith("incomplete last line skipped"):
                self._warn(w)
        return report

    def _checkpoint_report(self, run: _Run) -> dict[str, Any] | None:
        warnings: list[str] = []
        new: list[StepDiff] | list[ReplicaStep]
        if self.ref:
            new = self._reference_steps(run, warnings)
        else:
            cps = [c for c in self.stable.ready(run.root, True, warnings) if c.step not in run.done]
            new = [
                r
                for c in cps
                for r in self._each(c, warnings, compare_replica_steps, tolerance=self.tolerance)
            ]
        for w in warnings:
            self._warn(w)
        if not new:
            return None
        for item in new:
            run.done[item.step] = item
        return self._report(run)

    def _reference_steps(self, run: _Run, warnings: list[str]) -> list[StepDiff]:
        assert self.ref is not None
        refs = {c.step: c for c in self.stable.ready(self.ref, False, [])}
        cps = [c for c in self.stable.ready(run.root, False, warnings) if c.step not in run.done]
        pairs: Pairs = [(c, refs[c.step]) for c in cps if c.step in refs]
        if self.noise_ref:
            noisy = [c for c in self.stable.ready(self.noise_ref, False, []) if c.step in refs]
            todo: Pairs = [(c, refs[c.step]) for c in noisy if c.step not in self.noise]
            for pair in todo:
                for diff in self._each(pair, warnings, compare_steps):
                    self.noise[diff.step] = diff
        return [diff for pair in pairs for diff in self._each(pair, warnings, compare_steps)]

    def _each(
        self,
        item: Checkpoint | tuple[Checkpoint, Checkpoint],
        warnings: list[str],
        compare: Callable[..., list[_Item]],
        **options: Any,
    ) -> list[_Item]:
        """``compare`` on one checkpoint (or pair): one that vanished while being read is
        skipped with a warning, and the others are still compared."""
        try:
            return compare(
                [item],
                kernel=self.kernel,
                key=self.key,
                cache=self.cache,
                warnings=warnings,
                on_bytes=lambda n: None,
                **options,
            )
        except _VANISHED as exc:
            warnings.append(f"{exc.filename or item}: vanished while being read; skipped")
            return []

    def _report(self, run: _Run) -> dict[str, Any]:
        series = [run.done[s] for s in sorted(run.done)]
        if self.ref:
            from denpex.drift.verdict import assess

            steps = [s for s in series if isinstance(s, StepDiff)]
            noise = [self.noise[s] for s in sorted(self.noise)] or None
            assessment = assess(steps, noise, run=run.root, ref=self.ref)
            mode = "reference"
        else:
            from denpex.drift.verdict import assess_replicas

            reps = [s for s in series if isinstance(s, ReplicaStep)]
            assessment = assess_replicas(reps, run=run.root)
            mode = "replicas"
        return build_report(
            mode=mode,
            run=run.root,
            reference=self.ref,
            series=series,
            assessment=assessment,
            warnings=[],
            device=self.kernel.device,
            noise_ref=self.noise_ref,
        )

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

    def _finding(self, report: dict[str, Any]) -> None:
        summary = render_human(report).splitlines()
        verdict_line = next(line for line in summary if line.startswith("verdict:"))
        extra = [line for line in summary if line.startswith(("finding:", "  verify:"))]
        event = {
            k: report[k]
            for k in ("run", "reference", "verdict", "onset_step", "faulty_rank", "finding")
        }
        self._write(
            {"event": "finding", **event}, "\n".join([f"{report['run']}: {verdict_line}", *extra])
        )

    def _warn(self, text: str) -> None:
        # Incomplete checkpoints are retried every poll (and their size changes while they
        # grow): say so once per checkpoint, not once per poll.
        topic = text.split(": skipped:", 1)[0]
        if topic not in self._told:
            self._told.add(topic)
            sys.stderr.write(f"denpex watch: {text}\n")


__all__ = ["watch"]

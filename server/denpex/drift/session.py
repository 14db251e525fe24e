"""One run followed as its checkpoints (or probe fingerprints) land: ``DriftSession``.

Used by ``denpex watch`` (one session per watched run, called every scan) and by the
language server's drift worker (a fresh session per check, which waits out the settle time
once). Both therefore agree on when a checkpoint is complete, and share one step cache
(``cache.default_dir``).

The one stability rule: a checkpoint is compared only once it is complete, i.e. it passes
the static checks of ``discover`` (no temporary name, safetensors header and index whole,
DeepSpeed ``latest`` and DCP ``.metadata`` written) *and* the size and mtime of every one of
its files stayed unchanged for ``settle`` seconds, so a file still being written is never
read. A directory of probe fingerprints is judged whole whenever its files change: records
are small, and a torn last line is skipped until it is complete. A checkpoint or
fingerprint file that vanishes while it is listed or read is skipped (the next update sees
the folder as it is then).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from denpex.checkpoints.discover import Checkpoint, Pairs, find_checkpoints
from denpex.drift import fingerprints
from denpex.drift.api import reference_report, replica_report
from denpex.drift.cache import StepCache
from denpex.drift.compare import Kernel
from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.per_rank import RankStep, rank_steps, replica_checkpoints, split_ranks
from denpex.drift.rank_steps import RankResult, compare_rank_steps, compare_replica_steps
from denpex.drift.report import DriftReport, Place, Point
from denpex.drift.sources import (
    ByteProgress,
    Progress,
    Series,
    bytes_to_read,
    checkpoint_size,
    compare_steps,
    rank_series,
)
from denpex.errors import InputError
from denpex.fingerprints.records import fingerprint_files
from denpex.notes import Note

_Item = TypeVar("_Item", StepDiff, ReplicaStep, RankResult)
Signature = tuple[tuple[str, int, int], ...]
# What a file vanishing between a listing and a read raises (a folder replaced by a file,
# or the reverse, gives NotADirectoryError / IsADirectoryError).
VANISHED = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


def _signature(cp: Checkpoint) -> Signature:
    paths = list(cp.ranks.values()) or [cp.path]
    files: list[Path] = []
    try:
        for p in paths:
            files.extend([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()))
    except OSError:  # a folder vanished while listed: not stable
        return ()
    return _stat(files)


def _fingerprint_signature(*dirs: str | None) -> Signature:
    return _stat([f for d in dirs if d for f in fingerprint_files(d)])


def _stat(files: list[Path]) -> Signature:
    sig = []
    for f in files:
        try:
            st = f.stat()
        except OSError:  # vanished between listing and stat: not stable
            return ()
        sig.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(sig)


class Stability:
    """The stability rule: checkpoints whose files have held still for ``settle`` seconds."""

    def __init__(self, settle: float) -> None:
        self.settle = settle
        self._seen: dict[tuple[Path, int], tuple[Signature, float]] = {}
        self._pending: set[tuple[Path, int]] = set()  # seen, not settled at the last look

    def ready(self, root: str, replicas: bool, warnings: list[str]) -> list[Checkpoint]:
        now = time.monotonic()
        out = []
        try:
            found = find_checkpoints(root, warnings, replicas=replicas)
        except InputError as exc:
            warnings.append(str(exc))
            return []
        except VANISHED:  # something vanished mid-listing: the next update lists it afresh
            return []
        for cp in found:
            sig = _signature(cp)
            key = (cp.path, cp.step)
            prev = self._seen.get(key)
            if prev is None or prev[0] != sig or not sig:
                self._seen[key] = (sig, now)
                self._pending.add(key)
            elif now - prev[1] >= self.settle:
                self._pending.discard(key)
                out.append(cp)
        return out

    def due(self) -> float | None:
        """Seconds until the latest checkpoint seen but not settled at the last look may be
        ready; None when none is waiting."""
        now = time.monotonic()
        waits = [max(0.0, self._seen[k][1] + self.settle - now) for k in self._pending]
        return max(waits, default=None)


@dataclass
class Update:
    """What one ``DriftSession.update`` found: nothing new (``report`` None), or the whole
    series judged again, its points not reported before and the warnings worth showing."""

    report: DriftReport | None = None
    new_points: list[Point] = field(default_factory=list)
    alarm: bool = False  # flagged, and not the alarm of the previous update
    warnings: list[str] = field(default_factory=list)


class DriftSession:
    """One run against ``ref`` (and ``noise_ref``), or its replicas without ``ref``; each
    ``update`` compares only what is new and complete, through the step cache."""

    def __init__(
        self,
        run: str,
        *,
        ref: str | None = None,
        noise_ref: str | None = None,
        tolerance: float = 0.0,
        key: str | None = None,
        cache: StepCache,
        kernel: Kernel,
        stability: Stability,
        progress: Progress | None = None,
    ) -> None:
        self.run = run
        self.ref = ref
        self.noise_ref = noise_ref
        self.tolerance = tolerance
        self.key = key
        self.cache = cache
        self.kernel = kernel
        self.stability = stability
        self.progress = progress
        self._bytes = ByteProgress(0, None)
        self.done: dict[int, ReplicaStep] = {}  # replica mode: step -> the ranks compared
        self.places: dict[int, Place] = {}  # replica mode: step -> the run's checkpoint
        # Reference mode, by rank (None: one checkpoint per step; else ``per_rank.split_ranks``):
        # step -> the comparison, and the pairs compared (where each point was read from).
        self.compared: dict[int | None, dict[int, StepDiff]] = {}
        self.noise: dict[int | None, dict[int, StepDiff]] = {}
        self.pairs: dict[int | None, Pairs] = {}
        self.noise_pairs: dict[int | None, Pairs] = {}
        self.replicas: dict[int, ReplicaStep] = {}  # per-rank replicas against each other
        self._shown: set[int] = set()  # steps already in an update's new_points
        self._files: Signature = ()  # fingerprint files' signature at the last report
        self._alarm: tuple[Any, ...] | None = None
        self.last: DriftReport | None = None  # the latest judged series

    @property
    def alarmed(self) -> bool:
        """The last judged series was flagged."""
        return bool(self._alarm)

    def update(self) -> Update:
        warnings: list[str] = []
        if fingerprints.is_fingerprint_dir(self.run):
            report = self._fingerprint_report(warnings)
        else:
            report = self._checkpoint_report(warnings)
        out = Update(report, warnings=warnings)
        if report is None:
            return out
        self.last = report
        out.new_points = [p for p in report.points if p.step not in self._shown]
        self._shown.update(p.step for p in out.new_points)
        alarm = (report.verdict, report.onset_step, report.faulty_rank)
        if report.flagged and alarm != self._alarm:
            self._alarm = alarm
            out.alarm = True
        return out

    def _fingerprint_report(self, warnings: list[str]) -> DriftReport | None:
        try:
            files = _fingerprint_signature(self.run, self.ref, self.noise_ref)
        except VANISHED:
            return None
        if files == self._files:
            return None
        self._files = files
        source = fingerprints.FingerprintSource(self.run)
        try:
            if self.ref:
                compared = source.against(self.ref, self.noise_ref)
                noise_ref = self.noise_ref
                report = reference_report(
                    self.run,
                    self.ref,
                    compared,
                    noise_ref=noise_ref,
                    against_noise=(lambda: source.against(noise_ref, None).steps)
                    if noise_ref
                    else None,
                )
            else:
                replicas = source.replicas(self.tolerance)
                report = replica_report(self.run, replicas, tolerance=self.tolerance)
        except InputError as exc:  # e.g. no step fingerprinted by both runs yet
            warnings.append(str(exc))
            return None
        except VANISHED:  # a rank's file vanished mid-read: judged again at the next change
            self._files = ()
            return None
        # A run being written has a torn last line and steps its reference lacks (or the
        # reverse) on most updates: normal while it grows, so not worth a warning.
        warnings.extend(w for w in report.all_warnings if w not in report.transient)
        return report

    def _checkpoint_report(self, warnings: list[str]) -> DriftReport | None:
        if self.ref:
            if not self._reference_steps(warnings):
                return None
            return self.report()
        cps = [c for c in self.stability.ready(self.run, True, warnings) if c.step not in self.done]
        self._start(sum(checkpoint_size(c) for c in cps))
        new = [
            r
            for c in cps
            for r in self._each(c, warnings, compare_replica_steps, tolerance=self.tolerance)
        ]
        self.places.update({c.step: Place(str(c.path)) for c in cps})
        self._bytes.finish()
        if not new:
            return None
        self.done.update((item.step, item) for item in new)
        return self.report()

    def _reference_steps(self, warnings: list[str]) -> bool:
        """Compares the run's new complete checkpoints (each rank's, on per-rank layouts)
        with the reference's; True when any was."""
        assert self.ref is not None
        refs = {c.step: c for c in self.stability.ready(self.ref, False, [])}
        done = {s for by in self.compared.values() for s in by}
        cps = [c for c in self.stability.ready(self.run, False, warnings) if c.step not in done]
        pairs: Pairs = [(c, refs[c.step]) for c in cps if c.step in refs]
        todo: Pairs = []
        if self.noise_ref:
            noisy = [c for c in self.stability.ready(self.noise_ref, False, []) if c.step in refs]
            known = {s for by in self.noise.values() for s in by}
            todo = [(c, refs[c.step]) for c in noisy if c.step not in known]
        try:
            by_rank, noise_by_rank = split_ranks(pairs, warnings), split_ranks(todo, warnings)
            if by_rank and self.compared and (None in by_rank) != (None in self.compared):
                raise InputError(f"{self.run}: some steps hold per-rank checkpoints and some not")
        except InputError as exc:  # mixed layouts: said, and nothing compared
            warnings.append(str(exc))
            return False
        replicas = replica_checkpoints(pairs, self.key) if None not in by_rank else []
        self._start(bytes_to_read(by_rank, replicas) + bytes_to_read(noise_by_rank, []))
        self._compare(noise_by_rank, [], self.noise, self.noise_pairs, warnings)
        found = self._compare(by_rank, replicas, self.compared, self.pairs, warnings)
        self._bytes.finish()
        return found

    def _compare(
        self,
        by_rank: dict[int | None, Pairs],
        replicas: list[Checkpoint],
        into: dict[int | None, dict[int, StepDiff]],
        pairs: dict[int | None, Pairs],
        warnings: list[str],
    ) -> bool:
        """``by_rank`` compared into ``into``: pair by pair, or on a per-rank layout step by
        step, each file read once (with ``replicas``, the ranks with each other too)."""
        found = False
        for rank, group in by_rank.items():
            pairs.setdefault(rank, []).extend(group)
        if None in by_rank:
            for pair in by_rank[None]:
                for diff in self._each(pair, warnings, compare_steps):
                    into.setdefault(None, {})[diff.step] = diff
                    found = True
            return found
        for st in rank_steps(by_rank, replicas):
            for result in self._each(st, warnings, compare_rank_steps, tolerance=0.0):
                for rank, diff in result.against.items():
                    into.setdefault(rank, {})[diff.step] = diff
                    found = True
                if result.replicas is not None:
                    self.replicas[result.step] = result.replicas
        return found

    def _start(self, total: int) -> None:
        """Progress of this update's comparisons, in bytes read."""
        self._bytes = ByteProgress(total, self.progress if total else None)

    def _each(
        self,
        item: Checkpoint | tuple[Checkpoint, Checkpoint] | RankStep,
        warnings: list[str],
        compare: Callable[..., list[_Item]],
        **options: Any,
    ) -> list[_Item]:
        """``compare`` on one checkpoint (or pair, or per-rank step): one that vanished while
        being read is skipped with a warning, and the others are still compared."""
        try:
            return compare(
                [item],
                kernel=self.kernel,
                key=self.key,
                cache=self.cache,
                warnings=warnings,
                on_bytes=self._bytes,
                **options,
            )
        except VANISHED as exc:
            what = str(exc.filename or item)
            warnings.append(Note("vanished", what, f"{what}: vanished while being read; skipped"))
            return []

    def _against_noise(self) -> list[StepDiff]:
        """The run's compared checkpoints against the noise run's at the same steps, for a
        verdict that needs them (``noise_twin``; one checkpoint per step only)."""
        noise = {c.step: c for c, _ in self.noise_pairs.get(None, [])}
        pairs = [(c, noise[c.step]) for c, _ in self.pairs.get(None, []) if c.step in noise]
        return [d for pair in pairs for d in self._each(pair, [], compare_steps)]

    def report(self) -> DriftReport:
        """The series compared so far, judged."""
        device = self.kernel.device
        if self.ref:

            def ordered(
                by: dict[int | None, dict[int, StepDiff]],
            ) -> dict[int | None, list[StepDiff]]:
                return {r: [steps[s] for s in sorted(steps)] for r, steps in by.items()}

            series = rank_series(
                ordered(self.compared),
                ordered(self.noise),
                self.pairs,
                self.noise_pairs,
                [],
                device,
            )
            series.replicas = [self.replicas[s] for s in sorted(self.replicas)]
            return reference_report(
                self.run, self.ref, series, noise_ref=self.noise_ref,
                against_noise=self._against_noise if self.noise_ref else None,
            )  # fmt: skip
        reps = [self.done[s] for s in sorted(self.done)]
        return replica_report(self.run, Series(reps, [], device, places=self.places))


__all__ = ["DriftSession", "Stability", "Update"]

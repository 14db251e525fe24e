"""Where a drift series comes from: checkpoints or probe fingerprints, behind one interface.

A ``Source`` is one run's data. Against a reference (and a noise run) it gives the
``StepDiff`` series the verdict judges; alone, its replicas against their majority. Either
way it says where each step's data lives (``Place``), so the editor marks the right file and
line without discovering the run again. ``open_source`` picks the kind: a directory of probe
fingerprints (``denpex.probe``) or checkpoints. Checkpoints are compared here; fingerprints
in ``fingerprints``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from denpex.checkpoints.discover import (
    Checkpoint,
    Pairs,
    find_checkpoints,
    incomplete_reason,
    single_checkpoint,
)
from denpex.checkpoints.layouts import model_files
from denpex.checkpoints.reader import CheckpointError
from denpex.drift import distributed
from denpex.drift.cache import StepCache, fingerprint
from denpex.drift.compare import Kernel, compare_readers
from denpex.drift.model import ReplicaStep, StepDiff
from denpex.drift.per_rank import rank_steps, replica_checkpoints, split_ranks
from denpex.drift.rank_steps import compare_rank_steps, compare_replica_steps, open_reader
from denpex.drift.report import Place
from denpex.errors import InputError

Progress = Callable[[int, int], None]
S = TypeVar("S", StepDiff, ReplicaStep)


@dataclass
class Series(Generic[S]):
    """What a source compared, in step order, and what the verdict and report need with it."""

    steps: list[S]
    warnings: list[str]
    device: str
    places: dict[int, Place] = field(default_factory=dict)  # step -> the run's data
    rank_places: dict[int, dict[int, Place]] = field(default_factory=dict)  # replicas: per rank
    noise: list[StepDiff] | None = None  # the noise run against the same reference
    # Per-rank layouts (step_N/rank_R.pt): each rank's own series, judged apart (``per_rank``).
    ranks: dict[int, list[StepDiff]] = field(default_factory=dict)
    noise_ranks: dict[int, list[StepDiff]] = field(default_factory=dict)
    # Per-rank layouts whose ranks are replicas: the run's ranks against their majority.
    replicas: list[ReplicaStep] = field(default_factory=list)
    one_point: bool = False  # two single checkpoints: one point, judged by ``one_point``
    noise_places: dict[int, Place] = field(default_factory=dict)
    transient: set[str] = field(default_factory=set)  # warnings normal while a run is written
    # Where the run trained, when the source knows (fingerprint records say so).
    gpu: int | None = None
    host: str | None = None
    gpus_per_node: int | None = None


class Source(Protocol):
    def against(self, ref: str, noise_ref: str | None) -> Series[StepDiff]:
        """The run against ``ref`` step by step (and ``noise_ref`` against ``ref``)."""
        ...

    def replicas(self, tolerance: float) -> Series[ReplicaStep]:
        """Each step's replicas against their majority."""
        ...


def open_source(
    run: str,
    *,
    device: str = "auto",
    key: str | None = None,
    cache_dir: str | None = None,
    progress: Progress | None = None,
) -> Source:
    from denpex.drift import fingerprints

    if fingerprints.is_fingerprint_dir(run):
        return fingerprints.FingerprintSource(run)
    return CheckpointSource(run, device=device, key=key, cache_dir=cache_dir, progress=progress)


def resolve_device(device: str) -> str:
    """``auto`` picks CUDA when present; torch is imported only when a driver is there."""
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise InputError(f"--device {device!r}: expected auto, cpu or cuda")
    if device == "cpu":
        return "cpu"
    has_driver = os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi")
    available = False
    if has_driver or device != "auto":
        import torch

        available = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if available else "cpu"
    if not available:
        raise InputError(f"--device {device}: no CUDA device available (use --device cpu)")
    return device


class CheckpointSource:
    """A run's checkpoints; each step read once (the step cache remembers it)."""

    def __init__(
        self,
        run: str,
        *,
        device: str = "auto",
        key: str | None = None,
        cache_dir: str | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.run = run
        self.device = device
        self.key = key
        self.cache = StepCache(cache_dir)
        self.progress = progress

    def against(self, ref: str, noise_ref: str | None) -> Series[StepDiff]:
        run, warnings = self.run, list[str]()
        run_one, ref_one = single_checkpoint(run), single_checkpoint(ref)
        if run_one and ref_one:
            pairs, noise_pairs = _one_pair(run_one, ref_one, noise_ref, warnings)
        else:
            pairs, noise_pairs = _step_pairs(run, ref, noise_ref, warnings)
        by_rank = split_ranks(pairs, warnings)
        noise_by_rank = split_ranks(noise_pairs, warnings) if noise_pairs else {}
        replicas = replica_checkpoints(pairs, self.key) if None not in by_rank else []
        counter = ByteProgress(
            bytes_to_read(by_rank, replicas) + bytes_to_read(noise_by_rank, []), self.progress
        )
        kernel = distributed.make_kernel(resolve_device(self.device))
        options: dict[str, Any] = dict(
            kernel=kernel, key=self.key, cache=self.cache, warnings=warnings
        )
        try:
            series, replica_steps = compare_by_rank(by_rank, replicas, counter, **options)
            noise, _ = compare_by_rank(noise_by_rank, [], counter, **options)
        finally:
            kernel.close()
        counter.finish()
        if not series:
            raise InputError(
                f"no step of {run} could be compared: {warnings[-1] if warnings else ''}"
            )
        out = rank_series(series, noise, by_rank, noise_by_rank, warnings, kernel.device)
        out.one_point = bool(run_one and ref_one)
        out.replicas = replica_steps
        return out

    def replicas(self, tolerance: float) -> Series[ReplicaStep]:
        run, warnings = self.run, list[str]()
        cps = _require(run, find_checkpoints(run, warnings, replicas=True), warnings)
        counter = ByteProgress(sum(checkpoint_size(c) for c in cps), self.progress)
        kernel = Kernel(resolve_device(self.device))
        try:
            series = compare_replica_steps(
                cps,
                kernel=kernel,
                key=self.key,
                tolerance=tolerance,
                cache=self.cache,
                warnings=warnings,
                on_bytes=counter,
            )
        finally:
            kernel.close()
        counter.finish()
        if not series:
            raise InputError(
                f"no step of {run} could be compared: {warnings[-1] if warnings else ''}"
            )
        return Series(
            series, warnings, kernel.device, places={c.step: Place(str(c.path)) for c in cps}
        )


def compare_by_rank(
    by_rank: dict[int | None, Pairs],
    replicas: list[Checkpoint],
    on_bytes: Callable[[int], None],
    *,
    kernel: Kernel,
    key: str | None,
    cache: StepCache,
    warnings: list[str],
) -> tuple[dict[int | None, list[StepDiff]], list[ReplicaStep]]:
    """``split_ranks``' pairs compared: key None (one checkpoint per step) pair by pair; a
    per-rank layout step by step, each file read once for every rank's comparison with its
    reference and, with ``replicas``, the ranks' with each other (tolerance 0: healthy
    replicas are equal). Ranks with no step compared are left out."""
    options: dict[str, Any] = dict(kernel=kernel, key=key, cache=cache, warnings=warnings)
    if None in by_rank:
        found = compare_steps(by_rank[None], on_bytes=on_bytes, **options)
        return ({None: found} if found else {}), []
    job = sorted({r for cp in replicas for r in cp.ranks})
    done = compare_rank_steps(
        rank_steps(by_rank, replicas), tolerance=0.0, job=job, on_bytes=on_bytes, **options
    )
    series: dict[int | None, list[StepDiff]] = {}
    for result in done:
        for rank, diff in sorted(result.against.items()):
            series.setdefault(rank, []).append(diff)
    return series, [r.replicas for r in done if r.replicas is not None]


def bytes_to_read(by_rank: dict[int | None, Pairs], replicas: list[Checkpoint]) -> int:
    """Bytes a comparison of ``by_rank`` (and ``replicas``) reads, each file once."""
    files = {p for cp in replicas for p in cp.ranks.values()}
    for group in by_rank.values():
        files.update(p for a, b in group for p in (a.path, b.path))
    return sum(checkpoint_size(Checkpoint(0, p)) for p in files)


def rank_series(
    series: dict[int | None, list[StepDiff]],
    noise: dict[int | None, list[StepDiff]],
    pairs: dict[int | None, Pairs],
    noise_pairs: dict[int | None, Pairs],
    warnings: list[str],
    device: str,
) -> Series[StepDiff]:
    """Compared series keyed by rank (``per_rank.split_ranks``; None: no per-rank layout) as
    one ``Series``, with where each point was read from."""
    out = Series([], warnings, device, noise=noise.get(None) or None)
    out.noise_places = _places(noise_pairs.get(None, []))
    if None in series:
        out.steps, out.places = series[None], _places(pairs[None])
        return out
    # Per-rank layouts: each rank against the reference's same rank.
    out.ranks = {r: s for r, s in series.items() if r is not None and s}
    out.noise_ranks = {r: s for r, s in noise.items() if r is not None}
    for r in out.ranks:
        for step, place in _places(pairs[r]).items():
            out.rank_places.setdefault(step, {})[r] = place
    return out


def checkpoint_size(cp: Checkpoint) -> int:
    paths = list(cp.ranks.values()) or [cp.path]
    total = 0
    for p in paths:
        try:
            _, files = model_files(p)
        except CheckpointError:
            continue
        total += sum(f.stat().st_size for f in files if f.is_file())
        total += sum(
            f.stat().st_size for d in files if d.is_dir() for f in d.rglob("*") if f.is_file()
        )
    return total


class ByteProgress:
    """Turns per-block byte counts into ``progress(done, total)`` calls."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = max(1, total)
        self.done = 0
        self.progress = progress

    def __call__(self, n: int) -> None:
        self.done = min(self.total, self.done + n)
        if self.progress:
            self.progress(self.done, self.total)

    def finish(self) -> None:
        if self.progress:
            self.progress(self.total, self.total)


def compare_steps(
    pairs: Pairs,
    *,
    kernel: Kernel,
    key: str | None,
    cache: StepCache,
    warnings: list[str],
    on_bytes: Callable[[int], None],
) -> list[StepDiff]:
    """Each (run, ref) pair of one step compared; unreadable checkpoints become warnings."""
    out: list[StepDiff] = []
    for run_cp, ref_cp in pairs:
        cache_key = f"ref|{key}|{fingerprint(run_cp.path)}||{fingerprint(ref_cp.path)}"
        cached = cache.get_step(cache_key)
        if cached is None:
            run = open_reader(run_cp.path, key, "run checkpoint", run_cp.step, warnings)
            ref = open_reader(ref_cp.path, key, "reference checkpoint", ref_cp.step, warnings)
            if run is None or ref is None:
                for reader in (run, ref):
                    if reader:
                        reader.close()
                continue
            try:
                cached = distributed.combine(
                    kernel, compare_readers(run, ref, run_cp.step, kernel, on_bytes)
                )
            finally:
                run.close()
                ref.close()
            cache.put(cache_key, cached)
        out.append(cached)
    return out


def _pairs(run: list[Checkpoint], ref: list[Checkpoint], warnings: list[str], label: str) -> Pairs:
    by_step = {c.step: c for c in ref}
    only_run = [c.step for c in run if c.step not in by_step]
    only_ref = sorted(set(by_step) - {c.step for c in run})
    if only_run:
        warnings.append(f"steps only in the run, not compared: {_steps(only_run)}")
    if only_ref:
        warnings.append(f"steps only in the {label}, not compared: {_steps(only_ref)}")
    return [(c, by_step[c.step]) for c in run if c.step in by_step]


def _steps(steps: list[int]) -> str:
    return ", ".join(map(str, steps[:8])) + (f" (+{len(steps) - 8} more)" if len(steps) > 8 else "")


def _step_pairs(
    run: str, ref: str, noise_ref: str | None, warnings: list[str]
) -> tuple[Pairs, Pairs]:
    """Run and reference checkpoints matched by step (and the noise run's, if any)."""
    run_cps = _require(run, find_checkpoints(run, warnings), warnings)
    ref_cps = _require(ref, find_checkpoints(ref, warnings), warnings)
    pairs = _pairs(run_cps, ref_cps, warnings, "reference")
    if not pairs:
        raise InputError(
            f"{run} and {ref} share no checkpoint step (run: {_steps([c.step for c in run_cps])}; "
            f"reference: {_steps([c.step for c in ref_cps])})"
        )
    noise_pairs: Pairs = []
    if noise_ref:
        noise_cps = _require(noise_ref, find_checkpoints(noise_ref, warnings), warnings)
        noise_pairs = _pairs(noise_cps, ref_cps, [], "reference")
    return pairs, noise_pairs


def _one_pair(
    run: Checkpoint, ref: Checkpoint, noise_ref: str | None, warnings: list[str]
) -> tuple[Pairs, Pairs]:
    """Two single checkpoints (files or model folders) compared as one point, whatever steps
    their names carry: the run's step when it names one."""
    noise = single_checkpoint(noise_ref) if noise_ref else None
    if noise_ref and noise is None:
        raise InputError(f"{noise_ref}: expected one checkpoint, like the run and the reference")
    for cp in (run, ref, *([noise] if noise else [])):
        reason = incomplete_reason(cp.path)
        if reason:
            raise InputError(f"{cp.path}: {reason}")
    step = run.step or ref.step
    if run.step and ref.step and run.step != ref.step:
        warnings.append(f"one pair: the run's step {run.step} against the reference's {ref.step}")
    ref_at = Checkpoint(step, ref.path)
    noise_pairs = [(Checkpoint(step, noise.path), ref_at)] if noise else []
    return [(Checkpoint(step, run.path), ref_at)], noise_pairs


def _places(pairs: Pairs) -> dict[int, Place]:
    return {c.step: Place(str(c.path)) for c, _ in pairs}


def _require(root: str, cps: list[Checkpoint], warnings: list[str]) -> list[Checkpoint]:
    if not cps:
        why = "; ".join(w for w in warnings if str(root) in w)[:400]
        raise InputError(f"{root}: no complete checkpoints{': ' + why if why else ''}")
    return cps


__all__ = [
    "ByteProgress",
    "CheckpointSource",
    "Series",
    "Source",
    "bytes_to_read",
    "checkpoint_size",
    "compare_by_rank",
    "compare_steps",
    "open_source",
    "rank_series",
    "resolve_device",
]

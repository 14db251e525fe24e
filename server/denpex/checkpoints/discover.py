"""Find the checkpoints of a run directory, their steps, and whether each is complete.

Steps come from names, at the top of the directory or one folder down
(``checkpoints/model_step120.pt``): ``step_120/``, ``step120.pt``, ``checkpoint-120/``
(HF Trainer), ``global_step120/`` (DeepSpeed), ``iter_0000120/`` (Megatron),
``ckpt_120.safetensors``, ``model_step120.pt``.

A checkpoint is *complete* when nothing says it is still being written: frameworks write
to a temporary name and rename (``tmp-checkpoint-120``, ``*.tmp``), write DeepSpeed's
``latest`` and DCP's ``.metadata`` last, and a safetensors file's header states its full
size. What a single look cannot tell (a file still growing), ``watch`` settles by waiting
for size and mtime to hold still across two polls.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from denpex.checkpoints.layouts import model_files
from denpex.checkpoints.reader import CheckpointError
from denpex.checkpoints.safetensors import read_safetensors_header
from denpex.errors import InputError
from denpex.notes import Note

_STEP = re.compile(
    r"(?:^|[_\-.])(?:global_)?(?:step|iter|iteration|checkpoint|ckpt)[_\-]?(\d+)$", re.I
)
_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".ckpt")
_TEMP = re.compile(r"^(?:\.|tmp[_\-.]|temp[_\-.])|\.(?:tmp|temp|partial|incomplete|lock)$|~$", re.I)
_RANK = re.compile(r"^rank[_\-]?(\d+)$", re.I)


@dataclass(frozen=True)
class Checkpoint:
    step: int
    path: Path
    # Replica layout: rank -> checkpoint of that data-parallel replica (empty otherwise).
    ranks: dict[int, Path] = field(default_factory=dict, hash=False, compare=False)


Pairs = list[tuple[Checkpoint, Checkpoint]]  # (run, reference) checkpoints of one step


def step_of(name: str) -> int | None:
    """The training step a file or directory name carries, or None."""
    if _TEMP.search(name):
        return None
    stem = name
    for suffix in _SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    m = _STEP.search(stem)
    return int(m.group(1)) if m else None


def rank_of(name: str) -> int | None:
    stem = name.split(".", 1)[0]
    m = _RANK.match(stem)
    return int(m.group(1)) if m else None


def _candidates(root: Path) -> list[tuple[int, Path]]:
    """(step, path) at the top of ``root`` and, for folders without a step, one level down."""
    found: list[tuple[int, Path]] = []
    try:
        entries = sorted(root.iterdir())
    except OSError as exc:
        raise InputError(f"{root}: cannot list ({exc.strerror})") from None
    for entry in entries:
        step = step_of(entry.name)
        if step is not None and (entry.is_dir() or entry.suffix in _SUFFIXES):
            found.append((step, entry))
        elif entry.is_dir() and not _TEMP.search(entry.name):
            for sub in sorted(entry.iterdir()):
                sub_step = step_of(sub.name)
                if sub_step is not None and (sub.is_dir() or sub.suffix in _SUFFIXES):
                    found.append((sub_step, sub))
    return found


def _deepspeed_latest(parent: Path) -> int | None:
    """The step in DeepSpeed's ``latest`` file, written after a save completes."""
    latest = parent / "latest"
    try:
        return step_of(latest.read_text().strip())
    except (OSError, UnicodeDecodeError):
        return None


def incomplete_reason(path: Path) -> str | None:
    """Why this checkpoint cannot be read yet (or at all), or None when it looks whole."""
    try:
        if path.is_dir():
            rank_files = _rank_entries(path)
            if rank_files:
                for rank_path in rank_files.values():
                    reason = incomplete_reason(rank_path)
                    if reason:
                        return reason
                return None
            if path.name.startswith("global_step"):
                latest = _deepspeed_latest(path.parent)
                step = step_of(path.name)
                if latest is not None and step is not None and step > latest:
                    return f"DeepSpeed 'latest' still names step {latest}"
            if any(path.glob("*.distcp")) and not (path / ".metadata").exists():
                return "DCP '.metadata' not written yet"
            _, files = model_files(path)
        else:
            files = [path]
        for file in files:
            if file.suffix == ".safetensors":
                read_safetensors_header(str(file))
            elif file.is_file() and _is_zip_start(file) and not zipfile.is_zipfile(file):
                return f"{file.name}: zip directory missing (truncated or still being written)"
    except CheckpointError as exc:
        return str(exc)
    except OSError as exc:
        return f"{exc.strerror}"
    return None


def _is_zip_start(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"PK"


def _rank_entries(path: Path) -> dict[int, Path]:
    out: dict[int, Path] = {}
    for entry in path.iterdir():
        rank = rank_of(entry.name)
        if rank is not None and not _TEMP.search(entry.name):
            out[rank] = entry
    return dict(sorted(out.items()))


def find_checkpoints(
    root: str | Path, warnings: list[str] | None = None, *, replicas: bool = False
) -> list[Checkpoint]:
    """The complete checkpoints under ``root``, by step; skipped ones go to ``warnings``.

    ``root`` may also be a single checkpoint file or directory named with a step. With
    ``replicas``, each step must hold per-rank checkpoints: ``step_120/rank_0.pt`` ... or
    ``rank_0/step_120.pt`` ... (rank-major: one run directory per rank).
    """
    base = Path(root)
    notes = warnings if warnings is not None else []
    if not base.exists():
        raise InputError(f"{base}: no such file or directory")
    if replicas and base.is_dir():
        rank_dirs = {r: p for r, p in _rank_entries(base).items() if p.is_dir()}
        if rank_dirs:
            return _rank_major(rank_dirs, notes)
    own = step_of(base.name)
    found = [(own, base)] if own is not None else _candidates(base) if base.is_dir() else []
    by_step: dict[int, Checkpoint] = {}
    for step, path in found:
        reason = incomplete_reason(path)
        if reason:
            notes.append(Note("incomplete", str(path), f"{path}: skipped: {reason}"))
            continue
        ranks = rank_files(path)
        if replicas and not ranks:
            text = f"{path}: skipped: no rank_<N> checkpoints inside"
            notes.append(Note("incomplete", str(path), text))
            continue
        if step in by_step:
            kept = _prefer(by_step[step].path, path)
            notes.append(
                f"step {step}: both {by_step[step].path.name} and {path.name}; using {kept.name}"
            )
            if kept is by_step[step].path:
                continue
        by_step[step] = Checkpoint(step, path, ranks if replicas else {})
    if not by_step and not notes:
        notes.append(f"{base}: no checkpoints found (expected names like step_120, checkpoint-120)")
    return [by_step[s] for s in sorted(by_step)]


def rank_files(path: Path) -> dict[int, Path]:
    """rank -> checkpoint of a per-rank step folder (``step_400/rank_0.pt`` ...), else empty."""
    return _rank_entries(path) if path.is_dir() else {}


def single_checkpoint(path: str | Path) -> Checkpoint | None:
    """``path`` as one checkpoint rather than a run: a weight file, or a folder holding one
    checkpoint's weights itself (an HF model folder, a DCP folder) and no step-named
    checkpoints. Its step is the one its name carries, else 0."""
    p = Path(path)
    if p.is_dir():
        if _candidates(p):
            return None
        try:
            model_files(p)
        except CheckpointError:
            return None
    elif not p.is_file():
        return None
    return Checkpoint(step_of(p.name) or 0, p)


def _prefer(a: Path, b: Path) -> Path:
    """Two files for one step: safetensors reads without torch and without pickle."""
    return b if b.suffix == ".safetensors" and a.suffix != ".safetensors" else a


def _rank_major(rank_dirs: dict[int, Path], notes: list[str]) -> list[Checkpoint]:
    per_rank = {
        r: {c.step: c.path for c in find_checkpoints(p, notes)} for r, p in rank_dirs.items()
    }
    steps = sorted(set.intersection(*(set(s) for s in per_rank.values())))
    for r, s in per_rank.items():
        extra = sorted(set(s) - set(steps))
        if extra:
            notes.append(f"rank {r}: steps {extra} not present on every rank; ignored")
    base = next(iter(rank_dirs.values())).parent
    return [Checkpoint(s, base, {r: per_rank[r][s] for r in per_rank}) for s in steps]


__all__ = [
    "Checkpoint",
    "Pairs",
    "find_checkpoints",
    "incomplete_reason",
    "rank_files",
    "rank_of",
    "single_checkpoint",
    "step_of",
]

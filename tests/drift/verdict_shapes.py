"""Per-step comparison series shaped as healthy and faulty reruns of real models measured
(bench/trainings, docs/drift-statistics.md), for the verdict's real-shape tests."""

from __future__ import annotations

import math

from denpex.drift.model import StepDiff, TensorDiff
from denpex.drift.verdict import Assessment, assess

STEPS = list(range(12, 121, 12))  # checkpoints every 12 steps to 120, as in the corpus
N = 64


def matrix(
    name: str,
    diff_sq: float,
    *,
    row: tuple[int, float] = (0, 2 / N),
    col: tuple[int, float] = (0, 2 / N),
    max_abs: float | None = None,
    ref_sq: float = N * N * 4e-4,
    n: int = N,
) -> TensorDiff:
    """An n x n weight (64 unless told) whose difference puts ``share`` of itself in row/col
    ``index``."""
    return TensorDiff(
        name=name,
        numel=n * n,
        diff_sq=diff_sq,
        ref_sq=ref_sq,
        max_abs=math.sqrt(diff_sq / n) if max_abs is None else max_abs,
        mismatched=n * n if diff_sq else 0,
        rows=n,
        cols=n,
        top_row=row[0],
        top_row_share=row[1] if diff_sq else 0.0,
        top_col=col[0],
        top_col_share=col[1] if diff_sq else 0.0,
    )


def spread(i: int, scale: float = 1e-12) -> list[TensorDiff]:
    """Tensors diverging together, evenly, as round-off does (growing, then saturating)."""
    size = scale * (1 - math.exp(-(i + 1) / 3))
    return [matrix(f"layer.{k}.weight", size * (1 + k / 4)) for k in range(4)]


def judged(extra: list[list[TensorDiff]], background: bool = True) -> Assessment:
    series = [
        StepDiff(step=s, tensors=(spread(i) if background else []) + extra[i])
        for i, s in enumerate(STEPS)
    ]
    return assess(series)


def grow(i: int, start: int = 0) -> float:
    return 0.0 if i < start else 1e-12 * (1 + i - start)


def with_noise(run: list[list[TensorDiff]], noise: list[list[TensorDiff]]) -> Assessment:
    def series(extra: list[list[TensorDiff]]) -> list[StepDiff]:
        return [StepDiff(step=s, tensors=spread(i) + extra[i]) for i, s in enumerate(STEPS)]

    return assess(series(run), series(noise))


def vector(name: str, diff_sq: float, n: int, top: tuple[int, float]) -> TensorDiff:
    """A bias of ``n`` elements whose difference puts ``share`` of itself on one element."""
    return TensorDiff(
        name=name,
        numel=n,
        diff_sq=diff_sq,
        ref_sq=n * 1e-2,
        max_abs=math.sqrt(diff_sq * top[1]),
        mismatched=int(0.8 * n),
        rows=n,
        cols=1,
        top_row=top[0],
        top_row_share=top[1],
        top_col=0,
        top_col_share=1.0,
    )


def measured(
    name: str, l2: float, shape: tuple[int, int], top: tuple[int, float], max_abs: float, rms: float
) -> TensorDiff:
    """A tensor of ``shape`` (rows, columns; a vector is (n, 1)) with ``top`` = (index, share)
    on its rows, spread on its columns."""
    rows, cols = shape
    return TensorDiff(
        name=name,
        numel=rows * cols,
        diff_sq=l2 * l2,
        ref_sq=rows * cols * rms * rms,
        max_abs=max_abs,
        mismatched=rows * cols,
        rows=rows,
        cols=cols,
        top_row=top[0],
        top_row_share=top[1],
        top_col=0,
        top_col_share=1.0 if cols == 1 else 1.5 / cols,
    )

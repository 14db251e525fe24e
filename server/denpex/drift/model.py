"""Data passed between the drift engine's parts: reading/comparing checkpoints
(``compare``) and judging the series (``verdict``).

Every figure is accumulated in float64. Squared sums are kept (not norms) so partial
results from several processes (torchrun) or several shards add up exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from denpex.checkpoints.reader import TensorMeta

TensorStatus = Literal["ok", "missing_in_run", "missing_in_ref", "shape_mismatch", "unreadable"]


def columns(shape: tuple[int, ...]) -> int:
    """The columns a difference's spread is measured over: dim 1 (1-D tensors: 1). A conv
    kernel's taps are summed into their input channel, because where a difference sits inside
    a kernel is the model's, not a fault's: the centre tap sees every position and the edge
    taps see padding, so a depthwise 3x3 kernel's centre tap held 55% of its difference in
    every healthy FocalNet rerun, while a faulty channel fills all of its taps alike."""
    return shape[1] if len(shape) > 1 else 1


def fold_columns(col_sq: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Per-column sums over the flattened trailing dims, folded to ``columns(shape)``."""
    n = columns(shape)
    if n == 0 or col_sq.size == n or col_sq.size % n:
        return col_sq
    folded: np.ndarray = col_sq.reshape(n, -1).sum(axis=1)
    return folded


def fold_max(a: float, b: float) -> float:
    """max() that keeps a NaN: Python's ``max(0.0, nan)`` is 0.0, which once reported an
    all-NaN replica as identical."""
    return a if math.isnan(a) or a >= b else b


@dataclass(slots=True)  # one per tensor per step: thousands of steps hold many
class TensorDiff:
    """One tensor of one step: run versus reference (or replica versus majority)."""

    name: str
    numel: int
    diff_sq: float  # sum((run - ref)^2)
    ref_sq: float  # sum(ref^2)
    max_abs: float  # max |run - ref|
    mismatched: int  # elements that differ at the compared precision
    # Where the difference sits: share of diff_sq in the largest row (dim 0) and the
    # largest column (dim 1, trailing dims summed: ``columns``). Benign noise is spread
    # (share ~ 1/rows), a faulty output column or row concentrates it (share -> 1).
    # 1-D tensors: rows=numel, cols=1.
    rows: int = 1
    cols: int = 1
    top_row: int = 0
    top_row_share: float = 0.0
    top_col: int = 0
    top_col_share: float = 0.0
    # Groups the shares were measured over: 0 when every row (column) is apart; fingerprints
    # fold a long axis into fewer groups, so a uniform share there is 1/groups, not 1/rows.
    row_groups: int = 0
    col_groups: int = 0
    compared_dtype: str = "float32"  # the lower of the two precisions
    status: TensorStatus = "ok"
    note: str = ""
    # Elements whose difference is not finite: NaN or Inf on either side (NaN against NaN and
    # Inf against Inf included). Each one is a disagreement, never "equal".
    non_finite: int = 0

    @classmethod
    def zero(
        cls,
        meta: TensorMeta,
        *,
        ref_sq: float = 0.0,
        status: TensorStatus = "ok",
        note: str = "",
        compared_dtype: str | None = None,
    ) -> TensorDiff:
        """A tensor with no difference to count: equal, not compared (``status``) or counted
        on another rank. ``compared_dtype`` defaults to the tensor's own dtype."""
        return cls(
            name=meta.name,
            numel=meta.numel,
            diff_sq=0.0,
            ref_sq=ref_sq,
            max_abs=0.0,
            mismatched=0,
            rows=meta.rows,
            cols=columns(meta.shape),
            compared_dtype=meta.dtype if compared_dtype is None else compared_dtype,
            status=status,
            note=note,
        )

    @property
    def differs(self) -> bool:
        """Any difference at all; a NaN figure or a non-finite element counts as one."""
        return bool(self.non_finite) or self.mismatched > 0 or self.diff_sq != 0  # NaN != 0 too

    @property
    def l2(self) -> float:
        return math.sqrt(self.diff_sq)

    @property
    def rel_l2(self) -> float:
        return (
            math.sqrt(self.diff_sq / self.ref_sq)
            if self.ref_sq > 0
            else (0.0 if self.diff_sq == 0 else math.inf)
        )


@dataclass
class StepDiff:
    """All tensors of one checkpoint step."""

    step: int
    tensors: list[TensorDiff] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    run_path: str = ""
    ref_path: str = ""

    def _ok(self) -> list[TensorDiff]:
        return [t for t in self.tensors if t.status == "ok"]

    @property
    def diff_sq(self) -> float:
        return math.fsum(t.diff_sq for t in self._ok())

    @property
    def ref_sq(self) -> float:
        return math.fsum(t.ref_sq for t in self._ok())

    @property
    def l2(self) -> float:
        return math.sqrt(self.diff_sq)

    @property
    def rel_l2(self) -> float:
        ref = self.ref_sq
        return math.sqrt(self.diff_sq / ref) if ref > 0 else 0.0

    @property
    def max_abs(self) -> float:
        out = 0.0
        for t in self._ok():
            out = fold_max(out, t.max_abs)
        return out

    @property
    def non_finite(self) -> int:
        return sum(t.non_finite for t in self._ok())

    @property
    def not_compared(self) -> list[TensorDiff]:
        return [t for t in self.tensors if t.status != "ok"]

    @property
    def differs(self) -> bool:
        return any(t.differs for t in self._ok())

    @property
    def mismatched(self) -> int:
        return sum(t.mismatched for t in self._ok())

    @property
    def numel(self) -> int:
        """Elements compared (of the tensors compared), the whole ``mismatched`` counts in."""
        return sum(t.numel for t in self._ok())

    def top_tensors(self, k: int = 5) -> list[TensorDiff]:
        # NaN distances first: they sort nowhere in particular otherwise.
        return sorted(self._ok(), key=lambda t: _sort_key(t.diff_sq), reverse=True)[:k]


def _sort_key(x: float) -> float:
    return math.inf if math.isnan(x) else x


@dataclass
class ReplicaStep:
    """Replica mode: each data-parallel replica of one step compared with the majority.

    Healthy DDP replicas are bitwise identical, so the majority is the group of ranks whose
    tensors hash equal; ``ranks[r]`` is rank r's StepDiff against it (all zeros when r agrees).
    ``absent``: ranks of the job with no readable checkpoint at this step, and why; they
    disagree (a missing replica is never an agreeing one).
    """

    step: int
    ranks: dict[int, StepDiff] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    absent: dict[int, str] = field(default_factory=dict)
    # Of the warnings: tensors without a majority (sides of equal size), said in the verdict.
    ties: list[str] = field(default_factory=list)

    def disagrees(self, rank: int) -> bool:
        if rank in self.absent:
            return True
        d = self.ranks.get(rank)
        return d is not None and (d.differs or bool(d.not_compared))

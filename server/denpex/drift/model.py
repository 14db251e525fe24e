"""Data passed between the drift engine's parts: reading/comparing checkpoints
(``compare``) and judging the series (``verdict``).

Every figure is accumulated in float64. Squared sums are kept (not norms) so partial
results from several processes (torchrun) or several shards add up exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

TensorStatus = Literal["ok", "missing_in_run", "missing_in_ref", "shape_mismatch", "unreadable"]


@dataclass
class TensorDiff:
    """One tensor of one step: run versus reference (or replica versus majority)."""

    name: str
    numel: int
    diff_sq: float  # sum((run - ref)^2)
    ref_sq: float  # sum(ref^2)
    max_abs: float  # max |run - ref|
    mismatched: int  # elements that differ at the compared precision
    # Where the difference sits: share of diff_sq in the largest row (dim 0) and the
    # largest column (last dim, rows flattened). Benign noise is spread (share ~ 1/rows),
    # a faulty output column or row concentrates it (share -> 1). 1-D tensors: rows=numel, cols=1.
    rows: int = 1
    cols: int = 1
    top_row: int = 0
    top_row_share: float = 0.0
    top_col: int = 0
    top_col_share: float = 0.0
    compared_dtype: str = "float32"  # the lower of the two precisions
    status: TensorStatus = "ok"
    note: str = ""

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
        return max((t.max_abs for t in self._ok()), default=0.0)

    @property
    def mismatched(self) -> int:
        return sum(t.mismatched for t in self._ok())

    def top_tensors(self, k: int = 5) -> list[TensorDiff]:
        return sorted(self._ok(), key=lambda t: t.diff_sq, reverse=True)[:k]


@dataclass
class ReplicaStep:
    """Replica mode: each data-parallel replica of one step compared with the majority.

    Healthy DDP replicas are bitwise identical, so the majority is the group of ranks whose
    tensors hash equal; ``ranks[r]`` is rank r's StepDiff against it (all zeros when r agrees).
    """

    step: int
    ranks: dict[int, StepDiff] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

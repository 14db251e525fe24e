"""One block of a tensor pair on the CPU, in numpy: the sums ``compare.Sums`` adds up.

The difference of two fp32 values is taken in fp32 (exact when they are close). A block's
squares are summed in float32 where that is safe and carried in float64 from there
(``_F32_SUM_MIN``); float64 inputs, and sums float32 cannot hold, are squared and summed in
float64. A non-finite difference (NaN or Inf on either side) is counted and kept: max |Δ| and
the squared sums become NaN/Inf rather than being folded away.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

# Squares are non-negative, so their sums cannot cancel: a float32 pairwise sum stays within
# about 1e-7 of the float64 one (bench_drift measures it; the naive float32 norm is off by
# about 1e-4), at a third of the float64 kernel's cost. A float32 sum below this bound (squares
# that underflow: its absolute error, 2^-132 at most per block, would no longer be negligible),
# or not finite (an overflow, a NaN or an Inf), is redone in float64.
_F32_SUM_MIN = 2.0**-100
# Rows of the reference's squared-norm sum: einsum's product-sum loop is not pairwise, so its
# float32 runs are kept short and their sums added in float64.
_NORM_CHUNK = 256


@dataclass
class Partial:
    """One block's contribution; blocks of a tensor add up in order (``Sums``)."""

    r0: int
    row_sq: np.ndarray
    col_sq: np.ndarray
    ref_sq: float
    max_abs: float
    mismatched: int
    non_finite: int

    @classmethod
    def equal(cls, r0: int, rows: int, cols: int, ref_sq: float) -> Partial:
        """A block bitwise equal to its reference and finite: what the kernel computes for
        it, without computing."""
        return cls(r0, np.zeros(rows), np.zeros(cols), ref_sq, 0.0, 0, 0)


_scratch = threading.local()


def _buffer(
    name: str, shape: tuple[int, ...], dtype: np.dtype[Any] | type[np.generic]
) -> np.ndarray:
    """A per-thread temporary reused across blocks (fresh ones page-fault every time)."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf: np.ndarray | None = getattr(_scratch, name, None)
    if buf is None or buf.nbytes < n:
        buf = np.empty(n, np.uint8)
        setattr(_scratch, name, buf)
    return buf[:n].view(dtype).reshape(shape)


def _wide(x: np.ndarray) -> np.ndarray:
    """``x`` in float64, in a reused buffer (a plain cast: numpy's mixed-dtype loops cast
    in small buffers and are several times slower)."""
    wide = _buffer("wide", x.shape, np.float64)
    wide[...] = x
    return wide


def _f32_sum_is_safe(total: float) -> bool:
    return _F32_SUM_MIN <= total < math.inf  # False for NaN too


def sq_sum(x: np.ndarray) -> float:
    """sum(x^2): the one way every squared norm is summed, so equal blocks give equal figures
    everywhere. float32 products over short runs, the runs added in float64; float64 (squares
    exact, einsum's product-sum loop, no squares array) when that is not safe."""
    flat = x.reshape(-1)
    if flat.dtype == np.float32:
        head = flat.size - flat.size % _NORM_CHUNK
        runs = flat[:head].reshape(-1, _NORM_CHUNK)
        total = float(np.einsum("ij,ij->i", runs, runs).sum(dtype=np.float64))
        tail = flat[head:].astype(np.float64)
        total += float(np.einsum("i,i->", tail, tail))
        if _f32_sum_is_safe(total):
            return total
    wide = _wide(flat)
    return float(np.einsum("i,i->", wide, wide))


def _sq_rows_cols(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row and per-column sums of d^2, as float64 arrays."""
    if d.dtype == np.float32:
        sq = np.multiply(d, d, out=_buffer("sq", d.shape, np.float32))
        row_sq = sq.sum(axis=1, dtype=np.float32)  # pairwise along a contiguous row
        if _f32_sum_is_safe(float(row_sq.sum(dtype=np.float64))):
            # Column sums add row after row, not pairwise: float32 only while the column is
            # short (the shares they give only localise; the distance is the row sums').
            col_dtype = np.float32 if d.shape[0] <= 4096 else np.float64
            return row_sq.astype(np.float64), sq.sum(axis=0, dtype=col_dtype).astype(np.float64)
    # Straight from the widened difference: two passes over it instead of squaring in place
    # and summing twice (einsum's loops are numpy's own, not BLAS, whose threads would fight
    # the block threads).
    wide = _wide(d)
    return np.einsum("ij,ij->i", wide, wide), np.einsum("ij,ij->j", wide, wide)


def block_numpy(x: np.ndarray, y: np.ndarray, r0: int) -> Partial:
    # Inf - Inf and overflows are counted below as non-finite; numpy's warning is noise.
    with np.errstate(invalid="ignore", over="ignore"):
        return _reduce_block(x, y, r0)


def _reduce_block(x: np.ndarray, y: np.ndarray, r0: int) -> Partial:
    d = np.subtract(x, y, out=_buffer("d", x.shape, x.dtype))
    # x - y == 0 exactly when x == y (IEEE, gradual underflow): count on the bit pattern,
    # which numpy counts far faster than floats.
    mismatched = int(np.count_nonzero(d.view(np.int32 if d.dtype == np.float32 else np.int64)))
    non_finite = 0
    if mismatched:
        max_abs = float(max(d.max(), -d.min()))  # numpy's max/min propagate NaN
        if not np.isfinite(max_abs):  # rare: pay for the count only then
            non_finite = int(np.count_nonzero(~np.isfinite(d)))
        row_sq, col_sq = _sq_rows_cols(d)
    else:  # bitwise-equal block (replicas, a run before its fault): nothing to localise
        max_abs = 0.0
        row_sq, col_sq = np.zeros(x.shape[0]), np.zeros(x.shape[1])
    return Partial(r0, row_sq, col_sq, sq_sum(y), max_abs, mismatched, non_finite)

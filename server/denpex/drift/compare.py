"""Compare two checkpoints tensor by tensor, row block by row block.

For each tensor pair the kernel produces the squared distance, the reference's squared
norm, max |Δ|, the count of differing elements and the squared distance per row and per
column (where the difference sits, see ``TensorDiff``). Element differences are taken at
the lower of the two precisions (a bf16 export against an fp32 reference differs by
rounding alone). A block's squares are summed in float32 where that is safe and carried in
float64 from there (``_F32_SUM_MIN``); float64 inputs, and sums float32 cannot hold, are
squared and summed in float64.

Two kernels give the same numbers to float tolerance: numpy on the CPU (blocks spread
over a few threads; numpy releases the GIL in its loops) and torch for ``--device cuda``.
A non-finite difference (NaN or Inf on either side) is counted and kept: max |Δ| and the
squared sums become NaN/Inf rather than being folded away, so it can never read as equal.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from denpex.checkpoints.reader import Reader, TensorMeta
from denpex.drift.model import StepDiff, TensorDiff, fold_max
from denpex.errors import InputError

# Elements per block (2 MB of float32): a block's fixed cost (a dozen numpy calls, the
# threads' turns at the GIL, its Partial) is paid per block, so larger blocks read faster:
# on bench_drift's 4.3 GB pair, 2^17 took 1.96 s, 2^18 1.34 s, 2^19 1.10 s and 2^20 1.09 s.
# Memory is a few such buffers per block thread, whatever the checkpoint's size.
BLOCK_ELEMS = 1 << 19
FLOATS = ("float64", "float32", "float16", "bfloat16")
# Squares are non-negative, so their sums cannot cancel: a float32 pairwise sum stays within
# about 1e-7 of the float64 one (bench_drift measures it; the naive float32 norm is off by
# about 1e-4), at a third of the float64 kernel's cost. A float32 sum below this bound (squares
# that underflow: its absolute error, 2^-132 at most per block, would no longer be negligible),
# or not finite (an overflow, a NaN or an Inf), is redone in float64.
_F32_SUM_MIN = 2.0**-100
# Rows of the reference's squared-norm sum: einsum's product-sum loop is not pairwise, so its
# float32 runs are kept short and their sums added in float64.
_NORM_CHUNK = 256
# Higher rank = more mantissa bits; the pair is compared at the lower one.
_PRECISION = {"bfloat16": 0, "float16": 1, "float32": 2, "float64": 3}
INTS = ("int64", "int32", "int16", "int8", "uint8", "bool")

Progress = Callable[[int, int], None]


def compared_dtype(a: str, b: str) -> str:
    if a in _PRECISION and b in _PRECISION:
        return a if _PRECISION[a] <= _PRECISION[b] else b
    return "float64"  # integers (and int vs float): exact in float64 up to 2**53


def _bf16_to_f32(words: np.ndarray) -> np.ndarray:
    return (words.astype(np.uint32) << 16).view(np.float32)


def _round_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> nearest bf16 (ties to even), returned widened back to float32."""
    bits = x.astype(np.float32, copy=False).view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    nan = np.isnan(x)
    if nan.any():  # rounding must not carry a NaN's payload into the exponent
        rounded[nan] = bits[nan]
    return rounded.view(np.float32)


def to_compared(block: np.ndarray, dtype: str, target: str) -> np.ndarray:
    """A raw block (bf16 as uint16 words) as float values representable in ``target``."""
    if dtype == "bfloat16":
        x = _bf16_to_f32(block)
    elif dtype in INTS:
        return block.astype(np.float64)
    else:
        x = block
    if target == "float64":
        return x if x.dtype == np.float64 else x.astype(np.float64)
    if x.dtype != np.float32:
        x = x.astype(np.float32)
    if target == "float16" and dtype != "float16":
        return x.astype(np.float16).astype(np.float32)
    if target == "bfloat16" and dtype != "bfloat16":
        return _round_to_bf16(x)
    return x


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


def _sq_sum(x: np.ndarray) -> float:
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


def _block_numpy(x: np.ndarray, y: np.ndarray, r0: int) -> Partial:
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
    return Partial(r0, row_sq, col_sq, _sq_sum(y), max_abs, mismatched, non_finite)


def blocks(meta: TensorMeta) -> Iterator[tuple[int, int]]:
    step = max(1, BLOCK_ELEMS // max(1, meta.cols))
    for r0 in range(0, meta.rows, step):
        yield r0, min(meta.rows, r0 + step)


class Sums:
    """A tensor's partials added up in block order, then its ``TensorDiff``."""

    def __init__(self, rows: int, cols: int, ref_sq: float = 0.0) -> None:
        self.row_sq = np.zeros(rows)
        self.col_sq = np.zeros(cols)
        self.ref_sq = ref_sq  # a pair that starts differing mid-tensor: its equal blocks' sum
        self.max_abs = 0.0
        self.mismatched = self.non_finite = 0

    def add(self, p: Partial) -> None:
        self.row_sq[p.r0 : p.r0 + len(p.row_sq)] = p.row_sq
        self.col_sq += p.col_sq
        self.ref_sq += p.ref_sq
        self.max_abs = fold_max(self.max_abs, p.max_abs)
        self.mismatched += p.mismatched
        self.non_finite += p.non_finite

    def diff(self, run: TensorMeta, ref: TensorMeta, target: str) -> TensorDiff:
        rows, cols = len(self.row_sq), len(self.col_sq)
        diff_sq = float(np.sum(self.row_sq))
        top_row = int(np.argmax(self.row_sq)) if rows else 0
        top_col = int(np.argmax(self.col_sq)) if cols else 0
        return TensorDiff(
            name=ref.name,
            numel=ref.numel,
            diff_sq=diff_sq,
            ref_sq=self.ref_sq,
            max_abs=self.max_abs,
            mismatched=self.mismatched,
            rows=rows,
            cols=cols,
            top_row=top_row,
            top_row_share=float(self.row_sq[top_row] / diff_sq) if diff_sq > 0 else 0.0,
            top_col=top_col,
            top_col_share=float(self.col_sq[top_col] / diff_sq) if diff_sq > 0 else 0.0,
            compared_dtype=target,
            note=_precision_note(run.dtype, ref.dtype, target),
            non_finite=self.non_finite,
        )


T = TypeVar("T")


class Kernel:
    """Reduces one tensor pair; ``cpu`` uses numpy, anything else torch on that device
    (``use_torch`` forces the torch kernel on the CPU, so its arithmetic is tested there)."""

    def __init__(
        self, device: str = "cpu", threads: int | None = None, *, use_torch: bool | None = None
    ) -> None:
        self.device = device
        self.use_torch = device != "cpu" if use_torch is None else use_torch
        self.threads = threads or min(4, os.cpu_count() or 1)
        self._pool = (
            ThreadPoolExecutor(self.threads) if not self.use_torch and self.threads > 1 else None
        )

    def close(self) -> None:
        if self._pool:
            self._pool.shutdown()

    def owns(self, run: TensorMeta, ref: TensorMeta) -> bool:
        """Whether this process compares the pair (a sharded kernel compares its share)."""
        return True

    def map(self, work: Callable[[tuple[int, int]], T], spans: list[tuple[int, int]]) -> list[T]:
        """``work`` on each block span, results in span order: spread over the block threads
        on the CPU (numpy releases the GIL), one after another for torch."""
        if self._pool is None or len(spans) < 2:
            return [work(s) for s in spans]
        return list(self._pool.map(work, spans))

    def partial(
        self, x: np.ndarray, dt_x: str, y: np.ndarray, dt_y: str, target: str, r0: int
    ) -> Partial:
        """Raw block ``x`` (run) against raw block ``y`` (reference), compared at ``target``."""
        if self.use_torch:
            return self._torch_partial(x, dt_x, y, dt_y, target, r0)
        return _block_numpy(to_compared(x, dt_x, target), to_compared(y, dt_y, target), r0)

    def norm(self, raw: np.ndarray, dtype: str) -> tuple[float, int]:
        """sum(x^2) of a raw block as ``partial`` sums a reference's, and its count of
        non-finite elements (counted only when the sum is not finite)."""
        x = to_compared(raw, dtype, dtype)
        if self.use_torch:
            import torch

            sq = float(
                _torch_compared(torch, raw, dtype, dtype, self.device).double().square().sum()
            )
        else:
            sq = _sq_sum(x)
        return sq, (0 if math.isfinite(sq) else int(np.count_nonzero(~np.isfinite(x))))

    def tensor(
        self, run: Reader, ref: Reader, name: str, target: str, on_bytes: Callable[[int], None]
    ) -> TensorDiff:
        a, b = run.tensors[name], ref.tensors[name]
        row_bytes = a.nbytes // max(1, a.rows) + b.nbytes // max(1, b.rows)

        def one(span: tuple[int, int]) -> Partial:
            r0, r1 = span
            part = self.partial(
                run.block(name, r0, r1), a.dtype, ref.block(name, r0, r1), b.dtype, target, r0
            )
            run.release(name, r0, r1)
            ref.release(name, r0, r1)
            on_bytes((r1 - r0) * row_bytes)
            return part

        sums = Sums(b.rows, b.cols)
        for p in self.map(one, list(blocks(b))):
            sums.add(p)
        return sums.diff(a, b, target)

    def _torch_partial(
        self, x_raw: np.ndarray, dt_x: str, y_raw: np.ndarray, dt_y: str, target: str, r0: int
    ) -> Partial:
        import torch

        x = _torch_compared(torch, x_raw, dt_x, target, self.device)
        y = _torch_compared(torch, y_raw, dt_y, target, self.device)
        d = x - y
        sq = d.double().square()
        stats = torch.stack(
            [
                (d != 0).sum().double(),
                # torch's max propagates NaN, and the fold keeps it
                d.abs().max().double() if d.numel() else torch.zeros((), device=d.device),
                y.double().square().sum(),
                (~torch.isfinite(d)).sum().double(),
            ]
        ).cpu()
        return Partial(
            r0,
            sq.sum(dim=1).cpu().numpy(),
            sq.sum(dim=0).cpu().numpy(),
            float(stats[2]),
            float(stats[1]),
            int(stats[0]),
            int(stats[3]),
        )


def _torch_compared(torch: Any, block: np.ndarray, dtype: str, target: str, device: str) -> Any:
    if dtype == "bfloat16":
        t = torch.from_numpy(block.view(np.int16)).to(device).view(torch.bfloat16)
    else:
        t = torch.from_numpy(block).to(device)
    if dtype in INTS or target == "float64":
        return t.double()
    if target in ("float16", "bfloat16"):
        t = t.to(getattr(torch, target))
    return t.float()


def _precision_note(run: str, ref: str, target: str) -> str:
    if run == ref or run not in FLOATS or ref not in FLOATS:
        return ""
    return f"run {run}, reference {ref}: compared at {target}"


def compare_readers(
    run: Reader,
    ref: Reader,
    step: int,
    kernel: Kernel,
    on_bytes: Callable[[int], None] = lambda n: None,
) -> StepDiff:
    """One step: every tensor of either side gets a TensorDiff, never an exception."""
    return assemble_step(
        run, ref, step, lambda a, b: compare_pair(run, ref, a, b, kernel, on_bytes)
    )


def assemble_step(
    run: Reader, ref: Reader, step: int, pair: Callable[[TensorMeta, TensorMeta], TensorDiff]
) -> StepDiff:
    """The StepDiff of ``run`` against ``ref``, ``pair`` giving each tensor both hold."""
    diff = StepDiff(step=step, run_path=run.path, ref_path=ref.path)
    diff.warnings.extend(run.warnings + ref.warnings)
    mixed: dict[str, int] = {}
    for name in sorted(set(run.tensors) | set(ref.tensors)):
        a, b = run.tensors.get(name), ref.tensors.get(name)
        if a is None and b is not None:
            diff.tensors.append(
                TensorDiff.zero(b, status="missing_in_run", note="only in the reference")
            )
        elif b is None and a is not None:
            diff.tensors.append(TensorDiff.zero(a, status="missing_in_ref", note="only in the run"))
        elif a is not None and b is not None:
            diff.tensors.append(pair(a, b))
            note = diff.tensors[-1].note
            if note.startswith("run "):
                mixed[note] = mixed.get(note, 0) + 1
    for note, count in mixed.items():
        diff.warnings.append(f"{note} ({count} tensors): rounding alone is not drift")
    _summarise_missing(diff)
    return diff


def not_comparable(a: TensorMeta, b: TensorMeta) -> TensorDiff | None:
    """Why ``a`` (run) and ``b`` (reference) cannot be compared element by element, as their
    TensorDiff; None when they can."""
    if a.shape != b.shape:
        return TensorDiff.zero(
            b, status="shape_mismatch", note=f"run {list(a.shape)} vs reference {list(b.shape)}"
        )
    comparable = FLOATS + INTS
    if a.dtype not in comparable or b.dtype not in comparable:
        return TensorDiff.zero(
            b, status="unreadable", note=f"dtype {a.dtype}/{b.dtype} is not compared"
        )
    return None


def not_owned(a: TensorMeta, b: TensorMeta) -> TensorDiff:
    """A pair another process of a sharded comparison counts: zeros here keep its
    all_reduce a plain sum."""
    target = compared_dtype(a.dtype, b.dtype)
    return TensorDiff.zero(b, compared_dtype=target, note=_precision_note(a.dtype, b.dtype, target))


def unreadable(meta: TensorMeta, exc: BaseException) -> TensorDiff:
    """A tensor whose blocks could not be read or reduced: one line, never a traceback."""
    line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return TensorDiff.zero(meta, status="unreadable", note=line)


# What reading or reducing a tensor may raise on hostile or vanishing files.
READ_ERRORS = (InputError, OSError, ValueError, RuntimeError)


def compare_pair(
    run: Reader,
    ref: Reader,
    a: TensorMeta,
    b: TensorMeta,
    kernel: Kernel,
    on_bytes: Callable[[int], None],
) -> TensorDiff:
    early = not_comparable(a, b)
    if early is not None:
        on_bytes(a.nbytes + b.nbytes)
        return early
    if not kernel.owns(a, b):
        return not_owned(a, b)
    try:
        return kernel.tensor(run, ref, a.name, compared_dtype(a.dtype, b.dtype), on_bytes)
    except READ_ERRORS as exc:
        return unreadable(b, exc)


def _summarise_missing(diff: StepDiff) -> None:
    for status, what in (
        ("missing_in_run", "missing in the run"),
        ("missing_in_ref", "missing in the reference"),
        ("shape_mismatch", "with different shapes"),
        ("unreadable", "not compared"),
    ):
        names = [t.name for t in diff.tensors if t.status == status]
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            diff.warnings.append(f"step {diff.step}: {len(names)} tensor(s) {what}: {shown}")


__all__ = [
    "READ_ERRORS",
    "Kernel",
    "Partial",
    "Sums",
    "assemble_step",
    "blocks",
    "compare_pair",
    "compare_readers",
    "compared_dtype",
    "not_comparable",
    "not_owned",
    "to_compared",
    "unreadable",
]

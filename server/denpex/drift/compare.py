"""Compare two checkpoints tensor by tensor, row block by row block.

For each tensor pair the kernel produces the squared distance, the reference's squared
norm, max |Δ|, the count of differing elements and the squared distance per row and per
column (where the difference sits, see ``TensorDiff``). Element differences are taken at
the lower of the two precisions (a bf16 export against an fp32 reference differs by
rounding alone). A block's squares are summed in float32 where that is safe and carried in
float64 from there; float64 inputs, and sums float32 cannot hold, are squared and summed in
float64 (``block_sums``, the numpy kernel of one block).

Two kernels give the same numbers to float tolerance: numpy on the CPU (blocks spread
over a few threads; numpy releases the GIL in its loops) and torch for ``--device cuda``.
A non-finite difference (NaN or Inf on either side) is counted and kept: max |Δ| and the
squared sums become NaN/Inf rather than being folded away, so it can never read as equal.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from denpex.checkpoints.reader import Reader, TensorMeta
from denpex.drift.block_sums import Partial, block_numpy, sq_sum
from denpex.drift.model import StepDiff, TensorDiff, fold_columns, fold_max
from denpex.errors import InputError

# Elements per block (2 MB of float32): a block's fixed cost (a dozen numpy calls, the
# threads' turns at the GIL, its Partial) is paid per block, so larger blocks read faster:
# on bench_drift's 4.3 GB pair, 2^17 took 1.96 s, 2^18 1.34 s, 2^19 1.10 s and 2^20 1.09 s.
# Memory is a few such buffers per block thread, whatever the checkpoint's size.
BLOCK_ELEMS = 1 << 19
FLOATS = ("float64", "float32", "float16", "bfloat16")
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


def blocks(meta: TensorMeta) -> Iterator[tuple[int, int]]:
    step = max(1, BLOCK_ELEMS // max(1, meta.cols))
    for r0 in range(0, meta.rows, step):
        yield r0, min(meta.rows, r0 + step)


def share(sums: np.ndarray, top: int, whole: float) -> float:
    """``sums[top]``'s fraction of ``whole``, at most 1 (0 for an empty or equal tensor): the
    column sums and the row sums add the same squares in different orders, so one column
    holding all of it can come out a few ulps above the total (TimesFM's doubled MLP
    channel: 1.0000000245)."""
    return min(1.0, float(sums[top]) / whole) if whole > 0 else 0.0


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
        col_sq = fold_columns(self.col_sq, ref.shape)
        rows, cols = len(self.row_sq), len(col_sq)
        diff_sq = float(np.sum(self.row_sq))
        top_row = int(np.argmax(self.row_sq)) if rows else 0
        top_col = int(np.argmax(col_sq)) if cols else 0
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
            top_row_share=share(self.row_sq, top_row, diff_sq),
            top_col=top_col,
            top_col_share=share(col_sq, top_col, diff_sq),
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
        return block_numpy(to_compared(x, dt_x, target), to_compared(y, dt_y, target), r0)

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
            sq = sq_sum(x)
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

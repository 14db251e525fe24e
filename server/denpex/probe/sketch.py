"""Per-tensor fingerprints computed where the tensor lives: norm, max |x|, content hash, sketches.

Everything runs on the tensor's own device, block by block, so a probe never copies a
parameter to the host and its scratch memory is bounded by a chunk of elements whatever the
tensor size. Only a few hundred numbers per tensor (about 700 for a matrix) come back.

Content hash (64 bits, exact). The tensor's bytes are read as 32-bit words w_i. Two lanes,
each ``sum_i mix(w_i ^ g(i)) mod 2**32`` where ``g`` spreads the word position and ``mix`` is
a xorshift-multiply finaliser with odd multipliers; the lanes use different multipliers and
are concatenated. For a fixed position every step is a bijection on 32-bit words, so two
tensors that differ in exactly one word (a single bit flip included) always hash apart; for
larger differences a collision needs both lane sums to cancel, which for non-adversarial data
happens with probability about 2**-64. It is not cryptographic: a chosen collision is easy.
Products stay below 2**63 (a 32-bit value times a multiplier under 2**31) and a chunk's sum
below 2**63, so int64 arithmetic never overflows: the hash is the same on any device, in any
summation order, and for any chunk size.

Sketches (linear, fixed seed). CountSketches: element i is added with sign s(i) = +-1 into
bucket b(i). Linear, so sketch(a) - sketch(b) = sketch(a - b), and E||sketch(d)||^2 = ||d||^2
with a relative standard deviation of about sqrt(2/k) on the squared norm (1/sqrt(2k) on the
norm) for a spread-out difference over k buckets; a difference concentrated in fewer elements
than buckets is recovered nearly exactly. Each tensor gets a small *local* sketch (its own
distance, for ranking tensors) and adds into one *global* sketch shared by the whole record
(GLOBAL_PER_TENSOR buckets per tensor), which fixes the total distance far more tightly than
any single per-tensor sketch of the same byte size could. Tensors with at most LOCAL_SIZE
elements are stored as themselves (exact distance) and stay out of the global sketch.

Axis sketches (matrices only: dim 0 are rows, the other dims flattened are columns). A fault
in one output channel lands in one row of its weight (and one column of the consumer's), and
the total distance cannot show where. Per axis, element i is added with its sign s(i) into
bucket (index(i) mod K, sub(i)) for each fold K of AXIS_FOLDS, AXIS_SUB sub-buckets per
fold bucket (sub: the other axis's index mod AXIS_SUB): the energy of a fold bucket (the
sum of its sub-buckets' squares) estimates the squared distance of the rows (or columns)
in it with a relative deviation of about sqrt(2/AXIS_SUB), and the two coprime folds' top
buckets name one index below 32 x 31 = 992. 2 x 252 values per matrix, whatever its size.

Bucket and sign come from fixed tables of one BLOCK of positions plus a per-block (and per
tensor) offset and sign drawn from an integer mix, never from a device RNG, so CPU and CUDA
probes agree. Buckets are accumulated in float64: a distance of 1e-6 of the norm moves bucket
values by ~1e-6, below float32 accumulation error but ~1e10 above float64's. They are stored
as float32 (see ``records``): rounding adds ~2e-8 of a bucket's magnitude, ~5% of the bucket
difference at a 1e-6 relative distance and ~0.1% on the distance (``rounding_floor``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from denpex.fingerprints.records import AXIS_FOLDS, AXIS_SIZE, AXIS_SUB

# Local sketch per tensor and global buckets contributed per tensor: 64 + 96 float32 = 640
# bytes = 800 base85 characters; with the other fields an entry stays under 1 KB.
LOCAL_SIZE = 64
GLOBAL_PER_TENSOR = 96
# Positions covered by one bucket/sign table. Fixed: it is part of the sketch's definition.
BLOCK = 1 << 16
# Blocks per chunk: on CPU one block stays in cache (measured ~10x faster than 4M-element
# temporaries, which each pay page faults); on a GPU large chunks amortise kernel launches.
BLOCKS_CPU = 1
BLOCKS_GPU = 256

_M32 = 0xFFFFFFFF
# Odd multipliers below 2**31 (so value * multiplier < 2**63).
_HASH_MIX = ((0x7FEB352D, 0x5BD1E995), (0x1B873593, 0x27D4EB2F))
_POS_KEY = 0x2545F491
_BUCKET_KEY = (0x165667B1, 0x61C88647)
_BLOCK_KEY = (0x3C6EF373, 0x7FEB352D)


def _mix(x: torch.Tensor, k1: int, k2: int) -> torch.Tensor:
    """xorshift-multiply finaliser on values in [0, 2**32): a bijection, no int64 overflow."""
    x = x ^ (x >> 16)
    x = (x * k1) & _M32
    x = x ^ (x >> 15)
    x = (x * k2) & _M32
    return x ^ (x >> 16)


def tensor_salt(name: str) -> int:
    """Per-tensor sketch salt from the (normalised) name: same in every run and process."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little")


@dataclass
class Fingerprint:
    """One tensor at one step. Sketch values are float64 as computed (rounded when stored)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    norm: float
    max_abs: float
    hash: int  # unsigned 64-bit
    local: torch.Tensor  # float64 on the host: LOCAL_SIZE buckets, or the values when exact
    axes: torch.Tensor | None = None  # sketched matrices: rows' then columns' axis sketches

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def exact(self) -> bool:
        return self.numel <= self.local.numel() and self.numel > 0


@dataclass
class _Tables:
    """Data-independent per-position tables for one device, built once per probe."""

    bucket: torch.Tensor  # int64 in [0, 2**32)
    sign: torch.Tensor  # float64 +-1
    pos: torch.Tensor  # int64 word-position mix for the content hash


@dataclass
class Sketcher:
    """Fingerprints tensors with fixed tables; accumulates the record's global sketch."""

    local_size: int = LOCAL_SIZE
    global_size: int = GLOBAL_PER_TENSOR
    _tables: dict[str, _Tables] = field(default_factory=dict)
    _global: torch.Tensor | None = None

    def _tables_for(self, device: torch.device) -> _Tables:
        key = str(device)
        if key not in self._tables:
            k = torch.arange(BLOCK, dtype=torch.int64, device=device)
            h = _mix(k, *_BUCKET_KEY)
            self._tables[key] = _Tables(
                bucket=h,
                sign=1.0 - 2.0 * (_mix(h, *_BLOCK_KEY) & 1).to(torch.float64),
                pos=_mix((k * _POS_KEY) & _M32, *_BLOCK_KEY),
            )
        return self._tables[key]

    def begin(self, n_tensors: int) -> None:
        """Start a record: the global sketch has ``global_size`` buckets per tensor."""
        self._global = torch.zeros(max(1, n_tensors) * self.global_size, dtype=torch.float64)

    def global_sketch(self) -> torch.Tensor:
        assert self._global is not None, "begin() first"
        return self._global

    @torch.no_grad()
    def fingerprint(self, name: str, tensor: torch.Tensor) -> Fingerprint:
        """Fingerprint one tensor on its own device; never copies it whole to the host."""
        t = tensor.detach()
        if hasattr(t, "to_local"):  # a DTensor shard: fingerprint what this rank holds
            t = t.to_local()
        flat = t.contiguous().view(-1)
        n, dev = flat.numel(), flat.device
        tab = self._tables_for(dev)
        exact = 0 < n <= self.local_size
        local = torch.zeros(n if exact else self.local_size, dtype=torch.float64, device=dev)
        glob = None
        if not exact and self._global is not None:
            glob = torch.zeros(self._global.numel(), dtype=torch.float64, device=dev)
        salt = tensor_salt(name)
        cols = n // t.shape[0] if t.dim() >= 2 and t.shape[0] else 0
        axes = None
        if cols and not exact:
            axes = torch.zeros(2 * AXIS_SIZE, dtype=torch.float64, device=dev)
        sumsq = torch.zeros((), dtype=torch.float64, device=dev)
        peak = torch.zeros((), dtype=torch.float64, device=dev)
        for start, x in _blocks(flat, dev):  # x: float64 [blocks, BLOCK], zero-padded
            x = x.to(torch.float64)
            sumsq += (x * x).sum()
            peak = torch.maximum(peak, x.abs().max())
            if exact:
                local.copy_(x.view(-1)[:n])
                continue
            r = _mix((_block_ids(start, x.shape[0], dev) * _POS_KEY + salt) & _M32, *_BLOCK_KEY)
            b = tab.bucket + (r >> 1).unsqueeze(1)
            v = x * tab.sign * (1.0 - 2.0 * (r & 1).to(torch.float64)).unsqueeze(1)
            # Padding is zero, so it adds nothing to any bucket.
            local.index_add_(0, (b % self.local_size).view(-1), v.view(-1))
            if glob is not None:
                glob.index_add_(0, ((b >> 7) % glob.numel()).view(-1), v.view(-1))
            if axes is not None:
                _add_axes(axes, start, cols, v)
        if glob is not None and self._global is not None:
            self._global += glob.cpu()
        return Fingerprint(
            name=name,
            shape=tuple(t.shape),
            dtype=str(t.dtype).removeprefix("torch."),
            norm=float(sumsq.sqrt()),
            max_abs=float(peak),
            hash=content_hash(flat, tab.pos),
            local=local.cpu(),
            axes=None if axes is None else axes.cpu(),
        )


def _add_axes(axes: torch.Tensor, start: int, cols: int, v: torch.Tensor) -> None:
    """Add one chunk's signed values ``v`` (flat positions from ``start``) into the rows' and
    columns' fold buckets. The chunk is laid out as rows of the matrix so that the sums are
    reshapes and small scatters rather than a scatter per element (3x cheaper on a CPU).
    A chunk shorter than a row is split at the row boundaries, so a buffer never exceeds
    three chunks."""
    n = v.numel()
    flat = v.reshape(-1)
    if cols > n:
        end = start + n
        for r in range(start // cols, (end - 1) // cols + 1):
            a, b = max(start, r * cols), min(end, (r + 1) * cols)
            _add_rows(axes, flat[a - start : b - start].view(1, -1), r, a - r * cols)
        return
    r0, off = divmod(start, cols)
    if off == 0 and n % cols == 0:  # whole rows (a chunk is a power of two): no copy
        _add_rows(axes, flat.view(n // cols, cols), r0, 0)
        return
    rows = -(-(off + n) // cols)
    buf = flat.new_zeros(rows * cols)
    buf[off : off + n] = flat
    _add_rows(axes, buf.view(rows, cols), r0, 0)


def _add_rows(axes: torch.Tensor, m: torch.Tensor, r0: int, c0: int) -> None:
    """``m``: rows ``r0``… of the matrix, columns ``c0``…; the rest of the chunk is zero.
    Sub-buckets: a row's elements split by column mod AXIS_SUB, a column's by row mod
    AXIS_SUB (the signs are random, so any fixed split keeps the estimates unbiased)."""
    rows = torch.arange(r0, r0 + m.shape[0], dtype=torch.int64, device=m.device)
    sub = torch.arange(AXIS_SUB, dtype=torch.int64, device=m.device)
    per_row = _fold_cols(m, c0, AXIS_SUB)  # [rows, SUB]: sub = column mod SUB
    per_col = m.new_zeros(AXIS_SUB, m.shape[1]).index_add_(0, rows % AXIS_SUB, m)
    offset = 0
    for k in AXIS_FOLDS:
        index = ((rows % k) * AXIS_SUB).unsqueeze(1) + sub
        axes.index_add_(0, offset + index.view(-1), per_row.reshape(-1))
        offset += k * AXIS_SUB
    for k in AXIS_FOLDS:
        # [SUB, k] -> bucket (column mod k) * SUB + (row mod SUB)
        axes[offset : offset + k * AXIS_SUB] += _fold_cols(per_col, c0, k).T.reshape(-1)
        offset += k * AXIS_SUB


def _fold_cols(m: torch.Tensor, c0: int, k: int) -> torch.Tensor:
    """Sum the columns of ``m`` (matrix columns ``c0``…) by column mod ``k``: [rows, k]."""
    lead = c0 % k
    width = -(-(lead + m.shape[1]) // k) * k
    if lead or width != m.shape[1]:
        m = torch.nn.functional.pad(m, (lead, width - lead - m.shape[1]))
    return m.reshape(m.shape[0], width // k, k).sum(1)


def _block_ids(start: int, blocks: int, dev: torch.device) -> torch.Tensor:
    first = start // BLOCK
    return torch.arange(first, first + blocks, device=dev, dtype=torch.int64)


def _blocks(flat: torch.Tensor, dev: torch.device) -> Iterator[tuple[int, torch.Tensor]]:
    """Chunks of whole BLOCKs as [blocks, BLOCK] views; the last one zero-padded."""
    step = BLOCK * (BLOCKS_CPU if dev.type == "cpu" else BLOCKS_GPU)
    n = flat.numel()
    for start in range(0, n, step):
        x = flat[start : start + step]
        if x.numel() % BLOCK:
            padded = torch.zeros(-(-x.numel() // BLOCK) * BLOCK, dtype=x.dtype, device=dev)
            padded[: x.numel()] = x
            x = padded
        yield start, x.view(-1, BLOCK)


def content_hash(flat: torch.Tensor, pos_table: torch.Tensor) -> int:
    """Exact 64-bit hash of a contiguous 1-D tensor's bytes (see the module docstring)."""
    raw = flat.view(torch.uint8)
    whole = raw.numel() // 4 * 4
    words = raw[:whole].view(torch.int32)
    if raw.numel() > whole:  # 16/8-bit tensors of odd byte length: zero-pad the last word
        pad = torch.zeros(4, dtype=torch.uint8, device=raw.device)
        pad[: raw.numel() - whole] = raw[whole:]
        words = torch.cat([words, pad.view(torch.int32)])
    n = words.numel()
    lanes = [0, 0]
    for start, w in _blocks(words, words.device):
        # Positions past the end (padding) are masked out of the sums below.
        keep = min(n - start, w.numel())
        block_mix = _mix(_block_ids(start, w.shape[0], w.device) & _M32, *_BUCKET_KEY)
        x = (w.to(torch.int64) & _M32) ^ pos_table ^ block_mix.unsqueeze(1)
        for i, (k1, k2) in enumerate(_HASH_MIX):
            lanes[i] = (lanes[i] + int(_mix(x, k1, k2).view(-1)[:keep].sum())) & _M32
    return (lanes[1] << 32) | lanes[0]

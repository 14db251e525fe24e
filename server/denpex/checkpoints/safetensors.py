"""safetensors files, single or the shards of one checkpoint.

The header is parsed and validated here as the official loader does, and the bytes of
each block are read with ``os.preadv`` into a small buffer: no torch import, bf16 handled
as raw 16-bit words, a truncated file caught from its header alone.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from denpex.checkpoints.keys import normalise_key
from denpex.checkpoints.reader import NP_DTYPES, CheckpointError, Preader, TensorMeta, claim

# safetensors dtype codes -> our dtype names
_ST_NAMES = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
}

# The official loader's limit (safetensors' MAX_HEADER_SIZE).
_ST_MAX_HEADER = 100_000_000
# Bits per element of every dtype the official loader knows (a header naming another is corrupt).
_ST_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
    "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32,
    "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}  # fmt: skip
_U64 = 1 << 64


@dataclass(frozen=True)
class StEntry:
    """One tensor of a safetensors header, validated: its bytes are [begin, end) of the data."""

    dtype: str  # the safetensors code ("F32", "BF16", ...)
    shape: tuple[int, ...]
    begin: int
    end: int


@dataclass(frozen=True)
class StHeader:
    tensors: dict[str, StEntry]  # stored (not normalised) names, in file order
    data_start: int  # file offset of the data buffer


def read_safetensors_header(path: str) -> StHeader:
    """Parse and validate a safetensors header the way the official loader does.

    Any inconsistency is a corrupt file, never something to read around: a header whose
    ``shape`` disagrees with its ``data_offsets`` would have us compare a neighbour's bytes.
    """
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            raw = f.read(8)
            if len(raw) < 8:
                raise CheckpointError(f"{path}: not a safetensors file ({size} bytes)")
            (hlen,) = struct.unpack("<Q", raw)
            if hlen > _ST_MAX_HEADER or 8 + hlen > size:
                raise CheckpointError(f"{path}: corrupt safetensors header (length {hlen})")
            text = f.read(hlen).decode("utf-8")
    except OSError as exc:
        raise CheckpointError(f"{path}: unreadable safetensors file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CheckpointError(f"{path}: corrupt safetensors header (not UTF-8)") from None
    try:
        tensors = _st_entries(_st_json(text))
    except _BadHeader as exc:
        raise CheckpointError(f"{path}: corrupt safetensors header ({exc})") from None
    end = max((e.end for e in tensors.values()), default=0)
    if size < 8 + hlen + end:
        raise CheckpointError(
            f"{path}: truncated ({size} bytes, header expects {8 + hlen + end}); "
            "still being written or cut short"
        )
    if size > 8 + hlen + end:
        raise CheckpointError(
            f"{path}: corrupt safetensors header ({size - 8 - hlen - end} bytes after the "
            "last tensor)"
        )
    return StHeader(tensors, 8 + hlen)


class _BadHeader(ValueError):
    """What is wrong with a safetensors header, for the one-line error."""


def _no_constant(name: str) -> Any:
    raise _BadHeader(f"{name} in the header")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _BadHeader("a name appears twice")
    return out


def _st_json(text: str) -> dict[str, Any]:
    try:
        header = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except _BadHeader:
        raise
    except RecursionError:
        raise _BadHeader("nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and integers beyond Python's digit limit
        raise _BadHeader(f"invalid JSON: {str(exc)[:80]}") from None
    if not isinstance(header, dict):
        raise _BadHeader(f"a JSON {type(header).__name__}, not an object")
    return header


def _st_int(value: Any, what: str) -> int:
    # bool is an int to Python, not to JSON's readers; floats (1.0, 1e3) are refused as the
    # official loader refuses them.
    if type(value) is not int or not 0 <= value < _U64:
        raise _BadHeader(f"{what}: {str(value)[:40]!r} is not an unsigned 64-bit integer")
    return value


def _st_entries(header: dict[str, Any]) -> dict[str, StEntry]:
    entries: dict[str, StEntry] = {}
    for name, info in header.items():
        if name == "__metadata__":
            if info is not None and not (
                isinstance(info, dict) and all(isinstance(v, str) for v in info.values())
            ):
                raise _BadHeader("__metadata__ is not a map of strings")
            continue
        shown = repr(name[:60])
        if not isinstance(info, dict):
            raise _BadHeader(f"{shown}: not an object")
        missing = [k for k in ("dtype", "shape", "data_offsets") if k not in info]
        if missing:
            raise _BadHeader(f"{shown}: no {missing[0]!r}")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or dtype not in _ST_BITS:
            raise _BadHeader(f"{shown}: unknown dtype {str(dtype)[:20]!r}")
        if not isinstance(shape, list):
            raise _BadHeader(f"{shown}: shape is not a list")
        if not isinstance(offsets, list) or len(offsets) != 2:
            raise _BadHeader(f"{shown}: data_offsets is not [begin, end]")
        numel = 1
        for dim in shape:
            numel *= _st_int(dim, f"{shown} shape")
            if numel >= _U64:
                raise _BadHeader(f"{shown}: shape overflows")
        begin, end = (_st_int(x, f"{shown} data_offsets") for x in offsets)
        bits = numel * _ST_BITS[dtype]
        if bits % 8 or end - begin != bits // 8:
            raise _BadHeader(
                f"{shown}: data_offsets [{begin}, {end}] do not hold shape {shape} of {dtype}"
            )
        entries[name] = StEntry(dtype, tuple(shape), begin, end)
    # Sorted by offset, the tensors must tile the data buffer from 0 with no gap or overlap.
    at = 0
    for name, e in sorted(entries.items(), key=lambda kv: (kv[1].begin, kv[1].end)):
        if e.begin != at:
            what = "overlaps another" if e.begin < at else f"leaves a gap at byte {at}"
            raise _BadHeader(f"{name[:60]!r}: data_offsets {what}")
        at = e.end
    return entries


@dataclass
class _StEntry:
    file: Preader
    start: int  # absolute file offset of the tensor's first byte
    row_bytes: int
    np_dtype: Any


class SafetensorsReader:
    """One or several safetensors files (the shards of one checkpoint)."""

    def __init__(self, path: str, files: list[str]) -> None:
        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._entries: dict[str, _StEntry] = {}
        self._files: list[Preader] = []
        for file in files:
            header = read_safetensors_header(file)
            reader = Preader(file)
            self._files.append(reader)
            reader.require_size(
                header.data_start + max((e.end for e in header.tensors.values()), default=0)
            )
            for raw_name, entry in header.tensors.items():
                self._add(raw_name, entry, reader, header.data_start)

    def _add(self, raw_name: str, entry: StEntry, file: Preader, base: int) -> None:
        name = normalise_key(raw_name)
        dtype = _ST_NAMES.get(entry.dtype, entry.dtype.lower())
        np_dtype = NP_DTYPES.get(dtype)
        meta = TensorMeta(name, entry.shape, dtype, entry.end - entry.begin)
        if not claim(self.tensors, name, self.warnings, self.path):
            return
        self.tensors[name] = meta
        row_bytes = meta.nbytes // meta.rows if meta.rows else 0
        self._entries[name] = _StEntry(file, base + entry.begin, row_bytes, np_dtype)

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        e = self._entries[name]
        shape = (r1 - r0, self.tensors[name].cols)
        return e.file.read(name, e.start + r0 * e.row_bytes, shape, e.np_dtype)

    def release(self, name: str, r0: int, r1: int) -> None:
        """Blocks are private buffers: nothing stays mapped."""

    def close(self) -> None:
        for file in self._files:
            file.close()
        self._files.clear()


__all__ = ["SafetensorsReader", "StEntry", "StHeader", "read_safetensors_header"]

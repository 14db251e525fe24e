"""Read checkpoint tensors one row block at a time, whatever the format.

A reader lists a checkpoint's tensors (normalised names, shapes, dtypes) without
loading them, then hands out row blocks on request, so memory stays bounded by a few
blocks and never grows with the checkpoint:

- safetensors (single file or sharded with an index): the header is parsed here and the
  bytes of each block are read with ``os.preadv`` into a small buffer. No torch import,
  bf16 handled as raw 16-bit words, a truncated file is caught from its header alone.
- torch ``.pt``/``.bin``: ``torch.load(map_location="meta", weights_only=True)`` gives
  shapes, dtypes and where each storage sits in the zip; blocks are then read with
  ``preadv`` like safetensors'. Nothing is memory-mapped: a mapped file that shrinks
  under the reader kills the process with SIGBUS, a short read is one clear error.
- torch.distributed.checkpoint directories: ``.metadata`` through ``denpex.safepickle``
  (only DCP's own metadata types), then each chunk of a tensor loaded from its byte range
  with ``torch.load(weights_only=True)``; torch's DCP reader, which unpickles freely, is
  never used.

Every header, offset and size is checked against the file before anything is read: a
file that lies about its layout is a corrupt file, never a source of neighbouring bytes.

Blocks are numpy arrays shaped (rows, cols) in the stored dtype; bf16 comes as uint16
words (numpy has no bf16) and is widened by ``compare``.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import threading
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from denpex import safepickle
from denpex.drift.keys import normalise_key, unwrap
from denpex.errors import InputError


class CheckpointError(InputError):
    """A checkpoint (or one of its files) cannot be read; one clear line."""


# safetensors dtype codes -> (our dtype name, numpy storage dtype)
_ST_DTYPES: dict[str, tuple[str, Any]] = {
    "F64": ("float64", np.float64),
    "F32": ("float32", np.float32),
    "F16": ("float16", np.float16),
    "BF16": ("bfloat16", np.uint16),
    "I64": ("int64", np.int64),
    "I32": ("int32", np.int32),
    "I16": ("int16", np.int16),
    "I8": ("int8", np.int8),
    "U8": ("uint8", np.uint8),
    "BOOL": ("bool", np.uint8),
}
TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")


@dataclass(frozen=True)
class TensorMeta:
    name: str  # normalised
    shape: tuple[int, ...]
    dtype: str  # "float32", "bfloat16", ... or the format's own name when not comparable
    nbytes: int

    @property
    def numel(self) -> int:
        return prod(self.shape)

    @property
    def rows(self) -> int:
        return self.shape[0] if self.shape else 1

    @property
    def cols(self) -> int:
        return prod(self.shape[1:]) if len(self.shape) > 1 else 1


class Reader(Protocol):
    path: str
    tensors: dict[str, TensorMeta]
    warnings: list[str]

    def block(self, name: str, r0: int, r1: int) -> np.ndarray: ...

    def release(self, name: str, r0: int, r1: int) -> None: ...

    def close(self) -> None: ...


class _Preader:
    """Reads row blocks of a file with ``preadv`` into one reused buffer per thread: a
    fresh allocation per block would page-fault its way through every block again, and
    reading (not mapping) leaves nothing of the file resident in the process."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise CheckpointError(f"{path}: {exc.strerror}") from None
        self._buffers = threading.local()

    def require_size(self, nbytes: int) -> None:
        """The open file holds at least ``nbytes``; checked on the descriptor, after every
        check made by name, so a file replaced or cut in between is caught here."""
        size = os.fstat(self.fd).st_size
        if size < nbytes:
            self.close()
            raise CheckpointError(
                f"{self.path}: truncated ({size} bytes, its layout needs {nbytes}); "
                "still being written or cut short"
            )

    def read(self, name: str, offset: int, shape: tuple[int, int], np_dtype: Any) -> np.ndarray:
        if np_dtype is None:
            raise CheckpointError(f"{self.path}: {name}: its dtype is not read")
        nbytes = shape[0] * shape[1] * np.dtype(np_dtype).itemsize
        buf = getattr(self._buffers, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = self._buffers.buf = np.empty(nbytes, np.uint8)
        self._fill(name, buf[:nbytes], offset)
        return buf[:nbytes].view(np_dtype).reshape(shape)

    def read_new(self, name: str, offset: int, nbytes: int) -> np.ndarray:
        """``nbytes`` from ``offset`` into a buffer of their own (kept by the caller)."""
        buf = np.empty(nbytes, np.uint8)
        self._fill(name, buf, offset)
        return buf

    def _fill(self, name: str, buf: np.ndarray, offset: int) -> None:
        view = memoryview(buf)  # type: ignore[arg-type]
        done = 0
        while done < buf.nbytes:
            try:
                n = os.preadv(self.fd, [view[done:]], offset + done)
            except OSError as exc:
                raise CheckpointError(f"{self.path}: {name}: {exc.strerror}") from None
            if n == 0:
                raise CheckpointError(f"{self.path}: {name}: file ended early (truncated)")
            done += n

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


# --------------------------------------------------------------------------- safetensors

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
    file: _Preader
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
        self._files: list[_Preader] = []
        for file in files:
            header = read_safetensors_header(file)
            reader = _Preader(file)
            self._files.append(reader)
            reader.require_size(
                header.data_start + max((e.end for e in header.tensors.values()), default=0)
            )
            for raw_name, entry in header.tensors.items():
                self._add(raw_name, entry, reader, header.data_start)

    def _add(self, raw_name: str, entry: StEntry, file: _Preader, base: int) -> None:
        name = normalise_key(raw_name)
        dtype, np_dtype = _ST_DTYPES.get(entry.dtype, (entry.dtype.lower(), None))
        meta = TensorMeta(name, entry.shape, dtype, entry.end - entry.begin)
        if name in self.tensors:
            self.warnings.append(f"{self.path}: two tensors normalise to {name!r}; kept the first")
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


# --------------------------------------------------------------------------- torch files

_TORCH_DTYPES = {
    "torch.float64": "float64",
    "torch.float32": "float32",
    "torch.float16": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.int64": "int64",
    "torch.int32": "int32",
    "torch.int16": "int16",
    "torch.int8": "int8",
    "torch.uint8": "uint8",
    "torch.bool": "bool",
}
_NP_DTYPES = {name: np_dtype for name, np_dtype in _ST_DTYPES.values()}


def _dtype_name(dtype: Any) -> str:
    return _TORCH_DTYPES.get(str(dtype), str(dtype).removeprefix("torch."))


@dataclass(frozen=True)
class _InFile:
    """Where a tensor's elements sit in a torch zip file: the file offset of its first
    element, its strides in elements, and the bytes spanned from there to its last one."""

    offset: int
    strides: tuple[int, ...]
    span: int
    contiguous: bool


def _weights_only_reason(exc: Exception) -> str:
    text = str(exc)
    m = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text) or re.search(
        r"Unsupported operand \d+|Unsupported class ([\w.]+)", text
    )
    what = m.group(1) if m and m.groups() and m.group(1) else (m.group(0) if m else "")
    detail = f" (it contains {what})" if what else ""
    return (
        f"refused: not a plain state dict{detail}; Denpex loads torch files with "
        "weights_only=True and never runs pickled code — re-save with "
        "torch.save(model.state_dict(), path)"
    )


def _tensor_items(state: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    import torch

    for k, v in state.items():
        if isinstance(v, torch.Tensor):
            yield str(k), v


def _zip_records(path: str) -> dict[int, int]:
    """Data offset -> size of every record of a torch zip file, from its central directory
    (and each record's local header, which says where its data starts)."""
    out: dict[int, int] = {}
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        for info in z.infolist():
            if info.filename.endswith("/byteorder") and (
                info.file_size > 16 or z.read(info) not in (b"little", b"")
            ):
                raise CheckpointError(f"{path}: big-endian torch file (not supported)")
            if info.compress_type != zipfile.ZIP_STORED:
                continue  # torch stores tensor data uncompressed; nothing to map to it
            f.seek(info.header_offset)
            local = f.read(30)
            if len(local) < 30 or local[:4] != b"PK\x03\x04":
                raise CheckpointError(f"{path}: corrupt zip record {info.filename[:60]!r}")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            out[info.header_offset + 30 + name_len + extra_len] = info.file_size
    return out


class TorchReader:
    """A torch.save file. Nothing of it is mapped into memory: the state dict is loaded
    with ``map_location="meta"`` (shapes, dtypes and each storage's offset in the file, no
    data), and every block is read with ``preadv``. A mapped file that shrinks under the
    reader kills the process with SIGBUS; a short read is one clear error instead."""

    def __init__(self, path: str, key: str | None = None) -> None:
        import torch

        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._in_file: dict[str, _InFile] = {}
        self._arrays: dict[str, Any] = {}  # legacy (non-zip) files, loaded whole
        self._strided: tuple[str, np.ndarray] | None = None  # last non-contiguous tensor read
        self._lock = threading.Lock()
        self._file: _Preader | None = None
        try:
            zipped = _starts_with(path, b"PK\x03\x04")
            state = self._load(torch, path, zipped)
            records = _zip_records(path) if zipped else {}
        except CheckpointError:
            raise
        except Exception as exc:
            raise CheckpointError(f"{path}: {self._load_error(exc)}") from None
        weights = unwrap(state, key)
        for raw_name, tensor in _tensor_items(weights):
            name = normalise_key(raw_name)
            dtype = _dtype_name(tensor.dtype)
            if tensor.layout != torch.strided:
                dtype = str(tensor.layout).removeprefix("torch.")  # listed, never compared
            meta = TensorMeta(name, tuple(tensor.shape), dtype, tensor.numel() * tensor.itemsize)
            if name in self.tensors:
                self.warnings.append(f"{path}: two tensors normalise to {name!r}; kept the first")
                continue
            if zipped and dtype in _NP_DTYPES:
                self._in_file[name] = self._where(raw_name, tensor, records)
            elif not zipped and tensor.device.type == "meta":
                raise CheckpointError(f"{path}: {raw_name!r} is a meta tensor (no data saved)")
            self.tensors[name] = meta
            self._arrays[name] = None if zipped else tensor
        skipped = len(weights) - len(self.tensors)
        if not self.tensors:
            raise CheckpointError(f"{path}: no tensors in the state dict (try --key)")
        if skipped:
            self.warnings.append(f"{path}: {skipped} non-tensor entries ignored")
        if zipped:
            self._file = _Preader(path)
            # Checked on the open descriptor: the file may have changed since it was listed.
            self._file.require_size(
                max((w.offset + w.span for w in self._in_file.values()), default=0)
            )

    def _load(self, torch: Any, path: str, zipped: bool) -> Any:
        # torch warns on stderr about what its weights-only unpickler meets (a foreign pickle
        # protocol, say); the refusal itself, if any, comes back as one line from _load_error.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            if zipped:
                return torch.load(path, map_location="meta", weights_only=True)
            # Legacy (pre-1.6, non-zip) files keep no offsets: load them whole and say so.
            self.warnings.append(f"{path}: legacy torch format, loaded whole into memory")
            return torch.load(path, map_location="cpu", weights_only=True)

    def _where(self, raw_name: str, tensor: Any, records: dict[int, int]) -> _InFile:
        """Where ``tensor``'s bytes are, checked against the zip record that holds them."""
        storage = tensor.untyped_storage()
        base = getattr(storage, "_checkpoint_offset", None)
        if base is None:  # a tensor saved from the meta device: shape and dtype, no data
            raise CheckpointError(f"{self.path}: {raw_name!r} is a meta tensor (no data saved)")
        item = tensor.itemsize
        strides = tuple(tensor.stride())
        if tensor.numel() == 0:
            return _InFile(base, strides, 0, True)
        first = tensor.storage_offset()
        last = first + sum((n - 1) * s for n, s in zip(tensor.shape, strides, strict=True))
        span = (last - first + 1) * item
        record = records.get(base)
        if record is None or min(strides, default=0) < 0 or (last + 1) * item > record:
            raise CheckpointError(
                f"{self.path}: {raw_name!r} claims bytes its zip record does not hold "
                "(corrupt or rewritten file)"
            )
        return _InFile(base + first * item, strides, span, tensor.is_contiguous())

    @staticmethod
    def _load_error(exc: Exception) -> str:
        text = str(exc)
        if "Weights only load failed" in text:
            return _weights_only_reason(exc)
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        first = re.sub(r"^\[enforce fail at [^\]]*\]\s*\.?\s*", "", first)  # c10's location prefix
        zip_trouble = ("PytorchStreamReader", "central dir", "inline_container", "archive")
        if isinstance(exc, (EOFError, zipfile.BadZipFile)) or any(w in text for w in zip_trouble):
            return f"corrupt or truncated torch file ({first})"
        return f"unreadable torch file ({first})"

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        meta = self.tensors[name]
        np_dtype = _NP_DTYPES.get(meta.dtype)
        if np_dtype is None:
            raise CheckpointError(f"{self.path}: {name}: dtype {meta.dtype} is not read")
        where = self._in_file.get(name)
        if where is None:
            return _numpy_rows(self._arrays[name], meta, r0, r1)
        if where.contiguous:
            assert self._file is not None
            row_bytes = meta.nbytes // meta.rows
            shape = (r1 - r0, meta.cols)
            return self._file.read(name, where.offset + r0 * row_bytes, shape, np_dtype)
        return self._gathered(name, meta, where, np_dtype)[r0:r1]

    def _gathered(self, name: str, meta: TensorMeta, where: _InFile, np_dtype: Any) -> np.ndarray:
        """A non-contiguous tensor (a saved transpose, say): its span is read once into a
        private buffer and made contiguous; kept until its last block is released."""
        with self._lock:
            if self._strided is None or self._strided[0] != name:
                assert self._file is not None
                raw = self._file.read_new(name, where.offset, where.span)
                item = np.dtype(np_dtype).itemsize
                view = np.lib.stride_tricks.as_strided(
                    raw.view(np_dtype),
                    shape=meta.shape,
                    strides=tuple(s * item for s in where.strides),
                    writeable=False,
                )
                self._strided = (name, np.ascontiguousarray(view).reshape(meta.rows, meta.cols))
            return self._strided[1]

    def release(self, name: str, r0: int, r1: int) -> None:
        if r1 >= self.tensors[name].rows and self._strided and self._strided[0] == name:
            self._strided = None

    def close(self) -> None:
        self._arrays.clear()
        self._strided = None
        if self._file is not None:
            self._file.close()
            self._file = None


def _numpy_rows(tensor: Any, meta: TensorMeta, r0: int, r1: int) -> np.ndarray:
    """Rows [r0, r1) of an in-memory CPU tensor as numpy, bf16 as uint16 words."""
    import torch

    part = tensor.contiguous().view(meta.rows, meta.cols)[r0:r1]
    if part.dtype == torch.bfloat16:
        return part.view(torch.int16).numpy().view(np.uint16)
    if part.dtype == torch.bool:
        return part.view(torch.uint8).numpy()
    return part.numpy()


def _starts_with(path: str, magic: bytes) -> bool:
    with open(path, "rb") as f:
        return f.read(len(magic)) == magic


# --------------------------------------------------------------------------- DCP

_DCP_MAX_METADATA = 1 << 30  # bytes; a real .metadata is KBs to tens of MBs


def _dcp_allowed() -> dict[tuple[str, str], object]:
    """The globals a DCP ``.metadata`` written by torch's FileSystemWriter names, and no
    other: its metadata dataclasses, ``torch.Size``, dtypes and layouts, and the
    checkpoint id (a path, read back as a pure path: nothing touches the filesystem)."""
    import pathlib

    import torch
    from torch.distributed.checkpoint import filesystem
    from torch.distributed.checkpoint import metadata as md
    from torch.serialization import _get_layout

    classes = (
        md.Metadata,
        md.StorageMeta,
        md.TensorStorageMetadata,
        md.BytesStorageMetadata,
        md.ChunkStorageMetadata,
        md.TensorProperties,
        md.MetadataIndex,
        md._MEM_FORMAT_ENCODING,
    )
    allowed: dict[tuple[str, str], object] = {(md.__name__, c.__name__): c for c in classes}
    allowed[(filesystem.__name__, "_StorageInfo")] = filesystem._StorageInfo
    allowed[("torch", "Size")] = torch.Size
    allowed[("torch.serialization", "_get_layout")] = _get_layout
    allowed[("pathlib", "PosixPath")] = pathlib.PurePosixPath
    for name, value in vars(torch).items():
        if isinstance(value, torch.dtype):
            allowed[("torch", name)] = value
    return allowed


@dataclass(frozen=True)
class _Chunk:
    """One saved piece of a DCP tensor: where it sits in the tensor and in which file."""

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    file: str  # a file name inside the checkpoint directory
    start: int
    length: int


@dataclass(frozen=True)
class _DcpTensor:
    stored: str  # the flattened name in the checkpoint
    dtype: Any  # torch.dtype
    size: tuple[int, ...]
    chunks: tuple[_Chunk, ...]


def read_dcp_metadata(path: str) -> Any:
    """A DCP ``.metadata`` through the restricted unpickler: a pickle naming anything but
    DCP's own metadata types is refused before any of it runs."""
    meta_path = os.path.join(path, ".metadata")
    try:
        size = os.path.getsize(meta_path)
        if size > _DCP_MAX_METADATA:
            raise CheckpointError(f"{meta_path}: {size} bytes, too large for DCP metadata")
        with open(meta_path, "rb") as f:
            data = f.read(_DCP_MAX_METADATA)
    except OSError as exc:
        raise CheckpointError(f"{meta_path}: unreadable ({exc.strerror})") from None
    from torch.distributed.checkpoint.metadata import Metadata

    try:
        md = safepickle.loads(data, allowed=_dcp_allowed(), what=meta_path)
    except InputError:
        raise
    except Exception as exc:  # an allowed constructor refusing its arguments
        raise CheckpointError(
            f"{meta_path}: unreadable DCP metadata ({type(exc).__name__})"
        ) from None
    if not isinstance(md, Metadata) or not isinstance(md.state_dict_metadata, dict):
        raise CheckpointError(f"{meta_path}: not DCP metadata")
    if not isinstance(md.storage_data, dict):
        raise CheckpointError(f"{meta_path}: DCP metadata without storage data")
    return md


def _dcp_tensors(path: str, md: Any, prefix: str) -> dict[str, _DcpTensor]:
    """The tensors under ``prefix``, each checked: sizes, chunks tiling it, files in place."""
    import torch
    from torch.distributed.checkpoint.filesystem import _StorageInfo
    from torch.distributed.checkpoint.metadata import (
        ChunkStorageMetadata,
        MetadataIndex,
        TensorProperties,
        TensorStorageMetadata,
    )

    where: dict[tuple[str, tuple[int, ...] | None], Any] = {}
    for index, info in md.storage_data.items():
        if isinstance(index, MetadataIndex) and isinstance(info, _StorageInfo):
            where[(index.fqn, _dims(index.offset))] = info
    sizes: dict[str, int] = {}
    out: dict[str, _DcpTensor] = {}
    for stored, tmd in md.state_dict_metadata.items():
        if not isinstance(tmd, TensorStorageMetadata) or not str(stored).startswith(prefix):
            continue
        if not isinstance(stored, str):
            raise CheckpointError(f"{path}: corrupt DCP metadata (a name that is not a string)")
        bad = f"{path}: corrupt DCP metadata for {str(stored)[:80]!r}"
        props = tmd.properties
        if not isinstance(props, TensorProperties) or not isinstance(props.dtype, torch.dtype):
            raise CheckpointError(f"{bad}: no dtype")
        size = _dims(tmd.size)
        if size is None or not isinstance(tmd.chunks, list):
            raise CheckpointError(f"{bad}: bad size or chunk list")
        numel, covered, chunks = prod(size), 0, []
        for c in tmd.chunks:
            offsets = _dims(c.offsets) if isinstance(c, ChunkStorageMetadata) else None
            extent = _dims(c.sizes) if isinstance(c, ChunkStorageMetadata) else None
            info = where.get((stored, offsets)) if offsets is not None else None
            if (
                offsets is None
                or extent is None
                or len(offsets) != len(size)
                or len(extent) != len(size)
                or any(o + n > s for o, n, s in zip(offsets, extent, size, strict=True))
                or info is None
            ):
                raise CheckpointError(f"{bad}: a chunk outside the tensor or without storage")
            file, start, length = _dcp_storage(path, info, sizes, bad)
            if prod(extent) * props.dtype.itemsize > length:
                raise CheckpointError(f"{bad}: a chunk larger than its stored bytes")
            chunks.append(_Chunk(offsets, extent, file, start, length))
            covered += prod(extent)
        # Chunks inside the tensor whose volumes add up to it tile it exactly unless two
        # overlap, which leaves a hole: found when they are copied in (see DcpReader).
        if covered != numel:
            raise CheckpointError(f"{bad}: its chunks hold {covered} of {numel} elements")
        out[stored] = _DcpTensor(stored, props.dtype, size, tuple(chunks))
    return out


def _dims(value: Any) -> tuple[int, ...] | None:
    """A torch.Size of non-negative ints as a tuple, or None."""
    import torch

    if not isinstance(value, torch.Size) or any(d < 0 for d in value):
        return None
    return tuple(value)


def _dcp_storage(path: str, info: Any, sizes: dict[str, int], bad: str) -> tuple[str, int, int]:
    """A chunk's storage, checked: a plain file of the directory, holding the range, whose
    bytes begin and end like the zip ``torch.save`` writes."""
    name, start, length = info.relative_path, info.offset, info.length
    if (
        not isinstance(name, str)
        or name in ("", ".", "..")
        or os.path.basename(name) != name
        or type(start) is not int
        or type(length) is not int
        or start < 0
        or length < 22
        or info.transform_descriptors
    ):
        raise CheckpointError(f"{bad}: unsupported or invalid storage entry")
    file = os.path.join(path, name)
    if name not in sizes:
        try:
            sizes[name] = os.path.getsize(file)
        except OSError:
            raise CheckpointError(f"{path}: shard {name[:80]!r} missing") from None
    if start + length > sizes[name]:
        raise CheckpointError(f"{path}: shard {name[:80]!r} truncated ({sizes[name]} bytes)")
    with open(file, "rb") as f:
        f.seek(start)
        head = f.read(4)
        f.seek(start + length - 22)
        tail = f.read(4)
    if head != b"PK\x03\x04" or tail != b"PK\x05\x06":
        raise CheckpointError(f"{path}: shard {name[:80]!r} corrupt at byte {start}")
    return name, start, length


class _FileSlice(io.RawIOBase):
    """Bytes [start, start + length) of a file as a seekable stream, read with pread: what
    ``torch.load`` needs to read one chunk of a DCP shard, and nothing beyond it."""

    def __init__(self, fd: int, start: int, length: int) -> None:
        self._fd, self._start, self._length, self._pos = fd, start, length, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._length}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        n = max(0, min(len(buffer), self._length - self._pos))
        got = os.preadv(self._fd, [memoryview(buffer)[:n]], self._start + self._pos) if n else 0
        self._pos += got
        return got


class DcpReader:
    """A torch.distributed.checkpoint directory, read without torch's DCP reader.

    ``FileSystemReader.read_metadata`` unpickles ``.metadata`` with plain pickle, and DCP's
    load planner unpickles non-tensor entries the same way. Here the metadata goes through
    ``denpex.safepickle`` and each chunk of a tensor is loaded with
    ``torch.load(weights_only=True)`` from its byte range, one tensor at a time.
    """

    def __init__(self, path: str, key: str | None = None) -> None:
        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._stored: dict[str, _DcpTensor] = {}
        self._loaded: tuple[str, Any] | None = None
        self._lock = threading.Lock()
        md = read_dcp_metadata(path)
        prefix = _dcp_weights_prefix([str(k) for k in md.state_dict_metadata], key)
        for stored, t in _dcp_tensors(path, md, prefix).items():
            name = normalise_key(stored[len(prefix) :])
            meta = TensorMeta(name, t.size, _dtype_name(t.dtype), prod(t.size) * t.dtype.itemsize)
            self.tensors[name] = meta
            self._stored[name] = t
        if not self.tensors:
            raise CheckpointError(f"{path}: no tensors under {prefix!r} in the DCP checkpoint")

    def _tensor(self, name: str) -> Any:
        with self._lock:
            if self._loaded is None or self._loaded[0] != name:
                self._loaded = None  # drop the previous tensor before allocating the next
                self._loaded = (name, self._assemble(self._stored[name]))
            return self._loaded[1]

    def _assemble(self, t: _DcpTensor) -> Any:
        import torch

        if len(t.chunks) == 1:
            return self._chunk(t, t.chunks[0])
        out = torch.empty(t.size, dtype=t.dtype)
        filled = torch.zeros(t.size, dtype=torch.bool)
        for chunk in t.chunks:
            region = tuple(slice(o, o + n) for o, n in zip(chunk.offsets, chunk.sizes, strict=True))
            out[region] = self._chunk(t, chunk)
            filled[region] = True
        if not bool(filled.all()):
            raise CheckpointError(f"{self.path}: {t.stored}: chunks overlap and leave a hole")
        return out

    def _chunk(self, t: _DcpTensor, chunk: _Chunk) -> Any:
        import torch

        what = f"{self.path}: {t.stored} in {chunk.file}"
        try:
            fd = os.open(os.path.join(self.path, chunk.file), os.O_RDONLY)
        except OSError as exc:
            raise CheckpointError(f"{what}: {exc.strerror}") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                stream = io.BufferedReader(_FileSlice(fd, chunk.start, chunk.length))
                piece = torch.load(stream, map_location="cpu", weights_only=True)
        except Exception as exc:
            line = (
                str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            )
            raise CheckpointError(f"{what}: unreadable chunk ({line})") from None
        finally:
            os.close(fd)
        if (
            not isinstance(piece, torch.Tensor)
            or piece.dtype != t.dtype
            or tuple(piece.shape) != chunk.sizes
            or piece.device.type != "cpu"
            or piece.layout != torch.strided
        ):
            raise CheckpointError(f"{what}: the chunk is not the tensor its metadata describes")
        return piece

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        meta = self.tensors[name]
        if meta.dtype not in _NP_DTYPES:
            raise CheckpointError(f"{self.path}: {name}: dtype {meta.dtype} is not read")
        return _numpy_rows(self._tensor(name), meta, r0, r1)

    def release(self, name: str, r0: int, r1: int) -> None:
        if r1 >= self.tensors[name].rows:
            with self._lock:
                if self._loaded and self._loaded[0] == name:
                    self._loaded = None

    def close(self) -> None:
        self._loaded = None


def _dcp_weights_prefix(names: list[str], key: str | None) -> str:
    """DCP flattens nested states ("model.layer.w", "optim.state..."): find the weights.

    A top-level "model." is only a container when the checkpoint also holds optimizer
    state; an HF model's own keys start with "model." too and must stay whole.
    """
    if key:
        return key.rstrip(".") + "."
    if not any(n.startswith(("optim", "optimizer")) for n in names):
        return ""
    for container in ("model", "module", "state_dict"):
        if any(n.startswith(container + ".") for n in names):
            return container + "."
    return ""


# --------------------------------------------------------------------------- composite


@dataclass
class MultiReader:
    """Several readers seen as one checkpoint (sharded torch bins)."""

    path: str
    parts: list[Any]
    tensors: dict[str, TensorMeta] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _owner: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for part in self.parts:
            self.warnings.extend(part.warnings)
            for name, meta in part.tensors.items():
                if name in self.tensors:
                    self.warnings.append(f"{self.path}: {name!r} in two shards; kept the first")
                    continue
                self.tensors[name] = meta
                self._owner[name] = part

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        return self._owner[name].block(name, r0, r1)

    def release(self, name: str, r0: int, r1: int) -> None:
        self._owner[name].release(name, r0, r1)

    def close(self) -> None:
        for part in self.parts:
            part.close()


# --------------------------------------------------------------------------- opening

# Files in a checkpoint directory that are not model weights.
_NOT_WEIGHTS = re.compile(r"optim|scheduler|rng_state|training_args|trainer_state|scaler", re.I)


def model_files(path: Path) -> tuple[str, list[Path]]:
    """(format, files) holding the model weights of a checkpoint file or directory."""
    if path.is_file():
        if path.suffix == ".safetensors":
            return "safetensors", [path]
        return "torch", [path]
    if (path / ".metadata").exists() or any(path.glob("*.distcp")):
        return "dcp", [path]
    for index in sorted(path.glob("*.safetensors.index.json")):
        return "safetensors", _index_files(index)
    st = sorted(p for p in path.glob("*.safetensors") if not _NOT_WEIGHTS.search(p.name))
    if st:
        return "safetensors", st
    for index in sorted(path.glob("*.bin.index.json")):
        return "torch", _index_files(index)
    # DeepSpeed: global_stepN/mp_rank_00_model_states.pt holds {"module": state_dict, ...}.
    ds = sorted(path.glob("mp_rank_*_model_states.pt"))
    if ds:
        return "torch", ds[:1]
    # Megatron (torch format): iter_0000120/mp_rank_00/model_optim_rng.pt.
    mg = sorted(path.glob("mp_rank_*/model_optim_rng.pt"))
    if mg:
        return "torch", mg[:1]
    pt = sorted(
        p for p in path.iterdir() if p.suffix in TORCH_SUFFIXES and not _NOT_WEIGHTS.search(p.name)
    )
    if len(pt) > 1:
        named = [p for p in pt if p.stem.startswith(("model", "pytorch_model"))]
        pt = named[:1] if len(named) == 1 else pt
    if len(pt) == 1:
        return "torch", pt
    if pt:
        raise CheckpointError(
            f"{path}: several weight files ({', '.join(p.name for p in pt[:4])}); "
            "point at one of them"
        )
    raise CheckpointError(f"{path}: no model weights found (safetensors, .pt/.bin or DCP)")


def _index_files(index: Path) -> list[Path]:
    try:
        weight_map = json.loads(index.read_text())["weight_map"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{index}: unreadable index ({exc})") from None
    files = [index.parent / name for name in sorted(set(weight_map.values()))]
    missing = [p.name for p in files if not p.exists()]
    if missing:
        raise CheckpointError(
            f"{index}: shard(s) missing: {', '.join(missing[:3])} (still being written?)"
        )
    return files


def open_checkpoint(path: str | Path, key: str | None = None) -> Reader:
    """A reader over the model weights of one checkpoint (file or directory)."""
    p = Path(path)
    if not p.exists():
        raise CheckpointError(f"{p}: no such file or directory")
    fmt, files = model_files(p)
    if fmt == "safetensors":
        return SafetensorsReader(str(p), [str(f) for f in files])
    if fmt == "dcp":
        return DcpReader(str(p), key)
    if len(files) == 1:
        return TorchReader(str(files[0]), key)
    return MultiReader(str(p), [TorchReader(str(f), key) for f in files])


def is_torch_free(paths: list[Path]) -> bool:
    """True when every checkpoint is safetensors: the CLI then never imports torch."""
    try:
        return all(model_files(p)[0] == "safetensors" for p in paths)
    except (CheckpointError, OSError):
        return False


__all__ = [
    "CheckpointError",
    "DcpReader",
    "Reader",
    "SafetensorsReader",
    "StEntry",
    "StHeader",
    "TensorMeta",
    "TorchReader",
    "is_torch_free",
    "model_files",
    "open_checkpoint",
    "read_dcp_metadata",
    "read_safetensors_header",
]

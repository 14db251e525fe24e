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
- torch.distributed.checkpoint directories: ``denpex.drift.dcp`` (metadata through
  ``denpex.safepickle``, chunks with ``torch.load(weights_only=True)``; never torch's DCP
  reader, which unpickles freely).

Every header, offset and size is checked against the file before anything is read: a
file that lies about its layout is a corrupt file, never a source of neighbouring bytes.

Blocks are numpy arrays shaped (rows, cols) in the stored dtype; bf16 comes as uint16
words (numpy has no bf16) and is widened by ``compare``.
"""

from __future__ import annotations

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
NP_DTYPES = {name: np_dtype for name, np_dtype in _ST_DTYPES.values()}


def dtype_name(dtype: Any) -> str:
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
    m = re.search(r"(?:Unsupported global: GLOBAL|unsupported GLOBAL) ([\w.]+)", text) or re.search(
        r"Unsupported operand \d+|Unsupported class ([\w.]+)", text
    )
    what = m.group(1) if m and m.groups() and m.group(1) else (m.group(0) if m else "")
    detail = f" (it contains {what})" if what else ""
    return (
        f"refused: not a plain state dict{detail}; Denpex loads torch files with "
        "weights_only=True and never runs pickled code — re-save with "
        "torch.save(model.state_dict(), path)"
    )


def torch_load_error(exc: Exception) -> str:
    """One line for a failed ``torch.load``: a weights-only refusal says what the file holds
    (never torch's advice to retry with ``weights_only=False``)."""
    text = str(exc)
    if "Weights only load failed" in text:
        return _weights_only_reason(exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    first = re.sub(r"^\[enforce fail at [^\]]*\]\s*\.?\s*", "", first)  # c10's location prefix
    zip_trouble = ("PytorchStreamReader", "central dir", "inline_container", "archive")
    if isinstance(exc, (EOFError, zipfile.BadZipFile)) or any(w in text for w in zip_trouble):
        return f"corrupt or truncated torch file ({first[:200]})"
    return f"unreadable torch file ({first[:200]})"


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
            raise CheckpointError(f"{path}: {torch_load_error(exc)}") from None
        weights = unwrap(state, key)
        for raw_name, tensor in _tensor_items(weights):
            name = normalise_key(raw_name)
            dtype = dtype_name(tensor.dtype)
            if tensor.layout != torch.strided:
                dtype = str(tensor.layout).removeprefix("torch.")  # listed, never compared
            meta = TensorMeta(name, tuple(tensor.shape), dtype, tensor.numel() * tensor.itemsize)
            if name in self.tensors:
                self.warnings.append(f"{path}: two tensors normalise to {name!r}; kept the first")
                continue
            if zipped and dtype in NP_DTYPES:
                self._in_file[name] = self._where(raw_name, tensor, records)
            elif not zipped:
                if tensor.device.type == "meta":
                    raise CheckpointError(f"{path}: {raw_name!r} is a meta tensor (no data saved)")
                self._arrays[name] = tensor
            self.tensors[name] = meta
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
        # protocol, say); the refusal itself, if any, comes back as one line from torch_load_error.
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

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        meta = self.tensors[name]
        np_dtype = NP_DTYPES.get(meta.dtype)
        if np_dtype is None:
            raise CheckpointError(f"{self.path}: {name}: dtype {meta.dtype} is not read")
        where = self._in_file.get(name)
        if where is None:
            return numpy_rows(self._arrays[name], meta, r0, r1)
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


def numpy_rows(tensor: Any, meta: TensorMeta, r0: int, r1: int) -> np.ndarray:
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
        from denpex.drift.dcp import DcpReader  # imports this module

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
    "NP_DTYPES",
    "CheckpointError",
    "Reader",
    "SafetensorsReader",
    "StEntry",
    "StHeader",
    "TensorMeta",
    "TorchReader",
    "dtype_name",
    "is_torch_free",
    "model_files",
    "numpy_rows",
    "open_checkpoint",
    "read_safetensors_header",
    "torch_load_error",
]

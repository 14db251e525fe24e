"""Read checkpoint tensors one row block at a time, whatever the format.

A reader lists a checkpoint's tensors (normalised names, shapes, dtypes) without
loading them, then hands out row blocks on request, so memory stays bounded by a few
blocks and never grows with the checkpoint:

- safetensors (single file or sharded with an index): the header is parsed here and the
  bytes of each block are read with ``os.preadv`` into a small buffer. No torch import,
  bf16 handled as raw 16-bit words, a truncated file is caught from its header alone.
- torch ``.pt``/``.bin``: ``torch.load(mmap=True, weights_only=True)``; pages of a block
  are dropped from the process (``MADV_DONTNEED``) once it has been compared, otherwise a
  full pass over a mapped file would leave the whole file resident.
- torch.distributed.checkpoint directories: metadata first, then one tensor per
  ``dcp.load`` call into a tensor allocated for it (no process group needed).

Blocks are numpy arrays shaped (rows, cols) in the stored dtype; bf16 comes as uint16
words (numpy has no bf16) and is widened by ``compare``.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import struct
import threading
import warnings
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
        self.fd = os.open(path, os.O_RDONLY)
        self._buffers = threading.local()

    def read(self, name: str, offset: int, shape: tuple[int, int], np_dtype: Any) -> np.ndarray:
        nbytes = shape[0] * shape[1] * np.dtype(np_dtype).itemsize
        buf = getattr(self._buffers, "buf", None)
        if buf is None or buf.nbytes < nbytes:
            buf = self._buffers.buf = np.empty(nbytes, np.uint8)
        view = memoryview(buf[:nbytes])  # type: ignore[arg-type]
        done = 0
        while done < nbytes:
            n = os.preadv(self.fd, [view[done:]], offset + done)
            if n == 0:
                raise CheckpointError(f"{self.path}: {name}: file ended early (truncated)")
            done += n
        return buf[:nbytes].view(np_dtype).reshape(shape)

    def close(self) -> None:
        os.close(self.fd)


# --------------------------------------------------------------------------- safetensors


@dataclass
class _StEntry:
    file: _Preader
    start: int  # absolute file offset of the tensor's first byte
    row_bytes: int
    np_dtype: Any


def read_safetensors_header(path: str) -> tuple[dict[str, Any], int]:
    """The header dict and the offset where tensor data starts; checks the file is whole."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            raw = f.read(8)
            if len(raw) < 8:
                raise CheckpointError(f"{path}: not a safetensors file ({size} bytes)")
            (hlen,) = struct.unpack("<Q", raw)
            if hlen > min(size, 100 << 20):
                raise CheckpointError(f"{path}: corrupt safetensors header (length {hlen})")
            header = json.loads(f.read(hlen))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path}: unreadable safetensors file ({exc})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: corrupt safetensors header")
    end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    if size < 8 + hlen + end:
        raise CheckpointError(
            f"{path}: truncated ({size} bytes, header expects {8 + hlen + end}); "
            "still being written or cut short"
        )
    return header, 8 + hlen


class SafetensorsReader:
    """One or several safetensors files (the shards of one checkpoint)."""

    def __init__(self, path: str, files: list[str]) -> None:
        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._entries: dict[str, _StEntry] = {}
        self._files: list[_Preader] = []
        for file in files:
            header, base = read_safetensors_header(file)
            reader = _Preader(file)
            self._files.append(reader)
            for raw_name, info in header.items():
                if raw_name == "__metadata__":
                    continue
                self._add(raw_name, info, reader, base)

    def _add(self, raw_name: str, info: dict[str, Any], file: _Preader, base: int) -> None:
        name = normalise_key(raw_name)
        shape = tuple(int(s) for s in info["shape"])
        begin, end = info["data_offsets"]
        code = info["dtype"]
        dtype, np_dtype = _ST_DTYPES.get(code, (code.lower(), None))
        meta = TensorMeta(name, shape, dtype, end - begin)
        if name in self.tensors:
            self.warnings.append(f"{self.path}: two tensors normalise to {name!r}; kept the first")
            return
        self.tensors[name] = meta
        row_bytes = (end - begin) // meta.rows if meta.rows else 0
        self._entries[name] = _StEntry(file, base + begin, row_bytes, np_dtype)

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
_PAGE = mmap.PAGESIZE


def _madvise_dontneed() -> Any:
    """libc madvise, to hand mapped pages of an already-compared block back to the kernel."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    fn = libc.madvise
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return fn


_NP_DTYPES = {name: np_dtype for name, np_dtype in _ST_DTYPES.values()}


def _file_offsets(path: str, tensors: dict[str, Any]) -> dict[str, int]:
    """File offset of each contiguous tensor that torch.load(mmap=True) mapped from ``path``.

    Found from /proc/self/maps (the mapping's start and file offset); tensors outside any
    mapping of this file (or on a system without /proc) keep the mapped path.
    """
    real = os.path.realpath(path)
    maps: list[tuple[int, int, int]] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and parts[5].rstrip("\n") == real:
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    maps.append((lo, hi, int(parts[2], 16)))
    except OSError:
        return {}
    out: dict[str, int] = {}
    for name, t in tensors.items():
        if not t.is_contiguous() or t.numel() == 0:
            continue
        ptr = t.data_ptr()
        for lo, hi, pgoff in maps:
            if lo <= ptr and ptr + t.numel() * t.itemsize <= hi:
                out[name] = ptr - lo + pgoff
                break
    return out


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


class TorchReader:
    """A torch.save file, memory-mapped; tensors read in row blocks through numpy views."""

    def __init__(self, path: str, key: str | None = None) -> None:
        import torch

        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._arrays: dict[str, Any] = {}
        try:
            state = self._load(torch, path)
        except CheckpointError:
            raise
        except Exception as exc:
            raise CheckpointError(f"{path}: {self._load_error(exc)}") from None
        weights = unwrap(state, key)
        for raw_name, tensor in _tensor_items(weights):
            name = normalise_key(raw_name)
            dtype = _TORCH_DTYPES.get(str(tensor.dtype), str(tensor.dtype).removeprefix("torch."))
            meta = TensorMeta(name, tuple(tensor.shape), dtype, tensor.numel() * tensor.itemsize)
            if name in self.tensors:
                self.warnings.append(f"{path}: two tensors normalise to {name!r}; kept the first")
                continue
            self.tensors[name] = meta
            self._arrays[name] = tensor
        skipped = len(weights) - len(self.tensors)
        if not self.tensors:
            raise CheckpointError(f"{path}: no tensors in the state dict (try --key)")
        if skipped:
            self.warnings.append(f"{path}: {skipped} non-tensor entries ignored")
        self._madvise = _madvise_dontneed() if self._mapped else None
        # Where each mapped tensor sits in the file: its blocks are then read like
        # safetensors', without faulting the mapping in page by page.
        self._offsets = _file_offsets(path, self._arrays) if self._mapped else {}
        self._file = _Preader(path) if self._offsets else None

    def _load(self, torch: Any, path: str) -> Any:
        # torch warns on stderr about what its weights-only unpickler meets (a foreign pickle
        # protocol, say); the refusal itself, if any, comes back as one line from _load_error.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            self._mapped = True
            try:
                return torch.load(path, map_location="cpu", mmap=True, weights_only=True)
            except RuntimeError as exc:
                if "mmap can only be used" not in str(exc):
                    raise
            # Legacy (pre-1.6, non-zip) files cannot be mapped: load them whole and say so.
            self._mapped = False
            self.warnings.append(f"{path}: legacy torch format, loaded whole into memory")
            return torch.load(path, map_location="cpu", weights_only=True)

    @staticmethod
    def _load_error(exc: Exception) -> str:
        text = str(exc)
        if "Weights only load failed" in text:
            return _weights_only_reason(exc)
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        first = re.sub(r"^\[enforce fail at [^\]]*\]\s*\.?\s*", "", first)  # c10's location prefix
        zip_trouble = ("PytorchStreamReader", "central dir", "inline_container", "archive")
        if isinstance(exc, EOFError) or any(word in text for word in zip_trouble):
            return f"corrupt or truncated torch file ({first})"
        return f"unreadable torch file ({first})"

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        import torch

        meta = self.tensors[name]
        offset = self._offsets.get(name)
        np_dtype = _NP_DTYPES.get(meta.dtype)
        if self._file is not None and offset is not None and np_dtype is not None:
            row_bytes = meta.nbytes // meta.rows
            shape = (r1 - r0, meta.cols)
            return self._file.read(name, offset + r0 * row_bytes, shape, np_dtype)
        t = self._arrays[name]
        part = t.contiguous().view(meta.rows, meta.cols)[r0:r1]
        if part.dtype == torch.bfloat16:
            return part.view(torch.int16).numpy().view(np.uint16)
        if part.dtype == torch.bool:
            return part.view(torch.uint8).numpy()
        return part.numpy()

    def release(self, name: str, r0: int, r1: int) -> None:
        if self._madvise is None or name in self._offsets:
            return
        t = self._arrays[name]
        if not t.is_contiguous() or t.numel() == 0:
            return
        meta = self.tensors[name]
        row_bytes = meta.nbytes // meta.rows
        start = t.data_ptr() + r0 * row_bytes
        end = t.data_ptr() + r1 * row_bytes
        # Only whole pages inside the block: a neighbour's bytes may share the edge pages.
        lo = -(-start // _PAGE) * _PAGE
        hi = end // _PAGE * _PAGE
        if hi > lo:
            self._madvise(lo, hi - lo, 4)  # MADV_DONTNEED: clean file pages, refaulted on need

    def close(self) -> None:
        self._arrays.clear()
        if self._file is not None:
            self._file.close()
            self._file = None


# --------------------------------------------------------------------------- DCP


class DcpReader:
    """A torch.distributed.checkpoint directory, one tensor loaded at a time."""

    def __init__(self, path: str, key: str | None = None) -> None:
        from torch.distributed.checkpoint import FileSystemReader
        from torch.distributed.checkpoint.metadata import TensorStorageMetadata

        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._stored: dict[str, tuple[str, Any]] = {}
        self._loaded: tuple[str, Any] | None = None
        try:
            md = FileSystemReader(path).read_metadata()
        except Exception as exc:
            raise CheckpointError(f"{path}: unreadable DCP metadata ({exc})") from None
        names = {
            k: v for k, v in md.state_dict_metadata.items() if isinstance(v, TensorStorageMetadata)
        }
        prefix = _dcp_weights_prefix(list(names), key)
        for stored, tmd in names.items():
            if prefix and not stored.startswith(prefix):
                continue
            name = normalise_key(stored[len(prefix) :])
            dtype = _TORCH_DTYPES.get(str(tmd.properties.dtype), str(tmd.properties.dtype))
            shape = tuple(tmd.size)
            meta = TensorMeta(name, shape, dtype, prod(shape) * tmd.properties.dtype.itemsize)
            self.tensors[name] = meta
            self._stored[name] = (stored, tmd)
        if not self.tensors:
            raise CheckpointError(f"{path}: no tensors under {prefix!r} in the DCP checkpoint")

    def _tensor(self, name: str) -> Any:
        if self._loaded and self._loaded[0] == name:
            return self._loaded[1]
        import torch
        import torch.distributed.checkpoint as dcp

        stored, tmd = self._stored[name]
        self._loaded = None  # drop the previous tensor before allocating the next
        t = torch.empty(tuple(tmd.size), dtype=tmd.properties.dtype)
        try:
            with warnings.catch_warnings():
                # "assuming the intent is to load in a single process": it is.
                warnings.simplefilter("ignore", UserWarning)
                dcp.load({stored: t}, checkpoint_id=self.path, no_dist=True)
        except Exception as exc:
            line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CheckpointError(f"{self.path}: {name}: {line}") from None
        self._loaded = (name, t)
        return t

    def block(self, name: str, r0: int, r1: int) -> np.ndarray:
        import torch

        meta = self.tensors[name]
        part = self._tensor(name).reshape(meta.rows, meta.cols)[r0:r1]
        if part.dtype == torch.bfloat16:
            return part.view(torch.int16).numpy().view(np.uint16)
        return part.numpy()

    def release(self, name: str, r0: int, r1: int) -> None:
        if r1 >= self.tensors[name].rows:
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
    "TensorMeta",
    "TorchReader",
    "is_torch_free",
    "model_files",
    "open_checkpoint",
    "read_safetensors_header",
]

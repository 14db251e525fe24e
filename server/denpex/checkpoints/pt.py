"""torch ``.pt``/``.bin`` files, read without unpickling code and without mapping them.

A zip-format file's ``data.pkl`` is read by ``torchzip`` without torch (shapes, dtypes and
where each tensor's bytes sit); what it does not vouch for, and legacy non-zip files, go
through ``torch.load(map_location="meta", weights_only=True)`` as before. Blocks are then
read with ``preadv`` like safetensors'. Nothing is memory-mapped: a mapped file that shrinks
under the reader kills the process with SIGBUS, a short read is one clear error. Also the
torch helpers the DCP reader shares.
"""

from __future__ import annotations

import re
import threading
import warnings
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np

from denpex.checkpoints.keys import normalise_key, unwrap
from denpex.checkpoints.reader import NP_DTYPES, CheckpointError, Preader, TensorMeta, claim
from denpex.checkpoints.torchzip import InFile, StoredTensor, locate, read_state, zip_records

if TYPE_CHECKING:  # torch is imported lazily
    import torch

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


def dtype_name(dtype: Any) -> str:
    return _TORCH_DTYPES.get(str(dtype), str(dtype).removeprefix("torch."))


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


class TorchReader:
    """A torch.save file. Nothing of it is mapped into memory: its metadata comes from
    ``torchzip`` (or ``torch.load(map_location="meta")``: shapes, dtypes and each storage's
    offset in the file, no data), and every block is read with ``preadv``. A mapped file
    that shrinks under the reader kills the process with SIGBUS; a short read is one clear
    error instead."""

    def __init__(self, path: str, key: str | None = None) -> None:
        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._in_file: dict[str, InFile] = {}
        self._arrays: dict[str, Any] = {}  # legacy (non-zip) files, loaded whole
        self._strided: tuple[str, np.ndarray] | None = None  # last non-contiguous tensor read
        self._lock = threading.Lock()
        self._file: Preader | None = None
        torch: Any = None  # imported only when torchzip leaves the file to torch.load
        offsets: dict[int, int] = {}  # zip records by data offset, for torch's meta storages
        try:
            zipped = _starts_with(path, b"PK\x03\x04")
            state = read_state(path) if zipped else None
            if state is None:
                import torch

                state = self._load(torch, path, zipped)
                records = zip_records(path) if zipped else None
                if records is not None and not records.little_endian:
                    raise CheckpointError(f"{path}: big-endian torch file (not supported)")
                offsets = records.by_offset() if records is not None else {}
        except CheckpointError:
            raise
        except Exception as exc:
            raise CheckpointError(f"{path}: {torch_load_error(exc)}") from None
        weights = unwrap(state, key)
        for raw_name, value in weights.items():
            if isinstance(value, StoredTensor):
                meta = TensorMeta(
                    normalise_key(str(raw_name)), value.shape, value.dtype, value.nbytes
                )
            elif torch is not None and isinstance(value, torch.Tensor):
                meta = _torch_meta(torch, str(raw_name), value)
            else:
                continue
            if not claim(self.tensors, meta.name, self.warnings, path):
                continue
            if isinstance(value, StoredTensor):
                self._in_file[meta.name] = value.where
            elif zipped and meta.dtype in NP_DTYPES:
                self._in_file[meta.name] = self._where(str(raw_name), value, offsets)
            elif not zipped:
                if value.device.type == "meta":
                    raise CheckpointError(f"{path}: {raw_name!r} is a meta tensor (no data saved)")
                self._arrays[meta.name] = value
            self.tensors[meta.name] = meta
        skipped = len(weights) - len(self.tensors)
        if not self.tensors:
            raise CheckpointError(f"{path}: no tensors in the state dict (try --key)")
        if skipped:
            self.warnings.append(f"{path}: {skipped} non-tensor entries ignored")
        if zipped:
            self._file = Preader(path)
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

    def _where(self, raw_name: str, tensor: Any, records: dict[int, int]) -> InFile:
        """Where a meta ``tensor``'s bytes are, checked against the zip record that holds them."""
        base = getattr(tensor.untyped_storage(), "_checkpoint_offset", None)
        if base is None:  # a tensor saved from the meta device: shape and dtype, no data
            raise CheckpointError(f"{self.path}: {raw_name!r} is a meta tensor (no data saved)")
        shape, strides = tuple(tensor.shape), tuple(tensor.stride())
        where = locate(
            base, records.get(base), tensor.storage_offset(), shape, strides, tensor.itemsize
        )
        if where is None:
            raise CheckpointError(
                f"{self.path}: {raw_name!r} claims bytes its zip record does not hold "
                "(corrupt or rewritten file)"
            )
        return where

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

    def _gathered(self, name: str, meta: TensorMeta, where: InFile, np_dtype: Any) -> np.ndarray:
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


def numpy_rows(tensor: torch.Tensor, meta: TensorMeta, r0: int, r1: int) -> np.ndarray:
    """Rows [r0, r1) of an in-memory CPU tensor as numpy, bf16 as uint16 words."""
    import torch

    part = tensor.contiguous().view(meta.rows, meta.cols)[r0:r1]
    if part.dtype == torch.bfloat16:
        return part.view(torch.int16).numpy().view(np.uint16)
    if part.dtype == torch.bool:
        return part.view(torch.uint8).numpy()
    return part.numpy()


def _torch_meta(torch: Any, raw_name: str, tensor: Any) -> TensorMeta:
    dtype = dtype_name(tensor.dtype)
    if tensor.layout != torch.strided:
        dtype = str(tensor.layout).removeprefix("torch.")  # listed, never compared
    return TensorMeta(
        normalise_key(raw_name), tuple(tensor.shape), dtype, tensor.numel() * tensor.itemsize
    )


def _starts_with(path: str, magic: bytes) -> bool:
    with open(path, "rb") as f:
        return f.read(len(magic)) == magic


__all__ = ["TorchReader", "dtype_name", "numpy_rows", "torch_load_error"]

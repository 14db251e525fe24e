"""Read torch.distributed.checkpoint (DCP) directories without torch's DCP reader.

torch's ``FileSystemReader.read_metadata`` unpickles ``.metadata`` with plain pickle (a
crafted file runs code), and its load planner unpickles non-tensor entries the same way.
Here ``.metadata`` goes through ``denpex.safepickle``: the globals torch's writer names are
allowed, but each resolves to a plain record of this module (attributes, no behaviour) or
to a checked constructor, never to torch's own classes, so nothing of
``torch.distributed`` is imported either (seconds of import time). Every size, chunk and
storage entry is then checked against the directory, and each chunk of a tensor is loaded
from its byte range of the shard with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import io
import os
import threading
import warnings
from dataclasses import dataclass
from math import prod
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from denpex import safepickle
from denpex.checkpoints.keys import normalise_key
from denpex.checkpoints.pt import dtype_name, numpy_rows, torch_load_error
from denpex.checkpoints.reader import NP_DTYPES, CheckpointError, TensorMeta, claim
from denpex.errors import InputError

_MAX_METADATA = 1 << 30  # bytes; a real .metadata is KBs to tens of MBs
_EOCD = 22  # a zip's end-of-central-directory record, last in what torch.save writes


class _Record:
    """A DCP metadata object as the pickle built it: plain attributes only."""

    def __setstate__(self, state: object) -> None:
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise TypeError("not an attribute dict")
        self.__dict__.update(state)


class Metadata(_Record):
    state_dict_metadata: Any = None
    storage_data: Any = None


class StorageMeta(_Record):
    pass


class TensorStorageMetadata(_Record):
    properties: Any = None
    size: Any = None
    chunks: Any = None


class BytesStorageMetadata(_Record):
    pass


class ChunkStorageMetadata(_Record):
    offsets: Any = None
    sizes: Any = None


class MetadataIndex(_Record):
    fqn: Any = None
    offset: Any = None


class StorageInfo(_Record):
    relative_path: Any = None
    offset: Any = None
    length: Any = None
    transform_descriptors: Any = None  # left out of the pickle when there are none


class TensorProperties(_Record):
    dtype: Any = None

    def __setstate__(self, state: object) -> None:
        # torch pickles (dtype, layout, requires_grad, memory-format code, pin_memory)
        if not isinstance(state, tuple) or len(state) != 5:
            raise TypeError("not TensorProperties' state")
        self.dtype = state[0]


def _size(dims: object) -> tuple[int, ...]:
    """torch.Size(dims), as a tuple of non-negative ints."""
    if not isinstance(dims, (list, tuple)) or not all(type(d) is int and d >= 0 for d in dims):
        raise ValueError("not a size")
    return tuple(dims)


def _memory_format(code: object) -> object:
    if code not in (0, 1, 2):  # contiguous, channels_last, preserve
        raise ValueError("unknown memory format")
    return code


def _layout(name: object) -> object:
    if not isinstance(name, str):
        raise ValueError("not a layout")
    return name


def _allowed() -> dict[tuple[str, str], object]:
    """Exactly the globals torch's FileSystemWriter puts in ``.metadata`` (see
    test_dcp_checkpoints_torch_writes_are_read_through_the_allow_list), each mapped to
    what stands for it here."""
    import torch

    md = "torch.distributed.checkpoint.metadata"
    allowed: dict[tuple[str, str], object] = {
        (md, c.__name__): c
        for c in (
            Metadata,
            StorageMeta,
            TensorStorageMetadata,
            BytesStorageMetadata,
            ChunkStorageMetadata,
            TensorProperties,
            MetadataIndex,
        )
    }
    allowed[(md, "_MEM_FORMAT_ENCODING")] = _memory_format
    allowed[("torch.distributed.checkpoint.filesystem", "_StorageInfo")] = StorageInfo
    allowed[("torch", "Size")] = _size
    allowed[("torch.serialization", "_get_layout")] = _layout
    allowed[("pathlib", "PosixPath")] = PurePosixPath  # the checkpoint id; never opened
    for name, value in vars(torch).items():
        if isinstance(value, torch.dtype):
            allowed[("torch", name)] = value
    return allowed


def read_metadata(path: str) -> Metadata:
    """A DCP ``.metadata`` through the restricted unpickler: a pickle naming anything but
    DCP's own metadata types is refused before any of it runs."""
    meta_path = os.path.join(path, ".metadata")
    try:
        size = os.path.getsize(meta_path)
        if size > _MAX_METADATA:
            raise CheckpointError(f"{meta_path}: {size} bytes, too large for DCP metadata")
        with open(meta_path, "rb") as f:
            data = f.read(_MAX_METADATA)
    except OSError as exc:
        raise CheckpointError(f"{meta_path}: unreadable ({exc.strerror})") from None
    try:
        md = safepickle.loads(data, allowed=_allowed(), what=meta_path)
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


@dataclass(frozen=True)
class _Chunk:
    """One saved piece of a DCP tensor: where it sits in the tensor and in which file."""

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    file: str  # a file name inside the checkpoint directory
    start: int
    length: int


@dataclass(frozen=True)
class _Tensor:
    stored: str  # the flattened name in the checkpoint
    dtype: Any  # torch.dtype
    size: tuple[int, ...]
    chunks: tuple[_Chunk, ...]


def _tensors(path: str, md: Metadata, prefix: str) -> dict[str, _Tensor]:
    """The tensors under ``prefix``, each checked: sizes, chunks tiling it, files in place."""
    import torch

    where: dict[tuple[object, object], StorageInfo] = {}
    for index, info in md.storage_data.items():
        if isinstance(index, MetadataIndex) and isinstance(info, StorageInfo):
            offset = index.offset if isinstance(index.offset, tuple) else None
            where[(index.fqn, offset)] = info
    file_sizes: dict[str, int] = {}
    out: dict[str, _Tensor] = {}
    for stored, tmd in md.state_dict_metadata.items():
        if not isinstance(tmd, TensorStorageMetadata) or not str(stored).startswith(prefix):
            continue
        if not isinstance(stored, str):
            raise CheckpointError(f"{path}: corrupt DCP metadata (a name that is not a string)")
        bad = f"{path}: corrupt DCP metadata for {stored[:80]!r}"
        props = tmd.properties
        if not isinstance(props, TensorProperties) or not isinstance(props.dtype, torch.dtype):
            raise CheckpointError(f"{bad}: no dtype")
        size = tmd.size
        if not isinstance(size, tuple) or not isinstance(tmd.chunks, list):
            raise CheckpointError(f"{bad}: bad size or chunk list")
        covered, chunks = 0, []
        for c in tmd.chunks:
            offsets = c.offsets if isinstance(c, ChunkStorageMetadata) else None
            extent = c.sizes if isinstance(c, ChunkStorageMetadata) else None
            info = where.get((stored, offsets))
            if (
                not isinstance(offsets, tuple)
                or not isinstance(extent, tuple)
                or len(offsets) != len(size)
                or len(extent) != len(size)
                or any(o + n > s for o, n, s in zip(offsets, extent, size, strict=True))
                or info is None
            ):
                raise CheckpointError(f"{bad}: a chunk outside the tensor or without storage")
            file, start, length = _storage(path, info, file_sizes, bad)
            if prod(extent) * props.dtype.itemsize > length:
                raise CheckpointError(f"{bad}: a chunk larger than its stored bytes")
            chunks.append(_Chunk(offsets, extent, file, start, length))
            covered += prod(extent)
        # Chunks inside the tensor whose volumes add up to it tile it exactly unless two
        # overlap, which leaves a hole: found when they are copied in (DcpReader._assemble).
        if covered != prod(size):
            raise CheckpointError(f"{bad}: its chunks hold {covered} of {prod(size)} elements")
        out[stored] = _Tensor(stored, props.dtype, size, tuple(chunks))
    return out


def _storage(
    path: str, info: StorageInfo, file_sizes: dict[str, int], bad: str
) -> tuple[str, int, int]:
    """A chunk's storage, checked: a plain file of the directory, holding the byte range,
    whose bytes begin and end like the zip ``torch.save`` writes."""
    name, start, length = info.relative_path, info.offset, info.length
    if (
        not isinstance(name, str)
        or name in ("", ".", "..")
        or os.path.basename(name) != name
        or type(start) is not int
        or type(length) is not int
        or start < 0
        or length < _EOCD
        or info.transform_descriptors  # compression or other extensions: not read
    ):
        raise CheckpointError(f"{bad}: unsupported or invalid storage entry")
    file = os.path.join(path, name)
    if name not in file_sizes:
        try:
            file_sizes[name] = os.path.getsize(file)
        except OSError:
            raise CheckpointError(f"{path}: shard {name[:80]!r} missing") from None
    if start + length > file_sizes[name]:
        raise CheckpointError(f"{path}: shard {name[:80]!r} truncated ({file_sizes[name]} bytes)")
    with open(file, "rb") as f:
        f.seek(start)
        head = f.read(4)
        f.seek(start + length - _EOCD)
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
    """A DCP directory, one tensor assembled from its chunks at a time."""

    def __init__(self, path: str, key: str | None = None) -> None:
        self.path = path
        self.tensors: dict[str, TensorMeta] = {}
        self.warnings: list[str] = []
        self._stored: dict[str, _Tensor] = {}
        self._loaded: tuple[str, Any] | None = None
        self._lock = threading.Lock()
        md = read_metadata(path)
        prefix = weights_prefix([str(k) for k in md.state_dict_metadata], key)
        for stored, t in _tensors(path, md, prefix).items():
            name = normalise_key(stored[len(prefix) :])
            if not claim(self.tensors, name, self.warnings, path):
                continue
            meta = TensorMeta(name, t.size, dtype_name(t.dtype), prod(t.size) * t.dtype.itemsize)
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

    def _assemble(self, t: _Tensor) -> Any:
        import torch

        if len(t.chunks) == 1:  # inside the tensor and as large: the whole of it
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

    def _chunk(self, t: _Tensor, chunk: _Chunk) -> Any:
        import torch

        what = f"{self.path}: {t.stored} in {chunk.file}"
        try:
            fd = os.open(os.path.join(self.path, chunk.file), os.O_RDONLY)
        except OSError as exc:
            raise CheckpointError(f"{what}: {exc.strerror}") from None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                stream = io.BufferedReader(_FileSlice(fd, chunk.start, chunk.length), 1 << 20)
                piece = torch.load(stream, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise CheckpointError(f"{what}: {torch_load_error(exc)}") from None
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
        if meta.dtype not in NP_DTYPES:
            raise CheckpointError(f"{self.path}: {name}: dtype {meta.dtype} is not read")
        return numpy_rows(self._tensor(name), meta, r0, r1)

    def release(self, name: str, r0: int, r1: int) -> None:
        if r1 >= self.tensors[name].rows:
            with self._lock:
                if self._loaded and self._loaded[0] == name:
                    self._loaded = None

    def close(self) -> None:
        self._loaded = None


def weights_prefix(names: list[str], key: str | None) -> str:
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


__all__ = ["DcpReader", "read_metadata", "weights_prefix"]

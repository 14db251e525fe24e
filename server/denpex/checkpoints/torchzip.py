"""A ``torch.save`` zip read without torch: where each tensor's bytes are, from ``data.pkl``.

``import torch`` alone costs more than a second, and ``torch.load(map_location="meta")``
only learns what the pickle says: each tensor's storage (dtype, record key, element count),
storage offset, shape and strides. Here ``data.pkl`` goes through ``denpex.safepickle``
with the few globals a state dict holds (``OrderedDict``, the tensor and parameter rebuild
functions, the storage classes of the dtypes Denpex reads, ``torch.Size``), each mapped to a
plain record of this module, and every tensor is checked against the zip record of its
storage exactly as the torch path checks it.

Anything else (another global, a record or a size it cannot vouch for, a data.pkl over
16 MB) is not an error here: :func:`read_state` returns None and the caller loads the file
with ``torch.load(weights_only=True)`` as before, so every file reads as it did. Only
refusals no real file can cause (a bytearray from a count) are errors of their own.
"""

from __future__ import annotations

import re
import struct
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from math import prod
from typing import NamedTuple

from denpex import safepickle
from denpex.checkpoints.reader import CheckpointError
from denpex.errors import InputError

_MAX_PICKLE = 16 << 20  # bytes; a state dict of 10,000 tensors pickles to about 1.5 MB
_MAX_DIMS = 64
_MAX_VERSION = 10  # newest torch zip format torch's reader accepts (kMaxSupportedFileFormatVersion)

# torch.save names a tensor's storage by its legacy class; only the dtypes Denpex reads.
_STORAGES = {
    "DoubleStorage": ("float64", 8),
    "FloatStorage": ("float32", 4),
    "HalfStorage": ("float16", 2),
    "BFloat16Storage": ("bfloat16", 2),
    "LongStorage": ("int64", 8),
    "IntStorage": ("int32", 4),
    "ShortStorage": ("int16", 2),
    "CharStorage": ("int8", 1),
    "ByteStorage": ("uint8", 1),
    "BoolStorage": ("bool", 1),
}


@dataclass(frozen=True)
class InFile:
    """Where a tensor's elements sit in a torch zip file: the file offset of its first
    element, its strides in elements, and the bytes spanned from there to its last one."""

    offset: int
    strides: tuple[int, ...]
    span: int
    contiguous: bool


@dataclass(frozen=True)
class ZipRecords:
    """A torch zip's stored records by name: (data offset, size). ``little_endian`` is False
    when its byteorder record says anything but little."""

    by_name: dict[str, tuple[int, int]]
    little_endian: bool

    def by_offset(self) -> dict[int, int]:
        """Data offset -> size (torch's meta storages say where they start, not which
        record they are)."""
        return dict(self.by_name.values())


def zip_records(path: str) -> ZipRecords:
    """Every stored record of a torch zip file, from its central directory and each
    record's local header (which says where its data starts)."""
    out: dict[str, tuple[int, int]] = {}
    little = True
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        for info in z.infolist():
            if info.filename.endswith("/byteorder") and (
                info.file_size > 16 or z.read(info) not in (b"little", b"")
            ):
                little = False
            if info.compress_type != zipfile.ZIP_STORED:
                continue  # torch stores tensor data uncompressed; nothing to map to it
            f.seek(info.header_offset)
            local = f.read(30)
            if len(local) < 30 or local[:4] != b"PK\x03\x04":
                raise CheckpointError(f"{path}: corrupt zip record {info.filename[:60]!r}")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            out[info.filename] = (info.header_offset + 30 + name_len + extra_len, info.file_size)
    return ZipRecords(out, little)


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """torch's rule: row-major strides, dimensions of size 1 ignored, empty is contiguous."""
    if prod(shape) == 0:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def locate(
    base: int,
    record_size: int | None,
    storage_offset: int,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    itemsize: int,
) -> InFile | None:
    """Where a tensor viewing the storage whose record starts at ``base`` has its bytes, or
    None when they are not all inside that record (``record_size`` None: no such record)."""
    if prod(shape) == 0:
        return InFile(base, strides, 0, True)
    last = storage_offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    if record_size is None or min(strides, default=0) < 0 or (last + 1) * itemsize > record_size:
        return None
    span = (last - storage_offset + 1) * itemsize
    return InFile(base + storage_offset * itemsize, strides, span, is_contiguous(shape, strides))


class StoredTensor(NamedTuple):
    """A tensor of the state dict, checked against its zip record. (A NamedTuple: a pickle's
    BUILD cannot set its fields after the check.)"""

    shape: tuple[int, ...]
    dtype: str
    itemsize: int
    where: InFile

    @property
    def nbytes(self) -> int:
        return prod(self.shape) * self.itemsize


class _Storage(NamedTuple):
    dtype: str
    itemsize: int
    base: int  # the file offset of its record's data
    nbytes: int


class _StorageClass(NamedTuple):
    dtype: str
    itemsize: int


class _TensorClass(NamedTuple):
    """``torch.Tensor`` as ``_rebuild_from_type_v2`` names it (a tensor with attributes)."""


class _NotHandled(Exception):
    """Something this reader does not vouch for; torch.load decides instead."""


def _ints(value: object, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or len(value) > _MAX_DIMS:
        raise _NotHandled(what)
    if not all(type(v) is int and v >= 0 for v in value):
        raise _NotHandled(what)
    return tuple(value)


def _no_hooks(hooks: object) -> None:
    if not isinstance(hooks, dict) or hooks:
        raise _NotHandled("backward hooks")


def _rebuild_tensor_v2(
    storage: object,
    storage_offset: object,
    size: object,
    stride: object,
    requires_grad: object,
    backward_hooks: object,
    metadata: object = None,
) -> StoredTensor:
    if not isinstance(storage, _Storage) or type(storage_offset) is not int:
        raise _NotHandled("storage")
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    if len(shape) != len(strides) or storage_offset < 0 or not isinstance(requires_grad, bool):
        raise _NotHandled("tensor arguments")
    _no_hooks(backward_hooks)
    if metadata:  # tensor flags (conj, neg) this reader would not apply
        raise _NotHandled("tensor metadata")
    where = locate(storage.base, storage.nbytes, storage_offset, shape, strides, storage.itemsize)
    if where is None:
        raise _NotHandled("bytes outside the record")
    return StoredTensor(shape, storage.dtype, storage.itemsize, where)


def _rebuild_parameter(data: object, requires_grad: object, backward_hooks: object) -> object:
    if not isinstance(data, StoredTensor) or not isinstance(requires_grad, bool):
        raise _NotHandled("parameter")
    _no_hooks(backward_hooks)
    return data


def _rebuild_parameter_with_state(
    data: object, requires_grad: object, backward_hooks: object, state: object
) -> object:
    return _rebuild_parameter(data, requires_grad, backward_hooks)  # state: attributes only


def _rebuild_from_type_v2(func: object, new_type: object, args: object, state: object) -> object:
    """A plain tensor saved with attributes: rebuilt by ``func``, the attributes dropped."""
    if func is not _rebuild_tensor_v2 or not isinstance(new_type, _TensorClass):
        raise _NotHandled("tensor subclass")
    if not isinstance(args, tuple):
        raise _NotHandled("tensor arguments")
    return _rebuild_tensor_v2(*args)


def _size(dims: object) -> tuple[int, ...]:
    return _ints(dims, "torch.Size")


_ALLOWED: dict[tuple[str, str], object] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch", "Tensor"): _TensorClass(),
    ("torch", "Size"): _size,
    **{("torch", name): _StorageClass(*dt) for name, dt in _STORAGES.items()},
}


def _archive(z: zipfile.ZipFile) -> str:
    """The folder every record sits in ("archive/"), named by the first record as torch's
    reader names it."""
    first = z.infolist()[0].filename if z.infolist() else ""
    if "/" not in first:
        raise _NotHandled("no archive folder")
    return first.split("/", 1)[0] + "/"


def _check_version(z: zipfile.ZipFile, prefix: str) -> None:
    for name in (f"{prefix}.data/version", f"{prefix}version"):
        try:
            info = z.getinfo(name)
        except KeyError:
            continue
        text = z.read(info).strip() if info.file_size <= 16 else b""
        if re.fullmatch(rb"[0-9]{1,2}", text) and 1 <= int(text) <= _MAX_VERSION:
            return
        break
    raise _NotHandled("format version")


def read_state(path: str) -> object | None:
    """The unpickled ``data.pkl`` of a torch zip file, every tensor a :class:`StoredTensor`;
    None when torch.load must decide (see the module's docstring)."""
    try:
        records = zip_records(path)
        if not records.little_endian:
            return None
        with zipfile.ZipFile(path) as z:
            prefix = _archive(z)
            _check_version(z, prefix)
            info = z.getinfo(f"{prefix}data.pkl")
            if info.file_size > _MAX_PICKLE:
                return None
            data = z.read(info)

        def storage(pid: object) -> _Storage:
            # ("storage", storage class, record key, location, element count)
            if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage":
                raise _NotHandled("persistent id")
            _, cls, key, location, numel = pid
            if not isinstance(cls, _StorageClass) or not isinstance(key, str):
                raise _NotHandled("storage class")
            if not isinstance(location, str) or type(numel) is not int:
                raise _NotHandled("storage arguments")
            record = records.by_name.get(f"{prefix}data/{key}")
            if record is None or record[1] != numel * cls.itemsize:
                raise _NotHandled("storage record")
            return _Storage(cls.dtype, cls.itemsize, record[0], record[1])

        state = safepickle.loads(data, allowed=_ALLOWED, what=path, persistent_load=storage)
        # Not a mapping (a bare tensor, a list): torch.load's object names it in the error.
        return state if isinstance(state, dict) else None
    except (_NotHandled, safepickle.UnknownGlobal):
        return None
    except safepickle.RefusedPickle as exc:
        raise CheckpointError(str(exc)) from None
    except (InputError, zipfile.BadZipFile, KeyError, OSError, ValueError, EOFError):
        return None  # unreadable here: torch.load says why in its own words


__all__ = ["InFile", "StoredTensor", "ZipRecords", "is_contiguous", "locate", "read_state"]

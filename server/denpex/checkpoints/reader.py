"""What every checkpoint reader is, and the file access they share.

A reader lists a checkpoint's tensors (normalised names, shapes, dtypes) without
loading them, then hands out row blocks on request, so memory stays bounded by a few
blocks and never grows with the checkpoint. Blocks are numpy arrays shaped (rows, cols) in
the stored dtype; bf16 comes as uint16 words (numpy has no bf16) and is widened by the
comparison.

Every header, offset and size is checked against the file before anything is read: a
file that lies about its layout is a corrupt file, never a source of neighbouring bytes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from math import prod
from typing import Protocol

import numpy as np

from denpex.errors import InputError


class CheckpointError(InputError):
    """A checkpoint (or one of its files) cannot be read; one clear line."""


# Our dtype names -> numpy storage dtype, for the dtypes whose blocks are read.
NP_DTYPES: dict[str, type[np.generic]] = {
    "float64": np.float64,
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": np.uint16,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "bool": np.uint8,
}


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


def claim(tensors: Mapping[str, TensorMeta], name: str, warnings: list[str], path: str) -> bool:
    """Whether normalised ``name`` is new to ``tensors``. Two stored names that normalise to
    one ("module.w" and "w") keep the first, with a warning: the same rule in every format."""
    if name in tensors:
        warnings.append(f"{path}: two tensors normalise to {name!r}; kept the first")
        return False
    return True


class Reader(Protocol):
    path: str
    tensors: dict[str, TensorMeta]
    warnings: list[str]

    def block(self, name: str, r0: int, r1: int) -> np.ndarray: ...

    def release(self, name: str, r0: int, r1: int) -> None: ...

    def close(self) -> None: ...


class Preader:
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

    def read(
        self, name: str, offset: int, shape: tuple[int, int], np_dtype: type[np.generic] | None
    ) -> np.ndarray:
        if np_dtype is None:
            raise CheckpointError(f"{self.path}: {name}: its dtype is not read")
        nbytes = shape[0] * shape[1] * np.dtype(np_dtype).itemsize
        buf: np.ndarray | None = getattr(self._buffers, "buf", None)
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


__all__ = ["NP_DTYPES", "CheckpointError", "Preader", "Reader", "TensorMeta", "claim"]

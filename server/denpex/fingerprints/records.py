"""Fingerprint records on disk: one JSON line per probed step per rank.

Each rank appends to its own file ``fingerprints-rank00003.jsonl`` under the probe's
directory, with a single ``write`` of a whole line on an ``O_APPEND`` descriptor: a reader
(``denpex watch``, the language server) never sees half a line unless the process died in
the middle of that write, and a torn last line is skipped with a warning. Resuming a run
from a checkpoint appends the re-run steps again; the later line for a step wins.

Sketch values are float32, base85-encoded (5 characters per 4 bytes, no JSON escaping);
``sketch.py`` explains why float32 keeps enough precision. This module needs no torch, so
the drift reader and the language server can use it.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from denpex.errors import InputError

# Version 2 added the axis sketches ("ax"); version 1 records are still read (without them).
FORMAT = "denpex-fingerprint/2"
FORMATS = ("denpex-fingerprint/1", FORMAT)
# Axis sketches of a matrix (dim 0 = rows, the other dims flattened = columns): per axis, its
# index folded modulo each of AXIS_FOLDS (coprime, so the two folds name one index below
# their product), each fold's buckets split into AXIS_SUB signed sub-buckets (see sketch.py).
AXIS_FOLDS = (32, 31)
AXIS_SUB = 4
AXIS_SIZE = sum(AXIS_FOLDS) * AXIS_SUB  # values per axis; rows then columns in a record
FILE_GLOB = "fingerprints-rank*.jsonl"
# "step" is written first so a file can be indexed without parsing every line in full.
# At most 18 digits: a longer number is no step (and past 4,300 digits int() refuses it).
_STEP_PREFIX = re.compile(rb'^\{"step": ?(\d{1,18})[,}]')
_MAX_INT = 1 << 62  # steps, ranks, dims: anything larger is a malformed record
_MAX_DIMS = 32
_MAX_TEXT = 4096


def file_name(rank: int) -> str:
    return f"fingerprints-rank{rank:05d}.jsonl"


def encode_sketch(values: Any) -> str:
    return base64.b85encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


_B85 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
_B85_VALUE = np.full(256, 255, np.uint8)
_B85_VALUE[np.frombuffer(_B85, np.uint8)] = np.arange(85, dtype=np.uint8)
_B85_POWERS = np.array([85**4, 85**3, 85**2, 85, 1], np.uint64)


def decode_sketch(text: str) -> np.ndarray:
    """base64.b85decode, vectorised: the pure-Python decoder was most of a long drift's time
    (thousands of records of dozens of sketches each)."""
    raw = np.frombuffer(text.encode("ascii"), np.uint8)
    pad = -raw.size % 5
    digits = _B85_VALUE[np.concatenate([raw, np.full(pad, ord("~"), np.uint8)])]
    if (digits == 255).any():
        raise ValueError("bad base85 character in a sketch")
    words = digits.reshape(-1, 5).astype(np.uint64) @ _B85_POWERS
    if (words > np.uint64(0xFFFFFFFF)).any():
        raise ValueError("base85 overflow in a sketch")
    data = words.astype(">u4").tobytes()
    data = data[: len(data) - pad]
    if len(data) % 4:
        raise ValueError("a sketch's length is not a whole number of float32 values")
    return np.frombuffer(data, dtype="<f4").astype(np.float64)


def rounding_floor(a: np.ndarray, b: np.ndarray) -> float:
    """Expected squared error that float32 storage adds to ||a - b||^2 (uniform rounding)."""
    ulp_a = np.spacing(np.abs(a).astype(np.float32)).astype(np.float64)
    ulp_b = np.spacing(np.abs(b).astype(np.float32)).astype(np.float64)
    return float(np.sum(ulp_a**2 + ulp_b**2) / 12.0)


class RecordWriter:
    """Appends whole lines atomically to one rank's fingerprint file."""

    def __init__(self, out_dir: str | os.PathLike[str], rank: int, fsync: bool = False):
        self.path = Path(out_dir) / file_name(rank)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._fsync = fsync

    def append(self, record: dict[str, Any]) -> int:
        """Write one record as one line; returns its size in bytes."""
        if self._fd is None:
            raise ValueError(f"{self.path}: writer is closed")
        data = (json.dumps(record, separators=(",", ":")) + "\n").encode()
        written = os.write(self._fd, data)
        while written < len(data):  # regular files rarely write short; finish the line
            written += os.write(self._fd, data[written:])
        if self._fsync:
            os.fsync(self._fd)
        return len(data)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class TensorPrint:
    """One tensor's fingerprint as read back."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    norm: float
    max_abs: float
    hash: int
    local: np.ndarray  # float64; the values themselves when ``exact``
    exact: bool
    # Sketched matrices: rows' then columns' axis sketches (2 * AXIS_SIZE); else None.
    axes: np.ndarray | None = None

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1


@dataclass
class Record:
    step: int
    rank: int
    world_size: int
    host: str
    local_gpu: int | None
    tensors: list[TensorPrint]
    global_sketch: np.ndarray
    replica: dict[str, Any] | None
    path: str
    format: str = FORMAT

    def by_name(self) -> dict[str, TensorPrint]:
        return {t.name: t for t in self.tensors}


def _int(value: Any, what: str, low: int = 0, high: int = _MAX_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{what} must be an integer in [{low}, {high}], not {_show(value)}")
    return value


def _float(value: Any, what: str) -> float:
    # NaN/Inf stay (NaN weights fingerprint as a NaN norm, and must read as such).
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} must be a number, not {_show(value)}")
    return float(value)


def _text(value: Any, what: str, limit: int = _MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError(f"{what} must be a string of at most {limit} characters")
    return value


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) else f"an integer of {len(str(value))} digits"
    return text if len(text) <= 40 else text[:37] + "..."


def _shape(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > _MAX_DIMS:
        raise ValueError(f"{what} must be a list of at most {_MAX_DIMS} sizes")
    dims = tuple(_int(d, what) for d in value)
    numel = 1
    for d in dims:
        numel *= d
        if numel > _MAX_INT:
            raise ValueError(f"{what} holds more than 2**62 elements")
    return dims


def _tensor(t: Any) -> TensorPrint:
    if not isinstance(t, dict):
        raise ValueError("a tensor entry is not an object")
    name = _text(t["name"], "tensor name")
    axes = None
    if "ax" in t:
        axes = decode_sketch(_text(t["ax"], f"{name}: axis sketch", 1 << 20))
        if axes.size != 2 * AXIS_SIZE:
            raise ValueError(f"{name}: axis sketch of {axes.size} values, not {2 * AXIS_SIZE}")
    return TensorPrint(
        name=name,
        shape=_shape(t["shape"], f"{name}: shape"),
        dtype=_text(t["dtype"], f"{name}: dtype", 32),
        norm=_float(t["norm"], f"{name}: norm"),
        max_abs=_float(t["max"], f"{name}: max"),
        hash=int(_text(t["hash"], f"{name}: hash", 32), 16),
        local=decode_sketch(_text(t["sk"], f"{name}: sketch", 1 << 30)),
        exact=t.get("exact", False) is True,
        axes=axes,
    )


def parse_record(obj: Any, path: str) -> Record:
    """A record checked field by field: records come from other machines, and a wrong type
    or an absurd number is one clear error, never a traceback deeper in."""
    if not isinstance(obj, dict) or obj.get("format") not in FORMATS:
        fmt = obj.get("format") if isinstance(obj, dict) else None
        raise InputError(f"{path}: not a Denpex fingerprint record (format {_show(fmt)})")
    try:
        tensors = obj["tensors"]
        if not isinstance(tensors, list):
            raise ValueError("tensors must be a list")
        replica = obj.get("replica")
        gpu = obj.get("local_gpu")
        return Record(
            step=_int(obj["step"], "step"),
            rank=_int(obj["rank"], "rank", 0, 1 << 24),
            world_size=_int(obj["world_size"], "world_size", 1, 1 << 24),
            host=_text(obj.get("host", ""), "host"),
            local_gpu=None if gpu is None else _int(gpu, "local_gpu", 0, 1 << 16),
            tensors=[_tensor(t) for t in tensors],
            global_sketch=decode_sketch(_text(obj.get("global", ""), "global", 1 << 30)),
            replica=replica if isinstance(replica, dict) else None,
            path=path,
            format=obj["format"],
        )
    except (KeyError, TypeError, ValueError) as exc:
        step = obj.get("step")
        where = f"step {step}" if isinstance(step, int) and abs(step) < _MAX_INT else "a record"
        raise InputError(f"{path}: {where}: malformed record ({exc})") from exc


def fingerprint_files(path: str | os.PathLike[str]) -> list[Path]:
    p = Path(path)
    if p.is_file():
        return [p] if p.match(FILE_GLOB) else []
    if not p.is_dir():
        return []
    # A scandir, not Path.glob: `denpex watch` lists every watched folder each scan.
    with os.scandir(p) as entries:
        names = [e.name for e in entries if fnmatch.fnmatchcase(e.name, FILE_GLOB)]
    return [p / name for name in sorted(names)]


def is_fingerprint_dir(path: str | os.PathLike[str]) -> bool:
    """A directory holding probe output (or one such file) rather than checkpoints."""
    return bool(fingerprint_files(path))


class RankFile:
    """One rank's file, indexed by step (offsets only) so records are read one at a time."""

    def __init__(self, path: Path):
        self.path = path
        self.offsets: dict[int, int] = {}
        self.lines: dict[int, int] = {}  # step -> 1-based line of its record
        self.warnings: list[str] = []
        self.torn: set[str] = set()  # of the warnings: a last line still being written
        offset = 0
        with path.open("rb") as fh:
            for lineno, line in enumerate(fh, 1):
                m = _STEP_PREFIX.match(line)
                if m and line.endswith(b"\n"):
                    step = int(m.group(1))
                    self.offsets[step] = offset  # a re-run step: the later wins
                    self.lines[step] = lineno
                elif not line.endswith(b"\n"):  # torn: the writer is mid-line
                    self.warnings.append(f"{path}:{lineno}: incomplete last line skipped")
                    self.torn.add(self.warnings[-1])
                else:
                    self.warnings.append(f"{path}:{lineno}: bad line skipped")
                offset += len(line)

    def steps(self) -> list[int]:
        return sorted(self.offsets)

    def read(self, step: int) -> Record:
        with self.path.open("rb") as fh:
            fh.seek(self.offsets[step])
            line = fh.readline()
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{self.path}: step {step}: unreadable record ({exc.msg})") from exc
        except (ValueError, RecursionError) as exc:  # a number past int()'s digit limit; nesting
            raise InputError(f"{self.path}: step {step}: unreadable record ({exc})") from exc
        return parse_record(obj, str(self.path))


def open_rank_files(path: str | os.PathLike[str]) -> dict[int, RankFile]:
    """rank -> its indexed file (the rank comes from the file name)."""
    out: dict[int, RankFile] = {}
    for f in fingerprint_files(path):
        m = re.search(r"rank(\d+)\.jsonl$", f.name)
        if m:
            out[int(m.group(1))] = RankFile(f)
    if not out:
        raise InputError(f"{path}: no fingerprint files ({FILE_GLOB})")
    return out


def iter_records(path: str | os.PathLike[str]) -> Iterator[Record]:
    """Every record of every rank, in (step, rank) order, one at a time."""
    files = open_rank_files(path)
    steps = sorted({s for f in files.values() for s in f.offsets})
    for step in steps:
        for rank in sorted(files):
            if step in files[rank].offsets:
                yield files[rank].read(step)

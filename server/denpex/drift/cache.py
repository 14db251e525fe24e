"""Remember computed steps so that ``watch`` (and the language server) never recompute one.

A cache directory holds a ``drift-cache/`` folder with one small JSON file per comparison,
named by a hash of the comparison's key and holding the key itself and its
StepDiff/ReplicaStep. The key holds, for every file the comparison read, its path, size and
mtime: a rewritten checkpoint gets a new key; an unchanged one is never read again. One
file per key keeps a long-lived ``watch`` flat: a lookup reads one file, a new step writes
one, and nothing is held in memory between them (one JSON of every step, rewritten at each
step, grew with the run). The folder keeps the ``_MAX_FILES`` entries used last.

The files are ours, but anything may have written them (a crash mid-write on another
filesystem, a user, another version, another account where the folder is shared): a file
is read only as cachedir's ``read_private`` reads one, and an entry that does not rebuild
exactly into the model's types, field by field, or holds another key, is a miss and gets
recomputed and rewritten. A cache that cannot be written only costs the next run its time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import types
import typing
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from denpex.cachedir import default_dir, read_private, write_private
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff

_VERSION = 2  # 1 was a single drift-cache.json, no longer read
_FOLDER = "drift-cache"
_MAX_BYTES = 64 << 20  # one step of a model with millions of tensors; larger is not read
_MAX_FILES = 20_000  # a few long runs' steps; the oldest-used go first
_PRUNE_EVERY = 256  # puts between two prunes of a long-lived cache
T = TypeVar("T")


def fingerprint(path: Path) -> str:
    """path:size:mtime of every file of a checkpoint (file or directory)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    parts = []
    for f in files:
        st = f.stat()
        parts.append(f"{f.resolve()}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


class StepCache:
    def __init__(self, directory: str | Path | None) -> None:
        self.folder = Path(directory) / _FOLDER if directory else None
        self._puts = 0
        if self.folder:
            _prune(self.folder)

    def get_step(self, key: str) -> StepDiff | None:
        return self._get(key, _step_from)

    def get_replicas(self, key: str) -> ReplicaStep | None:
        return self._get(key, _replicas_from)

    def _get(self, key: str, build: typing.Callable[[Any], T]) -> T | None:
        if self.folder is None:
            return None
        path = self._path(key)
        data = read_private(path, _MAX_BYTES)
        if data is None:
            return None
        try:
            entry = json.loads(data)
            if (
                not isinstance(entry, dict)
                or set(entry) != {"version", "key", "value"}
                or entry["version"] != _VERSION
                or entry["key"] != key
            ):
                return None
            value = build(entry["value"])
        except (ValueError, RecursionError, _Corrupt):  # not JSON, too deep, not our types
            return None  # recomputed, then overwritten by put()
        with contextlib.suppress(OSError):
            os.utime(path)  # used: kept by _prune
        return value

    def put(self, key: str, value: StepDiff | ReplicaStep) -> None:
        if self.folder is None:
            return
        entry = {"version": _VERSION, "key": key, "value": asdict(value)}
        if write_private(self._path(key), json.dumps(entry).encode()):
            self._puts += 1
            if self._puts % _PRUNE_EVERY == 0:
                _prune(self.folder)

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()[:40]}.json"


def _prune(folder: Path) -> None:
    """Remove all but the ``_MAX_FILES`` entries used last."""
    with contextlib.suppress(OSError):
        files = list(folder.glob("*.json"))
        if len(files) <= _MAX_FILES:
            return
        files.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[_MAX_FILES:]:
            old.unlink()


class _Corrupt(Exception):
    """A cache entry that does not rebuild into the model's types."""


def _build(cls: type[T], raw: Any, nested: dict[str, typing.Callable[[Any], Any]]) -> T:
    """``cls`` from a JSON object, every field checked against its annotation (``nested``
    builds the fields that hold other dataclasses). ``put`` writes every field: a missing,
    unknown or mistyped one is corrupt."""
    if not isinstance(raw, dict):
        raise _Corrupt
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    if set(raw) != names:
        raise _Corrupt
    return cls(
        **{k: nested[k](v) if k in nested else _checked(v, hints[k]) for k, v in raw.items()}
    )


def _checked(value: Any, hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        ok = value in args
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            with contextlib.suppress(_Corrupt):
                return _checked(value, arg)
        ok = False
    elif origin is list:
        if not isinstance(value, list):
            raise _Corrupt
        return [_checked(v, args[0]) for v in value]
    elif origin is dict:
        if not isinstance(value, dict) or args[0] is not str:
            raise _Corrupt
        return {k: _checked(v, args[1]) for k, v in value.items()}
    elif hint is type(None):
        ok = value is None
    elif hint is float:  # JSON writes 0.0 as 0 and keeps NaN/Infinity as floats
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif hint is int:
        ok = type(value) is int
    elif hint in (str, bool):
        ok = type(value) is hint
    else:
        ok = False  # a type this check does not know: not trusted
    if not ok:
        raise _Corrupt
    return value


def _step_from(raw: Any) -> StepDiff:
    def tensors(v: Any) -> list[TensorDiff]:
        if not isinstance(v, list):
            raise _Corrupt
        return [_build(TensorDiff, t, {}) for t in v]

    return _build(StepDiff, raw, {"tensors": tensors})


def _replicas_from(raw: Any) -> ReplicaStep:
    def ranks(v: Any) -> dict[int, StepDiff]:
        if not isinstance(v, dict) or not all(_is_rank(r) for r in v):
            raise _Corrupt
        return {int(r): _step_from(s) for r, s in v.items()}

    return _build(ReplicaStep, raw, {"ranks": ranks})


def _is_rank(key: Any) -> bool:
    return isinstance(key, str) and key.isascii() and key.isdigit() and len(key) < 10


__all__ = ["StepCache", "default_dir", "fingerprint"]

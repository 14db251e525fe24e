"""Remember computed steps so that ``watch`` (and the language server) never recompute one.

One small JSON file per cache directory maps a comparison key to its StepDiff/ReplicaStep.
The key holds, for every file the comparison read, its path, size and mtime: a rewritten
checkpoint gets a new key; an unchanged one is never read again.

The file is ours, but anything may have written it (a crash mid-write on another
filesystem, a user, another version): an entry that does not rebuild exactly into the
model's types, field by field, is a miss and gets recomputed; a file that does not parse is
ignored and rewritten. A cache that cannot be written only costs the next run its time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import types
import typing
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from denpex.cachedir import default_dir
from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff

_VERSION = 1
_FILE = "drift-cache.json"
_MAX_BYTES = 256 << 20  # far beyond any real cache; a larger file is not read
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
        self.path = Path(directory) / _FILE if directory else None
        self._data: dict[str, Any] = {}
        if self.path:
            self._data = _load(self.path)

    def get_step(self, key: str) -> StepDiff | None:
        return self._get(key, _step_from)

    def get_replicas(self, key: str) -> ReplicaStep | None:
        return self._get(key, _replicas_from)

    def _get(self, key: str, build: typing.Callable[[Any], T]) -> T | None:
        raw = self._data.get(key)
        if raw is None:
            return None
        try:
            return build(raw)
        except _Corrupt:
            del self._data[key]  # recomputed, then overwritten by put()
            return None

    def put(self, key: str, value: StepDiff | ReplicaStep) -> None:
        if self.path is None:
            return
        self._data[key] = asdict(value)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"version": _VERSION, "steps": self._data}))
            os.replace(tmp, self.path)  # atomic: a reader never sees half a cache
        except OSError:  # a full disk or a read-only cache dir: the comparison still stands
            with contextlib.suppress(OSError):
                tmp.unlink()


def _load(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > _MAX_BYTES:
            return {}
        loaded = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # absent, unreadable, not JSON
        return {}
    if not isinstance(loaded, dict) or loaded.get("version") != _VERSION:
        return {}
    steps = loaded.get("steps")
    return steps if isinstance(steps, dict) else {}


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

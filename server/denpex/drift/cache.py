"""Remember computed steps so that ``watch`` (and the language server) never recompute one.

One small JSON file per cache directory maps a comparison key to its StepDiff/ReplicaStep.
The key holds, for every file the comparison read, its path, size and mtime: a rewritten
checkpoint gets a new key; an unchanged one is never read again.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from denpex.drift.model import ReplicaStep, StepDiff, TensorDiff

_VERSION = 1
_FILE = "drift-cache.json"


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "denpex"


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
        if self.path and self.path.exists():
            with contextlib.suppress(OSError, ValueError):
                loaded = json.loads(self.path.read_text())
                if loaded.get("version") == _VERSION:
                    self._data = loaded["steps"]

    def get_step(self, key: str) -> StepDiff | None:
        raw = self._data.get(key)
        return _step_from(raw) if raw else None

    def get_replicas(self, key: str) -> ReplicaStep | None:
        raw = self._data.get(key)
        if not raw:
            return None
        ranks = {int(r): _step_from(s) for r, s in raw["ranks"].items()}
        return ReplicaStep(raw["step"], ranks, list(raw["warnings"]))

    def put(self, key: str, value: StepDiff | ReplicaStep) -> None:
        if self.path is None:
            return
        self._data[key] = asdict(value)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": _VERSION, "steps": self._data}))
        os.replace(tmp, self.path)  # atomic: a reader never sees half a cache


def _step_from(raw: dict[str, Any]) -> StepDiff:
    tensors = [TensorDiff(**t) for t in raw["tensors"]]
    return StepDiff(raw["step"], tensors, list(raw["warnings"]), raw["run_path"], raw["ref_path"])


__all__ = ["StepCache", "default_dir", "fingerprint"]

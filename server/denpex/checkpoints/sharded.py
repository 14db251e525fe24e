"""Checkpoints split into shards: an HF index file naming them, several readers seen as one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from denpex.checkpoints.reader import CheckpointError, Reader, TensorMeta


@dataclass
class MultiReader:
    """Several readers seen as one checkpoint (sharded torch bins)."""

    path: str
    parts: list[Reader]
    tensors: dict[str, TensorMeta] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _owner: dict[str, Reader] = field(default_factory=dict)

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


def index_files(index: Path) -> list[Path]:
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


__all__ = ["MultiReader", "index_files"]

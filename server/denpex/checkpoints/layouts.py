"""Which files of a checkpoint hold the model weights, whatever saved it, and a reader on them.

A checkpoint is a file (safetensors or torch) or a directory: a DCP checkpoint, an HF model
folder (``model.safetensors``, or shards named by ``*.safetensors.index.json`` /
``*.bin.index.json``), DeepSpeed's ``mp_rank_00_model_states.pt``, Megatron's
``mp_rank_00/model_optim_rng.pt``, or a folder holding one weight file beside optimizer,
scheduler and RNG state.
"""

from __future__ import annotations

import re
from pathlib import Path

from denpex.checkpoints.dcp import DcpReader
from denpex.checkpoints.pt import TorchReader
from denpex.checkpoints.reader import CheckpointError, Reader
from denpex.checkpoints.safetensors import SafetensorsReader
from denpex.checkpoints.sharded import MultiReader, index_files

TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")

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
        return "safetensors", index_files(index)
    st = sorted(p for p in path.glob("*.safetensors") if not _NOT_WEIGHTS.search(p.name))
    if st:
        return "safetensors", st
    for index in sorted(path.glob("*.bin.index.json")):
        return "torch", index_files(index)
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


__all__ = ["TORCH_SUFFIXES", "model_files", "open_checkpoint"]

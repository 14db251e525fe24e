"""Checkpoints in the layouts real trainers write (the names `denpex drift` discovers)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn


def save_checkpoint(model: nn.Module, fmt: str, out: Path, step: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    if fmt == "pt":
        torch.save(state, out / f"step_{step}.pt")
    elif fmt == "safetensors":
        from safetensors.torch import save_file

        save_file(_untied(state), str(out / f"ckpt_{step}.safetensors"))
    elif fmt == "hf":
        # transformers' own writer: sharded safetensors plus model.safetensors.index.json.
        model.save_pretrained(out / f"checkpoint-{step}", max_shard_size="200KB")  # type: ignore[operator]
    elif fmt == "deepspeed":
        folder = out / f"global_step{step}"
        folder.mkdir(exist_ok=True)
        torch.save({"module": state, "global_steps": step}, folder / "mp_rank_00_model_states.pt")
    elif fmt == "dcp":
        import warnings

        import torch.distributed.checkpoint as dcp

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "assuming the intent is to save in a single process"
            dcp.save(state, checkpoint_id=str(out / f"step_{step}"))
    else:
        raise ValueError(fmt)


def _untied(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    # safetensors refuses tensors that share storage (tied embeddings): store each once.
    return {k: v.clone() for k, v in state.items()}

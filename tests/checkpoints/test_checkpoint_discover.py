"""Step discovery and completeness on real directory layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from denpex.checkpoints.discover import find_checkpoints, incomplete_reason, step_of
from denpex.checkpoints.keys import normalise_key
from denpex.errors import InputError


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("step_120", 120),
        ("step120.pt", 120),
        ("checkpoint-120", 120),
        ("global_step120", 120),
        ("iter_0000120", 120),
        ("ckpt_120.safetensors", 120),
        ("model_step120.pt", 120),
        ("epoch2-step-120.ckpt", 120),
        ("tmp-checkpoint-120", None),  # HF Trainer's name until the rename
        ("step_120.pt.tmp", None),
        (".step_120.safetensors", None),
        ("latest", None),
        ("mystep_1", None),
        ("config.json", None),
    ],
)
def test_step_from_name(name: str, step: int | None) -> None:
    assert step_of(name) == step


def test_key_normalisation() -> None:
    assert normalise_key("module.module._orig_mod.enc.w") == "enc.w"
    assert normalise_key("enc._orig_mod.w") == "enc.w"
    assert normalise_key("enc.module.w") == "enc.module.w"  # a submodule named "module"


def _st(path: Path, value: float = 0.0) -> Path:
    save_file({"w": torch.full((4, 4), value)}, str(path))
    return path


def test_top_level_and_one_folder_down(tmp_path: Path) -> None:
    _st(tmp_path / "step_10.safetensors")
    (tmp_path / "checkpoints").mkdir()
    torch.save({"w": torch.zeros(4, 4)}, tmp_path / "checkpoints" / "model_step20.pt")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "train.log").write_text("hi")
    found = find_checkpoints(tmp_path)
    assert [(c.step, c.path.name) for c in found] == [
        (10, "step_10.safetensors"),
        (20, "model_step20.pt"),
    ]


def test_one_step_twice_prefers_safetensors_and_says_so(tmp_path: Path) -> None:
    torch.save({"w": torch.zeros(4, 4)}, tmp_path / "step_10.pt")
    _st(tmp_path / "step_10.safetensors")
    notes: list[str] = []
    (cp,) = find_checkpoints(tmp_path, notes)
    assert cp.path.suffix == ".safetensors" and "step 10: both" in notes[0]


def test_deepspeed_latest_marks_a_save_in_progress(tmp_path: Path) -> None:
    for step in (10, 20):
        d = tmp_path / f"global_step{step}"
        d.mkdir()
        torch.save({"module": {"w": torch.zeros(2)}}, d / "mp_rank_00_model_states.pt")
    (tmp_path / "latest").write_text("global_step10")
    notes: list[str] = []
    assert [c.step for c in find_checkpoints(tmp_path, notes)] == [10]
    assert "global_step20: skipped: DeepSpeed 'latest' still names step 10" in notes[0]
    (tmp_path / "latest").write_text("global_step20\n")
    assert [c.step for c in find_checkpoints(tmp_path)] == [10, 20]


def test_incomplete_checkpoints_are_skipped_with_the_reason(tmp_path: Path) -> None:
    # safetensors cut short
    data = _st(tmp_path / "full.safetensors").read_bytes()
    (tmp_path / "step_10.safetensors").write_bytes(data[:-16])
    # sharded: the index names a shard not written yet
    shard = tmp_path / "checkpoint-20"
    shard.mkdir()
    _st(shard / "model-00001-of-00002.safetensors")
    index = {
        "weight_map": {
            "w": "model-00001-of-00002.safetensors",
            "v": "model-00002-of-00002.safetensors",
        }
    }
    (shard / "model.safetensors.index.json").write_text(json.dumps(index))
    # DCP without its .metadata (written last by the coordinator)
    dcp = tmp_path / "step_30"
    dcp.mkdir()
    (dcp / "__0_0.distcp").write_bytes(b"\0" * 10)
    # torch zip without its central directory
    torch.save({"w": torch.zeros(100)}, tmp_path / "full.pt")
    (tmp_path / "step_40.pt").write_bytes((tmp_path / "full.pt").read_bytes()[:200])
    notes: list[str] = []
    assert find_checkpoints(tmp_path, notes) == []
    text = "\n".join(notes)
    assert "step_10.safetensors: skipped: " in text and "truncated" in text
    assert "checkpoint-20: skipped: " in text and "model-00002-of-00002.safetensors" in text
    assert "step_30: skipped: DCP '.metadata' not written yet" in text
    assert "step_40.pt: skipped: step_40.pt: zip directory missing" in text
    assert incomplete_reason(tmp_path / "full.pt") is None


def test_no_checkpoints_and_missing_directory(tmp_path: Path) -> None:
    notes: list[str] = []
    assert find_checkpoints(tmp_path, notes) == []
    assert "no checkpoints found" in notes[0]
    with pytest.raises(InputError, match="no such file or directory"):
        find_checkpoints(tmp_path / "nope")


def test_replica_layouts(tmp_path: Path) -> None:
    step_major = tmp_path / "a"
    for step in (10, 20):
        (step_major / f"step_{step}").mkdir(parents=True)
        for rank in range(3):
            _st(step_major / f"step_{step}" / f"rank_{rank}.safetensors")
    found = find_checkpoints(step_major, replicas=True)
    assert [(c.step, sorted(c.ranks)) for c in found] == [(10, [0, 1, 2]), (20, [0, 1, 2])]

    rank_major = tmp_path / "b"
    for rank in range(2):
        (rank_major / f"rank_{rank}").mkdir(parents=True)
        for step in (10, 20) if rank == 0 else (10,):
            _st(rank_major / f"rank_{rank}" / f"step_{step}.safetensors")
    notes: list[str] = []
    found = find_checkpoints(rank_major, notes, replicas=True)
    assert [(c.step, sorted(c.ranks)) for c in found] == [(10, [0, 1])]
    assert "rank 0: steps [20] not present on every rank" in notes[0]

    # A plain run has no replicas: every step says why it was skipped.
    plain = tmp_path / "c"
    plain.mkdir()
    _st(plain / "step_10.safetensors")
    notes = []
    assert find_checkpoints(plain, notes, replicas=True) == []
    assert "no rank_<N> checkpoints inside" in notes[0]

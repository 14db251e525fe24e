"""Reading every supported checkpoint format, written for real by the test."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from denpex.checkpoints import CheckpointError, open_checkpoint
from denpex.drift.compare import Kernel, compare_readers
from denpex.errors import InputError


def _weights(seed: int = 0, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "embed.weight": torch.randn(64, 16, generator=g).to(dtype),
        "layers.0.attn.weight": torch.randn(16, 16, generator=g).to(dtype),
        "layers.0.attn.bias": torch.randn(16, generator=g).to(dtype),
        "layers.0.conv.weight": torch.randn(8, 4, 3, generator=g).to(dtype),
        "scale": torch.tensor(2.0).to(dtype),
    }


def _same(run: Path | str, ref: Path | str, key: str | None = None) -> None:
    """Every tensor of ``run`` read back equals ``ref``'s, names normalised."""
    a, b = open_checkpoint(run, key), open_checkpoint(ref)
    diff = compare_readers(a, b, 1, Kernel("cpu"))
    assert {t.name for t in diff.tensors} == set(_weights())
    assert all(t.status == "ok" for t in diff.tensors), [(t.name, t.status) for t in diff.tensors]
    assert diff.diff_sq == 0.0 and diff.mismatched == 0
    assert diff.ref_sq == pytest.approx(
        sum(float((v.double() ** 2).sum()) for v in _weights().values())
    )


@pytest.fixture
def ref(tmp_path: Path) -> Path:
    path = tmp_path / "ref.safetensors"
    save_file(_weights(), str(path))
    return path


def test_torch_file_plain_and_wrapped(tmp_path: Path, ref: Path) -> None:
    plain = tmp_path / "plain.pt"
    torch.save(_weights(), plain)
    _same(plain, ref)
    # Every tensor is read at its file offset (nothing is mapped).
    assert set(open_checkpoint(plain)._in_file) == set(_weights())  # type: ignore[attr-defined]
    # A full training state with DDP and torch.compile prefixes.
    wrapped = tmp_path / "state.pt"
    model = {f"module._orig_mod.{k}": v for k, v in _weights().items()}
    torch.save({"model": model, "optimizer": {"state": {}}, "step": 3}, wrapped)
    _same(wrapped, ref)
    nested = tmp_path / "nested.pt"
    torch.save({"trainer": {"weights": _weights()}, "epoch": 1}, nested)
    _same(nested, ref, key="trainer.weights")
    with pytest.raises(InputError, match="no 'nope'"):
        open_checkpoint(nested, "nope")


def test_legacy_torch_format_loads_whole_with_a_warning(tmp_path: Path, ref: Path) -> None:
    legacy = tmp_path / "legacy.pt"
    torch.save(_weights(), legacy, _use_new_zipfile_serialization=False)
    reader = open_checkpoint(legacy)
    assert any("legacy" in w for w in reader.warnings)
    _same(legacy, ref)


def test_deepspeed_hf_megatron_layouts(tmp_path: Path, ref: Path) -> None:
    ds = tmp_path / "global_step10"
    ds.mkdir()
    torch.save({"module": _weights(), "global_steps": 10}, ds / "mp_rank_00_model_states.pt")
    torch.save({"optimizer_state_dict": {}}, ds / "zero_pp_rank_0_mp_rank_00_optim_states.pt")
    _same(ds, ref)

    hf = tmp_path / "checkpoint-10"
    hf.mkdir()
    save_file(_weights(), str(hf / "model.safetensors"))
    torch.save({"state": {}}, hf / "optimizer.pt")
    torch.save({}, hf / "rng_state.pth")
    (hf / "trainer_state.json").write_text("{}")
    _same(hf, ref)

    mg = tmp_path / "iter_0000010"
    (mg / "mp_rank_00").mkdir(parents=True)
    torch.save({"model": _weights(), "iteration": 10}, mg / "mp_rank_00" / "model_optim_rng.pt")
    _same(mg, ref)


def test_sharded_safetensors_and_bins(tmp_path: Path, ref: Path) -> None:
    w = _weights()
    names = sorted(w)
    for kind, ext, save in (
        ("safetensors", "safetensors", lambda d, p: save_file(d, str(p))),
        ("bin", "bin", lambda d, p: torch.save(d, p)),
    ):
        root = tmp_path / kind
        root.mkdir()
        halves = {f"model-0000{i + 1}-of-00002.{ext}": names[i::2] for i in range(2)}
        weight_map = {}
        for file, part in halves.items():
            save({n: w[n] for n in part}, root / file)
            weight_map.update({n: file for n in part})
        index = (
            "model.safetensors.index.json"
            if kind == "safetensors"
            else "pytorch_model.bin.index.json"
        )
        (root / index).write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
        _same(root, ref)
        # A missing shard is named.
        (root / next(iter(halves))).unlink()
        with pytest.raises(CheckpointError, match="shard"):
            open_checkpoint(root)


def test_dcp_directory(tmp_path: Path, ref: Path) -> None:
    import torch.distributed.checkpoint as dcp

    out = tmp_path / "step_10"
    state = {"model": _weights(), "optim": {"lr": torch.tensor(0.1)}}
    dcp.save(state, checkpoint_id=str(out), no_dist=True)
    _same(out, ref)


def test_two_names_for_one_tensor_keep_the_first_in_every_format(tmp_path: Path) -> None:
    # "module.w" and "w" normalise to one name: every format keeps the first and says so
    # (DCP used to keep the last, silently).
    first, second = torch.zeros(2, 3), torch.ones(2, 3)
    weights = {"module.w": first, "w": second}
    save_file(weights, str(tmp_path / "a.safetensors"))
    torch.save(weights, tmp_path / "b.pt")
    import torch.distributed.checkpoint as dcp

    state = {"model": weights, "optim": {"lr": torch.tensor(0.1)}}
    dcp.save(state, checkpoint_id=str(tmp_path / "c"), no_dist=True)
    for path in (tmp_path / "a.safetensors", tmp_path / "b.pt", tmp_path / "c"):
        reader = open_checkpoint(path)
        assert list(reader.tensors) == ["w"], path
        assert any("normalise to 'w'; kept the first" in w for w in reader.warnings), path
        assert float(np.abs(reader.block("w", 0, 2)).sum()) == 0.0, path


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precisions_safetensors_and_torch_agree(tmp_path: Path, dtype: torch.dtype) -> None:
    w = _weights(dtype=dtype)
    save_file(w, str(tmp_path / "a.safetensors"))
    torch.save(w, tmp_path / "b.pt")
    st, pt = open_checkpoint(tmp_path / "a.safetensors"), open_checkpoint(tmp_path / "b.pt")
    for name, tensor in w.items():
        meta = st.tensors[name]
        assert meta.dtype == str(dtype).removeprefix("torch.")
        raw_st = st.block(name, 0, meta.rows)
        raw_pt = pt.block(name, 0, meta.rows)
        assert (
            raw_st.tobytes()
            == raw_pt.tobytes()
            == tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes()
        )


def test_not_a_state_dict_is_refused_with_the_reason(tmp_path: Path) -> None:
    evil = tmp_path / "evil.pt"
    torch.save({"model": _weights(), "extra": pytest.approx(1.0)}, evil)
    with pytest.raises(CheckpointError, match=r"refused: not a plain state dict.*approx"):
        open_checkpoint(evil)
    raw = tmp_path / "raw.pt"
    with open(raw, "wb") as f:
        pickle.dump(object(), f)
    with pytest.raises(CheckpointError) as info:
        open_checkpoint(raw)
    assert "\n" not in str(info.value)
    listing = tmp_path / "list.pt"
    torch.save([torch.zeros(2)], listing)
    with pytest.raises(InputError, match="holds a list, not a state dict"):
        open_checkpoint(listing)


def test_truncated_and_corrupt_files(tmp_path: Path) -> None:
    pt = tmp_path / "w.pt"
    torch.save(_weights(), pt)
    data = pt.read_bytes()
    pt.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        open_checkpoint(pt)
    st = tmp_path / "w.safetensors"
    save_file(_weights(), str(st))
    data = st.read_bytes()
    st.write_bytes(data[:-10])
    with pytest.raises(CheckpointError, match="truncated"):
        open_checkpoint(st)
    st.write_bytes(b"\xff" * 64)
    with pytest.raises(CheckpointError, match="corrupt safetensors header"):
        open_checkpoint(st)


def test_safetensors_path_reads_bf16_words_without_torch(tmp_path: Path) -> None:
    """The numpy bf16 path: raw words widened by a shift equal torch's own conversion."""
    from denpex.drift.compare import to_compared

    t = torch.randn(33, 7).bfloat16()
    save_file({"w": t}, str(tmp_path / "w.safetensors"))
    reader = open_checkpoint(tmp_path / "w.safetensors")
    got = to_compared(reader.block("w", 0, 33), "bfloat16", "bfloat16")
    np.testing.assert_array_equal(got, t.float().numpy())

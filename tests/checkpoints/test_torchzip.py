"""torch.save zips read without torch (``denpex.checkpoints.torchzip``): the same metadata,
bytes and drift reports as the torch.load path on real files, no ``import torch`` when it
reads them, and hostile data.pkl files refused or left to torch.load's weights-only refusal."""

from __future__ import annotations

import json
import os
import pickle
import resource
import struct
import subprocess
import sys
import textwrap
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from denpex.checkpoints.pt import TorchReader, dtype_name
from denpex.checkpoints.torchzip import StoredTensor, read_state
from denpex_cli import denpex, validate_drift_report


def _training_state(seed: int) -> dict[str, Any]:
    """A full training state as trainers save it: the weights under 'state_dict' (DDP's
    'module.' prefix) in every dtype read, views of one storage, a saved transpose,
    Parameters, a tensor with attributes, an AdamW state dict and DeepSpeed-style shapes."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(12, 10, generator=g)
    torch.manual_seed(seed)  # the layers' initialisation
    model = nn.Sequential(nn.Linear(10, 6), nn.BatchNorm1d(6))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    model(torch.randn(4, 10, generator=g)).square().sum().backward()
    opt.step()
    with_state = nn.Parameter(torch.randn(5, generator=g))
    with_state.tag = "tied"  # type: ignore[attr-defined]
    with_attr = torch.randn(3, 2, generator=g)
    with_attr.note = "x"  # type: ignore[attr-defined]
    weights: dict[str, Any] = {f"module.{k}": v for k, v in model.state_dict().items()}
    weights |= {
        "module.emb.weight": torch.randn(16, 8, generator=g),
        "module.bf16.weight": torch.randn(8, 8, generator=g).bfloat16(),
        "module.fp16.weight": torch.randn(4, 6, generator=g).half(),
        "module.fp64.weight": torch.randn(3, 3, generator=g).double(),
        "module.int32.ids": torch.arange(7, dtype=torch.int32),
        "module.int16.ids": torch.arange(5, dtype=torch.int16),
        "module.int8.ids": torch.arange(-3, 3, dtype=torch.int8),
        "module.uint8.mask": torch.arange(6, dtype=torch.uint8),
        "module.bool.mask": torch.arange(6) % 2 == 0,
        "module.lm_head.weight": base.t(),  # non-contiguous: a saved transpose
        "module.view.rows": base[2:7],  # views of base's storage, at an offset
        "module.view.cols": base[:, 3:8],
        "module.view.row": base[4],
        "module.base": base,
        "module.empty": torch.zeros(0, 4),
        "module.scale": torch.tensor(2.5),
        "module.param": nn.Parameter(torch.randn(2, 3, generator=g)),
        "module.param_with_state": with_state,
        "module.tensor_with_attr": with_attr,
        "module.step_count": 7,  # not a tensor: counted, never compared
    }
    shapes = OrderedDict((k, v.shape) for k, v in weights.items() if isinstance(v, torch.Tensor))
    return {
        "state_dict": weights,
        "optimizer": opt.state_dict(),
        "param_shapes": [shapes],  # DeepSpeed keeps torch.Size objects here
        "sparse_tensor_module_names": set(),
        "epoch": 3,
        "ds_version": "0.14.0",
    }


def _torch_pairs(fast: object, slow: object, where: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Walk torchzip's state and torch.load's side by side: the same structure, every
    tensor a StoredTensor there."""
    if isinstance(slow, torch.Tensor):
        assert isinstance(fast, StoredTensor), where
        yield where, fast, slow
    elif isinstance(slow, dict):
        assert isinstance(fast, dict) and list(fast) == list(slow), where
        for k in slow:
            yield from _torch_pairs(fast[k], slow[k], f"{where}.{k}")
    elif isinstance(slow, (list, tuple)):
        assert isinstance(fast, (list, tuple)) and len(fast) == len(slow), where
        for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
            yield from _torch_pairs(a, b, f"{where}[{i}]")
    else:
        assert fast == slow, where


def _words(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    if t.dtype == torch.bool:
        return t.view(torch.uint8).numpy()
    return t.numpy()


def test_metadata_and_bytes_match_torch_load(tmp_path: Path) -> None:
    path = tmp_path / "state.pt"
    torch.save(_training_state(0), path)
    fast = read_state(str(path))
    assert fast is not None, "torchzip left a plain training state to torch.load"
    meta = torch.load(path, map_location="meta", weights_only=True)
    real = torch.load(path, map_location="cpu", weights_only=True)
    raw = path.read_bytes()
    pairs = list(_torch_pairs(fast, meta))
    assert len(pairs) >= 30  # weights, BatchNorm buffers, optimizer moments and steps
    for where, stored, t in pairs:
        assert stored.shape == tuple(t.shape), where
        assert stored.dtype == dtype_name(t.dtype), where
        assert stored.nbytes == t.numel() * t.itemsize, where
        assert stored.where.strides == tuple(t.stride()), where
        assert stored.where.contiguous == t.is_contiguous(), where
        base = t.untyped_storage()._checkpoint_offset  # type: ignore[attr-defined]
        if t.numel():
            assert stored.where.offset == base + t.storage_offset() * t.itemsize, where
    # The bytes at those offsets are the tensors' values.
    for (where, stored, _), (_, _, value) in zip(pairs, _torch_pairs(fast, real), strict=True):
        if not value.numel():
            continue
        item = value.itemsize
        chunk = np.frombuffer(raw, np.uint8, stored.where.span, stored.where.offset)
        got = np.lib.stride_tricks.as_strided(
            chunk.view(_words(value).dtype),
            shape=stored.shape,
            strides=tuple(s * item for s in stored.where.strides),
        )
        assert np.array_equal(got, _words(value)), where


@pytest.mark.parametrize("key", [None, "state_dict"])
def test_reader_matches_the_torch_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str | None
) -> None:
    path = tmp_path / "state.pt"
    torch.save(_training_state(1), path)
    fast = TorchReader(str(path), key)
    with monkeypatch.context() as m:
        m.setattr("denpex.checkpoints.pt.read_state", lambda path: None)
        slow = TorchReader(str(path), key)
    tensors = [v for v in _training_state(1)["state_dict"].values() if torch.is_tensor(v)]
    assert fast.tensors == slow.tensors and len(fast.tensors) == len(tensors)
    assert fast._in_file == slow._in_file
    assert fast.warnings == slow.warnings == [f"{path}: 1 non-tensor entries ignored"]
    for name, meta in fast.tensors.items():
        if meta.rows:
            assert np.array_equal(fast.block(name, 0, meta.rows), slow.block(name, 0, meta.rows))
            fast.release(name, 0, meta.rows)
            slow.release(name, 0, meta.rows)


def test_a_file_saved_from_the_gpu_and_repacked_reads_the_same(tmp_path: Path) -> None:
    """Storages saved from CUDA say so in their persistent id ('cuda:0'), and a zip repacked
    by another writer (Python's zipfile here) puts its records elsewhere: torchzip reads
    each tensor from its named record, without a GPU, the same values as the original.
    (torch's meta path computes offsets from its own writer's layout and refuses a repacked
    zip: "claims bytes its zip record does not hold".)"""
    cpu, gpu = tmp_path / "cpu.pt", tmp_path / "gpu.pt"
    torch.save(_training_state(4), cpu)
    with zipfile.ZipFile(cpu) as src, zipfile.ZipFile(gpu, "w") as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                assert b"X\x03\x00\x00\x00cpu" in data
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            out.writestr(info, data)
    assert read_state(str(gpu)) is not None
    repacked, original = TorchReader(str(gpu), "state_dict"), TorchReader(str(cpu), "state_dict")
    assert repacked.tensors == original.tensors
    assert repacked._in_file != original._in_file  # the records moved
    for name, meta in original.tensors.items():
        if meta.rows:
            a, b = repacked.block(name, 0, meta.rows), original.block(name, 0, meta.rows)
            assert np.array_equal(a, b), name
            repacked.release(name, 0, meta.rows)
            original.release(name, 0, meta.rows)


# The CLI as users run it, either path: "torch" leaves every file to torch.load (the
# fallback). It says on stderr, last, whether torch was imported.
_CLI = textwrap.dedent(
    """
    import sys
    import denpex.checkpoints.pt as pt
    if sys.argv[1] == "torch":
        pt.read_state = lambda path: None
    from denpex.cli import main
    code = main(sys.argv[2:])
    print("torch imported:", "torch" in sys.modules, file=sys.stderr)
    sys.exit(code)
    """
)


def _cli(path: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CLI, path, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _drifting_runs(root: Path) -> tuple[Path, Path]:
    """A run whose row 3 of 'emb.weight' drifts more at every step, and its reference, saved
    in two layouts (the run a full training state, the reference DeepSpeed's 'module')."""
    run, ref = root / "run", root / "ref"
    for step in (10, 20, 30):
        state = _training_state(2)
        weights = {k.removeprefix("module."): v for k, v in state["state_dict"].items()}
        (ref / f"global_step{step}").mkdir(parents=True)
        torch.save(
            {"module": weights, "param_shapes": state["param_shapes"], "global_steps": step},
            ref / f"global_step{step}" / "mp_rank_00_model_states.pt",
        )
        state["state_dict"]["module.emb.weight"][3] += 1e-3 * step
        state["state_dict"]["module.bf16.weight"][:, 1] += 0.05 * step
        run.mkdir(exist_ok=True)
        torch.save(state, run / f"step_{step}.pt")
    return run, ref


def test_drift_report_is_the_torch_paths_and_torch_is_not_imported(tmp_path: Path) -> None:
    run, ref = _drifting_runs(tmp_path)
    args = ("drift", run, "--ref", ref, "--json", "--device", "cpu")
    fast, slow = _cli("torchzip", *args), _cli("torch", *args)
    assert fast.returncode == slow.returncode, (fast.stderr[-2000:], slow.stderr[-2000:])
    assert fast.stderr.splitlines()[-1] == "torch imported: False", fast.stderr[-2000:]
    assert slow.stderr.splitlines()[-1] == "torch imported: True"
    report = json.loads(fast.stdout)
    validate_drift_report(report)
    assert report == json.loads(slow.stdout)
    assert [p["tensors_compared"] for p in report["points"]] == [26, 26, 26]
    assert {t["name"] for t in report["points"][-1]["top_tensors"][:2]} == {
        "emb.weight",
        "bf16.weight",
    }


def test_replicas_on_torch_files_without_torch(tmp_path: Path) -> None:
    step = tmp_path / "run" / "step_10"
    step.mkdir(parents=True)
    for rank in range(3):
        state = _training_state(3)
        if rank == 2:
            state["state_dict"]["module.lm_head.weight"][1, 2] += 1.0
        torch.save(state, step / f"rank_{rank}.pt")
    args = ("replicas", tmp_path / "run", "--json", "--device", "cpu")
    fast, slow = _cli("torchzip", *args), _cli("torch", *args)
    assert fast.returncode == slow.returncode == 1, fast.stderr[-2000:]
    assert fast.stderr.splitlines()[-1] == "torch imported: False"
    assert json.loads(fast.stdout) == json.loads(slow.stdout)
    assert json.loads(fast.stdout)["points"][0]["disagreeing_ranks"] == [2]


# --------------------------------------------------------------------------- hostile


class _Payload:
    """Unpickling this runs ``touch MARKER``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


class _Unknown:
    """Pickles as a global nothing allows (``test_torchzip._Unknown``)."""


def _with_pickle(tmp_path: Path, data: bytes) -> tuple[Path, Path]:
    """A run whose step_10.pt is a real torch.save zip with ``data`` as its data.pkl, and
    a reference to compare it with."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    real = tmp_path / "real.pt"
    weights = {"layer.weight": torch.arange(16.0).reshape(4, 4), "layer.bias": torch.ones(4)}
    torch.save(weights, real)
    run, ref = tmp_path / "run", tmp_path / "ref"
    run.mkdir()
    ref.mkdir()
    with zipfile.ZipFile(real) as src, zipfile.ZipFile(run / "step_10.pt", "w") as out:
        for info in src.infolist():
            out.writestr(info, data if info.filename.endswith("/data.pkl") else src.read(info))
    save_file(weights, str(ref / "step_10.safetensors"))
    return run, ref


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("denpex: error: "), done.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _denpex_limited(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI with its address space capped at 3 GiB: a pickle asking for more gets a
    MemoryError (a traceback) instead of taking the machine's memory. (Only where torch is
    not imported: a CUDA build of torch maps more than that.)"""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run(
        [sys.executable, "-m", "denpex", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=cap,
    )


@pytest.mark.parametrize("protocol", [2, 4])
def test_data_pkl_that_runs_code_is_refused_and_never_runs(tmp_path: Path, protocol: int) -> None:
    marker = tmp_path / "PWNED"
    data = pickle.dumps({"layer.weight": _Payload(marker)}, protocol=protocol)
    run, ref = _with_pickle(tmp_path, data)
    done = _cli("torchzip", "drift", run, "--ref", ref, "--device", "cpu")
    assert not marker.exists()
    assert done.stderr.splitlines()[-1] == "torch imported: True"  # torch.load refused it
    done.stderr = "\n".join(done.stderr.splitlines()[:-1])
    _one_line_exit_2(done, "step_10.pt", "refused: not a plain state dict")


def test_data_pkl_with_an_unknown_global_goes_to_torchs_refusal(tmp_path: Path) -> None:
    data = pickle.dumps({"layer.weight": _Unknown()}, protocol=2)
    run, ref = _with_pickle(tmp_path, data)
    done = denpex("drift", run, "--ref", ref, "--device", "cpu")
    _one_line_exit_2(done, "step_10.pt", "refused: not a plain state dict", "_Unknown")


def test_data_pkl_asking_for_huge_allocations_is_refused(tmp_path: Path) -> None:
    # A memo index of 2**31: the C unpickler would grow its memo to 2**32 slots (32 GiB).
    memo = b"\x80\x02}r" + struct.pack("<I", 1 << 31) + b"."
    run, ref = _with_pickle(tmp_path, memo)
    _one_line_exit_2(_denpex_limited("drift", run, "--ref", ref, "--device", "cpu"), "no tensors")
    # bytearray(2**31 - 1): refused before it is built.
    count = b"\x80\x02c__builtin__\nbytearray\nJ\xff\xff\xff\x7f\x85R."
    run, ref = _with_pickle(tmp_path / "count", count)
    _one_line_exit_2(
        _denpex_limited("drift", run, "--ref", ref, "--device", "cpu"),
        "step_10.pt",
        "bytearray from a count",
    )


def test_tensor_claiming_more_than_its_record_goes_to_torch_and_is_refused(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real.pt"
    torch.save({"layer.weight": torch.ones(16)}, real)
    with zipfile.ZipFile(real) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    assert data.count(b"K\x10\x85") == 1  # the size tuple (16,)
    huge = data.replace(b"K\x10\x85", b"J\x00\x00\x00\x40\x85")  # (2**30,)
    run, ref = _with_pickle(tmp_path / "case", huge)
    assert read_state(str(run / "step_10.pt")) is None
    _one_line_exit_2(denpex("drift", run, "--ref", ref, "--device", "cpu"), "step_10.pt")


def test_files_torchzip_does_not_vouch_for_are_left_to_torch(tmp_path: Path) -> None:
    legacy, sparse, complex_, meta = (tmp_path / f"{n}.pt" for n in "abcd")
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    torch.save({"w": torch.ones(3).to_sparse()}, sparse)
    torch.save({"w": torch.ones(3, dtype=torch.complex64)}, complex_)
    torch.save({"w": torch.empty(3, device="meta")}, meta)
    assert read_state(str(sparse)) is None
    assert read_state(str(complex_)) is None
    assert read_state(str(meta)) is None
    for path in (legacy, sparse, complex_):
        assert TorchReader(str(path)).tensors["w"].dtype in ("float32", "sparse_coo", "complex64")

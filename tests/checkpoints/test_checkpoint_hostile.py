"""Hostile checkpoint files through the real CLI: `denpex drift` / `denpex replicas` on files
written here, crafted the way an attacker (or a crashing writer) would. Every case must end
in one line on stderr and exit 2 (or, for our own cache, be ignored), never a traceback, a
crash, a verdict on bytes that are not the tensor's, or a payload that runs."""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from denpex_cli import denpex

WEIGHTS = {"layer.weight": torch.arange(64.0).reshape(8, 8), "layer.bias": torch.ones(8)}


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("denpex: error: "), done.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _reference(root: Path, step: int = 10) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    save_file(WEIGHTS, str(root / f"step_{step}.safetensors"))
    return root


def _dcp(path: Path, state: dict[str, Any]) -> Path:
    import torch.distributed.checkpoint as dcp

    dcp.save(state, checkpoint_id=str(path), no_dist=True)
    return path


class _Payload:
    """Unpickling this runs ``touch MARKER``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


# --------------------------------------------------------------------------- DCP


def _evil_metadata(checkpoint: Path, marker: Path, how: str) -> None:
    """Replace a real DCP .metadata by one whose unpickling runs the payload."""
    if how == "bare":
        data = pickle.dumps(_Payload(marker))
    else:  # hidden inside the real metadata object, where torch's own reader would unpickle it
        with open(checkpoint / ".metadata", "rb") as f:
            md = pickle.load(f)  # our own file, written just above by dcp.save
        md.planner_data = {"model.layer.weight": _Payload(marker)}
        data = pickle.dumps(md)
    (checkpoint / ".metadata").write_bytes(data)


@pytest.mark.parametrize("how", ["bare", "nested"])
def test_dcp_metadata_that_runs_code_is_refused(tmp_path: Path, how: str) -> None:
    marker = tmp_path / "PWNED"
    state = {"model": dict(WEIGHTS), "optim": {"lr": torch.tensor(0.1)}}
    run = tmp_path / "run"
    _evil_metadata(_dcp(run / "step_10", state), marker, how)
    done = denpex("drift", run, "--ref", _reference(tmp_path / "ref"), "--device", "cpu")
    _one_line_exit_2(done, ".metadata", "refused", "posix.system")
    # Replica layout: the same payload in one rank's checkpoint.
    replicas = tmp_path / "replicas" / "step_10"
    _dcp(replicas / "rank_0", state)
    _evil_metadata(_dcp(replicas / "rank_1", state), marker, how)
    _dcp(replicas / "rank_2", state)
    done = denpex("replicas", replicas.parent, "--device", "cpu", "--json")
    assert done.returncode in (0, 2) and "Traceback" not in done.stderr, done.stderr
    assert "refused" in done.stdout + done.stderr
    assert not marker.exists(), "the pickled payload ran"


def test_dcp_checkpoints_torch_writes_are_read_through_the_allow_list(tmp_path: Path) -> None:
    """Every dtype, a channels-last tensor, a scalar, an empty tensor and non-tensor entries
    (stored as pickled bytes, which are never loaded): the allow-list admits what real DCP
    saves name, and the values read equal torch's."""
    g = torch.Generator().manual_seed(0)
    weights = {
        "f32": torch.randn(6, 5, generator=g),
        "bf16": torch.randn(7, generator=g).bfloat16(),
        "f16": torch.randn(3, 2, generator=g).half(),
        "f64": torch.randn(4, generator=g).double(),
        "i64": torch.arange(5),
        "i8": torch.arange(-3, 3, dtype=torch.int8),
        "flag": torch.tensor(True),
        "nhwc": torch.randn(2, 3, 4, 5, generator=g).to(memory_format=torch.channels_last),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(2.5),
        "fp8": torch.randn(4, generator=g).to(torch.float8_e4m3fn),
    }
    marker = tmp_path / "PWNED"
    extra = {"lr": 0.1, "name": "adamw", "payload": _Payload(marker), "step": 3}
    state = {"model": weights, "optim": {"state": {"0": {"exp_avg": torch.ones(3)}}, **extra}}
    _dcp(tmp_path / "run" / "step_10", state)
    ref = tmp_path / "ref"
    ref.mkdir()
    save_file({k: v.contiguous() for k, v in weights.items()}, str(ref / "step_10.safetensors"))
    done = denpex("drift", tmp_path / "run", "--ref", ref, "--device", "cpu", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "identical", report
    assert report["points"][0]["tensors_compared"] == len(weights) - 1, report  # all but fp8
    assert not marker.exists(), "a pickled DCP entry was loaded"


_SHARDED_SAVE = textwrap.dedent(
    """
    import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
    import torch.distributed.checkpoint as dcp
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    def save(rank, path, port):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        dist.init_process_group("gloo", rank=rank, world_size=2)
        mesh = init_device_mesh("cpu", (2,))
        full = torch.load(os.path.join(os.path.dirname(path), "full.pt"), weights_only=True)
        placements = {"w": Shard(0), "v": Shard(1), "r": Replicate()}
        model = {k: distribute_tensor(full[k], mesh, [p]) for k, p in placements.items()}
        dcp.save({"model": model, "optim": {"lr": torch.tensor(0.1)}}, checkpoint_id=path)
        dist.barrier()
        dist.destroy_process_group()

    if __name__ == "__main__":
        mp.spawn(save, args=(sys.argv[1], sys.argv[2]), nprocs=2)
    """
)


@pytest.mark.slow
def test_dcp_tensor_sharded_over_two_ranks_is_reassembled(tmp_path: Path) -> None:
    """Two gloo ranks save DTensors split by rows and by columns: each chunk lands where its
    metadata says. The reference differs in one element of each second chunk."""
    import socket

    g = torch.Generator().manual_seed(0)
    full = {"w": torch.randn(6, 4, generator=g), "v": torch.randn(5, 3, generator=g)}
    full["r"] = torch.randn(4, 4, generator=g)
    (tmp_path / "run").mkdir()
    torch.save(full, tmp_path / "run" / "full.pt")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    script = tmp_path / "save_sharded.py"  # spawned workers import their function from it
    script.write_text(_SHARDED_SAVE)
    saved = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "run" / "step_10"), port],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert saved.returncode == 0, saved.stderr[-2000:]
    (tmp_path / "run" / "full.pt").unlink()
    ref = {k: v.clone() for k, v in full.items()}
    ref["w"][4, 1] += 1.0  # rank 1's rows
    ref["v"][2, 2] += 0.5  # rank 1's columns
    (tmp_path / "ref").mkdir()
    save_file(ref, str(tmp_path / "ref" / "step_10.safetensors"))
    done = denpex("drift", tmp_path / "run", "--ref", tmp_path / "ref", "--device", "cpu", "--json")
    assert done.returncode in (0, 1), done.stderr
    point = json.loads(done.stdout)["points"][0]
    assert point["tensors_compared"] == 3, point
    assert point["mismatched_elements"] == 2, point  # each elsewhere equal: chunks in place
    assert point["max_abs"] == pytest.approx(1.0, rel=1e-6), point  # fp32 rounding of x + 1
    assert point["l2"] == pytest.approx((1.0 + 0.25) ** 0.5, rel=1e-6), point


def test_dcp_chunk_that_runs_code_is_refused(tmp_path: Path) -> None:
    """A tensor's chunk in the shard is a torch.save zip; one whose pickle calls os.system
    is refused by torch.load(weights_only=True) and never run."""
    marker = tmp_path / "PWNED"
    run = tmp_path / "run"
    checkpoint = _dcp(run / "step_10", {"model": dict(WEIGHTS), "optim": {"lr": torch.tensor(0.1)}})
    with open(checkpoint / ".metadata", "rb") as f:
        md = pickle.load(f)  # our own file, written just above by dcp.save
    evil = tmp_path / "evil.pt"
    torch.save(_Payload(marker), evil)
    for index, info in md.storage_data.items():
        if index.fqn == "model.layer.weight":
            shard = checkpoint / info.relative_path
            info.offset, info.length = shard.stat().st_size, evil.stat().st_size
            with open(shard, "ab") as f:
                f.write(evil.read_bytes())
    with open(checkpoint / ".metadata", "wb") as f:
        pickle.dump(md, f)
    done = denpex("drift", run, "--ref", _reference(tmp_path / "ref"), "--device", "cpu")
    assert "Traceback" not in done.stderr and done.returncode != 1, done.stderr
    assert "not compared: layer.weight" in done.stdout, done.stdout  # its bias still is
    assert not marker.exists(), "the pickled payload ran"


def _break_shard(checkpoint: Path, how: str) -> None:
    shard = next(checkpoint.glob("*.distcp"))
    data = shard.read_bytes()
    if how == "missing":
        shard.unlink()
    elif how == "truncated":
        shard.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        shard.write_bytes(os.urandom(len(data)))
    elif how == "zeroed":
        shard.write_bytes(bytes(len(data)))


@pytest.mark.parametrize("how", ["missing", "truncated", "garbage", "zeroed"])
def test_corrupt_or_missing_dcp_shard(tmp_path: Path, how: str) -> None:
    state = {"model": dict(WEIGHTS), "optim": {"lr": torch.tensor(0.1)}}
    run = tmp_path / "run"
    _break_shard(_dcp(run / "step_10", state), how)
    done = denpex("drift", run, "--ref", _reference(tmp_path / "ref"), "--device", "cpu")
    _one_line_exit_2(done, "distcp")


@pytest.mark.parametrize(
    "storage", [("../../ref/step_10.safetensors", 0, 64), ("__0_0.distcp", 10**9, 4096)]
)
def test_dcp_metadata_pointing_outside_its_shards(
    tmp_path: Path, storage: tuple[str, int, int]
) -> None:
    """A storage entry naming a file outside the checkpoint directory, or bytes beyond the
    end of its shard, is refused: metadata never chooses what else gets read."""
    run = tmp_path / "run"
    checkpoint = _dcp(run / "step_10", {"model": dict(WEIGHTS), "optim": {"lr": torch.ones(())}})
    with open(checkpoint / ".metadata", "rb") as f:
        md = pickle.load(f)  # our own file, written just above by dcp.save
    for index, info in md.storage_data.items():
        if index.fqn == "model.layer.weight":
            info.relative_path, info.offset, info.length = storage
    with open(checkpoint / ".metadata", "wb") as f:
        pickle.dump(md, f)
    done = denpex("drift", run, "--ref", _reference(tmp_path / "ref"), "--device", "cpu")
    _one_line_exit_2(done, "layer.weight" if storage[1] == 0 else "truncated")


# --------------------------------------------------------------------------- safetensors


def _st_bytes(header: str | bytes, data: bytes = b"", length: int | None = None) -> bytes:
    raw = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


def _tensor(dtype: str = "F32", shape: object = (4,), offsets: object = (0, 16)) -> str:
    return json.dumps({"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)})  # type: ignore[call-overload]


_OK_T = '{"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}'
DATA = bytes(16)

# name -> file bytes; each is a header the official loader refuses too (checked below).
MALFORMED = {
    # shape holds more elements than data_offsets: we would read a neighbour's bytes as ours
    "shape_larger_than_offsets": _st_bytes(
        '{"a": ' + _tensor(offsets=(0, 8)) + ', "b": ' + _tensor(shape=(2,), offsets=(8, 16)) + "}",
        bytes(16),
    ),
    "offsets_beyond_shape": _st_bytes(
        '{"a": ' + _tensor(shape=(2, 2), offsets=(0, 20)) + "}", bytes(20)
    ),
    "header_is_a_list": _st_bytes("[1, 2, 3]"),
    "header_is_a_string": _st_bytes('"hello"'),
    "entry_not_an_object": _st_bytes('{"a": [1, 2]}', DATA),
    "missing_dtype": _st_bytes('{"a": {"shape": [4], "data_offsets": [0, 16]}}', DATA),
    "missing_data_offsets": _st_bytes('{"a": {"dtype": "F32", "shape": [4]}}', DATA),
    "unknown_dtype": _st_bytes('{"a": ' + _tensor(dtype="F33") + "}", DATA),
    "dtype_a_number": _st_bytes('{"a": {"dtype": 7, "shape": [4], "data_offsets": [0, 16]}}', DATA),
    "shape_a_string": _st_bytes(
        '{"a": {"dtype": "F32", "shape": "4", "data_offsets": [0, 16]}}', DATA
    ),
    "negative_dim": _st_bytes('{"a": ' + _tensor(shape=(-4,)) + "}", DATA),
    "float_dim": _st_bytes(
        '{"a": {"dtype": "F32", "shape": [4.0], "data_offsets": [0, 16]}}', DATA
    ),
    "bool_dim": _st_bytes(
        '{"a": {"dtype": "F32", "shape": [true], "data_offsets": [0, 4]}}', bytes(4)
    ),
    "nan_offset": _st_bytes(
        '{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, NaN]}}', DATA
    ),
    "infinite_offset": _st_bytes(
        '{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, Infinity]}}', DATA
    ),
    "three_offsets": _st_bytes('{"a": ' + _tensor(offsets=(0, 16, 16)) + "}", DATA),
    "reversed_offsets": _st_bytes('{"a": ' + _tensor(shape=(0,), offsets=(16, 0)) + "}", DATA),
    "overlapping": _st_bytes(
        '{"a": ' + _tensor(offsets=(0, 16)) + ', "b": ' + _tensor(offsets=(8, 24)) + "}", bytes(24)
    ),
    "gap": _st_bytes('{"a": ' + _tensor(offsets=(8, 24)) + "}", bytes(24)),
    "huge_dim": _st_bytes('{"a": ' + _tensor(shape=(2**70,)) + "}", DATA),
    "shape_overflows_u64": _st_bytes('{"a": ' + _tensor(shape=(2**40, 2**40)) + "}", DATA),
    "5000_digit_offset": _st_bytes(
        '{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, ' + "9" * 5000 + "]}}", DATA
    ),
    "deep_nesting": _st_bytes('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    "metadata_not_strings": _st_bytes('{"__metadata__": {"format": 1}, "a": ' + _OK_T + "}", DATA),
    "bytes_after_last_tensor": _st_bytes('{"a": ' + _OK_T + "}", bytes(32)),
    "header_longer_than_file": _st_bytes('{"a": ' + _OK_T + "}", DATA, length=1 << 20),
    "header_over_100MB": _st_bytes('{"a": ' + _OK_T + "}", DATA, length=200_000_000),
    "not_utf8": _st_bytes(b'{"\xff\xfe": ' + _OK_T.encode() + b"}", DATA),
    "not_json": _st_bytes("{this is not json}", DATA),
}


def test_the_official_loader_refuses_every_malformed_header(tmp_path: Path) -> None:
    """The table is of headers safetensors itself refuses: we validate as it does."""
    for name, raw in MALFORMED.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(raw)
        with pytest.raises((SafetensorError, OSError)):
            with safe_open(str(path), "np") as f:
                for key in f.keys():  # noqa: SIM118 (a safe_open handle is no dict)
                    f.get_tensor(key)
            raise AssertionError(f"{name}: the official loader accepts it")


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_safetensors_header_is_one_line_exit_2(tmp_path: Path, name: str) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "step_10.safetensors").write_bytes(MALFORMED[name])
    ref = _reference(tmp_path / "ref")
    done = denpex("drift", run, "--ref", ref, "--device", "cpu")
    _one_line_exit_2(done, "step_10.safetensors")


def test_a_valid_header_with_metadata_and_empty_tensors_is_read(tmp_path: Path) -> None:
    """The validation refuses nothing the official writer produces."""
    weights = {**WEIGHTS, "none": torch.zeros(0), "also_none": torch.zeros(3, 0)}
    run, ref = tmp_path / "run", tmp_path / "ref"
    run.mkdir()
    ref.mkdir()
    save_file(weights, str(run / "step_10.safetensors"), metadata={"format": "pt"})
    save_file(weights, str(ref / "step_10.safetensors"))
    done = denpex("drift", run, "--ref", ref, "--device", "cpu", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "identical"


# --------------------------------------------------------------------------- torch files

_TRUNCATE_ON_OPEN = textwrap.dedent(
    """
    import os, runpy, sys
    target = os.path.realpath(sys.argv[1])

    def truncate_once(event, args):
        # os.open (mode None) is where a reader takes its descriptor: cut the file right then,
        # as a writer rewriting the checkpoint during the compare would.
        if event == "open" and args[1] is None and os.path.realpath(str(args[0])) == target:
            if os.path.getsize(target) > 4096:
                os.truncate(target, 4096)

    sys.addaudithook(truncate_once)
    sys.argv = ["denpex", *sys.argv[2:]]
    runpy.run_module("denpex", run_name="__main__", alter_sys=True)
    """
)


def _big_weights() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    # A saved transpose is not contiguous: a mapped reader touches its pages directly.
    return {"a": torch.randn(256, 256, generator=g), "t": torch.randn(256, 128, generator=g).t()}


def test_torch_file_truncated_while_compared(tmp_path: Path) -> None:
    run, ref = tmp_path / "run", tmp_path / "ref"
    run.mkdir()
    ref.mkdir()
    torch.save(_big_weights(), run / "step_10.pt")
    save_file(
        {k: v.contiguous() for k, v in _big_weights().items()}, str(ref / "step_10.safetensors")
    )
    args = ["drift", str(run), "--ref", str(ref), "--device", "cpu"]
    done = subprocess.run(
        [sys.executable, "-c", _TRUNCATE_ON_OPEN, str(run / "step_10.pt"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != -7 and done.returncode != 135, "SIGBUS"
    _one_line_exit_2(done, "step_10.pt", "truncated")


def test_torch_reader_survives_truncation_after_open(tmp_path: Path) -> None:
    """The reader is open (layout known), then the file is cut: every block read after that
    is one CheckpointError, never SIGBUS. In a subprocess, so a crash cannot take pytest."""
    path = tmp_path / "w.pt"
    torch.save(_big_weights(), path)
    script = textwrap.dedent(
        f"""
        import os
        from denpex.checkpoints import CheckpointError, open_checkpoint
        reader = open_checkpoint({str(path)!r})
        os.truncate({str(path)!r}, 4096)
        for name, meta in sorted(reader.tensors.items()):
            try:
                reader.block(name, 0, meta.rows)
            except CheckpointError as exc:
                print(name, "refused:", exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, (done.returncode, done.stderr[-1000:])
    assert done.stdout.count("file ended early (truncated)") == 2, done.stdout


def test_torch_file_whose_storage_claims_bytes_of_the_next_record(tmp_path: Path) -> None:
    """data.pkl says tensor 'a' has 20 floats, its zip record holds 16: the 4 extra would be
    the next record's header. Refused, never compared."""
    small, bigger = tmp_path / "small.pt", tmp_path / "bigger.pt"
    torch.save({"a": torch.ones(16), "b": torch.ones(16)}, small)
    torch.save({"a": torch.ones(20), "b": torch.ones(16)}, bigger)
    run = tmp_path / "run"
    run.mkdir()
    with zipfile.ZipFile(small) as src, zipfile.ZipFile(bigger) as other:
        pkl = next(n for n in other.namelist() if n.endswith("/data.pkl"))
        with zipfile.ZipFile(run / "step_10.pt", "w") as out:
            for info in src.infolist():
                data = other.read(pkl) if info.filename.endswith("/data.pkl") else src.read(info)
                out.writestr(info.filename, data)
    ref = tmp_path / "ref"
    ref.mkdir()
    save_file({"a": torch.ones(20), "b": torch.ones(16)}, str(ref / "step_10.safetensors"))
    done = denpex("drift", run, "--ref", ref, "--device", "cpu")
    _one_line_exit_2(done, "step_10.pt", "'a'", "zip record")


@pytest.mark.parametrize("command", ["drift", "replicas"])
def test_meta_tensor_in_a_state_dict(tmp_path: Path, command: str) -> None:
    """A tensor saved from the meta device has a shape and no data. (replicas: the error
    names why no replica was readable, not the tensor: that line comes from the engine.)"""
    state = {**WEIGHTS, "ghost.weight": torch.empty(8, 8, device="meta")}
    if command == "drift":
        run = tmp_path / "run"
        run.mkdir()
        torch.save(state, run / "step_10.pt")
        done = denpex("drift", run, "--ref", _reference(tmp_path / "ref"), "--device", "cpu")
    else:
        step = tmp_path / "run" / "step_10"
        step.mkdir(parents=True)
        for rank in range(2):
            torch.save(state, step / f"rank_{rank}.pt")
        done = denpex("replicas", tmp_path / "run", "--device", "cpu")
        _one_line_exit_2(done, "readable")
        return
    _one_line_exit_2(done, "'ghost.weight'", "meta tensor")


# --------------------------------------------------------------------------- drift cache


def _corruptions(valid: str) -> dict[str, str]:
    """Ways one cache entry (one comparison's file) can be wrong."""
    data = json.loads(valid)
    key = data["key"]
    wrong_types = json.loads(valid)
    for t in wrong_types["value"]["tensors"]:
        t["numel"], t["diff_sq"] = "many", [1.0]
    missing = json.loads(valid)
    del missing["value"]["tensors"]
    extra = json.loads(valid)
    extra["value"]["tensors"][0]["__class__"] = "os.system"
    return {
        "garbage": "\x00\xff not json at all",
        "truncated": valid[: len(valid) // 2],
        "a_list": "[]",
        "value_a_list": json.dumps({"version": 2, "key": key, "value": []}),
        "value_a_string": json.dumps({"version": 2, "key": key, "value": "x"}),
        "another_key": json.dumps({**data, "key": key + "|/elsewhere:1:1"}),
        "old_version": json.dumps({**data, "version": 1}),
        "wrong_types": json.dumps(wrong_types),
        "missing_field": json.dumps(missing),
        "unknown_field": json.dumps(extra),
        "deep": '{"version": 2, "key": '
        + json.dumps(key)
        + ', "value": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
    }


def test_corrupt_drift_cache_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    """Every entry file is replaced by a broken one (or made writable by others, as a
    planted file would be): the comparison is recomputed, the answer does not change, and
    each entry is rewritten as it was."""
    run, ref, cache = tmp_path / "run", tmp_path / "ref", tmp_path / "cache"
    for root in (run, ref):
        root.mkdir()
        for step in (10, 20, 30):
            w = {"w": torch.randn(16, 16, generator=torch.Generator().manual_seed(step))}
            save_file(w, str(root / f"step_{step}.safetensors"))
    args = ["drift", run, "--ref", ref, "--device", "cpu", "--json", "--cache-dir", cache]
    clean = denpex(*args)
    assert clean.returncode == 0, clean.stderr
    entries = sorted((cache / "drift-cache").glob("*.json"))
    assert len(entries) == 3  # one file per step compared
    valid = {e: e.read_text() for e in entries}
    cases = {
        name: {e: _corruptions(v)[name] for e, v in valid.items()}
        for name in _corruptions(next(iter(valid.values())))
    }
    cases["writable_by_others"] = valid
    for name, texts in cases.items():
        for entry, text in texts.items():
            entry.write_text(text)
            if name == "writable_by_others":
                entry.chmod(0o666)
        done = denpex(*args)
        assert (done.returncode, done.stderr) == (0, ""), (name, done.stderr[-1500:])
        assert json.loads(done.stdout) == json.loads(clean.stdout), name
        for entry, text in valid.items():
            assert json.loads(entry.read_text()) == json.loads(text), name
            assert entry.stat().st_mode & 0o077 == 0, name

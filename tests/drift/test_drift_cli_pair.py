"""`denpex drift A --ref B` on two single checkpoints (files or model folders, any format):
a one-point report through the real CLI, on real torch/safetensors/DCP files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from denpex_cli import denpex, validate_drift_report

State = dict[str, torch.Tensor]
FAULTY, COLUMN = "layers.2.mlp.weight", 5
NO_TREND = "a single point cannot show a trend"


def _reference() -> State:
    g = torch.Generator().manual_seed(0)
    out: State = {}
    for i in range(4):
        out[f"layers.{i}.mlp.weight"] = torch.randn(48, 32, generator=g)
        out[f"layers.{i}.mlp.bias"] = torch.randn(48, generator=g)
    return out


def _faulty(ref: State) -> State:
    """One output column of one tensor off by 1e-3, one tensor gone, one reshaped."""
    run = {k: v.clone() for k, v in ref.items() if k != "layers.3.mlp.bias"}
    run[FAULTY][:, COLUMN] *= 1 + 1e-3
    run["layers.0.mlp.bias"] = run["layers.0.mlp.bias"][:40].clone()
    return run


def _st_file(path: Path, sd: State) -> Path:
    save_file(sd, str(path.with_suffix(".safetensors")))
    return path.with_suffix(".safetensors")


def _pt_file(path: Path, sd: State) -> Path:
    """A training state with DDP names, as torch.save writes it."""
    state = {"model": {f"module.{k}": v for k, v in sd.items()}, "optimizer": {}}
    torch.save(state, path.with_suffix(".pt"))
    return path.with_suffix(".pt")


def _hf_folder(path: Path, sd: State) -> Path:
    path.mkdir()
    save_file(sd, str(path / "model.safetensors"))
    torch.save({}, path / "optimizer.pt")
    (path / "config.json").write_text("{}")
    return path


def _hf_sharded(path: Path, sd: State) -> Path:
    path.mkdir()
    names = sorted(sd)
    halves = {
        "model-00001-of-00002.safetensors": names[::2],
        "model-00002-of-00002.safetensors": names[1::2],
    }
    weight_map = {}
    for file, keys in halves.items():
        save_file({k: sd[k] for k in keys}, str(path / file))
        weight_map |= dict.fromkeys(keys, file)
    index = {"metadata": {}, "weight_map": weight_map}
    (path / "model.safetensors.index.json").write_text(json.dumps(index))
    return path


def _dcp_folder(path: Path, sd: State) -> Path:
    import torch.distributed.checkpoint as dcp

    dcp.save(
        {"model": sd, "optim": {"lr": torch.tensor(1.0)}}, checkpoint_id=str(path), no_dist=True
    )
    return path


Writer = Callable[[Path, State], Path]
FORMATS: dict[str, Writer] = {
    "safetensors-file": _st_file,
    "pt-file": _pt_file,
    "hf-folder": _hf_folder,
    "hf-sharded": _hf_sharded,
    "dcp-folder": _dcp_folder,
}


def _drift(run: Path, ref: Path, *extra: str | Path) -> tuple[int, dict]:
    proc = denpex("drift", run, "--ref", ref, "--json", "--device", "cpu", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    validate_drift_report(report)
    return proc.returncode, report


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_two_checkpoints_give_a_one_point_report_that_names_the_faulty_column(
    tmp_path: Path, fmt: str
) -> None:
    write = FORMATS[fmt]
    ref = _reference()
    code, report = _drift(write(tmp_path / "run", _faulty(ref)), write(tmp_path / "ref", ref))
    assert code == 0 and not report["flagged"]
    assert report["verdict"] == "single_point"
    assert NO_TREND in report["notes"][0]
    (point,) = report["points"]
    top = point["top_tensors"][0]
    assert top["name"] == FAULTY and top["top_col"] == COLUMN and top["top_col_share"] > 0.99
    assert point["rel_l2"] > 0 and point["mismatched_elements"] == 48
    missing = {(m["name"], m["status"]) for m in point["tensors_missing"]}
    assert missing == {
        ("layers.3.mlp.bias", "missing_in_run"),
        ("layers.0.mlp.bias", "shape_mismatch"),
    }
    assert any(n.startswith("look first at: " + FAULTY) for n in report["notes"])
    assert any("2 tensor(s) not compared" in n for n in report["notes"])


def test_files_of_different_formats_are_compared(tmp_path: Path) -> None:
    ref = _reference()
    code, report = _drift(_st_file(tmp_path / "a", _faulty(ref)), _pt_file(tmp_path / "b", ref))
    assert code == 0 and report["verdict"] == "single_point"
    assert report["points"][0]["top_tensors"][0]["name"] == FAULTY


def test_a_missing_tensor_alone_is_never_identical(tmp_path: Path) -> None:
    ref = _reference()
    run = {k: v for k, v in ref.items() if k != "layers.1.mlp.weight"}
    code, report = _drift(_st_file(tmp_path / "a", run), _st_file(tmp_path / "b", ref))
    assert code == 0 and report["verdict"] == "single_point", report["notes"]
    assert report["points"][0]["l2"] == 0
    assert any("layers.1.mlp.weight (missing in the run)" in n for n in report["notes"])


def test_bitwise_equal_checkpoints_are_identical_across_formats(tmp_path: Path) -> None:
    ref = _reference()
    code, report = _drift(_hf_folder(tmp_path / "a", ref), _pt_file(tmp_path / "b", ref))
    assert code == 0 and report["verdict"] == "identical"


def test_a_noise_checkpoint_names_the_tensors_beyond_its_distance(tmp_path: Path) -> None:
    ref = _reference()
    g = torch.Generator().manual_seed(1)
    noisy = {k: v * (1 + 1e-6 * torch.randn(v.shape, generator=g)) for k, v in ref.items()}
    run = {k: v.clone() for k, v in noisy.items()}
    run[FAULTY][:, COLUMN] *= 1 + 1e-3
    code, report = _drift(
        _st_file(tmp_path / "run", run),
        _st_file(tmp_path / "ref", ref),
        "--noise-ref",
        _st_file(tmp_path / "noise", noisy),
    )
    assert code == 0 and report["verdict"] == "single_point" and report["noise_reference"]
    assert f"1 tensor(s) beyond 4x the noise run's distance: {FAULTY}" in report["notes"]


def test_a_truncated_checkpoint_is_one_line_and_exit_2(tmp_path: Path) -> None:
    ref = _reference()
    run = _st_file(tmp_path / "run", ref)
    run.write_bytes(run.read_bytes()[:-100])
    proc = denpex("drift", run, "--ref", _st_file(tmp_path / "ref", ref), "--device", "cpu")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "truncated" in proc.stderr, proc.stderr

"""`denpex drift RUN --ref REF` on per-rank layouts (``step_N/rank_0.pt`` ... ``rank_3.pt``):
each rank against the reference's same rank, or against its one checkpoint; the report
names the rank that departs. Real data-parallel training, real files, the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file

from denpex.demo.tinyrun import FaultSpec, simulate_replicas
from denpex_cli import denpex, validate_drift_report

STEPS, EVERY, ROUND_OFF = 80, 10, 0.1
FAULT = FaultSpec("replica_update", 35, target="blocks.0.attn.v.weight", index=4, eps=1e-3, rank=2)


def _per_rank(root: Path, fault: FaultSpec | None, noise_seed: int) -> Path:
    for step, states in simulate_replicas(
        steps=STEPS, save_every=EVERY, fault=fault, nondeterminism=ROUND_OFF, noise_seed=noise_seed
    ):
        (root / f"step_{step}").mkdir(parents=True)
        for rank, sd in enumerate(states):
            torch.save(sd, root / f"step_{step}" / f"rank_{rank}.pt")
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("per_rank")
    ref = _per_rank(base / "ref", None, noise_seed=1)
    single = base / "ref-single"  # the reference saved once per step (rank 0's weights)
    for step_dir in sorted(ref.iterdir()):
        (single / step_dir.name).mkdir(parents=True)
        shutil.copy(step_dir / "rank_0.pt", single / step_dir.name / "model.pt")
    return {
        "ref": ref,
        "ref-single": single,
        "faulty": _per_rank(base / "faulty", FAULT, noise_seed=2),
        "healthy": _per_rank(base / "healthy", None, noise_seed=3),
    }


def _drift(run: Path, ref: Path) -> tuple[int, dict]:
    done = denpex("drift", run, "--ref", ref, "--json", "--device", "cpu")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    return done.returncode, report


@pytest.mark.slow
@pytest.mark.parametrize("ref", ["ref", "ref-single"])
def test_the_rank_whose_update_goes_wrong_is_named(runs: dict[str, Path], ref: str) -> None:
    code, report = _drift(runs["faulty"], runs[ref])
    assert code == 1 and report["flagged"], report["notes"]
    assert report["faulty_rank"] == 2
    assert report["onset_step"] == 40  # the fault starts at 35: within one checkpoint interval
    assert report["notes"][0].startswith("rank 2 departs from the rest")
    assert len(report["points"]) == STEPS // EVERY
    # `denpex replicas` on the run's own ranks, folded in: bit-identical until rank 2 parts.
    replicas = report["replicas"]
    assert replicas["verdict"] == "replica_divergence" and replicas["ranks"] == [0, 1, 2, 3]
    assert (replicas["first_divergence_step"], replicas["divergent_rank"]) == (40, 2)
    assert [(s["step"], s["identical"], s["disagreeing_ranks"]) for s in replicas["steps"]] == [
        (step, step < 40, [] if step < 40 else [2]) for step in range(EVERY, STEPS + 1, EVERY)
    ]
    said = "replicas: rank 2 differs from the majority of ranks from step 40"
    assert any(note.startswith(said) for note in report["notes"]), report["notes"]


@pytest.mark.slow
def test_healthy_per_rank_run_names_no_rank(runs: dict[str, Path]) -> None:
    code, report = _drift(runs["healthy"], runs["ref"])
    assert code == 0 and not report["flagged"]
    assert report["faulty_rank"] is None
    assert report["notes"][0].startswith("per rank: 0 ")
    replicas = report["replicas"]
    assert replicas["verdict"] == "identical" and replicas["first_divergence_step"] is None
    assert all(s["identical"] for s in replicas["steps"]) and len(replicas["steps"]) == 8


@pytest.mark.slow
def test_a_rank_the_reference_lacks_is_a_warning(runs: dict[str, Path], tmp_path: Path) -> None:
    ref = tmp_path / "ref"
    shutil.copytree(runs["ref"], ref)
    (ref / "step_80" / "rank_3.pt").unlink()
    _, report = _drift(runs["healthy"], ref)
    assert "step 80: rank 3 not compared: the reference has no rank 3" in report["warnings"]


def _rank_files(root: Path, step: int, states: list[dict[str, np.ndarray]]) -> None:
    (root / f"step_{step}").mkdir(parents=True)
    for rank, sd in enumerate(states):
        save_file(sd, str(root / f"step_{step}" / f"rank_{rank}.safetensors"))


def _state(seed: int, rows: int = 8) -> dict[str, np.ndarray]:
    return {"w": np.random.default_rng(seed).standard_normal((rows, 4)).astype(np.float32)}


def test_replicas_that_agree_on_nan_are_not_identical(tmp_path: Path) -> None:
    run, ref = tmp_path / "run", tmp_path / "ref"
    nan = _state(20)
    nan["w"][1, 2] = np.nan  # the same NaN on every rank: bitwise equal, yet no agreement
    _rank_files(run, 10, [_state(10)] * 3)
    _rank_files(run, 20, [nan] * 3)
    for step in (10, 20):
        (ref / f"step_{step}").mkdir(parents=True)
        save_file(_state(step), str(ref / f"step_{step}" / "model.safetensors"))
    done = denpex("drift", run, "--ref", ref, "--json", "--device", "cpu")
    report = json.loads(done.stdout)
    validate_drift_report(report)
    replicas = report["replicas"]
    assert replicas["verdict"] != "identical", replicas
    assert [s["identical"] for s in replicas["steps"]] == [True, False]
    assert replicas["first_divergence_step"] == 20


def test_shards_are_not_compared_as_replicas(tmp_path: Path) -> None:
    run, ref = tmp_path / "run", tmp_path / "ref"
    # Tensor-parallel shards: each rank holds a different slice (shapes differ).
    _rank_files(run, 10, [_state(1, rows=8), _state(2, rows=4)])
    _rank_files(ref, 10, [_state(1, rows=8), _state(2, rows=4)])
    done = denpex("drift", run, "--ref", ref, "--json", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert "replicas" not in report and report["verdict"] == "identical"

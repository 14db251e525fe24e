"""`denpex drift RUN --ref REF` on per-rank layouts (``step_N/rank_0.pt`` ... ``rank_3.pt``):
each rank against the reference's same rank, or against its one checkpoint; the report
names the rank that departs. Real data-parallel training, real files, the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

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


@pytest.mark.slow
def test_healthy_per_rank_run_names_no_rank(runs: dict[str, Path]) -> None:
    code, report = _drift(runs["healthy"], runs["ref"])
    assert code == 0 and not report["flagged"]
    assert report["faulty_rank"] is None
    assert report["notes"][0].startswith("per rank: 0 ")


@pytest.mark.slow
def test_a_rank_the_reference_lacks_is_a_warning(runs: dict[str, Path], tmp_path: Path) -> None:
    ref = tmp_path / "ref"
    shutil.copytree(runs["ref"], ref)
    (ref / "step_80" / "rank_3.pt").unlink()
    _, report = _drift(runs["healthy"], ref)
    assert "step 80: rank 3 not compared: the reference has no rank 3" in report["warnings"]

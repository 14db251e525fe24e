"""bench/trainings/ddp.py: real DistributedDataParallel over gloo (three spawned rank
processes), per-rank checkpoints, judged by the real CLI. A fault after the all-reduce makes
its rank's replica part from the others and is named; a fault before it reaches every
replica alike, so the replicas agree and no rank is named."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from denpex_cli import ROOT, denpex, validate_drift_report

sys.path.insert(0, str(ROOT / "bench"))

from trainings.ddp import DdpSpec, train_ddp
from trainings.faults import Fault
from trainings.train import Recipe

ONSET, STEPS, EVERY = 10, 24, 3
FIRST_FAULTY = (ONSET + EVERY - 1) // EVERY * EVERY  # the first checkpoint after the onset
BASE = DdpSpec("gpt2", Recipe(), "per-rank", steps=STEPS, every=EVERY)
AFTER = Fault("lane", "transformer.h.1.mlp.c_fc.weight", ONSET, eps=1e-2)
BEFORE = Fault("compute", "transformer.h.1.mlp.c_fc", ONSET, eps=1e-1)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("ddp")
    specs = {
        "ref": BASE,
        "after": replace(BASE, fault=AFTER, faulty_rank=1),
        "before": replace(BASE, fault=BEFORE, faulty_rank=2),
    }
    for name, spec in specs.items():
        train_ddp(spec, base / name)
    return {name: base / name for name in specs}


def _report(*args: str | Path) -> tuple[int, dict]:
    done = denpex(*args, "--json", "--device", "cpu")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    return done.returncode, report


@pytest.mark.slow
def test_every_rank_saves_its_own_checkpoint(runs: dict[str, Path]) -> None:
    steps = sorted(int(p.name.split("_")[1]) for p in runs["ref"].glob("step_*"))
    assert steps == list(range(EVERY, STEPS + 1, EVERY))
    assert sorted(p.name for p in (runs["ref"] / f"step_{STEPS}").iterdir()) == [
        "rank_0.pt", "rank_1.pt", "rank_2.pt",
    ]  # fmt: skip
    assert not (runs["ref"] / ".rendezvous").exists()


@pytest.mark.slow
def test_healthy_ddp_replicas_agree_bitwise(runs: dict[str, Path]) -> None:
    code, report = _report("replicas", runs["ref"])
    assert code == 0 and report["verdict"] == "identical", report["notes"]


@pytest.mark.slow
def test_a_fault_after_the_all_reduce_is_named(runs: dict[str, Path]) -> None:
    code, report = _report("replicas", runs["after"])
    assert code == 1 and report["faulty_rank"] == 1
    code, report = _report("drift", runs["after"], "--ref", runs["ref"])
    assert code == 1 and report["faulty_rank"] == 1, report["notes"]
    # The replicas' own comparison, folded into the drift report, agrees and says when.
    replicas = report["replicas"]
    assert replicas["verdict"] == "replica_divergence" and replicas["divergent_rank"] == 1
    assert replicas["first_divergence_step"] == FIRST_FAULTY


@pytest.mark.slow
def test_a_fault_before_the_all_reduce_names_no_rank(runs: dict[str, Path]) -> None:
    code, report = _report("replicas", runs["before"])
    assert code == 0 and report["verdict"] == "identical"
    code, report = _report("drift", runs["before"], "--ref", runs["ref"])
    assert report["faulty_rank"] is None, report["notes"]
    assert code == 1 and report["flagged"], report["notes"]
    assert report["notes"][0].startswith("all 3 ranks drift alike")
    assert report["replicas"]["verdict"] == "identical"  # the replicas agree bit for bit

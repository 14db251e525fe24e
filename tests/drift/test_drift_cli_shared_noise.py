"""A noise reference that shares the run's arithmetic, end to end through the CLI: the
corpus's BatchNorm CNN (bench/trainings), trained on the CPU with two threads. Its two-thread
round-off buries a 1e-3 fault on a convolution's output channel, so a reference trained with
one thread and the envelope of a second run cannot show it; but the noise reference is the
same two-thread configuration, so the faulty run stands exactly where the noise run stands
until the fault starts, and departs from it at the first checkpoint after (lever
``noise_exact_departure``, docs/drift-statistics.md). A healthy rerun of another
configuration is apart from the noise run from its first checkpoint and is not flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift.corpus_runs import FIRST_FAULTY, drift_json, train_runs
from trainings.corpus import ONSET
from trainings.train import EVERY

ARCH = "cnn"
LABELS = {
    "ref": "reference",  # one thread
    "noise": "noise reference",  # two threads
    "fault": f"compute:1.0:eps=0.001@{ONSET} nd=t2a2o0",  # two threads, then a fault
    "healthy": "t2a2o0N",  # two threads without oneDNN: other kernels
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return train_runs(ARCH, LABELS, tmp_path_factory.mktemp("shared_noise"))


@pytest.mark.slow
def test_a_fault_under_shared_round_off_departs_from_the_noise_run(
    runs: dict[str, Path],
) -> None:
    code, report = drift_json(runs["fault"], runs["ref"], runs["noise"])
    assert code == 1 and report["verdict"] == "gradual_drift", report["notes"]
    assert report["onset_step"] == FIRST_FAULTY
    assert "noise_exact_departure" in report["trend"]["levers"]
    assert any(f"up to step {FIRST_FAULTY - EVERY}" in n for n in report["notes"]), report["notes"]


@pytest.mark.slow
def test_a_healthy_rerun_of_another_configuration_is_not_flagged(runs: dict[str, Path]) -> None:
    code, report = drift_json(runs["healthy"], runs["ref"], runs["noise"])
    assert code == 0 and report["verdict"] == "within_noise", report["notes"]
    assert all(p["l2"] > 0 for p in report["points"])  # it really differs from the reference

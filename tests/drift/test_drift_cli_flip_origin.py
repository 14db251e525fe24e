"""A flip whose element is no longer alone when the next checkpoint is written, end to end
through the CLI (``sudden._origin``, docs/drift-statistics.md). The corpus's SmolLM3
(bench/trainings) is trained on the CPU; its two-thread runs are bit for bit its one-thread
reference, so a run that departs from it departs from bit-identical. A bit flipped in Adam's
first moment of one attention weight moves that element over the following steps, and by the
next checkpoint round-off from it has spread over the tensor: the element holds a seventh of
the tensor's difference, short of the half a lone jump needs. It is still its row and its
column, though, which is where the departure started. A persistent fault of 1e-3 on one row
of the MLP's update, from the same step in the same configuration, lifts the whole row and
stays drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from drift.corpus_runs import FIRST_FAULTY, drift_json, train_runs
from trainings.corpus import ONSET
from trainings.models import ARCHS

ARCH = "smollm3"
ATTENTION = ARCHS[ARCH].sites["attention"]
MLP = ARCHS[ARCH].sites["mlp"]
LABELS = {
    "ref": "reference",
    "flip": f"flip-state:{ATTENTION}.weight:bit=26@{ONSET} nd=t2a2o0",
    "lane": f"lane:{MLP}.weight:eps=0.001@{ONSET} nd=t2a2o0",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return train_runs(ARCH, LABELS, tmp_path_factory.mktemp("flip_origin"))


@pytest.mark.slow
def test_a_flip_spread_by_round_off_is_a_jump_where_the_run_departs(
    runs: dict[str, Path],
) -> None:
    code, report = drift_json(runs["flip"], runs["ref"])
    assert code == 1 and report["verdict"] == "sudden_jump", report["notes"]
    assert report["onset_step"] == FIRST_FAULTY
    jump = report["trend"]["jump"]
    assert jump["tensor"] == f"{ATTENTION}.weight"
    assert jump["max_abs_before"] == 0  # bit-identical at the checkpoint before


@pytest.mark.slow
def test_a_row_fault_from_the_same_step_stays_drift(runs: dict[str, Path]) -> None:
    code, report = drift_json(runs["lane"], runs["ref"])
    assert code == 1 and report["verdict"] == "gradual_drift", report["notes"]
    assert "jump" not in report["trend"]

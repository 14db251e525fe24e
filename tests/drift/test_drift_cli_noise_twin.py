"""A bit flip in a run that carries round-off of its own, judged with a noise run of its own
configuration, end to end through the CLI (``noise_twin``, docs/drift-statistics.md). The
corpus's XGLM (bench/trainings: a bf16 decoder) is trained on the CPU with two threads; its
reference with one. The two-thread round-off buries a flip of bit 22 in an attention weight
(the element moves by less than the round-off already carried), so against the reference the
flip reads as drift at most. The noise run is the same two-thread configuration without the
flip, which the faulty run matches bit for bit until the flip: judged against it, the flipped
element is the whole difference, and the verdict is the jump it is. A persistent fault of
1e-3 on one row of the MLP's update, in the same configuration, stays drift (no element of a
matrix jumps there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from denpex.drift.cache import StepCache
from denpex.drift.compare import Kernel
from denpex.drift.session import DriftSession, Stability
from drift.corpus_runs import FIRST_FAULTY, drift_json, train_runs
from trainings.corpus import ONSET
from trainings.models import ARCHS

ARCH = "xglm"
ATTENTION = ARCHS[ARCH].sites["attention"]
MLP = ARCHS[ARCH].sites["mlp"]
LABELS = {
    "ref": "reference",  # one thread
    "twin": "t2a2o0",  # the healthy two-thread rerun: the faulty runs' own configuration
    "flip": f"flip:{ATTENTION}.weight:bit=22@{ONSET} nd=t2a2o0",
    "lane": f"lane:{MLP}.weight:eps=0.001@{ONSET} nd=t2a2o0",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return train_runs(ARCH, LABELS, tmp_path_factory.mktemp("noise_twin"))


@pytest.mark.slow
def test_a_buried_bit_flip_is_a_jump_against_a_noise_run_of_its_own_configuration(
    runs: dict[str, Path],
) -> None:
    _, alone = drift_json(runs["flip"], runs["ref"])
    assert alone["verdict"] != "sudden_jump", alone["notes"]  # buried against the reference
    code, report = drift_json(runs["flip"], runs["ref"], runs["twin"])
    assert code == 1 and report["verdict"] == "sudden_jump", report["notes"]
    assert report["onset_step"] == FIRST_FAULTY
    assert report["trend"]["judged_against"] == "noise_reference"
    assert report["trend"]["jump"]["tensor"] == f"{ATTENTION}.weight"
    assert "share their arithmetic" in report["notes"][0]


@pytest.mark.slow
def test_watch_gives_the_same_verdict(runs: dict[str, Path], tmp_path: Path) -> None:
    # The incremental session behind `denpex watch` and the language server's drift worker.
    session = DriftSession(
        str(runs["flip"]), ref=str(runs["ref"]), noise_ref=str(runs["twin"]),
        cache=StepCache(tmp_path), kernel=Kernel("cpu"), stability=Stability(0.0),
    )  # fmt: skip
    report = None
    for _ in range(3):  # the first look sees the files, a later one finds them settled
        report = session.update().report or report
    assert report is not None
    assert report.verdict == "sudden_jump", report.to_json()["notes"]
    assert report.to_json()["trend"]["judged_against"] == "noise_reference"


@pytest.mark.slow
def test_a_persistent_fault_in_the_same_configuration_stays_drift(runs: dict[str, Path]) -> None:
    code, report = drift_json(runs["lane"], runs["ref"], runs["twin"])
    assert code == 1 and report["verdict"] == "gradual_drift", report["notes"]
    assert "noise_exact_departure" in report["trend"]["levers"]
    assert "judged_against" not in report["trend"]

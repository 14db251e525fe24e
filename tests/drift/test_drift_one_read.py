"""A per-rank run is read once: every tensor byte of every rank's checkpoint (and of the
reference) leaves the disk once per comparison of the run, though each rank is compared with
its reference and with the other ranks. Counted at the readers' one read call, on real torch
checkpoints written here, through the real engine (the reads are tallied, not replaced)."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from denpex.checkpoints import reader as reader_module
from denpex.checkpoints.layouts import open_checkpoint
from denpex.drift.api import drift_report, replicas_report
from denpex.drift.compare import BLOCK_ELEMS

RANKS, STEPS = 4, (10, 20)
FAULTY = 2  # from step 20 its weights part from the other replicas'


def _weights(step: int, drift: float) -> dict[str, torch.Tensor]:
    rng = np.random.default_rng(step)
    # Rows of several blocks each, so every tensor is read in more than one piece.
    big = rng.standard_normal((3 * BLOCK_ELEMS // 256, 256)).astype(np.float32)
    bias = rng.standard_normal(256).astype(np.float32)
    return {
        "layer.weight": torch.from_numpy(big + np.float32(drift)),
        "layer.bias": torch.from_numpy(bias),
    }


def _run(root: Path, drift: float, fault: bool) -> Path:
    for step in STEPS:
        folder = root / f"step_{step}"
        folder.mkdir(parents=True)
        for rank in range(RANKS):
            sd = _weights(step, drift)
            if fault and rank == FAULTY and step >= 20:
                sd["layer.weight"][5] *= 1.01
            torch.save(sd, folder / f"rank_{rank}.pt")
    return root


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Bytes read from each file through the readers' one read call."""
    counted: Counter[str] = Counter()
    lock = threading.Lock()
    fill = reader_module.Preader._fill

    def tally(self: reader_module.Preader, name: str, buf: np.ndarray, offset: int) -> None:
        fill(self, name, buf, offset)
        with lock:
            counted[str(Path(self.path).resolve())] += buf.nbytes

    monkeypatch.setattr(reader_module.Preader, "_fill", tally)
    return counted


def _tensor_bytes(paths: list[Path]) -> Counter[str]:
    out: Counter[str] = Counter()
    for path in paths:
        reader = open_checkpoint(path, None)
        try:
            out[str(path.resolve())] = sum(m.nbytes for m in reader.tensors.values())
        finally:
            reader.close()
    return out


@pytest.mark.parametrize("reference", ["per-rank", "one file per step"])
def test_each_rank_checkpoint_is_read_once(
    tmp_path: Path, reads: Counter[str], reference: str
) -> None:
    run = _run(tmp_path / "run", drift=1e-3, fault=True)
    ref = _run(tmp_path / "ref", drift=0.0, fault=False)
    if reference == "one file per step":  # every rank compared with one shared file
        for step in STEPS:
            for rank in range(1, RANKS):
                (ref / f"step_{step}" / f"rank_{rank}.pt").unlink()
            (ref / f"step_{step}" / "rank_0.pt").rename(ref / f"step_{step}" / "model.pt")
    report = drift_report(str(run), str(ref), device="cpu")
    # Both comparisons were made: every rank against its reference, the ranks with each other.
    each = next(n for n in report.assessment.notes if n.startswith("per rank: "))
    assert all(f"{rank} " in each for rank in range(RANKS)), each
    assert report.replicas is not None
    assert (report.replicas.rank, report.replicas.onset_step) == (FAULTY, 20)
    files = sorted(run.rglob("*.pt")) + sorted(ref.rglob("*.pt"))
    assert dict(reads) == dict(_tensor_bytes(files))


def test_replicas_read_each_rank_once_even_the_odd_one(tmp_path: Path, reads: Counter[str]) -> None:
    run = _run(tmp_path / "run", drift=0.0, fault=True)
    report = replicas_report(str(run), device="cpu")
    assert (report.faulty_rank, report.onset_step) == (FAULTY, 20)
    assert dict(reads) == dict(_tensor_bytes(sorted(run.rglob("*.pt"))))

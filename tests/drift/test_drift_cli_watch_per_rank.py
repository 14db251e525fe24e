"""`denpex watch RUN --ref REF` on a per-rank layout (``step_N/rank_k.pt``): each rank against
the reference's same rank (or its one checkpoint), as `denpex drift` does, with the run's
replicas compared with each other. Real data-parallel training, real torch files written
while the real CLI watches, the departing rank named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from denpex.demo.tinyrun import FaultSpec, simulate_replicas

STEPS, EVERY, POLL = 80, 10, 0.3
FAULT = FaultSpec("replica_update", 35, target="blocks.0.attn.v.weight", index=4, eps=1e-3, rank=2)


def _training(fault: FaultSpec | None, noise_seed: int) -> list[tuple[int, list[dict]]]:
    return list(
        simulate_replicas(
            steps=STEPS, save_every=EVERY, fault=fault, nondeterminism=0.1, noise_seed=noise_seed
        )
    )


def _save(root: Path, step: int, states: list[dict], one_file: bool = False) -> None:
    folder = root / f"step_{step}"
    folder.mkdir(parents=True)
    if one_file:  # a reference saved once per step: rank 0's weights
        torch.save(states[0], folder / "model.pt")
        return
    for rank, sd in enumerate(states):
        torch.save(sd, folder / f"rank_{rank}.pt")


@pytest.mark.slow
@pytest.mark.parametrize("one_file", [False, True], ids=["per-rank-ref", "one-file-ref"])
def test_watch_names_the_departing_rank_as_checkpoints_land(tmp_path: Path, one_file: bool) -> None:
    ref, run = tmp_path / "ref", tmp_path / "run"
    for step, states in _training(None, noise_seed=1):
        _save(ref, step, states, one_file)
    faulty = _training(FAULT, noise_seed=2)
    run.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    args = ["watch", run, "--ref", ref, "--json", "--device", "cpu", "--poll", POLL]
    proc = subprocess.Popen(
        [sys.executable, "-m", "denpex", *map(str, args), "--exit-after", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        time.sleep(2)  # the observer is up well before this
        for step, states in faulty:  # the run's checkpoints land while it watches
            _save(run, step, states)
            time.sleep(0.5)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    events = [json.loads(line) for line in out.splitlines()]
    points = [e["point"]["step"] for e in events if e["event"] == "point"]
    assert points == list(range(EVERY, STEPS + 1, EVERY)), out + err
    findings = [e for e in events if e["event"] == "finding"]
    assert findings, out + err
    last = findings[-1]
    assert last["verdict"] == "gradual_drift" and last["onset_step"] == 40, out + err
    assert last["faulty_rank"] == 2
    assert "several weight files" not in err  # each rank's file is read on its own
    assert proc.returncode == 1

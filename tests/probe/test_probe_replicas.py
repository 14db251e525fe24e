"""The probe inside real DDP training (gloo, CPU processes): a faulty local update is named.

Each rank trains the same tiny model with DistributedDataParallel on its own data shard;
from step FAULT_STEP one rank applies its optimizer update with one row off by a relative
1e-3 (the all-reduced gradient stays identical on every rank: only the local update is
wrong, the fault replica comparison exists for). The probe's replica check must name that
rank, and the tensor, at the first probe at or after FAULT_STEP and not before.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from denpex.drift import fingerprints  # noqa: E402
from denpex.fingerprints.records import file_name  # noqa: E402

STEPS = 24
EVERY = 5
FAULT_STEP = 12  # first probe that must see it: step 15
FAULTY_TENSOR = "2.weight"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(
    rank: int, world: int, port: int, out: str, faulty: int, raise_on_mismatch: bool
) -> None:
    from torch.nn.parallel import DistributedDataParallel

    from denpex.probe import DriftProbe, ReplicaMismatchError

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    handler = logging.FileHandler(Path(out) / f"log{rank}.txt")
    logging.getLogger("denpex.probe").addHandler(handler)
    torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts them)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    ddp = DistributedDataParallel(model)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-2)
    data = torch.Generator().manual_seed(100 + rank)  # each rank its own shard
    probe = DriftProbe(
        ddp, out, every=EVERY, group=dist.group.WORLD, raise_on_mismatch=raise_on_mismatch
    )
    try:
        for step in range(1, STEPS + 1):
            x = torch.randn(8, 16, generator=data)
            loss = (ddp(x) - x[:, :4]).square().mean()
            opt.zero_grad()
            loss.backward()
            w = model[2].weight
            before = w.detach()[1].clone()
            opt.step()
            if rank == faulty and step >= FAULT_STEP:
                with torch.no_grad():  # this rank's local update of row 1 is off by 1e-3
                    w[1] += 1e-3 * (w[1] - before)
            probe.step(step)
    except ReplicaMismatchError as exc:  # raised on every rank at the same probe
        (Path(out) / f"raised{rank}.txt").write_text(str(exc))
    # Every rank gets here, so the documented end: DDP's own all-reduce in the steps after
    # the last probe otherwise aborts a rank at exit now and then (test_probe_teardown.py).
    probe.finish()
    dist.destroy_process_group()


def _run(
    tmp_path: Path, world: int, faulty: int, raise_on_mismatch: bool = False
) -> list[list[dict]]:
    mp.spawn(
        _worker, args=(world, _free_port(), str(tmp_path), faulty, raise_on_mismatch), nprocs=world
    )
    return [
        [json.loads(line) for line in (tmp_path / file_name(r)).read_text().splitlines()]
        for r in range(world)
    ]


def _check_named(records: list[list[dict]], faulty: int, world: int) -> None:
    for per_rank in records:
        assert [r["step"] for r in per_rank] == list(range(EVERY, STEPS + 1, EVERY))[
            : len(per_rank)
        ]
        for rec in per_rank:
            assert rec["rank"] in range(world) and rec["world_size"] == world
            rep = rec["replica"]
            if rec["step"] < FAULT_STEP:
                assert rep["agree"], rec["step"]
            else:  # from the first probe after the fault on, on every rank
                assert rep["odd_ranks"] == [faulty], (rec["step"], rep)
                assert rep["tensors"] == {FAULTY_TENSOR: [faulty]}


# Each case spawns real processes (a torch import each): ~15 s apiece on a busy 2-core box.
pytestmark = pytest.mark.slow


def test_two_ranks_tie_rule_names_the_rank_whose_update_went_wrong(tmp_path: Path) -> None:
    # Rank 0 is the faulty one: a "lowest rank is the reference" rule would name rank 1.
    records = _run(tmp_path, world=2, faulty=0)
    _check_named(records, 0, 2)
    assert records[1][-1]["replica"]["rule"] == "tie-moved-farthest"
    log = (tmp_path / "log0.txt").read_text()
    assert "rank 0 differs" in log and FAULTY_TENSOR in log and "step 15" in log


def test_two_ranks_raise_on_mismatch_stops_at_the_first_probe_after_the_fault(
    tmp_path: Path,
) -> None:
    records = _run(tmp_path, world=2, faulty=1, raise_on_mismatch=True)
    _check_named(records, 1, 2)
    for r in range(2):
        assert records[r][-1]["step"] == 15  # the record is written, then it raises
        assert "rank 1 differs" in (tmp_path / f"raised{r}.txt").read_text()


def test_three_ranks_majority_vote_and_replica_report(tmp_path: Path) -> None:
    records = _run(tmp_path, world=3, faulty=2)
    _check_named(records, 2, 3)
    assert records[1][-1]["replica"]["rule"] == "majority"
    # `denpex replicas` over the fingerprint directory finds the same rank and tensor.
    steps = fingerprints.replicas(tmp_path)
    assert [rs.step for rs in steps] == list(range(EVERY, STEPS + 1, EVERY))
    for rs in steps:
        moved = {r: d.diff_sq for r, d in rs.ranks.items()}
        if rs.step < FAULT_STEP:
            assert moved == {0: 0.0, 1: 0.0, 2: 0.0}
        else:
            assert moved[0] == moved[1] == 0.0 and moved[2] > 0
            assert rs.ranks[2].top_tensors(1)[0].name == FAULTY_TENSOR
    done = subprocess.run(
        [sys.executable, "-m", "denpex", "replicas", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "replica_divergence" and report["faulty_rank"] == 2
    assert report["onset_step"] == 15

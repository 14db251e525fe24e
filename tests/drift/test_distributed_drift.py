"""`torchrun --nproc-per-node 2 -m denpex drift` (gloo, CPU) against the single-process run.

Both are real subprocesses on checkpoints written here by real (tiny) training: torch .pt
for the run, safetensors for the reference. The distributed run splits the tensors between
its two ranks and sums their figures with all_reduce; the report must carry the same numbers.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from safetensors.torch import save_file  # noqa: E402

from denpex.demo.tinyrun import FaultSpec, simulate_run  # noqa: E402

pytestmark = pytest.mark.slow  # two process launches with a torch import each


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _denpex(*args: str, torchrun: bool = False) -> subprocess.CompletedProcess[str]:
    launcher = [sys.executable]
    if torchrun:
        launcher += [
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-addr",
            "127.0.0.1",
            "--master-port",
            str(_free_port()),
        ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [*launcher, "-m", "denpex", *args], capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ckpt")
    (root / "run").mkdir()
    (root / "ref").mkdir()
    for step, state in simulate_run(
        steps=60, save_every=20, fault=FaultSpec("compute", step=20, eps=1e-3)
    ):
        torch.save(state, root / "run" / f"step_{step}.pt")
    for step, state in simulate_run(steps=60, save_every=20):
        save_file(
            {k: v.contiguous() for k, v in state.items()}, root / "ref" / f"ckpt_{step}.safetensors"
        )
    return root


def test_two_gloo_ranks_report_the_same_numbers_as_one_process(checkpoints: Path) -> None:
    args = (
        "drift",
        str(checkpoints / "run"),
        "--ref",
        str(checkpoints / "ref"),
        "--json",
        "--device",
        "cpu",
    )
    single = _denpex(*args)
    assert single.returncode in (0, 1), single.stderr
    multi = _denpex(*args, torchrun=True)
    one, two = json.loads(single.stdout), json.loads(multi.stdout)  # rank 0 alone printed
    assert multi.returncode == 0 or one["flagged"], multi.stderr[-2000:]
    assert [p["step"] for p in two["points"]] == [p["step"] for p in one["points"]] == [20, 40, 60]
    assert any(p["l2"] > 0 for p in one["points"])
    for p, q in zip(one["points"], two["points"], strict=True):
        for key in ("l2", "rel_l2", "max_abs"):
            assert q[key] == pytest.approx(p[key], rel=1e-12, abs=0.0), (p["step"], key)
        assert q["mismatched_elements"] == p["mismatched_elements"]
        assert [t["name"] for t in q["top_tensors"]] == [t["name"] for t in p["top_tensors"]]
    for key in ("verdict", "flagged", "onset_step", "warnings"):
        assert two[key] == one[key], key

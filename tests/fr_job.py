"""A tiny gloo job run under ``torchrun --nproc-per-node 4`` that hangs one way or another and
leaves real Flight Recorder dumps (see tests/diagnosis/test_flight_recorder.py).

Gloo has no watchdog that dumps on timeout (TORCH_NCCL_DUMP_ON_TIMEOUT only acts in
ProcessGroupNCCL), so, as docs/flight-recorder.md tells gloo users, each rank writes its own
dump with ``torch._C._distributed_c10d._dump_fr_trace()`` when a collective raises, and when
torchrun's SIGTERM arrives. Scenario (argv[1]):
  skip      rank 3 never enters the second all_reduce (stuck elsewhere, dumps on SIGTERM)
  mismatch  rank 3 calls all_gather where ranks 0-2 call all_reduce
  subgroup  groups {0,1} and {2,3}; rank 3 never enters its group's all_reduce, rank 2
            waits in it, ranks 0-1 go on to a world all_reduce and wait there
  died      rank 3 raises an exception before the second all_reduce and leaves no dump

``run_job`` (imported by the tests) runs one scenario and returns the job's folder.
"""

from __future__ import annotations

import datetime
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _dump_fr_trace, _dump_fr_trace_json

_dumped = False
PREFIX = "fr_rank_"


def run_job(folder: Path, scenario: str, *, json_dumps: bool = False) -> Path:
    """A real 4-rank gloo job on the CPU; its log (train.log) and dumps land in ``folder``."""
    folder.mkdir()
    env = dict(os.environ)
    env.update(
        TORCH_FR_BUFFER_SIZE="100",
        TORCH_FR_DUMP_TEMP_FILE=str(folder / PREFIX),
        FR_JOB_JSON="1" if json_dumps else "0",
        OMP_NUM_THREADS="1",
    )
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    with open(folder / "train.log", "wb") as log:
        proc = subprocess.run(
            [*torchrun, "--nproc-per-node", "4", __file__, scenario],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=180,
        )
    assert proc.returncode != 0, "the job was meant to fail"
    expected = 3 if scenario == "died" else 4
    assert len(list(folder.glob(f"{PREFIX}*"))) == expected, (folder / "train.log").read_text()
    return folder


def dump() -> None:
    global _dumped
    if _dumped:
        return
    _dumped = True
    rank = dist.get_rank()
    path = f"{os.environ['TORCH_FR_DUMP_TEMP_FILE']}{rank}"
    # One job writes the JSON variant, to read both formats from real dumps.
    data = _dump_fr_trace_json() if os.environ.get("FR_JOB_JSON") == "1" else _dump_fr_trace()
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)  # torch writes through a temporary file too


def on_sigterm(signum: int, frame: object) -> None:
    dump()
    sys.exit(1)


def main() -> None:
    scenario = sys.argv[1]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
    signal.signal(signal.SIGTERM, on_sigterm)
    rank = dist.get_rank()
    x = torch.ones(4)
    dist.all_reduce(x)  # seq 1 on the world group: everyone completes it
    try:
        if scenario == "skip":
            if rank == 3:
                time.sleep(30)  # stuck in data loading, say; torchrun's SIGTERM ends it
            else:
                dist.all_reduce(x)
        elif scenario == "mismatch":
            if rank == 3:
                dist.all_gather([torch.empty(4) for _ in range(4)], x)
            else:
                dist.all_reduce(x)
        elif scenario == "subgroup":
            a = dist.new_group([0, 1])
            b = dist.new_group([2, 3])
            if rank in (0, 1):
                dist.all_reduce(x, group=a)
                dist.all_reduce(x)
            elif rank == 2:
                dist.all_reduce(x, group=b)
            else:
                time.sleep(30)
        elif scenario == "died":
            if rank == 3:
                batch = [torch.ones(4)] * 3
                print(batch[7])  # an IndexError: the rank dies without a dump
            dist.all_reduce(x)
    except RuntimeError:
        dump()
        raise
    dump()


if __name__ == "__main__":
    main()

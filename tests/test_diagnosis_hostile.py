"""Hostile logs and hostile surroundings, through the real `denpex` command (issue 13).

Each test runs the CLI as a user would, in a subprocess, on input crafted to break it:
values that run code when pasted into a shell, numbers too long for Python's int(), lines
built to make a backtracking regex take quadratic time, timestamps that wrap at the end of
the year, and closed or full output streams.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HUGE = "9" * 5000  # past Python's 4,300-digit int() limit


def denpex(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "denpex", *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        cwd=cwd,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash as the user's terminal would, with the CLI on its PATH."""
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60
    )


# ---- numbers too long for int() (item 15) -------------------------------------------------

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
IMA = "RuntimeError: CUDA error: an illegal memory access was encountered"
NUMBER_FIELDS = {
    "rank prefix": [f"[rank{HUGE}]:{IMA}"],
    "local rank prefix": [f"[default{HUGE}]:{IMA}"],
    "mpirun prefix": [f"[1,{HUGE}]<stderr>:{IMA}"],
    "rank in message": [f"[Rank {HUGE}] {IMA}"],
    "gpu index": [
        f"{OOM} GPU {HUGE} has a total capacity of 79.15 GiB",
        f"{IMA} on cuda:{HUGE}",
    ],
    "nccl pid and device": [f"node-a:{HUGE}:1 [{HUGE}] NCCL WARN Cuda failure 'out of memory'"],
    "world size": [f"world_size={HUGE}", f"[rank0]:{IMA}"],
    "nccl init": [
        f"node-a:1:2 [0] NCCL INFO comm 0x1 rank {HUGE} nranks {HUGE} cudaDev {HUGE} "
        f"nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE",
        "node-a:1:2 [0] NCCL WARN Cuda failure 'out of memory'",
    ],
    "elastic table": [
        "Root Cause (first observed failure):",
        "[0]:",
        "  host      : node-a",
        f"  rank      : {HUGE} (local_rank: {HUGE})",
        f"  exitcode  : 1 (pid: {HUGE})",
        f"  exitcode  : -9 (pid: {HUGE})",
    ],
    "collective progress": [
        f"[rank3]:[Rank 3] Timeout at NCCL work: {HUGE}, last enqueued NCCL work: {HUGE}, "
        f"last completed NCCL work: -{HUGE}.",
    ],
    "captured pid": [
        f"NVRM: Xid (PCI:0000:3b:00): 79, pid={HUGE}, GPU has fallen off the bus.",
        f"Out of memory: Killed process {HUGE} (python)",
    ],
    "captured rank list": [
        f"[Rank 0] ranks [{HUGE}, 2] are the lagging ranks that caused this timeout",
        f"replica mismatch: rank {HUGE} differs from the other data-parallel replicas",
    ],
    "collective sequence": [
        f"[rank1]:[Rank 1] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={HUGE}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)",
    ],
    "drift step": [f"denpex drift: sudden_jump onset at step {HUGE}"],
}


@pytest.mark.parametrize("kind", sorted(NUMBER_FIELDS))
def test_numbers_too_long_for_int_are_not_numbers(kind: str, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("\n".join(NUMBER_FIELDS[kind]) + "\n")
    out = denpex("diagnose", "--json", str(log))
    assert out.stderr == "" and out.returncode in (0, 1), out.stderr[-2000:]
    json.loads(out.stdout)
    if out.returncode == 1:
        assert HUGE not in json.dumps(json.loads(out.stdout)["findings"][0]["initiating_rank"])


# ---- the CLI's own failures (item 20) -----------------------------------------------------


def _one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_closed_stdin_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = shell(f"{sys.executable} -m denpex diagnose - <&-", tmp_path)
    assert out.returncode == 2
    assert _one_line(out.stderr) == "denpex: error: -: standard input is closed"


@pytest.mark.parametrize("command", ["catalog", "diagnose {log}"])
def test_closed_stdout_is_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text(f"[rank0]:{IMA}\n")
    out = shell(f"{sys.executable} -m denpex {command.format(log=log)} >&-", tmp_path)
    assert out.returncode == 2
    assert _one_line(out.stderr) == "denpex: error: standard output is closed"


@pytest.mark.parametrize("command", ["catalog", "catalog cuda-oom", "diagnose --json {log}"])
def test_a_full_disk_is_one_line_and_exit_2(command: str, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text(f"[rank0]:{IMA}\n")
    out = shell(f"{sys.executable} -m denpex {command.format(log=log)} > /dev/full", tmp_path)
    assert out.returncode == 2
    assert _one_line(out.stderr) == "denpex: error: cannot write: No space left on device"


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # `true` exits at once: the report is written to a pipe nobody reads any more.
    log = tmp_path / "a.log"
    log.write_text(f"[rank0]:{IMA}\n")
    out = shell(
        f"{sys.executable} -m denpex diagnose {log} | true; echo ${{PIPESTATUS[0]}}", tmp_path
    )
    assert out.stderr == ""
    assert out.stdout.strip() == "0"


_FAULT = """
import sys
from denpex import cli
import denpex.commands.catalog as command

def broken(args):
    raise RuntimeError("boom")

command.run = broken
sys.exit(cli.main(sys.argv[1:]))
"""


def test_an_unexpected_error_is_one_line_exit_2_and_debug_shows_the_traceback(
    tmp_path: Path,
) -> None:
    # The catch-all is what stands between a bug nobody found yet and exit 1 ("found")
    # with a traceback; a fault is planted in the real command to exercise it.
    script = tmp_path / "fault.py"
    script.write_text(_FAULT)
    run = [sys.executable, str(script)]
    out = subprocess.run([*run, "catalog"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert _one_line(out.stderr) == (
        "denpex: internal error: RuntimeError: boom (run with --debug for the traceback)"
    )
    debug = subprocess.run([*run, "--debug", "catalog"], capture_output=True, text=True)
    assert debug.returncode == 2 and "Traceback" in debug.stderr
    assert "RuntimeError: boom" in debug.stderr

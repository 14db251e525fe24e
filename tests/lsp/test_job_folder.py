"""`denpex.diagnose` on a job folder, through the real server: a real gloo job's log and
Flight Recorder dumps, read by the dump worker, give the CLI's verdict and land on the log's
lines; a folder of 10,000 files leaves the server answering meanwhile."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_harness import start, stop, validate
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from fr_job import PREFIX, run_job

STALL = "rank-stall-before-collective"


def diagnose(folder: Path | str) -> types.ExecuteCommandParams:
    uri = folder.as_uri() if isinstance(folder, Path) else folder
    return types.ExecuteCommandParams(command="denpex.diagnose", arguments=[{"folder": uri}])


async def test_job_folder_gives_the_cli_verdict_on_the_logs_lines(tmp_path: Path) -> None:
    job = run_job(tmp_path / "job", "skip")
    cli = subprocess.run(
        [sys.executable, "-m", "denpex", "diagnose", "--json", str(job)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 1, cli.stderr
    s = await start(tmp_path)
    try:
        result = await s.client.workspace_execute_command_async(diagnose(job))
        validate("diagnosis.schema.json", result)
        assert result == json.loads(cli.stdout)
        root = result["findings"][0]
        assert root["id"] == STALL
        assert (root["initiating_rank"], root["collateral_ranks"]) == (3, [0, 1, 2])
        initiating = [e for e in root["evidence"] if e["role"] == "initiating"]
        assert initiating[0]["source"] == str(job / f"{PREFIX}3")  # read from rank 3's dump

        # The log was never opened, yet its lines carry the finding; the dumps carry none.
        log = job / "train.log"
        diags = await s.diagnostics_for(log.as_uri(), lambda d: any(x.code == STALL for x in d))
        stall = [d for d in diags if d.code == STALL]
        assert all("caused by rank 3" in d.message for d in stall), [d.message for d in stall]
        on_log = {e["line"] for e in root["evidence"] if e["source"] == str(log)}
        # Copies of one report from several waiting ranks are one grouped diagnostic, whose
        # data lists every line it covers.
        assert on_log and {n for d in stall for n in d.data["lines"]} == on_log
        assert not [u for u in s.client.diagnostics if PREFIX in u]
    finally:
        await stop(s)


async def test_folder_of_10000_files_leaves_the_server_answering(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.mkdir()
    for i in range(10_000):
        (big / f"rank_{i}.log").write_text(f"step {i} loss 1.0\n")
    (big / "rank_42.log").write_text(
        "[rank42]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    s = await start(tmp_path)
    try:
        pending = asyncio.ensure_future(s.client.workspace_execute_command_async(diagnose(big)))
        await asyncio.sleep(0.5)
        assert not pending.done()
        # Worker process reading the folder: the server's own loop still answers at once.
        t0 = time.monotonic()
        await s.status()
        assert time.monotonic() - t0 < 2.0
        result = await asyncio.wait_for(pending, 280)
        assert result["findings"] and result["findings"][0]["initiating_rank"] == 42
    finally:
        await stop(s)


@pytest.mark.parametrize("folder", ["not a uri", "file:///no/such/folder", 7])
async def test_folder_that_is_not_one_is_invalid_params(tmp_path: Path, folder: object) -> None:
    s = await start(tmp_path)
    try:
        params = types.ExecuteCommandParams(
            command="denpex.diagnose", arguments=[{"folder": folder}]
        )
        with pytest.raises(JsonRpcInvalidParams, match="folder must be"):
            await s.client.workspace_execute_command_async(params)
    finally:
        await stop(s)


async def test_empty_folder_is_one_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    s = await start(tmp_path)
    try:
        with pytest.raises(JsonRpcException, match="holds no files"):
            await s.client.workspace_execute_command_async(diagnose(empty))
    finally:
        await stop(s)

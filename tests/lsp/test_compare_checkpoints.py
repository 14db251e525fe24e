"""``denpex/compareCheckpoints`` through the real server: one request, one comparison in
the drift worker, the report with the noise run's points; real safetensors files."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import Session, start, stop, validate
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from processes import children

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # each request starts a worker process that imports torch

from safetensors.torch import save_file  # noqa: E402

from denpex.demo.tinyrun import simulate_run  # noqa: E402

METHOD = "denpex/compareCheckpoints"
TIMEOUT = 120.0  # the worker imports torch


async def _compare(s: Session, params: dict[str, Any]) -> dict[str, Any]:
    validate("lsp-compare-checkpoints-params.schema.json", params)
    send = s.client.protocol.send_request_async(METHOD, params)
    result: dict[str, Any] = await asyncio.wait_for(send, TIMEOUT)
    validate("lsp-compare-checkpoints-result.schema.json", result)
    report: dict[str, Any] = result["report"]
    return report


def _save_run(folder: Path, nondeterminism: float = 0.0, noise_seed: int = 1) -> list[int]:
    folder.mkdir(parents=True)
    steps = []
    for step, state in simulate_run(
        steps=30, save_every=10, nondeterminism=nondeterminism, noise_seed=noise_seed
    ):
        save_file(
            {k: v.contiguous() for k, v in state.items()}, str(folder / f"step_{step}.safetensors")
        )
        steps.append(step)
    return steps


async def test_two_single_files_give_one_point(tmp_path: Path) -> None:
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    save_file({"w": torch.ones(8, 8), "b": torch.zeros(8)}, str(a))
    save_file({"w": torch.ones(8, 8) * 1.5, "b": torch.zeros(8)}, str(b))
    s = await start(tmp_path, {"drift": {"device": "cpu"}})
    try:
        report = await _compare(s, {"run": str(a), "ref": str(b)})
        assert report["verdict"] == "single_point" and not report["flagged"]
        [point] = report["points"]
        assert point["file"] == str(a) and point["line"] == 1
        assert point["top_tensors"][0]["name"] == "w"
        assert "noise_points" not in report
    finally:
        await stop(s)


async def test_the_noise_run_is_compared_in_the_same_request(tmp_path: Path) -> None:
    steps = _save_run(tmp_path / "ref")
    _save_run(tmp_path / "run", nondeterminism=1e-3, noise_seed=2)
    _save_run(tmp_path / "noise", nondeterminism=1e-3, noise_seed=3)
    s = await start(tmp_path, {"drift": {"device": "cpu"}})
    try:
        params = {
            "run": str(tmp_path / "run"),
            "ref": str(tmp_path / "ref"),
            "noiseRef": str(tmp_path / "noise"),
        }
        report = await _compare(s, params)
        assert report["noise_reference"] == str(tmp_path / "noise")
        assert [p["step"] for p in report["points"]] == steps
        noise = report["noise_points"]
        assert [p["step"] for p in noise] == steps
        assert [Path(p["file"]).parent for p in noise] == [tmp_path / "noise"] * len(steps)
        assert any(p["l2"] > 0 for p in noise)  # the benign band has a width
    finally:
        await stop(s)


async def test_what_cannot_be_compared_is_refused_with_one_line(tmp_path: Path) -> None:
    s = await start(tmp_path, {"drift": {"device": "cpu"}})
    try:
        missing = {"run": str(tmp_path / "nope"), "ref": str(tmp_path)}
        with pytest.raises(JsonRpcInternalError, match="no such file or directory"):
            await asyncio.wait_for(s.client.protocol.send_request_async(METHOD, missing), TIMEOUT)
        with pytest.raises(JsonRpcInvalidParams, match="ref"):
            await s.request(METHOD, {"run": str(tmp_path)})
        with pytest.raises(JsonRpcInvalidParams, match="noiseRef must be a path string"):
            await s.request(METHOD, {"run": "a", "ref": "b", "noiseRef": 3})
    finally:
        await stop(s)


def _workers(pid: int) -> list[int]:
    """The server's drift workers (its children running ``denpex.lsp.drift_worker``)."""
    return children(pid, b"denpex.lsp.drift_worker")


def _stalled(tmp_path: Path) -> dict[str, str]:
    """A run whose checkpoint is never read to the end (a FIFO nobody writes: a stalled
    file system), and its reference."""
    ref, run = tmp_path / "ref", tmp_path / "run"
    ref.mkdir()
    run.mkdir()
    save_file({"w": torch.ones(4)}, str(ref / "step_10.safetensors"))
    os.mkfifo(run / "step_10.safetensors")
    return {"run": str(run), "ref": str(ref)}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker in /proc")
async def test_a_cancelled_comparison_kills_its_worker(tmp_path: Path) -> None:
    params = _stalled(tmp_path)
    s = await start(tmp_path, {"drift": {"device": "cpu"}})
    try:
        pending = s.client.protocol.send_request(METHOD, params, msg_id="compare-1")
        await s.wait_for(lambda: _workers(s.pid), TIMEOUT)
        await asyncio.sleep(1.0)  # the worker is past its start, stuck on the FIFO
        assert not pending.done()
        s.client.protocol.notify("$/cancelRequest", types.CancelParams(id="compare-1"))
        await s.wait_for(lambda: not _workers(s.pid), TIMEOUT)
        with pytest.raises(Exception, match="ancel"):
            await asyncio.wait_for(asyncio.wrap_future(pending), TIMEOUT)
    finally:
        await stop(s)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker in /proc")
async def test_a_server_shut_down_mid_comparison_leaves_no_worker(tmp_path: Path) -> None:
    # pygls exits through SystemExit: asyncio.run cancels the request's task, whose
    # ``finally`` kills the worker stuck on the stalled file.
    s = await start(tmp_path, {"drift": {"device": "cpu"}})
    pending = s.client.protocol.send_request(METHOD, _stalled(tmp_path))
    [pid] = await s.wait_for(lambda: _workers(s.pid), TIMEOUT)
    await asyncio.sleep(1.0)
    assert not pending.done()
    await stop(s)
    deadline = asyncio.get_running_loop().time() + 10
    while _alive(pid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    alive = _alive(pid)
    if alive:  # not left running after this test either way
        os.kill(pid, 9)
    assert not alive, "the stuck worker outlived the server"

"""``denpex/compareCheckpoints`` through the real server: one request, one comparison in
the drift worker, the report with the noise run's points; real safetensors files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import Session, start, stop, validate
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

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

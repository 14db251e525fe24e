"""Checkpoint directories watched by the server: real training, real torch files."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import Session, start, stop, validate
from lsprotocol import types

from processes import children, cpu_seconds

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # each check starts a worker process that imports torch

from denpex.demo.tinyrun import (  # noqa: E402
    FaultSpec,
    simulate_probed_run,
    simulate_replicas,
    simulate_run,
)
from denpex.fingerprints.records import file_name  # noqa: E402

STEPS, EVERY, FAULT_STEP = 120, 10, 50
TIMEOUT = 120.0  # each check starts a worker process that imports torch


def _save_run(folder: Path, fault: FaultSpec | None = None) -> list[tuple[int, dict[str, Any]]]:
    folder.mkdir(parents=True, exist_ok=True)
    return list(simulate_run(steps=STEPS, save_every=EVERY, seed=0, fault=fault))


def _write(folder: Path, step: int, state: dict[str, Any]) -> None:
    # Written under a temporary name and renamed, as training frameworks do.
    tmp = folder / f".step_{step}.pt.tmp"
    torch.save(state, tmp)
    tmp.rename(folder / f"step_{step}.pt")


def _updates(s: Session) -> list[dict[str, Any]]:
    return [u["report"] for u in s.custom["denpex/driftUpdate"]]


async def test_new_checkpoints_of_a_faulty_run_are_flagged(tmp_path: Path) -> None:
    ref, run = tmp_path / "ref", tmp_path / "run"
    for step, state in _save_run(ref):
        _write(ref, step, state)
    faulty = _save_run(run, FaultSpec("compute", step=FAULT_STEP, eps=1e-2))
    for step, state in faulty[:3]:  # the job has saved three checkpoints when watching starts
        _write(run, step, state)
    settings = {
        "checkpoints": {"watch": ["run"], "reference": str(ref)},
        "drift": {"device": "cpu"},
    }
    s = await start(tmp_path, settings)
    try:
        await s.wait_for(lambda: _updates(s), TIMEOUT)
        assert not _updates(s)[0]["flagged"]
        for step, state in faulty[3:]:  # the job keeps training
            _write(run, step, state)
            await asyncio.sleep(0.05)
        flagged = await s.wait_for(
            lambda: next(
                (r for r in _updates(s) if r["flagged"] and len(r["points"]) == len(faulty)), None
            ),
            TIMEOUT,
        )
        for update in s.custom["denpex/driftUpdate"]:
            validate("lsp-drift-update.schema.json", update)
        onset = flagged["onset_step"]
        assert FAULT_STEP - EVERY <= onset <= FAULT_STEP + EVERY
        # A diagnostic on the onset checkpoint's file, for the Problems panel.
        onset_uri = (run / f"step_{onset}.pt").resolve().as_uri()
        diags = await s.diagnostics_for(onset_uri, lambda d: bool(d))
        assert diags[0].severity == types.DiagnosticSeverity.Error and diags[0].source == "denpex"
        assert f"from step {onset}" in diags[0].message
        assert any(
            m.type == types.MessageType.Warning and str(run) in m.message for m in s.client.messages
        )
        # Progress was reported for the comparisons.
        kinds = {
            type(v).__name__ for reports in s.client.progress_reports.values() for v in reports
        }
        assert {"WorkDoneProgressBegin", "WorkDoneProgressEnd"} <= kinds
        status = await s.status()
        assert status["watching"] == [str(run)] and status["lastCheck"] is not None
        # The comparisons ran in worker processes: torch never entered the server.
        if sys.platform.startswith("linux"):
            assert "libtorch" not in Path(f"/proc/{s.pid}/maps").read_text()
    finally:
        await stop(s)


async def test_a_probe_directory_is_watched_like_checkpoints(tmp_path: Path) -> None:
    """Fingerprints appended by a live probe: flagged, with the diagnostic on the rank file."""
    ref, noise, faulty, run = (tmp_path / n for n in ("ref", "noise", "faulty", "run"))
    simulate_probed_run(ref, steps=STEPS, every=EVERY)
    simulate_probed_run(noise, steps=STEPS, every=EVERY, nondeterminism=0.01, noise_seed=5)
    fault = FaultSpec("compute", step=FAULT_STEP, eps=1e-2)
    simulate_probed_run(faulty, steps=STEPS, every=EVERY, fault=fault)
    records = (faulty / file_name(0)).read_bytes().splitlines(keepends=True)
    run.mkdir()
    live = run / file_name(0)
    live.write_bytes(b"".join(records[:3]))
    settings = {
        "checkpoints": {"watch": ["run"], "reference": str(ref), "noiseReference": str(noise)},
        "drift": {"device": "cpu"},
    }
    s = await start(tmp_path, settings)
    try:
        await s.wait_for(lambda: _updates(s), TIMEOUT)
        assert not _updates(s)[0]["flagged"] and _updates(s)[0]["device"] == "fingerprints"
        with live.open("ab") as fh:
            for record in records[3:]:
                fh.write(record)
                fh.flush()
                await asyncio.sleep(0.05)
        flagged = await s.wait_for(
            lambda: next(
                (r for r in _updates(s) if r["flagged"] and len(r["points"]) == len(records)),
                None,
            ),
            TIMEOUT,
        )
        validate("drift-report.schema.json", flagged)
        assert flagged["verdict"] == "gradual_drift"
        assert FAULT_STEP <= flagged["onset_step"] <= FAULT_STEP + EVERY
        diags = await s.diagnostics_for(live.resolve().as_uri(), lambda d: bool(d))
        assert diags[0].severity == types.DiagnosticSeverity.Error
        assert f"from step {flagged['onset_step']}" in diags[0].message
        # On the onset record's line: one record per probed step, in step order.
        assert diags[0].range.start.line == flagged["onset_step"] // EVERY - 1
    finally:
        await stop(s)


async def test_missing_deleted_and_unreadable_checkpoint_dirs(tmp_path: Path) -> None:
    ref, run = tmp_path / "ref", tmp_path / "run"
    states = _save_run(ref)
    run.mkdir()
    for step, state in states[:3]:
        _write(ref, step, state)
        _write(run, step, state)
    missing = tmp_path / "no-such-dir"
    settings = {
        "checkpoints": {"watch": [str(missing), str(run)], "reference": str(ref)},
        "drift": {"device": "cpu"},
    }
    s = await start(tmp_path, settings)
    try:
        await s.wait_for(lambda: any("does not exist" in m.message for m in s.client.messages))
        await s.wait_for(lambda: _updates(s), TIMEOUT)
        status = await s.status()
        assert status["missing"] == [str(missing)] and status["watching"] == [str(run)]
        # A checkpoint that cannot be loaded: named in the report, the rest still compared.
        _write(ref, 40, states[3][1])
        (run / "step_40.pt").write_bytes(b"\x80\x02 not a checkpoint at all")

        def warned() -> dict[str, Any] | None:
            return next(
                (r for r in _updates(s) if any("step_40" in w for w in r["warnings"])), None
            )

        report = await s.wait_for(warned, TIMEOUT)
        validate("drift-report.schema.json", report)
        assert [p["step"] for p in report["points"]] == [10, 20, 30]
        # The log line is another notification: it may land after the report.
        await s.wait_for(lambda: any("step_40" in m.message for m in s.client.log_messages))
        # The watched directory disappears.
        shutil.rmtree(run)
        await s.wait_for(
            lambda: any("was deleted" in m.message for m in s.client.messages), TIMEOUT
        )
        status = await s.status()
        assert (
            sorted(status["missing"]) == sorted([str(missing), str(run)])
            and status["watching"] == []
        )
    finally:
        await stop(s)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the worker in /proc")
async def test_a_crashing_worker_is_reported_and_the_next_check_runs(tmp_path: Path) -> None:
    ref, run = tmp_path / "ref", tmp_path / "run"
    states = _save_run(ref)
    run.mkdir()
    for step, state in states[:4]:
        _write(ref, step, state)
        _write(run, step, state)
    settings = {
        "checkpoints": {"watch": [str(run)], "reference": str(ref)},
        "drift": {"device": "cpu"},
    }
    s = await start(tmp_path, settings)
    try:
        # Kill the first worker as soon as it exists: a crash (SIGKILL), as the OOM killer does.
        def worker() -> int | None:
            workers = children(s.pid, b"denpex.lsp.drift_worker")
            return workers[0] if workers else None

        pid = await s.wait_for(worker, TIMEOUT)
        os.kill(pid, signal.SIGKILL)
        message = await s.wait_for(
            lambda: next((m for m in s.client.messages if "drift worker" in m.message), None),
            TIMEOUT,
        )
        assert "exited with code -9" in message.message
        assert (await s.status())["watching"] == [str(run)]
        # The server carries on: the next checkpoint is compared by a fresh worker.
        _write(ref, 50, states[4][1])
        _write(run, 50, states[4][1])
        report = await s.wait_for(lambda: next(iter(_updates(s)), None), TIMEOUT)
        assert report["verdict"] == "identical" and not report["flagged"]
    finally:
        await stop(s)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads CPU time from /proc")
async def test_a_watched_folder_goes_idle_after_its_check(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The workspace folder itself is watched, and it holds the server's cache (the harness
    puts XDG_CACHE_HOME there): neither the worker's reads nor its cache writes may start
    another check, and an idle folder costs the server under 2% of a core."""
    ref = tmp_path_factory.mktemp("ref")
    for step, state in _save_run(ref)[:3]:
        _write(ref, step, state)
        _write(tmp_path, step, state)
    settings = {
        "checkpoints": {"watch": [str(tmp_path)], "reference": str(ref)},
        "drift": {"device": "cpu"},
    }
    s = await start(tmp_path, settings)
    try:
        await s.wait_for(lambda: _updates(s), TIMEOUT)
        written = (tmp_path / "cache" / "denpex" / "drift-cache").glob("*.json")
        assert any(written)  # the worker wrote its cache
        await asyncio.sleep(3)  # past the settle time of any event the check caused
        before, start_s = cpu_seconds(s.pid), asyncio.get_running_loop().time()
        await asyncio.sleep(10)
        share = (cpu_seconds(s.pid) - before) / (asyncio.get_running_loop().time() - start_s)
        assert share < 0.02, f"{share:.1%} of a core while idle"
        assert len(_updates(s)) == 1, "a check started by the server's own file activity"
    finally:
        await stop(s)


async def test_a_folder_holding_a_huge_tree_is_refused_and_the_server_answers(
    tmp_path: Path,
) -> None:
    settings = {"checkpoints": {"watch": ["/"]}, "drift": {"device": "cpu"}}
    s = await start(tmp_path, settings)
    try:
        status = await s.status()  # answered while the tree is being measured
        assert status is not None
        message = await s.wait_for(
            lambda: next((m for m in s.client.messages if "not watched" in m.message), None),
            TIMEOUT,
        )
        assert "checkpoint directory /: more than" in message.message
        status = await s.status()
        assert status["watching"] == [] and status["missing"] == ["/"]
        await asyncio.sleep(2)
        assert not _updates(s)  # no worker ran on it
        if sys.platform.startswith("linux"):
            assert not children(s.pid)
    finally:
        await stop(s)


async def test_a_per_rank_run_names_its_departing_rank(tmp_path: Path) -> None:
    """``step_N/rank_k.pt`` watched against a per-rank reference: each rank against its
    counterpart, the replicas against each other, the departing rank named in the editor."""
    ref, run = tmp_path / "ref", tmp_path / "run"
    fault = FaultSpec(
        "replica_update", 35, target="blocks.0.attn.v.weight", index=4, eps=1e-3, rank=2
    )
    for root, spec, seed in ((ref, None, 1), (run, fault, 2)):
        for step, states in simulate_replicas(
            steps=80, save_every=EVERY, fault=spec, nondeterminism=0.1, noise_seed=seed
        ):
            (root / f"step_{step}").mkdir(parents=True)
            for rank, state in enumerate(states):
                torch.save(state, root / f"step_{step}" / f"rank_{rank}.pt")
    settings = {
        "checkpoints": {"watch": ["run"], "reference": str(ref)},
        "drift": {"device": "cpu"},
    }
    s = await start(tmp_path, settings)
    try:
        report = await s.wait_for(lambda: next(iter(_updates(s)), None), TIMEOUT)
        for update in s.custom["denpex/driftUpdate"]:
            validate("lsp-drift-update.schema.json", update)
        assert report["flagged"] and report["faulty_rank"] == 2, report["notes"]
        assert report["onset_step"] == 40 and report["replicas"]["divergent_rank"] == 2
        # The diagnostic sits on the departing rank's checkpoint at the onset.
        onset_uri = (run / "step_40" / "rank_2.pt").resolve().as_uri()
        diags = await s.diagnostics_for(onset_uri, lambda d: bool(d))
        assert "faulty rank 2" in diags[0].message
    finally:
        await stop(s)

"""DriftSession: the one incremental drift pipeline behind `denpex watch` and the language
server's drift worker (one stability rule, one cache, a typed report with places)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from denpex.drift import sources
from denpex.drift.cache import StepCache
from denpex.drift.compare import Kernel
from denpex.drift.session import DriftSession, Stability

SETTLE = 0.3


def _save(path: Path, seed: int, shift: float = 0.0) -> None:
    rng = np.random.default_rng(seed)
    w = {"a.weight": rng.standard_normal((32, 16)).astype(np.float32)}
    w["a.weight"][3] += np.float32(shift)
    save_file(w, str(path))


def _session(run: Path, ref: Path, cache: Path) -> DriftSession:
    return DriftSession(
        str(run),
        ref=str(ref),
        cache=StepCache(cache),
        kernel=Kernel("cpu"),
        stability=Stability(SETTLE),
    )


def test_a_checkpoint_is_compared_once_its_files_held_still(tmp_path: Path) -> None:
    ref, run = tmp_path / "ref", tmp_path / "run"
    ref.mkdir()
    run.mkdir()
    for step in (10, 20):
        _save(ref / f"step_{step}.safetensors", step)
        _save(run / f"step_{step}.safetensors", step, 1e-3)
    session = _session(run, ref, tmp_path / "cache")
    first = session.update()
    assert first.report is None  # just seen: not settled yet
    assert session.stability.due() is not None
    time.sleep(SETTLE)
    _save(run / "step_20.safetensors", 20, 2e-3)  # rewritten meanwhile: it waits again
    update = session.update()
    assert update.report is not None
    assert [p.step for p in update.new_points] == [10]
    time.sleep(SETTLE)
    update = session.update()
    assert update.report is not None and [p.step for p in update.new_points] == [20]
    report = update.report
    # Each point knows the file it was read from: no second discovery to place a diagnostic.
    assert report.place(20) is not None
    assert report.place(20).path == str(run / "step_20.safetensors")
    assert [p["step"] for p in report.to_json()["points"]] == [10, 20]
    assert session.update().report is None  # nothing new


def test_a_second_session_reads_nothing_the_cache_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref, run, cache = tmp_path / "ref", tmp_path / "run", tmp_path / "cache"
    ref.mkdir()
    run.mkdir()
    _save(ref / "step_10.safetensors", 10)
    _save(run / "step_10.safetensors", 10, 1e-3)
    calls: list[int] = []
    real = sources.compare_readers
    monkeypatch.setattr(
        sources, "compare_readers", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    reads = []
    for _ in range(2):  # the watcher's restart, or the language server's next check
        session = _session(run, ref, cache)
        session.update()
        time.sleep(SETTLE)
        assert session.update().report is not None
        reads.append(len(calls))
    assert reads[0] > 0 and reads[1] == reads[0]

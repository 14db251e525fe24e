"""The drift cache keeps one file per comparison and a bounded folder: a long-lived
``watch`` holds nothing in memory between steps and its cache does not grow without end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from denpex.drift import cache as step_cache
from denpex.drift.cache import StepCache
from denpex.drift.model import StepDiff, TensorDiff


def _step(step: int) -> StepDiff:
    t = TensorDiff(name="w", numel=4, diff_sq=float(step), ref_sq=1.0, max_abs=0.5, mismatched=1)
    return StepDiff(step=step, tensors=[t], run_path=f"run/{step}", ref_path=f"ref/{step}")


def test_each_comparison_is_its_own_file_read_back_exactly(tmp_path: Path) -> None:
    cache = StepCache(tmp_path)
    for step in (10, 20, 30):
        cache.put(f"key-{step}", _step(step))
    assert len(list((tmp_path / "drift-cache").glob("*.json"))) == 3
    again = StepCache(tmp_path)  # a restarted watch
    assert again.get_step("key-20") == _step(20)
    assert again.get_step("key-40") is None
    assert again.get_replicas("key-20") is None  # a StepDiff is not a ReplicaStep


def test_the_folder_keeps_the_entries_used_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_cache, "_MAX_FILES", 20)
    monkeypatch.setattr(step_cache, "_PRUNE_EVERY", 10)
    cache = StepCache(tmp_path)
    folder = tmp_path / "drift-cache"
    for step in range(20):
        cache.put(f"key-{step}", _step(step))
    for entry in folder.glob("*.json"):
        os.utime(entry, (1, 1))  # written long ago
    assert cache.get_step("key-0") == _step(0)  # ... but key-0 is used again now
    for step in range(20, 30):  # the 30th put prunes the folder to 20 entries
        cache.put(f"key-{step}", _step(step))
    assert len(list(folder.glob("*.json"))) == 20
    assert cache.get_step("key-0") == _step(0)
    assert all(cache.get_step(f"key-{step}") == _step(step) for step in range(20, 30))
    assert sum(cache.get_step(f"key-{step}") is None for step in range(1, 20)) == 10


def test_no_directory_means_no_cache(tmp_path: Path) -> None:
    cache = StepCache(None)
    cache.put("k", _step(1))
    assert cache.get_step("k") is None

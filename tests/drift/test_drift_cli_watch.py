"""`denpex watch`: a real watchdog observer following files that the test writes while it runs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from denpex.commands.watch import watch
from denpex.drift import api, sources

POLL = 0.3


def _weights(seed: int, shift: float = 0.0, row: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = {
        "a.weight": rng.standard_normal((32, 16)).astype(np.float32),
        "a.bias": np.zeros(16, np.float32),
    }
    w["a.weight"][row] += np.float32(shift)
    return w


def _bytes(weights: dict[str, np.ndarray], tmp: Path) -> bytes:
    save_file(weights, str(tmp))
    data = tmp.read_bytes()
    tmp.unlink()
    return data


class _Watching:
    """watch() in a thread, writing to a buffer; joined with a bounded wait."""

    def __init__(self, *args: str, **kwargs: object) -> None:
        self.out = io.StringIO()
        self.rc: int | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(list(args), kwargs), daemon=True)
        self.thread.start()

    def _run(self, dirs: list[str], kwargs: dict) -> None:
        self.rc = watch(dirs, out=self.out, poll=POLL, device="cpu", stop=self.stop, **kwargs)

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]

    def wait_for(self, pred, timeout: float = 20.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred(self.lines()):
                return self.lines()
            time.sleep(0.05)
        raise AssertionError(f"timed out; output so far: {self.out.getvalue()}")

    def join(self) -> int | None:
        self.stop.set()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()
        return self.rc


def _steps(lines: list[dict]) -> list[int]:
    return [e["point"]["step"] for e in lines if e["event"] == "point"]


def test_new_checkpoints_are_read_only_once_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref, run, cache = tmp_path / "ref", tmp_path / "run", tmp_path / "cache"
    ref.mkdir()
    run.mkdir()
    for step in (10, 20, 30):
        save_file(_weights(step), str(ref / f"step_{step}.safetensors"))
    w = _Watching(str(run), ref=str(ref), as_json=True, cache_dir=str(cache))
    save_file(_weights(10, 1e-3), str(run / "step_10.safetensors"))
    w.wait_for(lambda lines: _steps(lines) == [10])
    # A file being written: the first half now, the rest after several polls.
    data = _bytes(_weights(20, 2e-3), tmp_path / "x.safetensors")
    with open(run / "step_20.safetensors", "wb") as f:
        f.write(data[: len(data) // 2])
        f.flush()
        time.sleep(4 * POLL)
        assert _steps(w.lines()) == [10]
        f.write(data[len(data) // 2 :])
    # A framework's temporary name, then the rename.
    tmp = run / "step_30.safetensors.tmp"
    save_file(_weights(30, 3e-3), str(tmp))
    time.sleep(3 * POLL)
    assert _steps(w.lines()) == [10, 20]
    os.replace(tmp, run / "step_30.safetensors")
    lines = w.wait_for(lambda lines: len(_steps(lines)) == 3)
    assert _steps(lines) == [10, 20, 30]  # each step once, in order
    # The figures are those of the complete files.
    final = api.drift_report(str(run), str(ref), device="cpu").to_json()
    for got, want in zip((e["point"] for e in lines), final["points"], strict=True):
        assert got["l2"] == pytest.approx(want["l2"], rel=1e-12)
        assert got["top_tensors"][0]["name"] == "a.weight"
    assert w.join() == 0  # nothing flagged

    # A restart prints the known steps again from the cache, without reading a tensor.
    calls: list[int] = []
    real = sources.compare_readers
    monkeypatch.setattr(
        sources, "compare_readers", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    again = _Watching(str(run), ref=str(ref), as_json=True, cache_dir=str(cache))
    again.wait_for(lambda lines: len(_steps(lines)) == 3)
    again.join()
    assert _steps(again.lines()) == [10, 20, 30] and calls == []


def _replica_step(root: Path, step: int, odd_rank: int | None, tmp: Path) -> None:
    d = root / f"step_{step}"
    d.mkdir()
    for rank in range(3):
        shift = 1e-3 if rank == odd_rank else 0.0
        (d / f"rank_{rank}.safetensors").write_bytes(_bytes(_weights(step, shift, row=5), tmp))


def test_watch_cli_names_the_odd_replica_as_it_lands(tmp_path: Path) -> None:
    root = tmp_path / "ddp"
    root.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "denpex",
            "watch",
            str(root),
            "--json",
            "--poll",
            str(POLL),
            "--exit-after",
            "8",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        time.sleep(2)  # the observer is up well before this
        _replica_step(root, 10, None, tmp_path / "x.safetensors")
        time.sleep(1.5)
        _replica_step(root, 20, 1, tmp_path / "x.safetensors")
        out, err = proc.communicate(timeout=40)
    finally:
        proc.kill()
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["point", "point", "finding"], out + err
    assert events[0]["point"]["l2"] == 0 and events[1]["point"]["disagreeing_ranks"] == [1]
    finding = events[2]
    assert finding["verdict"] == "replica_divergence" and finding["faulty_rank"] == 1
    assert finding["onset_step"] == 20 and finding["finding"]["id"] == "dp-replica-divergence"
    assert proc.returncode == 1
    default = tmp_path / "xdg" / "denpex" / "drift-cache"  # the documented default folder
    assert any(default.glob("*.json"))

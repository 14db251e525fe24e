"""`denpex watch` sleeps when nothing changes, refuses what would make it spin, and survives
folders that vanish under it. Real subprocesses, CPU time read from /proc."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from denpex.commands.watch import watch
from processes import cpu_seconds

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads process CPU time from /proc"
)


def _replica_step(root: Path, step: int) -> None:
    weights = {"w": np.arange(64, dtype=np.float32).reshape(8, 8)}
    d = root / f"step_{step}"
    d.mkdir(parents=True)
    for rank in range(2):
        save_file(weights, str(d / f"rank_{rank}.safetensors"))


def _watch(*args: str, env_home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(env_home)}
    return subprocess.Popen(
        [sys.executable, "-m", "denpex", "watch", *args, "--json", "--device", "cpu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.parametrize("poll", ["0.5", "5"])
def test_watch_on_an_idle_folder_uses_under_five_percent_of_a_core(
    tmp_path: Path, poll: str
) -> None:
    run = tmp_path / "run"
    _replica_step(run, 10)
    proc = _watch(str(run), "--poll", poll, env_home=tmp_path / "cache")
    try:
        assert proc.stdout is not None
        assert '"event": "point"' in proc.stdout.readline()  # step 10 judged: now idle
        before, start = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(10)
        used = cpu_seconds(proc.pid) - before
        share = used / (time.monotonic() - start)
        assert proc.poll() is None
        # Idle, a scan per poll lists the run and reads each rank file's header (two here):
        # 0.6% of a core at --poll 0.5 on this VM, by the scheduler's clock. A loop that
        # spins uses a whole core; 5% keeps the test far below that on a slower host.
        assert share < 0.05, f"{share:.1%} of a core while idle (--poll {poll})"
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize(
    "option", [("--poll", "0"), ("--poll", "-1"), ("--poll", "nan"), ("--tolerance", "nan")]
)
def test_values_that_would_spin_or_compare_nothing_are_refused(
    tmp_path: Path, option: tuple[str, str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "denpex", "watch", str(tmp_path), *option, "--exit-after", "5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and option[0] in done.stderr
    assert "Traceback" not in done.stderr


def test_a_huge_tree_is_refused_before_anything_is_watched(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "denpex", "watch", "/", "--exit-after", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("denpex: error: /: more than") and "Traceback" not in done.stderr


def test_checkpoints_vanishing_while_listed_or_read_are_skipped(tmp_path: Path) -> None:
    """A job that saves and deletes checkpoints as fast as it can, under the watcher's feet:
    the watch goes on and still judges the checkpoint that stays."""
    run = tmp_path / "run"
    run.mkdir()
    stop = threading.Event()
    result: list[int | BaseException] = []

    def watching() -> None:
        try:
            result.append(
                watch(
                    [str(run)],
                    poll=0.1,
                    device="cpu",
                    stop=stop,
                    out=out,
                    cache_dir=str(cache),
                    as_json=True,
                )
            )
        except BaseException as exc:  # the test reports it
            result.append(exc)

    out, cache = _Lines(), tmp_path / "cache"
    thread = threading.Thread(target=watching, daemon=True)
    thread.start()
    deadline = time.monotonic() + 8
    step = 0
    while time.monotonic() < deadline and thread.is_alive():
        step += 1
        _replica_step(run, step)
        (run / f"saving_{step}").mkdir()  # a folder without a step: listed one level down
        shutil.rmtree(run / f"step_{step}")
        (run / f"saving_{step}").rmdir()
    _replica_step(run, 999_999)
    for _ in range(200):
        if '"step": 999999' in out.text or not thread.is_alive():
            break
        time.sleep(0.05)
    stop.set()
    thread.join(timeout=30)
    assert result == [0], result
    assert '"step": 999999' in out.text


class _Lines:
    """A text stream that a test can read while another thread writes to it."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    @property
    def text(self) -> str:
        with self._lock:
            return "".join(self._parts)

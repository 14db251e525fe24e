"""The drift cache over a long watch: Denpex's StepCache against the naive cache it replaced.

A ``watch`` on a long run puts one comparison per checkpoint into its cache and reads the
known ones back when restarted. This writes ``--steps`` comparisons of a ``--tensors``-tensor
model through both, side by side in one run:

- Denpex: ``StepCache`` (one file per comparison in ``drift-cache/``);
- naive: one dict of every step held in memory and the whole of it written as one JSON file
  at each put (Denpex's cache before 2026-12-06).

It prints the time of a put over the first and the last 10% of the steps (flat means the
last costs what the first did), the total, and how much the process's resident memory grew
over the run (what a long-lived watcher keeps). Each cache runs in its own subprocess.

    python bench/bench_step_cache.py [--steps 300] [--tensors 300]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from denpex.drift.cache import StepCache
from denpex.drift.model import StepDiff, TensorDiff


class NaiveCache:
    """Every step in one dict, the whole dict rewritten at each put."""

    def __init__(self, folder: Path) -> None:
        self.path, self.data = folder / "drift-cache.json", {}  # type: tuple[Path, dict[str, Any]]

    def put(self, key: str, value: StepDiff) -> None:
        self.data[key] = asdict(value)
        self.path.write_text(json.dumps({"version": 1, "steps": self.data}))


def _step(step: int, tensors: int) -> StepDiff:
    return StepDiff(
        step=step,
        tensors=[
            TensorDiff(f"model.layers.{i // 8}.p{i % 8}.weight", 4096, 1e-9 * i, 1.0, 1e-5, 7)
            for i in range(tensors)
        ],
    )


def _rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:"))


def _run(cache: Any, steps: int, tensors: int) -> tuple[list[float], int]:
    _step(0, tensors)  # warm: the first StepDiff's allocations are not the cache's
    base, times = _rss(), []
    for s in range(steps):
        value = _step(s, tensors)  # built outside the timing, then dropped
        t0 = time.perf_counter()
        cache.put(f"run/step_{s}:{s}|ref/step_{s}:{s}", value)
        times.append(time.perf_counter() - t0)
    return times, _rss() - base


def _one(name: str, steps: int, tensors: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cache = StepCache(Path(folder)) if name == "denpex" else NaiveCache(Path(folder))
        times, grew = _run(cache, steps, tensors)
    print(json.dumps({"times": times, "grew": grew}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)  # the naive cache is quadratic
    ap.add_argument("--tensors", type=int, default=300)
    ap.add_argument("--one", choices=("denpex", "naive"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return _one(args.one, args.steps, args.tensors)
    tenth = max(1, args.steps // 10)
    rows = []
    for name in ("denpex", "naive"):
        cmd = [sys.executable, __file__, "--one", name, f"--steps={args.steps}",
               f"--tensors={args.tensors}"]  # fmt: skip
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
        times, grew = out["times"], out["grew"]
        first, last = sum(times[:tenth]) / tenth, sum(times[-tenth:]) / tenth
        rows.append((last, sum(times), grew))
        print(
            f"{name:7} put first 10%: {first * 1e3:8.2f} ms   last 10%: {last * 1e3:8.2f} ms"
            f" (x{last / first:5.1f})   total {sum(times):7.1f} s"
            f"   memory grew {grew / 2**20:7.1f} MiB",
            flush=True,
        )
    (d_last, d_total, d_grew), (n_last, n_total, n_grew) = rows
    print(
        f"{args.steps} steps of {args.tensors} tensors: naive/denpex total time "
        f"{n_total / d_total:.1f}x, last put {n_last / d_last:.1f}x; memory grew "
        f"{n_grew / 2**20:.1f} MiB (naive) against {d_grew / 2**20:.1f} MiB (denpex)"
    )


if __name__ == "__main__":
    main()

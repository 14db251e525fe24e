"""How `denpex drift` scales with the number of steps: time and peak memory for N and 4N.

Writes two probe fingerprint directories (a run and its reference, one rank each) with
``--steps`` records of a small model (8 tensors of 256 elements, stored whole, plus sketched
ones), the run differing by a slowly growing round-off walk, then times the real CLI on
the first N/4 steps and on all of them. Linear means the ratios stay near 4.

    python bench/bench_drift_steps.py --steps 5000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SERVER = str(Path(__file__).resolve().parents[1] / "server")
sys.path.insert(0, SERVER)
from denpex.fingerprints.records import FORMAT, RecordWriter, encode_sketch  # noqa: E402

TENSORS, SIZE, SKETCHED, SKETCH = 8, 256, 4, 64


def _tensor(name: str, values: np.ndarray, exact: bool) -> dict:
    local = values if exact else values[:SKETCH]
    return {
        "name": name,
        "shape": [values.size // 16, 16],
        "dtype": "float32",
        "norm": float(np.linalg.norm(values)),
        "max": float(np.abs(values).max()),
        "hash": hashlib.blake2b(values.astype("<f4").tobytes(), digest_size=8).hexdigest(),
        "sk": encode_sketch(local),
        **({"exact": True} if exact else {}),
    }


def write(out: Path, steps: int, walk: float, seed: int) -> None:
    rng = np.random.default_rng(0)
    base = [rng.standard_normal(SIZE).astype(np.float32) for _ in range(TENSORS + SKETCHED)]
    noise = np.random.default_rng(seed)
    writer = RecordWriter(out, 0)
    drift = [np.zeros(SIZE, np.float32) for _ in base]
    for step in range(1, steps + 1):
        for d in drift:
            d += walk * noise.standard_normal(SIZE).astype(np.float32)
        values = [b + d for b, d in zip(base, drift, strict=True)]
        writer.append(
            {
                "step": step,
                "format": FORMAT,
                "rank": 0,
                "world_size": 1,
                "host": "bench",
                "local_gpu": None,
                "global": encode_sketch(np.concatenate([v[:SKETCH] for v in values])),
                "tensors": [
                    _tensor(f"layer{i}.weight", v, i < TENSORS) for i, v in enumerate(values)
                ],
            }
        )
    writer.close()


def measure(run: Path, ref: Path) -> tuple[float, float, str]:
    """Seconds and peak RSS (MB) of one `denpex drift` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "denpex", "drift", str(run), "--ref", str(ref), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or SERVER},
    )
    seconds = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the largest child so far: run the small case first.
    return seconds, max(peak, before) / 1024, json.loads(done.stdout)["verdict"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for steps in (args.steps // 4, args.steps):
            run, ref = Path(tmp, f"run{steps}"), Path(tmp, f"ref{steps}")
            write(run, steps, 1e-6, 1)
            write(ref, steps, 1e-6, 2)
            seconds, mb, verdict = measure(run, ref)
            rows.append((steps, seconds, mb))
            print(f"{steps:>7} steps: {seconds:7.2f} s  peak RSS {mb:7.1f} MB  ({verdict})")
        (n1, t1, m1), (n2, t2, m2) = rows
        print(f"x{n2 / n1:.0f} steps: time x{t2 / t1:.2f}, peak RSS x{m2 / m1:.2f}")


if __name__ == "__main__":
    main()

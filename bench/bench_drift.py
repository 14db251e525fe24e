"""Drift engine benchmark: Denpex against a naive comparison on large checkpoints.

Writes a run/reference pair of LLM-shaped fp32 checkpoints (embedding and LM head
32000x2048, layers of 2048x2048 attention and 2048x5504 / 5504x2048 MLP matrices; about
2.1 GB each by default) as safetensors and as torch .pt, and a per-rank pair (4 ranks,
``step_1/rank_k.safetensors``, each rank's file about 0.5 GB: the run's ranks healthy
replicas of each other, every one drifted from the reference's same rank), then measures in
one go, on a hot page cache (every file is read once before any timing), best of 3 runs:

- Denpex: `denpex drift RUN --ref REF --json --device cpu`, a real CLI subprocess: wall
  time, CPU time (user + system, all threads: what a machine shared with other jobs leaves
  comparable) and peak RSS (VmHWM of that process alone). On the per-rank pair that is each
  rank against the reference's and the ranks against each other, from one read.
- naive: `torch.load` both files (safetensors: `safetensors.torch.load_file`), loop over
  the tensors, `(a - b).norm()` in float32; on the per-rank pair the same for every rank,
  then every rank loaded again and `torch.equal` to rank 0's (two passes). Wall and CPU time,
  peak RSS and the relative error against an independent float64 computation.
- raw hot read: the files read with 16 MB buffered reads (the floor any reader pays).
- memory bandwidth: a numpy sum over a 1 GB array.

Usage: .venv/bin/python bench/bench_drift.py [--gb 2.1] [--ranks 4] [--rank-gb 0.5]
       [--repeats 3] [--dir /tmp] [--keep]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HIDDEN, FFN, VOCAB = 2048, 5504, 32000
TARGETS = {"pt": 3.0, "safetensors": 1.5}


def shapes(gb: float) -> list[tuple[str, tuple[int, int]]]:
    out = [("model.embed_tokens.weight", (VOCAB, HIDDEN)), ("lm_head.weight", (VOCAB, HIDDEN))]
    layer = 0
    while sum(r * c for _, (r, c) in out) * 4 < gb * 1e9:
        p = f"model.layers.{layer}"
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out.append((f"{p}.self_attn.{name}.weight", (HIDDEN, HIDDEN)))
        out.append((f"{p}.mlp.gate_proj.weight", (FFN, HIDDEN)))
        out.append((f"{p}.mlp.up_proj.weight", (FFN, HIDDEN)))
        out.append((f"{p}.mlp.down_proj.weight", (HIDDEN, FFN)))
        layer += 1
    return out


def tensors(layout: list[tuple[str, tuple[int, int]]], seed: int, perturb: bool):
    """The reference weights, or the run's: the same plus drift on every 7th row."""
    for i, (name, shape) in enumerate(layout):
        rng = np.random.default_rng(1000 + i)
        x = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
        if perturb:
            noise = np.random.default_rng(seed + i).standard_normal((len(x[::7]), shape[1]))
            x[::7] += (noise * 1e-4).astype(np.float32)
        yield name, x


def write_safetensors(path: Path, items) -> None:
    """Streamed writer (the format is a JSON header then raw little-endian bytes)."""
    items = list(items)
    header, offset = {}, 0
    for name, x in items:
        header[name] = {
            "dtype": "F32",
            "shape": list(x.shape),
            "data_offsets": [offset, offset + x.nbytes],
        }
        offset += x.nbytes
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        for _, x in items:
            f.write(memoryview(np.ascontiguousarray(x)).cast("B"))


def write_pair(root: Path, gb: float) -> dict[str, tuple[Path, Path]]:
    import torch

    layout = shapes(gb)
    files: dict[str, tuple[Path, Path]] = {}
    for side, perturb in (("ref", False), ("run", True)):
        items = list(tensors(layout, 7, perturb))
        for fmt in ("safetensors", "pt"):
            d = root / fmt / side
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"step_1.{fmt}"
            if fmt == "safetensors":
                write_safetensors(path, items)
            else:
                torch.save({n: torch.from_numpy(x) for n, x in items}, path)
        del items
    for fmt in ("safetensors", "pt"):
        files[fmt] = (root / fmt / "run" / f"step_1.{fmt}", root / fmt / "ref" / f"step_1.{fmt}")
    return files


# Peak RSS is read by the measured process itself from /proc/self/status (VmHWM, the
# high-water mark of its own address space). ru_maxrss from wait4 would not do: on Linux a
# child inherits the parent's high-water mark across fork/exec.
HWM = (
    "import atexit, sys; atexit.register(lambda: sys.stderr.write('\\nVmHWM ' + "
    "[l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1] + '\\n'))\n"
)
CLI = HWM + "import sys; from denpex.cli import main; sys.exit(main(sys.argv[1:]))"


def run_measured(code: str, *args: str) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system, all threads), peak RSS (MB) and stdout of
    ``python -c code args``. CPU time is what a loaded machine leaves comparable: wall time
    there measures the other jobs as much as the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1) or "VmHWM" not in done.stderr:
        raise SystemExit(f"{args[:3]}: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    hwm_kb = int(done.stderr.rsplit("VmHWM ", 1)[1].split()[0])
    return wall, cpu, hwm_kb / 1024, done.stdout


def best_of(repeats: int, code: str, *args: str) -> tuple[float, float, float, str]:
    """Fastest wall and CPU time over ``repeats`` runs (each the least disturbed), the
    largest peak RSS, and the last stdout."""
    runs = [run_measured(code, *args) for _ in range(repeats)]
    return (
        min(r[0] for r in runs),
        min(r[1] for r in runs),
        max(r[2] for r in runs),
        runs[-1][3],
    )


NAIVE = r"""
import sys, math
import torch
fmt, a_path, b_path = sys.argv[1:4]
if fmt == "pt":
    a, b = torch.load(a_path, weights_only=True), torch.load(b_path, weights_only=True)
else:
    from safetensors.torch import load_file
    a, b = load_file(a_path), load_file(b_path)
sq = 0.0
for k in b:
    sq += float((a[k] - b[k]).norm()) ** 2
print(math.sqrt(sq))
"""


def float64_l2(a: Path, b: Path) -> float:
    """Independent exact figure: safetensors bytes through numpy, float64 throughout."""
    from denpex.checkpoints.safetensors import read_safetensors_header

    def arrays(path: Path) -> dict[str, np.ndarray]:
        header = read_safetensors_header(str(path))
        raw = np.memmap(path, dtype=np.uint8, mode="r")
        base = header.data_start
        return {
            k: raw[base + e.begin : base + e.end].view(np.float32)
            for k, e in header.tensors.items()
        }

    xa, xb = arrays(a), arrays(b)
    parts = []
    for k, y in xb.items():
        for i in range(0, y.size, 1 << 22):
            d = xa[k][i : i + (1 << 22)].astype(np.float64) - y[i : i + (1 << 22)]
            parts.append(float(np.dot(d, d)))
    return math.sqrt(math.fsum(parts))


def hot_read(paths: list[Path]) -> float:
    buf = bytearray(16 << 20)
    view = memoryview(buf)
    t0 = time.perf_counter()
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while f.readinto(view):
                pass
    return time.perf_counter() - t0


def bandwidth() -> float:
    x = np.ones(1 << 28, dtype=np.float32)  # 1 GiB
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        x.sum()
        best = min(best, time.perf_counter() - t0)
    return x.nbytes / best / 1e9


def per_rank_layout(root: Path, gb: float, ranks: int) -> tuple[Path, Path]:
    """A data-parallel run and its reference saved per rank (``step_1/rank_k.safetensors``):
    the run's ranks are healthy replicas (identical copies, each a file of its own so none
    shares another's page cache), each drifted from the reference's same rank."""
    layout = shapes(gb)
    run, ref = root / "per-rank" / "run" / "step_1", root / "per-rank" / "ref" / "step_1"
    for d, perturb in ((ref, False), (run, True)):
        d.mkdir(parents=True)
        write_safetensors(d / "rank_0.safetensors", tensors(layout, 7, perturb))
        for k in range(1, ranks):
            shutil.copyfile(d / "rank_0.safetensors", d / f"rank_{k}.safetensors")
    return run.parent, ref.parent


# The naive per-rank baseline: each rank against the reference's same rank, then the ranks
# against each other, each a pass of its own (every run file is loaded twice).
NAIVE_PER_RANK = r"""
import math, sys
from pathlib import Path
import torch
from safetensors.torch import load_file
run, ref = (sorted(Path(p).glob("rank_*.safetensors")) for p in sys.argv[1:3])
l2 = []
for a_path, b_path in zip(run, ref, strict=True):
    a, b = load_file(a_path), load_file(b_path)
    l2.append(math.sqrt(sum(float((a[k] - b[k]).norm()) ** 2 for k in b)))
    del a, b
first = load_file(run[0])
identical = all(
    all(torch.equal(first[k], other[k]) for k in first)
    for other in (load_file(p) for p in run[1:])
)
print(l2[0], identical)
"""


def measure(
    repeats: int, files: list[Path], cli: list[str], naive: tuple[str, ...]
) -> dict[str, float | str]:
    """Denpex (the CLI) and the naive baseline on hot ``files``, best of ``repeats``."""
    hot_read(files)  # warm the page cache
    raw = min(hot_read(files) for _ in range(2))
    d_wall, d_cpu, d_rss, out = best_of(repeats, CLI, *cli)
    n_wall, n_cpu, n_rss, n_out = best_of(repeats, HWM + naive[0], *naive[1:])
    return {
        "size_gb": sum(f.stat().st_size for f in files) / 1e9,
        "raw_hot_read_s": raw,
        "denpex_s": d_wall,
        "denpex_cpu_s": d_cpu,
        "denpex_rss_mb": d_rss,
        "naive_s": n_wall,
        "naive_cpu_s": n_cpu,
        "naive_rss_mb": n_rss,
        "speedup": n_wall / d_wall,
        "cpu_speedup": n_cpu / d_cpu,
        "of_raw_read": raw / d_wall,
        "denpex_out": out,
        "naive_out": n_out,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=2.1, help="size of each checkpoint (GB)")
    ap.add_argument("--ranks", type=int, default=4, help="ranks of the per-rank case")
    ap.add_argument("--rank-gb", type=float, default=0.5, help="size of each rank's file (GB)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each command (best kept)")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where to write the checkpoints")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    need = (4 * args.gb + 2 * args.ranks * args.rank_gb) * 1e9 * 1.1
    os.makedirs(args.dir, exist_ok=True)  # a --dir that does not exist yet is made
    free = shutil.disk_usage(args.dir).free
    if free < need:
        print(
            f"bench_drift: needs {need / 1e9:.1f} GB free in {args.dir}, has {free / 1e9:.1f}",
            file=sys.stderr,
        )
        return 2
    root = Path(tempfile.mkdtemp(prefix="denpex-bench-", dir=args.dir))
    try:
        t0 = time.perf_counter()
        files = write_pair(root, args.gb)
        ranked = per_rank_layout(root, args.rank_gb, args.ranks)
        print(
            f"wrote 4 checkpoints and {2 * args.ranks} rank files in "
            f"{time.perf_counter() - t0:.0f} s under {root}"
        )
        largest = 4 * VOCAB * HIDDEN / 1e6
        rss_budget = 2 * largest + 500
        print(f"memory bandwidth (numpy sum, 1 GiB): {bandwidth():.1f} GB/s")
        exact = float64_l2(*files["safetensors"])
        results: dict[str, dict[str, float | str]] = {}
        for fmt, (run, ref) in files.items():
            cli = ["drift", str(run.parent), "--ref", str(ref.parent), "--json", "--device", "cpu"]
            r = results[fmt] = measure(
                args.repeats, [run, ref], cli, (NAIVE, fmt, str(run), str(ref))
            )
            r["denpex_rel_err"] = (
                abs(json.loads(str(r["denpex_out"]))["points"][0]["l2"] - exact) / exact
            )
            r["naive_rel_err"] = abs(float(r["naive_out"]) - exact) / exact
        run_dir, ref_dir = ranked
        rank_files = sorted(run_dir.glob("step_1/*")) + sorted(ref_dir.glob("step_1/*"))
        cli = ["drift", str(run_dir), "--ref", str(ref_dir), "--json", "--device", "cpu"]
        naive = (NAIVE_PER_RANK, str(run_dir / "step_1"), str(ref_dir / "step_1"))
        r = results["per-rank"] = measure(args.repeats, rank_files, cli, naive)
        report = json.loads(str(r["denpex_out"]))
        exact = float64_l2(
            run_dir / "step_1" / "rank_0.safetensors", ref_dir / "step_1" / "rank_0.safetensors"
        )
        r["denpex_rel_err"] = abs(report["points"][0]["l2"] - exact) / exact
        n_l2, n_identical = str(r["naive_out"]).split()
        r["naive_rel_err"] = abs(float(n_l2) - exact) / exact
        if report["replicas"]["verdict"] != "identical" or n_identical != "True":
            raise SystemExit("per-rank: the healthy replicas were not found identical")
        print(f"largest tensor {largest:.0f} MB -> RSS budget {rss_budget:.0f} MB")
        each = (run_dir / "step_1" / "rank_0.safetensors").stat().st_size / 1e9
        print(f"per-rank: {args.ranks} ranks x {each:.2f} GB, safetensors, run and reference")
        print(f"best of {args.repeats}; CPU = user + system seconds of the process, all threads")
        cols = ("case", "GB", "raw read", "denpex", "CPU", "RSS MB", "naive", "CPU", "RSS MB")
        print(
            "".join(f"{c:>10}" for c in cols)
            + f"{'wall x':>8}{'CPU x':>8}{'of raw':>8}{'err denpex':>12}{'err naive':>11}"
        )
        for case, r in results.items():
            cells = (
                case,
                f"{r['size_gb']:.2f}",
                f"{r['raw_hot_read_s']:.2f}s",
                f"{r['denpex_s']:.2f}s",
                f"{r['denpex_cpu_s']:.2f}s",
                f"{r['denpex_rss_mb']:.0f}",
                f"{r['naive_s']:.2f}s",
                f"{r['naive_cpu_s']:.2f}s",
                f"{r['naive_rss_mb']:.0f}",
            )
            print(
                "".join(f"{c:>10}" for c in cells)
                + f"{r['speedup']:>7.2f}x{r['cpu_speedup']:>7.2f}x{r['of_raw_read']:>8.0%}"
                + f"{r['denpex_rel_err']:>12.1e}{r['naive_rel_err']:>11.1e}"
            )
        for case, r in results.items():
            target = TARGETS.get(case, TARGETS["safetensors"])
            checks = {
                f"wall speedup >= {target}x": r["speedup"] >= target,
                f"CPU speedup >= {target}x": r["cpu_speedup"] >= target,
                ">= 50% of raw hot read": r["of_raw_read"] >= 0.5,
                f"RSS <= {rss_budget:.0f} MB": r["denpex_rss_mb"] <= rss_budget,
                "within 1e-6 of float64": r["denpex_rel_err"] < 1e-6,
            }
            print(
                f"{case}: "
                + ", ".join(f"{k}: {'met' if ok else 'MISSED'}" for k, ok in checks.items())
            )
        print(
            json.dumps(
                {
                    c: {k: v for k, v in r.items() if not k.endswith("_out")}
                    for c, r in results.items()
                }
            )
        )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""False-alarm and detection rates of the drift verdict, on real training of the tiny model.

Trains one reference run and one healthy noise-reference run, then K healthy reruns that
differ only in their round-off (reduction-order nondeterminism: +-1 ulp on a random 10% of
gradient elements, a different seed per run) and K faulty runs (a permanent compute fault:
one output column of one matmul off by a relative eps from step T; plus bit flips). Every
run is written as safetensors checkpoints and judged end to end through `drift_report`,
exactly as `denpex drift RUN --ref REF [--noise-ref NOISE]` does, and compared with the
naive monitor: Mann-Kendall on the global L2 distance, alarm at p < 0.01.

The verdict's thresholds were set on other seeds (noise seeds 10-19, faults 30-53); these
runs use seeds 1000+ so the figures are out-of-sample.

    python bench/false_alarms.py [--runs K] [--steps N] [--every E]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from denpex.drift.api import drift_report
from denpex.drift.simulate import FaultSpec, simulate_run
from denpex.drift.stats import mann_kendall

Report = dict[str, Any]
ROUND_OFF = 0.1
LINEARS = {
    f"blocks.{b}.{m}": width
    for b in (0, 1)
    for m, width in (
        ("attn.q", 32),
        ("attn.k", 32),
        ("attn.v", 32),
        ("attn.proj", 32),
        ("mlp.fc1", 128),
        ("mlp.fc2", 32),
    )
} | {"head": 32}
MATRICES = {
    "embed.weight": 32 * 32,
    "blocks.0.attn.q.weight": 32 * 32,
    "blocks.1.attn.v.weight": 32 * 32,
    "blocks.0.mlp.fc1.weight": 128 * 32,
    "blocks.1.mlp.fc2.weight": 32 * 128,
    "head.weight": 32 * 32,
}
EPS = (3e-5, 1e-4, 3e-4, 1e-3)


@dataclass
class Outcome:
    kind: str  # healthy | compute | bitflip
    label: str
    verdict: str
    verdict_noise: str
    onset: int | None
    onset_noise: int | None
    naive_alarm: bool
    fault: FaultSpec | None


def write_run(root: Path, runs: Iterable[tuple[int, dict[str, Any]]]) -> Path:
    from safetensors.torch import save_file

    root.mkdir(parents=True)
    for step, state in runs:
        save_file(state, str(root / f"ckpt_{step}.safetensors"))
    return root


def train(root: Path, steps: int, every: int, noise_seed: int, fault: FaultSpec | None) -> Path:
    return write_run(
        root,
        simulate_run(
            steps=steps,
            save_every=every,
            nondeterminism=ROUND_OFF,
            noise_seed=noise_seed,
            fault=fault,
        ),
    )


def faults(k: int, steps: int, every: int, rng: random.Random) -> list[FaultSpec]:
    out = []
    for i in range(k):
        if i % 4 == 3:  # a quarter bit flips, the rest permanent compute faults
            target = rng.choice(sorted(MATRICES))
            out.append(
                FaultSpec(
                    "bitflip",
                    rng.randrange(every, steps - 2 * every),
                    target=target,
                    index=rng.randrange(MATRICES[target]),
                    bit=rng.randrange(20, 30),
                )
            )
        else:
            target = rng.choice(sorted(LINEARS))
            out.append(
                FaultSpec(
                    "compute",
                    rng.randrange(every, steps - 3 * every),
                    target=target,
                    index=rng.randrange(LINEARS[target]),
                    eps=EPS[(i // 4) % len(EPS)],
                )
            )
    return out


def judge(run: Path, ref: Path, noise: Path, cache: str) -> tuple[Report, Report]:
    plain = drift_report(str(run), str(ref), device="cpu", cache_dir=cache)
    with_noise = drift_report(
        str(run), str(ref), noise_ref=str(noise), device="cpu", cache_dir=cache
    )
    return plain, with_noise


def naive_alarm(report: Report) -> bool:
    return mann_kendall([p["l2"] for p in report["points"]]).p_increasing < 0.01


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="healthy reruns and faulty runs, each")
    ap.add_argument("--steps", type=int, default=160)
    ap.add_argument("--every", type=int, default=10)
    args = ap.parse_args(argv)
    started = time.monotonic()
    rng = random.Random(2026)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="denpex-false-alarms-") as tmp:
        base = Path(tmp)
        cache = str(base / "cache")
        ref = train(base / "ref", args.steps, args.every, 1, None)
        noise = train(base / "noise", args.steps, args.every, 2, None)
        plan: list[tuple[str, int, FaultSpec | None]] = [
            ("healthy", 1000 + i, None) for i in range(args.runs)
        ] + [
            (f.kind, 2000 + i, f)
            for i, f in enumerate(faults(args.runs, args.steps, args.every, rng))
        ]
        for n, (kind, seed, fault) in enumerate(plan):
            run = train(base / f"run{n}", args.steps, args.every, seed, fault)
            plain, with_noise = judge(run, ref, noise, cache)
            label = (
                f"noise seed {seed}"
                if fault is None
                else f"{fault.kind} {fault.target}[{fault.index}] T={fault.step}"
                + (f" eps={fault.eps:g}" if fault.kind == "compute" else f" bit={fault.bit}")
            )
            outcomes.append(
                Outcome(
                    kind,
                    label,
                    plain["verdict"],
                    with_noise["verdict"],
                    plain["onset_step"],
                    with_noise["onset_step"],
                    naive_alarm(plain),
                    fault,
                )
            )
            o = outcomes[-1]
            print(
                f"{n + 1:3d}/{len(plan)} {label:52s} {o.verdict:14s} {o.verdict_noise:14s} "
                f"onset={o.onset}/{o.onset_noise} naive={'ALARM' if o.naive_alarm else '-'}",
                flush=True,
            )
    summarise(outcomes, args.every)
    print(f"\n{len(outcomes) + 2} training runs, {time.monotonic() - started:.0f} s", flush=True)
    return 0


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def _row(title: str, group: list[Outcome], hit: set[str]) -> str:
    """One table row: plain verdict, verdict with the noise reference, naive monitor."""
    n = len(group)
    return (
        f"{title:30s}{_rate(sum(o.verdict in hit for o in group), n):20s}"
        f"{_rate(sum(o.verdict_noise in hit for o in group), n):19s}"
        f"{_rate(sum(o.naive_alarm for o in group), n)}"
    )


def summarise(outcomes: list[Outcome], every: int) -> None:
    healthy = [o for o in outcomes if o.kind == "healthy"]
    compute = [o for o in outcomes if o.kind == "compute"]
    flips = [o for o in outcomes if o.kind == "bitflip"]
    print(f"\n{'':30s}{'without noise ref':20s}{'with --noise-ref':19s}naive MK on global L2")
    print(_row("healthy reruns flagged", healthy, {"gradual_drift", "sudden_jump"}))
    for eps in EPS:
        group = [o for o in compute if o.fault is not None and o.fault.eps == eps]
        print(_row(f"compute eps={eps:g} -> drift", group, {"gradual_drift"}))
    print(_row("bit flips -> sudden_jump", flips, {"sudden_jump"}))
    for name, pick in (("without noise ref", "onset"), ("with --noise-ref", "onset_noise")):
        delays = []
        for o in compute + flips:
            onset = getattr(o, pick)
            if onset is not None and o.fault is not None:
                delays.append(onset - o.fault.step)
        if delays:
            first = sum(0 <= d < every for d in delays)  # the first checkpoint carrying the fault
            within = sum(0 <= d <= every for d in delays)
            print(
                f"onset {name:18s} at the first checkpoint after T: {_rate(first, len(delays))}; "
                f"within one interval of T: {_rate(within, len(delays))}; "
                f"delay median {statistics.median(delays):g}, max {max(delays)} steps"
            )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""`denpex demo`: the main job on bundled data, end to end, on a laptop CPU.

1. Diagnoses the bundled multi-rank sample logs (initiating vs collateral ranks).
2. Trains a tiny transformer for real three times (reference, a healthy rerun that differs
   only by round-off, a run with a permanent compute fault from a known step), saves their
   checkpoints, and judges the drift of each against the reference.
3. Trains four data-parallel replicas, one with a corrupted local optimizer update, and
   names the faulty rank.

Everything is written under --out so the printed verification commands can be rerun.
"""

from __future__ import annotations

import argparse
import shutil
from importlib import resources
from pathlib import Path

from denpex.errors import InputError

_MARKER = ".denpex-demo"
STEPS, EVERY, ROUND_OFF = 120, 10, 0.1
# One step after a checkpoint: the fault's whole first interval shows by the next checkpoint,
# as in the real-training corpus. A fault that begins in an interval's last steps splits its
# arrival over two intervals, and at 1e-4 its rise can sit at the bar: from step 47 it rose
# 15.5x on one CPU (bar 16x) and was missed (docs/drift-statistics.md, limits).
FAULT_STEP = 41


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="diagnose bundled sample logs and catch injected drift in freshly trained runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--out",
        default="denpex-demo",
        help="directory for the demo's checkpoints (default ./denpex-demo; recreated each run)",
    )
    p.set_defaults(func=_demo)


def _fresh_dir(out: Path) -> Path:
    # Never clobber a directory the demo did not create itself.
    if out.exists() and not (out / _MARKER).exists():
        raise InputError(f"{out} exists and was not made by `denpex demo`; pass --out DIR")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / _MARKER).touch()
    return out


def _heading(text: str) -> None:
    print(f"\n{'=' * 78}\n{text}\n{'=' * 78}", flush=True)


def _diagnose_samples() -> None:
    from denpex.diagnosis import diagnose_paths
    from denpex.diagnosis.report import format_report

    samples = resources.files("denpex") / "samples" / "logs"
    # A folder is one job's per-rank logs; a file is one job's combined log.
    for scenario in sorted(samples.iterdir(), key=lambda p: p.name):
        files = scenario.iterdir() if scenario.is_dir() else [scenario]
        logs = sorted(str(p) for p in files if p.is_file())
        _heading(f"1. Log diagnosis: {scenario.name} ({len(logs)} log file(s))")
        print("$ denpex diagnose " + " ".join(logs))
        print(format_report(diagnose_paths(logs)))


def _save_run(root: Path, **kwargs: object) -> Path:
    from safetensors.torch import save_file

    from denpex.demo.tinyrun import simulate_run

    root.mkdir()
    for step, state in simulate_run(steps=STEPS, save_every=EVERY, **kwargs):  # type: ignore[arg-type]
        save_file(state, str(root / f"step_{step}.safetensors"))
    return root


def _drift(out: Path) -> None:
    from safetensors.torch import save_file

    from denpex.demo.tinyrun import FaultSpec, simulate_replicas
    from denpex.drift.api import drift_report, replicas_report
    from denpex.drift.report import render_human

    fault = FaultSpec("compute", FAULT_STEP, target="blocks.0.mlp.fc1", index=21, eps=1e-4)
    print(f"training 3 tiny runs on the CPU ({STEPS} steps, a checkpoint every {EVERY}) ...")
    ref = _save_run(out / "reference", nondeterminism=ROUND_OFF, noise_seed=1)
    healthy = _save_run(out / "healthy-rerun", nondeterminism=ROUND_OFF, noise_seed=2)
    faulty = _save_run(out / "faulty", nondeterminism=ROUND_OFF, noise_seed=3, fault=fault)
    for run, story in (
        (healthy, "a healthy rerun: round-off only, drifts apart but must NOT be flagged"),
        (faulty, f"1e-4 error on one output column of blocks.0.mlp.fc1 from step {FAULT_STEP}"),
    ):
        _heading(f"2. Checkpoint drift: {run.name} ({story})")
        print(f"$ denpex drift {run} --ref {ref}")
        print(render_human(drift_report(str(run), str(ref))))

    replica_fault = FaultSpec(
        "replica_update", 35, target="blocks.0.attn.v.weight", index=4, eps=1e-3, rank=2
    )
    ddp = out / "ddp"
    print("training 4 data-parallel replicas, rank 2's optimizer update corrupted from step 35 ...")
    for step, states in simulate_replicas(
        steps=80, save_every=10, fault=replica_fault, nondeterminism=ROUND_OFF
    ):
        (ddp / f"step_{step}").mkdir(parents=True)
        for rank, state in enumerate(states):
            save_file(state, str(ddp / f"step_{step}" / f"rank_{rank}.safetensors"))
    _heading("3. Replica divergence: 4 DDP replicas that must stay bitwise identical")
    print(f"$ denpex replicas {ddp}")
    print(render_human(replicas_report(str(ddp))))


def _demo(args: argparse.Namespace) -> int:
    out = _fresh_dir(Path(args.out))
    _diagnose_samples()
    _drift(out)
    print(f"\nCheckpoints kept under {out}/ — rerun any command above. Nothing left this machine.")
    return 0

"""`denpex drift`, `denpex replicas` and `denpex watch`: silent data corruption seen as
parameter drift between checkpoints (see docs/drift.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from denpex.commands.progress import ProgressBar

if TYPE_CHECKING:  # imported when a command runs: it pulls numpy into every `denpex` command
    from denpex.drift.report import DriftReport

_DEVICE_HELP = "where reductions run: auto (CUDA when present), cpu or cuda (default auto)"
_KEY_HELP = (
    "the state-dict container inside the checkpoint, dotted "
    "(default: model, module or state_dict when present, else the top level)"
)


def _tolerance(text: str) -> float:
    """Checked as the command line is read, so `watch` refuses it before it starts."""
    from denpex.drift.api import check_tolerance
    from denpex.errors import InputError

    try:
        value = float(text)
        check_tolerance(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the drift-report JSON")
    p.add_argument("--device", default="auto", help=_DEVICE_HELP)
    p.add_argument("--key", help=_KEY_HELP)
    p.add_argument(
        "--cache-dir",
        help="remember computed steps here so reruns skip them (default: no cache)",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "drift",
        help="compare a run's checkpoints with a reference run's (exit 1 when flagged)",
        description="Compare RUN's checkpoints with REF's step by step and judge the drift.",
    )
    p.add_argument("run", help="the run's checkpoint directory (or one checkpoint)")
    p.add_argument("--ref", required=True, help="the reference run's checkpoint directory")
    p.add_argument(
        "--noise-ref",
        help="a second healthy run of the same setup: calibrates the benign-noise floor",
    )
    p.add_argument("--gpu", type=int, help="local GPU index the run trained on (fills dcgmi)")
    p.add_argument("--host", help="host the run trained on")
    p.add_argument(
        "--distributed",
        action="store_true",
        help="split the comparison across processes started without torchrun "
        "(RANK, WORLD_SIZE, MASTER_PORT from the environment; MASTER_ADDR defaults to "
        "127.0.0.1); under torchrun this is automatic",
    )
    _common(p)
    p.set_defaults(func=_drift)

    p = sub.add_parser(
        "replicas",
        help="compare data-parallel replicas' checkpoints with their majority",
        description="Each step's rank_<N> checkpoints against the bitwise majority of the ranks.",
    )
    p.add_argument("run", help="directory of steps holding rank_<N> checkpoints")
    p.add_argument(
        "--tolerance",
        type=_tolerance,
        default=0.0,
        help="per-tensor max |Δ| forgiven (tied/synced weights); default 0: bitwise",
    )
    p.add_argument(
        "--gpus-per-node", type=int, help="maps the faulty rank to its local GPU (fills dcgmi)"
    )
    _common(p)
    p.set_defaults(func=_replicas)

    p = sub.add_parser(
        "watch",
        help="follow checkpoint directories and report each new step as it lands",
        description="Watch run directories; compare every complete new checkpoint.",
    )
    p.add_argument("dirs", nargs="+", help="run directories to watch")
    p.add_argument("--ref", help="reference run (default: replica mode on rank_<N> layouts)")
    p.add_argument("--noise-ref", help="a second healthy run calibrating the noise floor")
    p.add_argument("--tolerance", type=_tolerance, default=0.0, help="replica mode: see `replicas`")
    p.add_argument(
        "--poll", type=float, default=2.0, help="seconds between stability polls (at least 0.1)"
    )
    p.add_argument(
        "--exit-after",
        type=float,
        help="stop after this many seconds (default: run until interrupted)",
    )
    _common(p)
    p.set_defaults(func=_watch)


def _emit(report: DriftReport, as_json: bool) -> int:
    from denpex.drift.report import render_human

    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(render_human(report) + "\n")
    if report.verdict == "not_comparable":  # never "equal" when nothing was compared
        sys.stdout.flush()
        sys.stderr.write(f"denpex: error: {report.assessment.notes[0]}\n")
        return 2
    return 1 if report.flagged else 0


def _drift(args: argparse.Namespace) -> int:
    # Imported here, not at registration: it pulls numpy into every `denpex` command.
    from denpex.drift.distributed import session

    with session(args.device, requested=args.distributed):
        return _drift_one(args)


def _drift_one(args: argparse.Namespace) -> int:
    from denpex.drift.api import drift_report

    bar = ProgressBar()
    try:
        report = drift_report(
            args.run,
            args.ref,
            noise_ref=args.noise_ref,
            device=args.device,
            key=args.key,
            progress=bar,
            cache_dir=args.cache_dir,
            gpu=args.gpu,
            host=args.host,
        )
    finally:
        bar.close()
    return _emit(report, args.json)


def _replicas(args: argparse.Namespace) -> int:
    from denpex.drift.api import replicas_report

    bar = ProgressBar()
    try:
        report = replicas_report(
            args.run,
            device=args.device,
            key=args.key,
            tolerance=args.tolerance,
            progress=bar,
            cache_dir=args.cache_dir,
            gpus_per_node=args.gpus_per_node,
        )
    finally:
        bar.close()
    return _emit(report, args.json)


def _watch(args: argparse.Namespace) -> int:
    from denpex.commands.watch import watch

    return watch(
        args.dirs,
        ref=args.ref,
        noise_ref=args.noise_ref,
        tolerance=args.tolerance,
        device=args.device,
        key=args.key,
        cache_dir=args.cache_dir,
        poll=args.poll,
        as_json=args.json,
        exit_after=args.exit_after,
    )

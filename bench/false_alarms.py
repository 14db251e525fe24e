"""False-alarm and detection rates of the drift verdict on the real-training corpus.

Every run of bench/trainings (architectures from real libraries, real optimizers, real
sources of nondeterminism) is judged end to end as `denpex drift RUN --ref REF` and as
`denpex drift RUN --ref REF --noise-ref NOISE` do, beside the naive monitor (Mann-Kendall on
the global L2 distance, alarm at p < 0.01) computed from the same reports. A fault whose
run came out bit for bit as its twin without the fault did (trainings/twin.py: a bf16
activation scaled by 1 + eps below its rounding step, a dead ReLU unit) is a healthy rerun in
effect; it is counted on a line of its own, not among the faults to detect. Each fault is
also judged as docs/drift-statistics.md advises for a run that carries round-off of its own:
against a run of its own configuration, which it matches bit for bit until the onset (its
reference, or its twin passed as `--noise-ref`); the "own-configuration run" lines.

Figures are printed for the held-out architectures (the ones no threshold was tuned on) and
for the tuning ones, separately; then the data-parallel section (GPT-2 over gloo, per-rank
checkpoints): per run the verdict, the faulty rank named against the truth, and whether
`denpex replicas RUN` finds the replicas in agreement:

    python bench/false_alarms.py [--arch ARCH ...] [--jobs N] [--json] [--no-ddp | --ddp-only]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from denpex.drift.api import drift_report, replicas_report
from denpex.drift.model import StepDiff
from denpex.drift.parted import median_rel
from denpex.drift.report import Point
from denpex.drift.stats import mann_kendall
from trainings.corpus import HELD_OUT, ONSET, TUNING, Run, build, ddp_family, family
from trainings.ddp import DdpSpec
from trainings.models import ARCHS
from trainings.twin import same_weights, twin

BURIED = 1e-4  # round-off at the onset above which a 1e-3 fault may be buried


@dataclass
class Outcome:
    arch: str
    role: str  # healthy | fault
    label: str
    kind: str  # healthy | compute | lane | flip | flip-state
    eps: float | None
    verdict: str
    verdict_noise: str
    flagged: bool
    flagged_noise: bool
    onset: int | None
    onset_noise: int | None
    naive_alarm: bool
    null: bool = False  # a fault whose run is bit for bit its twin's (trainings/twin.py)
    # How far round-off alone had carried the run by the last checkpoint before the onset
    # (the median tensor's distance relative to its norm): what the fault must stand out of.
    roundoff: float | None = None
    # A fault judged as the docs advise for runs that carry round-off of their own: against a
    # run of its own configuration, bit-identical to it until the onset (the reference for
    # half of the faults, else its twin as --noise-ref, lever 6). None for healthy reruns.
    verdict_own: str | None = None
    flagged_own: bool | None = None
    error: str | None = None


def judge(run: Run, runs: list[Run], cache: str) -> Outcome:
    """``run`` judged against its family's (``runs``) reference, with and without its noise run."""
    spec = run.spec
    ref = next(r for r in runs if r.role == "ref")
    noise = next(r for r in runs if r.role == "noise")
    kind = spec.fault.kind if spec.fault else "healthy"
    eps = spec.fault.eps if spec.fault and spec.fault.kind in ("compute", "lane") else None
    own_config = twin(run, runs) if spec.fault is not None else None
    null = own_config is not None and same_weights(run.path, own_config.path)
    try:
        plain = drift_report(str(run.path), str(ref.path), device="cpu", cache_dir=cache)
        noisy = drift_report(
            str(run.path), str(ref.path), noise_ref=str(noise.path), device="cpu", cache_dir=cache
        )
        own = plain
        if own_config is not None and own_config is not ref:
            own = drift_report(str(run.path), str(ref.path), noise_ref=str(own_config.path),
                               device="cpu", cache_dir=cache)  # fmt: skip
    except Exception as exc:  # a reader or verdict failure is a result to report, not a crash
        return Outcome(spec.arch, run.role, run.label, kind, eps, "error", "error", False, False,
                       None, None, False, null, error=f"{type(exc).__name__}: {exc}")  # fmt: skip
    return Outcome(
        arch=spec.arch,
        role=run.role,
        label=run.label,
        kind=kind,
        eps=eps,
        verdict=plain.verdict,
        verdict_noise=noisy.verdict,
        flagged=plain.flagged,
        flagged_noise=noisy.flagged,
        onset=plain.onset_step,
        onset_noise=noisy.onset_step,
        naive_alarm=mann_kendall([p["l2"] for p in plain.to_json()["points"]]).p_increasing < 0.01,
        null=null,
        roundoff=_roundoff(plain.points),
        verdict_own=own.verdict if own_config is not None else None,
        flagged_own=own.flagged if own_config is not None else None,
    )


def _roundoff(points: list[Point]) -> float | None:
    before = [p.diff for p in points if isinstance(p.diff, StepDiff) and p.step < ONSET]
    return median_rel(before[-1]) if before else None


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total}" + (f" ({100 * hits / total:.0f}%)" if total else "")


def summarise(outcomes: list[Outcome], every: int) -> dict[str, str]:
    healthy = [o for o in outcomes if o.role == "healthy"]
    # A fault that changed no bit is a healthy rerun in effect: it is no detection to miss.
    null = [o for o in outcomes if o.role == "fault" and o.null]
    faults = [o for o in outcomes if o.role == "fault" and not o.null]
    permanent = [o for o in faults if o.eps is not None]
    flips = [o for o in faults if o.kind in ("flip", "flip-state")]

    def caught(rows: Iterable[Outcome], noise: bool) -> int:
        return sum(o.flagged_noise if noise else o.flagged for o in rows)

    def caught_own(rows: Iterable[Outcome]) -> int:
        return sum(bool(o.flagged_own) for o in rows)

    def onset_ok(o: Outcome, noise: bool) -> bool:
        onset = o.onset_noise if noise else o.onset
        # The first checkpoint after the onset step is the earliest that can show it.
        return onset is not None and ONSET <= onset <= ONSET + every

    out = {
        "healthy pairs": str(len(healthy)),
        "false alarms (no --noise-ref)": _rate(caught(healthy, False), len(healthy)),
        "false alarms (--noise-ref)": _rate(caught(healthy, True), len(healthy)),
        "false alarms (naive Mann-Kendall)": _rate(
            sum(o.naive_alarm for o in healthy), len(healthy)
        ),
        # Apart wholesale from the first checkpoint: no verdict either way (exit 2).
        "healthy pairs not comparable (no --noise-ref)": _rate(
            sum(o.verdict == "not_comparable" for o in healthy), len(healthy)
        ),
        "null faults flagged (no --noise-ref)": _rate(caught(null, False), len(null)),
        "null faults flagged (--noise-ref)": _rate(caught(null, True), len(null)),
    }
    for lo, hi, name in ((1e-3, 10.0, ">= 1e-3"), (1e-4, 1e-3, "1e-4")):
        rows = [o for o in permanent if o.eps is not None and lo <= o.eps < hi]
        out[f"permanent faults {name} caught (no --noise-ref)"] = _rate(
            caught(rows, False), len(rows)
        )
        out[f"permanent faults {name} caught (--noise-ref)"] = _rate(caught(rows, True), len(rows))
        out[f"permanent faults {name} caught (own-configuration run)"] = _rate(
            caught_own(rows), len(rows)
        )
        out[f"permanent faults {name} caught at or after the onset (no --noise-ref)"] = _rate(
            sum(o.flagged and (o.onset or 0) >= ONSET for o in rows), len(rows)
        )
        out[f"permanent faults {name} not comparable (no --noise-ref)"] = _rate(
            sum(o.verdict == "not_comparable" for o in rows), len(rows)
        )
        out[f"permanent faults {name} naive alarm"] = _rate(
            sum(o.naive_alarm for o in rows), len(rows)
        )
        if name == ">= 1e-3":
            # Some trainings amplify round-off to 1e-3 of a tensor's norm before the onset;
            # a fault of 1e-3 is then buried in it (docs/drift-statistics.md).
            for below, words in ((True, "round-off < 1e-4"), (False, "round-off >= 1e-4")):
                part = [o for o in rows if ((o.roundoff or 0.0) < BURIED) is below]
                out[f"  of which {words} at onset (no --noise-ref)"] = _rate(
                    caught(part, False), len(part)
                )
    out["bit flips -> sudden_jump (no --noise-ref)"] = _rate(
        sum(o.verdict == "sudden_jump" for o in flips), len(flips)
    )
    out["bit flips -> sudden_jump (--noise-ref)"] = _rate(
        sum(o.verdict_noise == "sudden_jump" for o in flips), len(flips)
    )
    out["bit flips -> sudden_jump (own-configuration run)"] = _rate(
        sum(o.verdict_own == "sudden_jump" for o in flips), len(flips)
    )
    flagged = [o for o in faults if o.flagged]
    out["onset within one interval (flagged faults)"] = _rate(
        sum(onset_ok(o, False) for o in flagged), len(flagged)
    )
    out["errors"] = str(sum(o.error is not None for o in outcomes))
    return out  # fmt: skip


@dataclass
class DdpOutcome:
    label: str
    where: str  # healthy | after (the all-reduce) | before
    truth_rank: int | None  # the rank a report may name: the faulty one, after the all-reduce
    verdict: str
    verdict_noise: str
    flagged: bool
    flagged_noise: bool
    faulty_rank: int | None
    replicas_verdict: str
    replicas_rank: int | None
    error: str | None = None

    @property
    def rank_ok(self) -> bool:
        # Before the all-reduce the replicas stay identical: naming no rank is the only right
        # answer there (the weights cannot tell which rank computed wrong).
        return self.faulty_rank == self.truth_rank

    @property
    def replicas_agree(self) -> bool:
        return self.replicas_verdict == "identical"


def judge_ddp(run: Run, ref: Run, noise: Run, cache: str) -> DdpOutcome:
    spec = run.spec
    assert isinstance(spec, DdpSpec)
    where = "healthy" if spec.fault is None else run.label.split(" ", 1)[0]
    truth = spec.faulty_rank if where == "after" else None
    try:
        plain = drift_report(str(run.path), str(ref.path), device="cpu", cache_dir=cache)
        noisy = drift_report(
            str(run.path), str(ref.path), noise_ref=str(noise.path), device="cpu", cache_dir=cache
        )
        reps = replicas_report(str(run.path), device="cpu", cache_dir=cache)
    except Exception as exc:  # a result to report, not a crash
        return DdpOutcome(run.label, where, truth, "error", "error", False, False, None, "error",
                          None, f"{type(exc).__name__}: {exc}")  # fmt: skip
    return DdpOutcome(
        label=run.label,
        where=where,
        truth_rank=truth,
        verdict=plain.verdict,
        verdict_noise=noisy.verdict,
        flagged=plain.flagged,
        flagged_noise=noisy.flagged,
        faulty_rank=plain.faulty_rank,
        replicas_verdict=reps.verdict,
        replicas_rank=reps.faulty_rank,
    )


def ddp_section(cache: str) -> list[DdpOutcome]:
    runs = ddp_family()
    build(runs)
    ref = next(r for r in runs if r.role == "ref")
    noise = next(r for r in runs if r.role == "noise")
    return [judge_ddp(r, ref, noise, cache) for r in runs if r.role in ("healthy", "fault")]


def summarise_ddp(rows: list[DdpOutcome]) -> dict[str, str]:
    out: dict[str, str] = {}
    for where, name in (("healthy", "healthy reruns"), ("after", "faults after all-reduce"),
                        ("before", "faults before all-reduce")):  # fmt: skip
        part = [o for o in rows if o.where == where]
        flagged = "false alarms" if where == "healthy" else "caught"
        out[f"{name}: {flagged} (no --noise-ref)"] = _rate(sum(o.flagged for o in part), len(part))
        out[f"{name}: {flagged} (--noise-ref)"] = _rate(
            sum(o.flagged_noise for o in part), len(part)
        )
        out[f"{name}: faulty_rank right"] = _rate(sum(o.rank_ok for o in part), len(part))
        out[f"{name}: `replicas` agree"] = _rate(sum(o.replicas_agree for o in part), len(part))
    out["errors"] = str(sum(o.error is not None for o in rows))
    return out


def print_ddp(rows: list[DdpOutcome]) -> None:
    print("\n== data-parallel (gpt2, 3 gloo replicas, per-rank checkpoints)")
    print(f"  {'run':86} {'verdict':14} {'--noise-ref':14} rank(truth) replicas")
    for o in rows:
        named = "-" if o.faulty_rank is None else o.faulty_rank
        truth = "-" if o.truth_rank is None else o.truth_rank
        reps = o.replicas_verdict + ("" if o.replicas_rank is None else f" rank {o.replicas_rank}")
        print(f"  {o.label:86} {o.verdict:14} {o.verdict_noise:14} {named}({truth})"
              f"{'' if o.rank_ok else ' WRONG'} {reps} {o.error or ''}")  # fmt: skip
    for key, value in summarise_ddp(rows).items():
        print(f"  {key:48} {value}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", choices=sorted(ARCHS))
    ap.add_argument("--jobs", type=int, default=1, help="parallel trainings for missing runs")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="one line per run")
    ddp = ap.add_mutually_exclusive_group()
    ddp.add_argument("--no-ddp", action="store_true", help="skip the data-parallel section")
    ddp.add_argument("--ddp-only", action="store_true", help="only the data-parallel section")
    args = ap.parse_args(argv)
    archs = [] if args.ddp_only else args.arch or list(ARCHS)
    started = time.monotonic()
    families = {a: family(a) for a in archs}
    build([r for runs in families.values() for r in runs], args.jobs)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as cache:
        for runs in families.values():
            for run in runs:
                if run.role in ("healthy", "fault"):
                    outcomes.append(judge(run, runs, cache))
                    if args.verbose:
                        o = outcomes[-1]
                        print(f"{o.arch:6} {o.label:62} {o.verdict:14} {o.verdict_noise:14} "
                              f"onset={o.onset} naive={o.naive_alarm}{' NULL' if o.null else ''} "
                              f"{'' if o.verdict_own is None else 'own=' + o.verdict_own} "
                              f"{o.error or ''}")  # fmt: skip
        ddp_rows = [] if args.no_ddp else ddp_section(cache)
    every = next(iter(families.values()))[0].spec.every if families else 0
    splits = {"held-out": [o for o in outcomes if o.arch in HELD_OUT],
              "tuning": [o for o in outcomes if o.arch in TUNING]}  # fmt: skip
    table = {name: summarise(rows, every) for name, rows in splits.items() if rows}
    if args.json:
        ddp_json = {"summary": summarise_ddp(ddp_rows), "runs": [asdict(o) for o in ddp_rows]}
        print(json.dumps({"splits": table, "runs": [asdict(o) for o in outcomes],
                          **({"ddp": ddp_json} if ddp_rows else {})}, indent=1))  # fmt: skip
        return 0
    for name, rows in table.items():
        archs_in = sorted({o.arch for o in splits[name]})
        print(f"\n== {name} architectures: {', '.join(archs_in)}")
        for key, value in rows.items():
            print(f"  {key:48} {value}")
    if ddp_rows:
        print_ddp(ddp_rows)
    print(f"\n{len(outcomes) + len(ddp_rows)} runs judged in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

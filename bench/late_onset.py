"""Faults that begin just before a checkpoint, against the corpus's own onset.

The corpus's faults begin at step 50, ten steps before the checkpoint at 60 (checkpoints every
12 steps). A fault that begins at step 58 has two steps of effect by that checkpoint: its rise
is split over two intervals, and without a noise run a channel must rise 16x over the two
checkpoints up to its onset (docs/drift-statistics.md, "Limits"). Each compute and lane fault
of 1e-4 to 1e-2 of the given architectures is trained again from step 58, otherwise the same
run, and both are judged as `denpex drift RUN --ref REF [--noise-ref NOISE]` do:

    python bench/late_onset.py [ARCH ...]
"""

from __future__ import annotations

import sys
from dataclasses import replace

from denpex.drift.api import drift_report
from trainings.corpus import ONSET, Run, build, family
from trainings.train import EVERY

LATE = (ONSET + EVERY - 1) // EVERY * EVERY - 2  # two steps before the first faulty checkpoint
# Measured on 2026-12-07 over these (docs/measurements/drift-late-onset/).
DEFAULT = ("fsmt", "bitnet", "davit", "sew", "yolos", "hrmtext", "gemma3n", "t5gemma", "t5", "tst")


def _flagged(run: Run, ref: Run, noise: Run | None) -> bool:
    report = drift_report(
        str(run.path),
        str(ref.path),
        noise_ref=str(noise.path) if noise else None,
        device="cpu",
    )
    return report.flagged


def main(archs: list[str]) -> int:
    caught: dict[tuple[float, str], list[int]] = {}
    for arch in archs or DEFAULT:
        runs = family(arch)
        ref = next(r for r in runs if r.role == "ref")
        noise = next(r for r in runs if r.role == "noise")
        corpus = [r for r in runs if r.spec.fault and r.spec.fault.kind in ("compute", "lane")]
        corpus = [r for r in corpus if r.spec.fault and r.spec.fault.eps <= 1e-2]
        late = [
            Run(replace(r.spec, fault=replace(r.spec.fault, onset=LATE)), "fault", r.label)
            for r in corpus
            if r.spec.fault
        ]
        build([ref, noise, *corpus, *late], jobs=2)
        for early, moved in zip(corpus, late, strict=True):
            assert early.spec.fault is not None
            for mode, nz in (("without --noise-ref", None), ("with --noise-ref", noise)):
                row = caught.setdefault((early.spec.fault.eps, mode), [0, 0, 0])
                a, b = _flagged(early, ref, nz), _flagged(moved, ref, nz)
                row[0] += 1
                row[1] += a
                row[2] += b
                if a != b:
                    print(f"{arch:10} {early.label} {mode}: step {ONSET} {a}, step {LATE} {b}")
    print(f"\nfaults caught, beginning at step {ONSET} (the corpus) and at step {LATE}:")
    for (eps, mode), (n, a, b) in sorted(caught.items()):
        print(f"  eps={eps:g} {mode:20} {a}/{n}  {b}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

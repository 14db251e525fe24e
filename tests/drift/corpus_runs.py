"""Runs of the real-training corpus (bench/trainings) trained by a test on the CPU, exactly
as the corpus trains them, and judged by `denpex drift --json` as a real subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from denpex_cli import ROOT, denpex, validate_drift_report

sys.path.insert(0, str(ROOT / "bench"))

from trainings.corpus import ONSET, family
from trainings.train import EVERY, train

FIRST_FAULTY = (ONSET + EVERY - 1) // EVERY * EVERY  # the first checkpoint after the onset


def train_runs(arch: str, labels: dict[str, str], base: Path) -> dict[str, Path]:
    """The runs of ``arch``'s family named by their corpus labels, trained under ``base``."""
    by_label = {run.label: run.spec for run in family(arch)}
    for name, label in labels.items():
        train(by_label[label], base / name)
    return {name: base / name for name in labels}


def drift_json(run: Path, ref: Path, noise: Path | None = None) -> tuple[int, dict[str, Any]]:
    """`denpex drift RUN --ref REF [--noise-ref NOISE] --json`: its exit code and report."""
    extra = ["--noise-ref", noise] if noise is not None else []
    done = denpex("drift", run, "--ref", ref, *extra, "--json", "--device", "cpu")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    return done.returncode, report

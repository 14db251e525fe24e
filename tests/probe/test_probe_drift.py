"""Fingerprints of real training runs judged by the drift verdict, and the on-disk records.

The probe rides along the drift engine's simulated training (a tiny transformer trained
for real on CPU): a reference run, a run with a permanent compute fault from FAULT_STEP,
and two healthy reruns that differ from the reference by round-off alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from denpex.demo.tinyrun import FaultSpec, simulate_probed_run  # noqa: E402
from denpex.drift import api, fingerprints  # noqa: E402
from denpex.drift.verdict import assess  # noqa: E402
from denpex.errors import InputError  # noqa: E402
from denpex.fingerprints.records import RankFile, file_name  # noqa: E402
from denpex.probe import DriftProbe  # noqa: E402
from paths import SCHEMAS  # noqa: E402

STEPS, EVERY, FAULT_STEP = 240, 20, 100


def _probed_run(out: Path, **kwargs: object) -> None:
    simulate_probed_run(out, steps=STEPS, every=EVERY, **kwargs)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    _probed_run(root / "ref")
    _probed_run(root / "faulty", fault=FaultSpec("compute", step=FAULT_STEP, eps=1e-4))
    _probed_run(root / "rerun", nondeterminism=0.01, noise_seed=3)
    _probed_run(root / "noise", nondeterminism=0.01, noise_seed=5)
    return root


@pytest.mark.slow
def test_permanent_fault_is_gradual_drift_from_fingerprints(runs: Path) -> None:
    series = fingerprints.compare(runs / "faulty", runs / "ref")
    noise = fingerprints.compare(runs / "noise", runs / "ref")
    assert [s.step for s in series] == list(range(EVERY, STEPS + 1, EVERY))
    a = assess(series, noise)
    assert a.verdict == "gradual_drift" and a.flagged
    assert a.onset_step is not None and FAULT_STEP <= a.onset_step <= FAULT_STEP + EVERY
    # Before the fault the runs are bitwise identical: the hashes say so exactly.
    assert all(s.diff_sq == 0 for s in series if s.step < FAULT_STEP)


@pytest.mark.slow
def test_benign_rerun_is_not_flagged_from_fingerprints(runs: Path) -> None:
    a = assess(
        fingerprints.compare(runs / "rerun", runs / "ref"),
        fingerprints.compare(runs / "noise", runs / "ref"),
    )
    assert not a.flagged and a.verdict == "within_noise"


def test_records_are_whole_lines_with_rank_host_and_step(tmp_path: Path) -> None:
    model = torch.nn.Linear(300, 200)
    with DriftProbe(model, tmp_path, every=3) as probe:
        for step in range(10):
            probe.step(step)
    lines = (tmp_path / file_name(0)).read_bytes().splitlines(keepends=True)
    assert len(lines) == 4 and all(line.endswith(b"\n") for line in lines)
    rec = json.loads(lines[0])
    assert rec["step"] == 0 and rec["rank"] == 0 and rec["world_size"] == 1
    assert rec["host"] == os.uname().nodename and rec["local_gpu"] is None
    assert [t["name"] for t in rec["tensors"]] == ["weight", "bias"]
    # The budget: at most 1 KB per tensor (its entry and its share of the global sketch),
    # 2.5 KB more per sketched matrix (its axis sketches: 504 float32 values), plus one fixed
    # header per record.
    header = len(json.dumps({k: v for k, v in rec.items() if k not in ("tensors", "global")}))
    assert header < 400
    matrices = sum("ax" in t for t in rec["tensors"])
    assert matrices == 1
    assert len(lines[0]) - header <= 1024 * len(rec["tensors"]) + 2560 * matrices


def test_torn_last_line_and_resumed_steps(tmp_path: Path) -> None:
    model = torch.nn.Linear(8, 8)
    with DriftProbe(model, tmp_path, every=1) as probe:
        probe.step(1)
        probe.step(2)
        with torch.no_grad():
            model.weight.add_(1.0)
        probe.step(1)  # resumed from a checkpoint at step 1: the later record wins
    path = tmp_path / file_name(0)
    with path.open("ab") as fh:
        fh.write(b'{"step":3,"format":"denpex-fingerprint/1","ra')  # killed mid-write
    f = RankFile(path)
    assert f.steps() == [1, 2]
    assert any("incomplete last line" in w for w in f.warnings)
    assert f.read(1).by_name()["weight"].norm == pytest.approx(
        float(model.weight.detach().double().norm())
    )


def test_not_a_fingerprint_dir_is_one_clear_error(tmp_path: Path) -> None:
    assert not fingerprints.is_fingerprint_dir(tmp_path)
    with pytest.raises(InputError, match="no fingerprint files"):
        fingerprints.compare(tmp_path, tmp_path)


@pytest.mark.slow
def test_fingerprint_reports_follow_the_drift_report_schema(runs: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    root = SCHEMAS
    schemas = {
        n: json.loads((root / n).read_text())
        for n in ("drift-report.schema.json", "diagnosis.schema.json")
    }
    registry = referencing.Registry().with_resources(
        (f"denpex/{n}", referencing.Resource.from_contents(s)) for n, s in schemas.items()
    )
    validator = jsonschema.Draft202012Validator(
        schemas["drift-report.schema.json"], registry=registry
    )
    report = api.drift_report(
        str(runs / "faulty"), str(runs / "ref"), noise_ref=str(runs / "noise")
    ).to_json()
    validator.validate(report)
    assert report["verdict"] == "gradual_drift" and report["device"] == "fingerprints"
    assert report["finding"]["id"] == "sdc-gradual-parameter-drift"
    with pytest.raises(InputError, match="must too"):
        api.drift_report(str(runs / "faulty"), str(runs))


@pytest.mark.slow
def test_cli_reads_fingerprint_directories(runs: Path) -> None:
    def denpex(*args: Path | str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "denpex", *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    done = denpex(
        "drift", runs / "faulty", "--ref", runs / "ref", "--noise-ref", runs / "noise", "--json"
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "gradual_drift"
    assert report["onset_step"] in (FAULT_STEP, FAULT_STEP + EVERY)
    done = denpex("drift", runs / "rerun", "--ref", runs / "ref", "--noise-ref", runs / "noise")
    assert done.returncode == 0, done.stderr
    done = denpex("drift", runs / "faulty", "--ref", runs)  # fingerprints against no fingerprints
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "must too" in done.stderr


@pytest.mark.slow
def test_watch_follows_a_fingerprint_file_as_the_probe_appends(runs: Path, tmp_path: Path) -> None:
    """`denpex watch` on a live probe directory: records arrive a few at a time, one torn
    mid-write, and the finding comes once, with the onset, when the fault shows."""
    live = tmp_path / "live"
    live.mkdir()
    records = (runs / "faulty" / file_name(0)).read_bytes().splitlines(keepends=True)
    cmd = [sys.executable, "-m", "denpex", "watch", str(live), "--ref", str(runs / "ref")]
    cmd += ["--noise-ref", str(runs / "noise"), "--json", "--poll", "0.3", "--exit-after", "12"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(2)
        with (live / file_name(0)).open("ab") as fh:
            for start in range(0, len(records), 4):
                fh.write(b"".join(records[start : start + 4]))
                fh.write(records[min(start + 4, len(records) - 1)][:50])  # torn: written on
                fh.flush()
                time.sleep(0.8)
                fh.truncate(fh.tell() - 50)
                fh.seek(0, os.SEEK_END)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    events = [json.loads(line) for line in out.splitlines()]
    points = [e["point"]["step"] for e in events if e["event"] == "point"]
    assert points == list(range(EVERY, STEPS + 1, EVERY)), out + err
    # A finding only once the faulty records are in (it may be restated if a later batch
    # moves the onset), never during the healthy prefix.
    first = next(i for i, e in enumerate(events) if e["event"] == "finding")
    assert max(e["point"]["step"] for e in events[:first] if e["event"] == "point") > FAULT_STEP
    findings = [e for e in events if e["event"] == "finding"]
    assert all(f["verdict"] == "gradual_drift" for f in findings), out + err
    assert FAULT_STEP <= findings[-1]["onset_step"] <= FAULT_STEP + EVERY
    assert proc.returncode == 1
    assert "incomplete last line" not in err and "steps only in" not in err

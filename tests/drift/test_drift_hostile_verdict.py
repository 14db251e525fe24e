"""Hostile inputs to the drift verdict (issue 13): NaN replicas, wholesale changes, runs that
compare nothing, ranks missing tensors or steps, torchrun-like environments, malformed probe
records, many steps. Real checkpoint files written here, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from denpex.demo.tinyrun import simulate_run
from denpex_cli import denpex, validate_drift_report

STEPS, EVERY, ROUND_OFF = 120, 10, 0.1


def _one_line_error(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("denpex: error: ") and done.stderr.count("\n") == 1, done.stderr


# --------------------------------------------------------------------------- NaN / Inf


def _replica_dirs(root: Path, states: list[dict[str, torch.Tensor]], steps=(10, 20)) -> Path:
    for step in steps:
        (root / f"step_{step}").mkdir(parents=True)
        for rank, sd in enumerate(states):
            save_file(sd, str(root / f"step_{step}" / f"rank_{rank}.safetensors"))
    return root


def _weights(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {
        "a.weight": torch.randn(16, 16, generator=g),
        "a.bias": torch.randn(16, generator=g),
        "b.weight": torch.randn(8, 16, generator=g),
    }


def test_an_all_nan_replica_disagrees(tmp_path: Path) -> None:
    good = _weights()
    bad = {**good, "a.weight": torch.full((16, 16), float("nan"))}
    root = _replica_dirs(tmp_path / "ddp", [good, good, bad])
    done = denpex("replicas", root, "--json", "--device", "cpu")
    assert done.returncode == 1, (done.stdout[-3000:], done.stderr)
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "replica_divergence" and report["faulty_rank"] == 2
    assert report["points"][0]["disagreeing_ranks"] == [2]
    # a tolerance forgives small differences, never NaN
    done = denpex("replicas", root, "--json", "--tolerance", "1e30")
    assert done.returncode == 1 and json.loads(done.stdout)["faulty_rank"] == 2


def test_nan_on_every_replica_is_no_agreement(tmp_path: Path) -> None:
    sd = {**_weights(), "a.bias": torch.full((16,), float("inf"))}
    root = _replica_dirs(tmp_path / "ddp", [sd, sd, sd])
    done = denpex("replicas", root, "--json")
    assert done.returncode == 1, done.stdout[-3000:]
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "replica_divergence"
    assert any("non-finite" in n and "a.bias" in n for n in report["notes"]), report["notes"]


def test_nan_against_nan_in_reference_mode_is_not_identical(tmp_path: Path) -> None:
    sd = {**_weights(), "b.weight": torch.full((8, 16), float("nan"))}
    for name in ("run", "ref"):
        (tmp_path / name).mkdir()
        save_file(sd, str(tmp_path / name / "step_10.safetensors"))
    done = denpex("drift", tmp_path / "run", "--ref", tmp_path / "ref", "--json")
    assert done.returncode == 1, done.stdout[-3000:]
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] != "identical" and report["flagged"]


@pytest.mark.parametrize("use_torch", [False, True], ids=["numpy", "torch"])
def test_both_kernels_propagate_non_finite_differences(tmp_path: Path, use_torch: bool) -> None:
    """A NaN in the second block of a tensor must not be folded away by max(0.0, nan)."""
    from denpex.checkpoints import open_checkpoint
    from denpex.drift.compare import BLOCK_ELEMS, Kernel, compare_readers

    rows = 2 * BLOCK_ELEMS // 64
    ref = torch.zeros(rows, 64)
    run = ref.clone()
    run[-1, 3] = float("nan")
    inf_run, inf_ref = torch.zeros(4, 4), torch.zeros(4, 4)
    inf_run[1, 1] = inf_ref[1, 1] = float("inf")  # Inf against Inf: no finite difference
    save_file({"w": run, "i": inf_run}, str(tmp_path / "run.safetensors"))
    save_file({"w": ref, "i": inf_ref}, str(tmp_path / "ref.safetensors"))
    kernel = Kernel("cpu", use_torch=use_torch)
    a = open_checkpoint(tmp_path / "run.safetensors", None)
    b = open_checkpoint(tmp_path / "ref.safetensors", None)
    try:
        diff = compare_readers(a, b, 1, kernel)
    finally:
        a.close()
        b.close()
        kernel.close()
    by = {t.name: t for t in diff.tensors}
    for name in ("w", "i"):
        t = by[name]
        assert t.non_finite == 1, (name, t)
        assert t.differs
        assert t.max_abs != t.max_abs or t.max_abs == float("inf"), (name, t.max_abs)
    assert diff.max_abs != diff.max_abs  # the step's figure is NaN too, not 0


# --------------------------------------------------------------------------- wholesale change


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    ref = list(simulate_run(steps=STEPS, save_every=EVERY, nondeterminism=ROUND_OFF, noise_seed=1))
    healthy = list(
        simulate_run(steps=STEPS, save_every=EVERY, nondeterminism=ROUND_OFF, noise_seed=3)
    )
    other = list(simulate_run(steps=STEPS, save_every=EVERY, seed=5))
    return {"ref": ref, "healthy": healthy, "other": other}


def _save_series(root: Path, series: list) -> Path:
    root.mkdir(parents=True)
    for step, sd in series:
        sd = {k: v.contiguous() for k, v in sd.items()}
        save_file(sd, str(root / f"step_{step}.safetensors"))
    return root


TARGET = "blocks.0.mlp.fc1.weight"


def _from(step0: int, change):
    def apply(step: int, sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return change(sd) if step >= step0 else sd

    return apply


CHANGES = {
    "tensor_zeroed": _from(60, lambda sd: {**sd, TARGET: torch.zeros_like(sd[TARGET])}),
    "run_zeroed": _from(60, lambda sd: {k: torch.zeros_like(v) for k, v in sd.items()}),
    "weights_times_2": _from(60, lambda sd: {k: v * 2 for k, v in sd.items()}),
    "tensor_sign_flipped": _from(60, lambda sd: {**sd, TARGET: -sd[TARGET]}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_large_persistent_change_is_a_step_change(
    tmp_path: Path, trained: dict[str, list], change: str
) -> None:
    ref = _save_series(tmp_path / "ref", trained["ref"])
    run = _save_series(
        tmp_path / "run", [(s, CHANGES[change](s, sd)) for s, sd in trained["healthy"]]
    )
    done = denpex("drift", run, "--ref", ref, "--json", "--device", "cpu")
    assert done.returncode == 1, (done.stdout[-3000:], done.stderr)
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "step_change", report["notes"]
    assert report["onset_step"] == 60
    assert report["trend"]["step_change"]["held_until_step"] == STEPS
    assert report["finding"]["id"] == "sdc-transient-corruption"


def test_unrelated_weights_are_not_comparable_from_the_first_checkpoint(
    tmp_path: Path, trained: dict[str, list]
) -> None:
    """Apart wholesale at the first checkpoint: another start, or a training that parts its
    healthy reruns that fast (rotation 11's LeViT). Neither a fault nor health: exit 2."""
    ref = _save_series(tmp_path / "ref", trained["ref"])
    run = _save_series(tmp_path / "run", trained["other"])
    done = denpex("drift", run, "--ref", ref, "--json")
    assert done.returncode == 2, done.stdout[-3000:]
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "not_comparable" and not report["flagged"]
    assert report["trend"]["parted_step"] == EVERY
    assert done.stderr.count("\n") == 1
    assert "different models from the first compared checkpoint" in done.stderr


def test_a_noise_run_apart_from_the_start_is_set_aside(
    tmp_path: Path, trained: dict[str, list]
) -> None:
    ref = _save_series(tmp_path / "ref", trained["ref"])
    run = _save_series(tmp_path / "run", trained["healthy"])
    noise = _save_series(tmp_path / "noise", trained["other"])
    done = denpex("drift", run, "--ref", ref, "--noise-ref", noise, "--json")
    assert done.returncode == 0, done.stdout[-3000:]
    report = json.loads(done.stdout)
    assert report["verdict"] == "within_noise"
    assert report["trend"]["method"].startswith("self_calibration"), report["trend"]
    assert any("the noise run is another model" in n for n in report["notes"])


def test_a_healthy_rerun_is_still_within_noise(tmp_path: Path, trained: dict[str, list]) -> None:
    ref = _save_series(tmp_path / "ref", trained["ref"])
    run = _save_series(tmp_path / "run", trained["healthy"])
    done = denpex("drift", run, "--ref", ref, "--json")
    assert done.returncode == 0, done.stdout[-3000:]
    assert json.loads(done.stdout)["verdict"] == "within_noise"


# --------------------------------------------------------------------------- nothing compared


def _pair(tmp_path: Path, run: dict, ref: dict, steps=(10, 20)) -> tuple[Path, Path]:
    for name, sd in (("run", run), ("ref", ref)):
        (tmp_path / name).mkdir()
        for step in steps:
            save_file(sd, str(tmp_path / name / f"step_{step}.safetensors"))
    return tmp_path / "run", tmp_path / "ref"


NOTHING = {
    "prefix_mismatch": lambda sd: {f"encoder.{k}": v for k, v in sd.items()},
    "empty_header": lambda sd: {},
    "every_shape_mismatched": lambda sd: {k: v.reshape(-1)[:-1].clone() for k, v in sd.items()},
}


@pytest.mark.parametrize("case", sorted(NOTHING))
def test_a_run_that_compares_nothing_is_not_comparable(tmp_path: Path, case: str) -> None:
    sd = _weights()
    run, ref = _pair(tmp_path, NOTHING[case](sd), sd)
    done = denpex("drift", run, "--ref", ref, "--json")
    _one_line_error(done)
    assert "nothing was compared: " in done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "not_comparable" and not report["flagged"]
    assert report["points"][0]["l2"] is None  # no distance, rather than a distance of 0
    assert not any("every compared element is equal" in n for n in report["notes"])
    human = denpex("drift", run, "--ref", ref)
    _one_line_error(human)
    assert "verdict: not_comparable" in human.stdout


def test_partial_key_overlap_is_counted(tmp_path: Path) -> None:
    sd = _weights()
    run, ref = _pair(tmp_path, {"a.weight": sd["a.weight"]}, sd)
    done = denpex("drift", run, "--ref", ref, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    coverage = report["trend"]["coverage"]
    assert coverage == {
        "tensors": 3,
        "compared": 1,
        "missing_in_run": 2,
        "missing_in_ref": 0,
        "shape_mismatch": 0,
        "unreadable": 0,
    }
    assert any("1 of 3 tensors" in n for n in report["notes"]), report["notes"]


# --------------------------------------------------------------------------- replicas


def test_a_rank_missing_a_tensor_or_a_step_disagrees(tmp_path: Path) -> None:
    sd = _weights()
    root = _replica_dirs(tmp_path / "ddp", [sd, sd, sd], steps=(10, 20, 30))
    lacking = {k: v for k, v in sd.items() if k != "b.weight"}
    save_file(lacking, str(root / "step_20" / "rank_2.safetensors"))
    done = denpex("replicas", root, "--json")
    assert done.returncode == 1, done.stdout[-3000:]
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["faulty_rank"] == 2 and report["onset_step"] == 20
    assert any("rank 2" in n and "b.weight" in n for n in report["notes"]), report["notes"]

    save_file(sd, str(root / "step_20" / "rank_2.safetensors"))
    (root / "step_20" / "rank_1.safetensors").unlink()
    done = denpex("replicas", root, "--json")
    assert done.returncode == 1, done.stdout[-3000:]
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["faulty_rank"] == 1 and report["onset_step"] == 20
    assert report["points"][1]["disagreeing_ranks"] == [1]
    assert report["points"][1]["absent_ranks"] == {"1": "no checkpoint at step 20"}
    assert any("rank 1" in n and "step 20" in n for n in report["notes"]), report["notes"]

    # The newest step may still be landing: a rank missing there alone is named, not judged.
    save_file(sd, str(root / "step_20" / "rank_1.safetensors"))
    (root / "step_30" / "rank_1.safetensors").unlink()
    done = denpex("replicas", root, "--json")
    assert done.returncode == 0, done.stdout[-3000:]
    assert any("step 30, the last, lacks ranks 1" in n for n in json.loads(done.stdout)["notes"])


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "-inf"])
def test_a_non_finite_or_negative_tolerance_is_refused(tmp_path: Path, value: str) -> None:
    sd = _weights()
    root = _replica_dirs(tmp_path / "ddp", [sd, sd])
    _one_line_error(denpex("replicas", root, f"--tolerance={value}"))


# --------------------------------------------------------------------------- distributed


def test_torchrun_like_variables_do_not_start_distributed_mode(tmp_path: Path) -> None:
    sd = _weights()
    run, ref = _pair(tmp_path, sd, sd)
    env = {
        **os.environ,
        "RANK": "0",
        "WORLD_SIZE": "2",
        "LOCAL_RANK": "0",
        "MASTER_ADDR": "example.invalid",
        "MASTER_PORT": "29431",
    }
    started = time.monotonic()
    done = denpex("drift", run, "--ref", ref, "--json", env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["verdict"] == "identical"
    assert time.monotonic() - started < 60


# --------------------------------------------------------------------------- probe records


def _probe_dir(tmp_path: Path) -> Path:
    from denpex.probe import DriftProbe

    out = tmp_path / "fp"
    with DriftProbe(torch.nn.Linear(8, 4), out, every=10) as probe:
        for step in (10, 20):
            probe.step(step)
    return out


def test_probe_steps_over_the_int_digit_limit_are_skipped(tmp_path: Path) -> None:
    fp = _probe_dir(tmp_path)
    f = next(fp.glob("*.jsonl"))
    line = f.read_text().splitlines()[0]
    huge = "9" * 5000
    f.write_text(f.read_text() + line.replace('"step":10', f'"step":{huge}', 1) + "\n")
    done = denpex("drift", fp, "--ref", fp, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [p["step"] for p in report["points"]] == [10, 20]
    assert any("skipped" in w for w in report["warnings"]), report["warnings"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("shape", '["x", 2]'),
        ("shape", "[-4, 2]"),
        ("shape", "[99999999999999999999, 99999999999999999999]"),
        ("name", "17"),
        ("norm", '"NaN-ish"'),
        ("hash", "12"),
        ("world_size", "1" + "0" * 5000),
    ],
)
def test_malformed_probe_fields_are_one_line_errors(tmp_path: Path, field: str, value: str) -> None:
    fp = _probe_dir(tmp_path)
    f = next(fp.glob("*.jsonl"))
    lines = f.read_text().splitlines()
    rec = json.loads(lines[1])
    target = rec if field in rec else rec["tensors"][0]
    target[field] = "__VALUE__"
    lines[1] = json.dumps(rec, separators=(",", ":")).replace('"__VALUE__"', value)
    f.write_text("\n".join(lines) + "\n")
    _one_line_error(denpex("drift", fp, "--ref", fp))


# --------------------------------------------------------------------------- many steps


def test_trend_statistics_stay_linear_in_the_steps() -> None:
    """Mann-Kendall over all n²/2 pairs held ~10 GB at 50,000 points; Sen's slope too."""
    import numpy as np

    from denpex.drift import stats

    rng = np.random.default_rng(0)
    for values in (rng.standard_normal(300), rng.integers(0, 5, 300).astype(float)):
        i, j = np.triu_indices(values.size, k=1)
        assert stats.mann_kendall(values).s == int(np.sign(values[j] - values[i]).sum())
    n = 50_000
    values = np.cumsum(rng.standard_normal(n)) + 0.01 * np.arange(n)
    started = time.monotonic()
    mk = stats.mann_kendall(values)
    slope = stats.sen_slope(np.arange(n), values)
    assert mk.n == n and np.isfinite(slope)
    assert time.monotonic() - started < 10


def test_a_column_share_a_hair_above_one_is_no_crash() -> None:
    # TimesFM (rotation 16): an MLP channel doubled from step 50 put all of down_proj's
    # difference in its column 3, whose share, summed in float32, came out at 1.0000000245;
    # the verdict raised a math domain error instead of judging the run.
    from denpex.drift.model import StepDiff, TensorDiff
    from denpex.drift.verdict import assess

    def step(i: int) -> StepDiff:
        share = 1.0000000245127563 if i >= 4 else 0.02
        down = TensorDiff(
            name="mlp.down_proj.weight", numel=2048, diff_sq=3.5e-9 * 3**i, ref_sq=2.1,
            max_abs=1e-5 * 2**i, mismatched=1596, rows=32, cols=64, top_row=2,
            top_row_share=0.1, top_col=3 if i >= 4 else i, top_col_share=share,
        )  # fmt: skip
        up = TensorDiff(
            name="mlp.up_proj.weight", numel=2048, diff_sq=3.5e-9 * 1.2**i, ref_sq=2.1,
            max_abs=1e-6, mismatched=2048, rows=64, cols=32, top_row=i, top_row_share=0.05,
            top_col=i, top_col_share=0.06,
        )  # fmt: skip
        return StepDiff(step=12 * (i + 1), tensors=[down, up])

    judged = assess([step(i) for i in range(10)])  # the column arrives at step 60 (21x) and holds
    assert judged.flagged and judged.onset_step == 60, (judged.verdict, judged.notes)

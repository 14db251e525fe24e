"""Fingerprints without a noise reference (issue 9, item 5): a run bit-identical to its
reference up to a step and faulty from there is flagged with its onset, and the axis
sketches name the faulty channel. Real probe runs on a real model trained on the CPU
(``denpex.demo.tinyrun``), judged through the CLI; and the axis sketches on real tensors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from denpex.demo.tinyrun import FaultSpec, simulate_probed_run  # noqa: E402
from denpex.drift import fingerprints  # noqa: E402
from denpex.fingerprints.records import AXIS_SIZE, file_name  # noqa: E402
from denpex.probe import DriftProbe  # noqa: E402
from denpex_cli import denpex  # noqa: E402

STEPS, EVERY, FAULT_STEP, CHANNEL = 240, 20, 110, 5
# fc1's output channel CHANNEL: row CHANNEL of fc1.weight, column CHANNEL of fc2.weight.
FAULTY = {"blocks.0.mlp.fc1.weight", "blocks.0.mlp.fc2.weight", "blocks.0.mlp.fc1.bias"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    for name, kwargs in {
        "ref": {},
        "rerun": {},  # the same training again: bit for bit the reference
        "roundoff": {"nondeterminism": 0.01, "noise_seed": 3},
        "faulty": {"fault": FaultSpec("compute", step=FAULT_STEP, eps=1e-3, index=CHANNEL)},
    }.items():
        simulate_probed_run(root / name, steps=STEPS, every=EVERY, **kwargs)  # type: ignore[arg-type]
    return root


@pytest.mark.slow
def test_column_fault_after_a_bit_exact_prefix_is_flagged_with_onset_and_channel(
    runs: Path,
) -> None:
    done = denpex("drift", runs / "faulty", "--ref", runs / "ref", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "gradual_drift" and report["flagged"]
    # The fault acts from iteration 110: the checkpoint at 120 is the first to carry it.
    assert FAULT_STEP <= report["onset_step"] <= FAULT_STEP + EVERY
    ((named, lever),) = [
        (s["name"], lv)
        for s in report["trend"]["suspect_tensors"]
        for lv in s["levers"]
        if lv["lever"] == "bit_exact_departure"
    ]
    assert named in FAULTY
    channel = lever["channel"]
    assert channel["index"] == CHANNEL and channel["share"] >= 0.3
    assert lever["identical_until"] == FAULT_STEP // EVERY * EVERY  # the last clean checkpoint
    text = denpex("drift", runs / "faulty", "--ref", runs / "ref")
    assert text.returncode == 1
    assert f"{channel['axis']} {CHANNEL} is the top one" in text.stdout
    # A bit-exact prefix needs no noise run: no advice to pass one.
    assert "from the first fingerprinted step" not in text.stdout + text.stderr


@pytest.mark.slow
def test_healthy_reruns_are_not_flagged_without_a_noise_reference(runs: Path) -> None:
    same = denpex("drift", runs / "rerun", "--ref", runs / "ref", "--json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["verdict"] == "identical"
    roundoff = denpex("drift", runs / "roundoff", "--ref", runs / "ref", "--json")
    assert roundoff.returncode == 0, roundoff.stderr
    report = json.loads(roundoff.stdout)
    assert report["verdict"] == "within_noise"
    assert any("from the first fingerprinted step" in w for w in report["warnings"])


def _probe_once(model: torch.nn.Module, out: Path) -> None:
    with DriftProbe(model, out, every=1) as probe:
        probe.step(0)


@pytest.mark.parametrize("axis", ["row", "col"])
def test_axis_sketches_name_one_channel_of_a_large_matrix(tmp_path: Path, axis: str) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(600, 700)  # 700 rows, 600 columns: both folded, both below 992
    _probe_once(model, tmp_path / "ref")
    index = 517 if axis == "row" else 333
    with torch.no_grad():
        lane = model.weight[index] if axis == "row" else model.weight[:, index]
        lane.mul_(1 + 1e-3)
        model.weight.add_(1e-7 * torch.randn_like(model.weight))  # round-off elsewhere
    _probe_once(model, tmp_path / "run")
    (step,) = fingerprints.compare(tmp_path / "run", tmp_path / "ref")
    w = next(t for t in step.tensors if t.name == "weight")
    top, share, groups = (
        (w.top_row, w.top_row_share, w.row_groups)
        if axis == "row"
        else (w.top_col, w.top_col_share, w.col_groups)
    )
    assert top == index and share > 0.6 and groups == 31


def test_rows_longer_than_a_chunk_are_sketched_too(tmp_path: Path) -> None:
    """A row longer than the probe's chunk (64 K elements on CPU) is split at row ends."""
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(9, 70_000))
    model = torch.nn.ParameterDict({"weight": weight})
    _probe_once(model, tmp_path / "ref")
    with torch.no_grad():
        weight[:, 700].mul_(1 + 1e-2)
    _probe_once(model, tmp_path / "col")
    with torch.no_grad():
        weight[:, 700].div_(1 + 1e-2)
        weight[6].mul_(1 + 1e-3)
    _probe_once(model, tmp_path / "row")
    (col,) = fingerprints.compare(tmp_path / "col", tmp_path / "ref")
    (row,) = fingerprints.compare(tmp_path / "row", tmp_path / "ref")
    c, r = col.tensors[0], row.tensors[0]
    assert (c.top_col, r.top_row) == (700, 6)
    assert c.top_col_share > 0.6 and r.top_row_share > 0.6


def test_spread_difference_has_no_dominant_channel(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(600, 700)
    _probe_once(model, tmp_path / "ref")
    with torch.no_grad():
        model.weight.add_(1e-5 * torch.randn_like(model.weight))
    _probe_once(model, tmp_path / "run")
    (step,) = fingerprints.compare(tmp_path / "run", tmp_path / "ref")
    w = next(t for t in step.tensors if t.name == "weight")
    assert w.top_row_share < 0.25 and w.top_col_share < 0.25


def test_small_matrices_give_exact_shares(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 6)  # 48 elements: stored whole
    _probe_once(model, tmp_path / "ref")
    with torch.no_grad():
        model.weight[4, 2] += 0.5
    _probe_once(model, tmp_path / "run")
    (step,) = fingerprints.compare(tmp_path / "run", tmp_path / "ref")
    w = next(t for t in step.tensors if t.name == "weight")
    assert (w.top_row, w.top_row_share, w.top_col, w.top_col_share) == (4, 1.0, 2, 1.0)
    assert w.row_groups == w.col_groups == 0  # every row apart


def _rewrite(path: Path, edit: object) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for rec in lines:
        edit(rec)  # type: ignore[operator]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))


def test_format_1_records_are_read_without_shares(tmp_path: Path) -> None:
    """Records of an older probe: compared as before, with a warning that where a
    difference sits is unknown."""
    torch.manual_seed(0)
    model = torch.nn.Linear(100, 100)
    with DriftProbe(model, tmp_path / "ref", every=1) as probe:
        for step in range(6):
            probe.step(step)
    with DriftProbe(model, tmp_path / "run", every=1) as probe:
        for step in range(6):
            if step == 3:
                with torch.no_grad():
                    model.weight[7].mul_(1.01)
            probe.step(step)

    def downgrade(rec: dict[str, object]) -> None:
        rec["format"] = "denpex-fingerprint/1"
        for t in rec["tensors"]:  # type: ignore[attr-defined]
            t.pop("ax", None)

    for run in ("ref", "run"):
        _rewrite(tmp_path / run / file_name(0), downgrade)
    steps = fingerprints.compare(tmp_path / "run", tmp_path / "ref")
    assert [s.differs for s in steps] == [False] * 3 + [True] * 3
    assert all(t.top_row_share == 0.0 for s in steps for t in s.tensors)
    done = denpex("drift", tmp_path / "run", "--ref", tmp_path / "ref", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["onset_step"] == 3
    assert any("hold no axis sketches" in w for w in report["warnings"])


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda rec: rec.update(format="denpex-fingerprint/9"), "not a Denpex fingerprint record"),
        (lambda rec: rec["tensors"][0].update(ax="0" * 10), "axis sketch of 2 values"),
        (lambda rec: rec["tensors"][0].update(ax=["x"]), "axis sketch must be a string"),
    ],
)
def test_hostile_axis_sketches_are_one_clear_error(
    tmp_path: Path, edit: object, message: str
) -> None:
    model = torch.nn.Linear(100, 100)
    for run in ("ref", "run"):
        _probe_once(model, tmp_path / run)
    _rewrite(tmp_path / "run" / file_name(0), edit)
    done = denpex("drift", tmp_path / "run", "--ref", tmp_path / "ref")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr


def test_axis_sketch_size_is_fixed_whatever_the_matrix(tmp_path: Path) -> None:
    """Memory per tensor stays bounded: the axis sketches hold 2 x AXIS_SIZE values for a
    matrix of any size."""
    for rows, cols in ((70, 80), (3000, 200)):
        model = torch.nn.Linear(cols, rows, bias=False)
        _probe_once(model, tmp_path / f"{rows}")
        rec = json.loads((tmp_path / f"{rows}" / file_name(0)).read_text())
        (t,) = rec["tensors"]
        assert len(t["ax"]) == 2 * AXIS_SIZE * 5  # float32, base85: 5 characters per value

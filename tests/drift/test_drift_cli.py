"""`denpex drift` / `denpex replicas` end to end: real training runs, real checkpoint files in
every layout, the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import pickle
import pty
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from denpex.demo.tinyrun import FaultSpec, simulate_replicas, simulate_run
from denpex_cli import denpex, validate_drift_report

STEPS, EVERY, ROUND_OFF = 120, 10, 0.1
# As the demo's (commands/demo.py): from one step after a checkpoint, its rise whole by the next.
PERMANENT = FaultSpec("compute", 41, target="blocks.0.mlp.fc1", index=21, eps=1e-4)
FLIP = FaultSpec("bitflip", 64, target="blocks.1.attn.q.weight", index=5 * 32 + 9, bit=26)
Save = Callable[[Path, int, dict[str, torch.Tensor]], None]


def _st(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    save_file(sd, str(root / f"step_{step}.safetensors"))


def _pt_one_down(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    """Training state, DDP prefixes, one folder down."""
    (root / "checkpoints").mkdir(exist_ok=True)
    state = {"model": {f"module.{k}": v for k, v in sd.items()}, "optimizer": {}, "step": step}
    torch.save(state, root / "checkpoints" / f"model_step{step}.pt")


def _hf(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    (root / f"checkpoint-{step}").mkdir()
    save_file(sd, str(root / f"checkpoint-{step}" / "model.safetensors"))
    torch.save({}, root / f"checkpoint-{step}" / "optimizer.pt")


def _deepspeed(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    (root / f"global_step{step}").mkdir()
    torch.save({"module": sd}, root / f"global_step{step}" / "mp_rank_00_model_states.pt")
    (root / "latest").write_text(f"global_step{step}")


def _dcp(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    import torch.distributed.checkpoint as dcp

    state = {"model": sd, "optim": {"lr": torch.tensor(1.0)}}
    dcp.save(state, checkpoint_id=str(root / f"step_{step}"), no_dist=True)


def _megatron(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    d = root / f"iter_{step:07d}" / "mp_rank_00"
    d.mkdir(parents=True)
    torch.save({"model": sd, "iteration": step}, d / "model_optim_rng.pt")


def _bf16(root: Path, step: int, sd: dict[str, torch.Tensor]) -> None:
    _st(root, step, {k: v.bfloat16() for k, v in sd.items()})


def _write(roots: dict[Path, Save], noise_seed: int, fault: FaultSpec | None = None) -> None:
    """Train once, save every checkpoint in each of the given layouts."""
    for root in roots:
        root.mkdir(parents=True)
    for step, sd in simulate_run(
        steps=STEPS, save_every=EVERY, fault=fault, nondeterminism=ROUND_OFF, noise_seed=noise_seed
    ):
        for root, save in roots.items():
            save(root, step, sd)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    # Same seed, same round-off: bitwise the same run, saved three ways.
    _write({base / "ref": _st, base / "same": _pt_one_down, base / "export": _bf16}, 1)
    _write({base / "healthy": _hf}, 3)
    _write({base / "noise": _deepspeed}, 2)
    _write({base / "bad": _dcp}, 4, PERMANENT)
    _write({base / "flip": _megatron}, 6, FLIP)
    return {p.name: p for p in base.iterdir()}


def test_identical_runs_across_layouts(runs: dict[str, Path]) -> None:
    done = denpex("drift", runs["same"], "--ref", runs["ref"], "--json", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no progress bar without a terminal
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "identical" and not report["flagged"]
    assert [p["step"] for p in report["points"]] == list(range(EVERY, STEPS + 1, EVERY))
    assert all(p["l2"] == 0 and p["mismatched_elements"] == 0 for p in report["points"])
    assert report["points"][0]["tensors_compared"] > 10


def test_bf16_export_is_compared_at_bf16_and_not_drift(runs: dict[str, Path]) -> None:
    # All inputs safetensors: the CLI must never import torch (it costs seconds).
    code = (
        "import sys; from denpex.cli import main; "
        f"rc = main(['drift', {str(runs['export'])!r}, '--ref', {str(runs['ref'])!r}, '--json']); "
        "sys.stderr.write('TORCH' if 'torch' in sys.modules else 'NO-TORCH'); sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "NO-TORCH", done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "identical"
    assert report["points"][-1]["compared_dtype"] == "bfloat16"
    assert any("compared at bfloat16" in w for w in report["warnings"])


def test_benign_rerun_is_not_flagged_with_or_without_noise_ref(runs: dict[str, Path]) -> None:
    for extra in ((), ("--noise-ref", runs["noise"])):
        done = denpex("drift", runs["healthy"], "--ref", runs["ref"], "--json", *extra)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr
        report = json.loads(done.stdout)
        assert report["verdict"] == "within_noise" and report["finding"] is None
        assert all(p["l2"] > 0 for p in report["points"])


def test_permanent_fault_is_gradual_drift_from_its_onset(runs: dict[str, Path]) -> None:
    done = denpex("drift", runs["bad"], "--ref", runs["ref"], "--noise-ref", runs["noise"])
    assert done.returncode == 1 and done.stdout, done.stderr
    out = done.stdout
    assert "verdict: gradual_drift (flagged)" in out
    onset = int(out.split("onset at step ")[1].split()[0].rstrip(","))
    assert PERMANENT.step <= onset <= PERMANENT.step + EVERY
    assert f"verify: denpex drift {runs['bad']} --ref {runs['ref']}" in out
    assert "step" in out.splitlines()[1] and "rel_l2" in out.splitlines()[1]  # the table


def test_bit_flip_is_a_sudden_jump(runs: dict[str, Path]) -> None:
    done = denpex("drift", runs["flip"], "--ref", runs["ref"], "--json", "--gpu", "3")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["verdict"] == "sudden_jump" and report["onset_step"] == 70
    assert report["finding"]["id"] == "sdc-transient-corruption"
    assert report["points"][6]["top_tensors"][0]["name"] == "blocks.1.attn.q.weight"


def _replicas(root: Path, fault: FaultSpec | None, rank_major: bool = False) -> Path:
    for step, states in simulate_replicas(
        steps=80, save_every=10, fault=fault, nondeterminism=ROUND_OFF
    ):
        for rank, sd in enumerate(states):
            if rank_major:
                (root / f"rank_{rank}").mkdir(parents=True, exist_ok=True)
                save_file(sd, str(root / f"rank_{rank}" / f"step_{step}.safetensors"))
            else:
                (root / f"step_{step}").mkdir(parents=True, exist_ok=True)
                torch.save(sd, root / f"step_{step}" / f"rank_{rank}.pt")
    return root


def test_replicas_name_the_faulty_rank(tmp_path: Path) -> None:
    fault = FaultSpec(
        "replica_update", 35, target="blocks.0.attn.v.weight", index=4, eps=1e-3, rank=2
    )
    root = _replicas(tmp_path / "ddp", fault)
    done = denpex("replicas", root, "--json", "--gpus-per-node", "2")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    assert report["mode"] == "replicas" and report["verdict"] == "replica_divergence"
    assert report["faulty_rank"] == 2 and report["onset_step"] == 40
    late = report["points"][-1]
    assert late["disagreeing_ranks"] == [2]
    assert late["ranks"]["2"]["top_tensors"][0]["name"] == "blocks.0.attn.v.weight"
    assert late["ranks"]["0"]["l2"] == 0
    assert "dcgmi diag -r 3 -i 0" in report["finding"]["verification"]


def test_healthy_replicas_rank_major_layout_and_tolerance(tmp_path: Path) -> None:
    root = _replicas(tmp_path / "ddp", None, rank_major=True)
    done = denpex("replicas", root, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "identical"
    # A synced weight off by 1e-10 on one rank: bitwise mode flags it, a tolerance forgives it.
    victim = root / "rank_1" / "step_80.safetensors"
    from safetensors.torch import load_file

    sd = load_file(str(victim))
    sd["head.weight"][0, 0] += 1e-6
    save_file(sd, str(victim))
    assert denpex("replicas", root, "--json").returncode == 1
    done = denpex("replicas", root, "--json", "--tolerance", "1e-5")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["points"][-1]["disagreeing_ranks"] == []


def test_bad_inputs_are_reported_and_the_rest_is_compared(
    tmp_path: Path, runs: dict[str, Path]
) -> None:
    run = tmp_path / "mixed"
    run.mkdir()
    ref_files = sorted(runs["ref"].glob("*.safetensors"), key=lambda p: int(p.stem[5:]))
    for f in ref_files[:4]:
        (run / f.name).write_bytes(f.read_bytes())
    # step 50: a pickle that is not a plain state dict
    torch.save({"model": {}, "cfg": pytest.approx(1)}, run / "step_50.pt")
    # step 60: a zip that is no torch file; step 65: cut short (no zip directory);
    # step 70: still being written (shorter than its safetensors header says)
    with zipfile.ZipFile(run / "step_60.pt", "w") as z:
        z.writestr("notes.txt", "hello")
    (run / "step_65.pt").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    data = ref_files[6].read_bytes()
    (run / "step_70.safetensors").write_bytes(data[: len(data) // 2])
    # step 999: in the run only; a temp file a framework has not renamed yet
    (run / "step_999.safetensors").write_bytes(data)
    (run / "tmp-checkpoint-80").mkdir()
    done = denpex("drift", run, "--ref", runs["ref"], "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    validate_drift_report(report)
    text = "\n".join(report["warnings"])
    assert "refused: not a plain state dict" in text
    assert "step 60: run checkpoint not compared: " in text and "corrupt or truncated" in text
    assert "step_65.pt: skipped: step_65.pt: zip directory missing" in text
    assert "step_70.safetensors: skipped: " in text and "truncated" in text
    assert "steps only in the run, not compared: 999" in text
    assert "steps only in the reference" in text
    assert "tmp-checkpoint-80" not in text
    assert [p["step"] for p in report["points"]] == [10, 20, 30, 40]


class _Payload:
    """Unpickling this with the plain unpickler would create the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("container", ["torch-zip", "raw-pickle"])
def test_a_code_executing_pickle_is_refused_and_never_run(tmp_path: Path, container: str) -> None:
    marker = tmp_path / "pwned"
    ref, run = tmp_path / "ref", tmp_path / "run"
    ref.mkdir()
    run.mkdir()
    torch.save({"w": torch.zeros(4)}, ref / "step_1.pt")
    payload = {"w": _Payload(marker)}
    if container == "torch-zip":  # as torch.save writes it: a zip whose data.pkl calls os.system
        torch.save(payload, run / "step_1.pt")
    else:  # a bare pickle (the legacy path), protocol 4: torch warns about it on its own
        (run / "step_1.pt").write_bytes(pickle.dumps(payload, protocol=4))
    done = denpex("drift", run, "--ref", ref)
    assert done.returncode == 2
    assert "refused: not a plain state dict" in done.stderr
    assert "never runs pickled code" in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr  # no torch warning around it
    assert not marker.exists()


def test_input_errors_are_one_line_and_exit_2(tmp_path: Path, runs: dict[str, Path]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (
        ("drift", empty, "--ref", runs["ref"]),
        ("drift", tmp_path / "nowhere", "--ref", runs["ref"]),
        ("drift", runs["same"], "--ref", runs["ref"], "--key", "nope"),
        ("replicas", runs["ref"]),
        ("drift", runs["ref"], "--ref", runs["ref"], "--device", "tpu"),
    ):
        done = denpex(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("denpex: error: ") and done.stderr.count("\n") == 1, (
            done.stderr
        )


def test_progress_bar_is_drawn_on_a_terminal_only(runs: dict[str, Path]) -> None:
    """stderr a terminal: a bar even with --json (stdout stays pure JSON)."""
    master, slave = pty.openpty()
    cmd = [sys.executable, "-m", "denpex", "drift", str(runs["export"]), "--ref", str(runs["ref"])]
    proc = subprocess.Popen(
        [*cmd, "--json"],
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    bar = b"".join(chunks).decode()
    assert "100%" in bar and "[" + "#" * 30 + "]" in bar, bar
    assert json.loads(out)["verdict"] == "identical"

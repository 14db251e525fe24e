"""The probe must not turn a successful distributed job into a failed one at exit.

The documented pattern (DriftProbe on a DDP model with ``group=dist.group.WORLD``,
``probe.step`` every step, ``probe.close()``, ``dist.destroy_process_group()``) runs under
``torchrun --nproc-per-node 4`` with gloo, again and again: every run must exit 0. So must
the Hugging Face and Lightning callbacks, and a rank that raises after a probed step must
exit with its own error, not abort.

The race this guards against: gloo's worker thread drops a finished collective's tensors a
moment after the collective returns, and that takes the GIL; when the script ends first,
Python kills the thread inside C++ and the process aborts ("terminate called without an
active exception", exit -6). On an idle machine the script reaches exit within one GIL
switch interval of the last probe; the plain script raises the interval (0.5 s instead of
5 ms) so that a busy test machine is as exposed as an idle one: without the fix every run
aborts. The framework scripts raise it too: the Trainers run collectives of their own
after the last probe (HF's ``store_flos`` all_gather), and those abort the same way (HF's
Trainer with no callback at all: 4 runs in 4), so the callbacks let the backend settle at
the end of training. Nothing else in the scripts is there for the test: no barrier, no
sleep.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from denpex.fingerprints.records import file_name  # noqa: E402

pytestmark = pytest.mark.slow  # a few seconds per torchrun job (five torch imports)

WORLD = 4

_PLAIN = """
import sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from denpex.probe import DriftProbe

sys.setswitchinterval(0.5)  # see the test module's docstring
dist.init_process_group("gloo")
torch.manual_seed(0)
model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Linear(16, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
probe = DriftProbe(model.module, sys.argv[1], every=5, group=dist.group.WORLD)
data = torch.Generator().manual_seed(dist.get_rank())
for step in range(1, 11):
    x = torch.randn(4, 8, generator=data)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    probe.step(step)
    if step == 10 and len(sys.argv) > 2:
        raise RuntimeError("this rank fails after a probe")
probe.close()
dist.destroy_process_group()
"""

# Steps after the last probe: DDP's own gradient all-reduce is then the last collective, and
# it alone aborts a rank at exit now and then (no probe attached: 4 runs in 6 of a 3-process
# job under this switch interval). ``probe.finish()`` on every rank settles it.
_TRAINS_PAST_THE_LAST_PROBE = _PLAIN.replace("range(1, 11)", "range(1, 14)").replace(
    "probe.close()", "probe.finish()"
)
assert _TRAINS_PAST_THE_LAST_PROBE.count("range(1, 14)") == 1
assert _TRAINS_PAST_THE_LAST_PROBE.count("probe.finish()") == 1

_HF = """
import sys
import torch
import transformers
from denpex.probe.callbacks_hf import DriftProbeCallback

sys.setswitchinterval(0.5)  # see the test module's docstring

class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def forward(self, x, labels):
        return {"loss": (self.net(x).squeeze(-1) - labels).square().mean()}


g = torch.Generator().manual_seed(0)
data = [
    {"x": torch.randn(8, generator=g), "labels": torch.randn((), generator=g)} for _ in range(64)
]
args = transformers.TrainingArguments(
    output_dir=sys.argv[1], max_steps=4, per_device_train_batch_size=2, report_to=[],
    save_strategy="no", logging_strategy="no", remove_unused_columns=False, use_cpu=True,
    ddp_backend="gloo",
)
probe = DriftProbeCallback(every=2, group="world", out_dir=sys.argv[1])
transformers.Trainer(model=Regressor(), args=args, train_dataset=data, callbacks=[probe]).train()
"""

_LIGHTNING = """
import sys
import torch
import lightning.pytorch as pl
from denpex.probe.callbacks_lightning import DriftProbeCallback

sys.setswitchinterval(0.5)  # see the test module's docstring

class Module(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        return (self.net(batch[:, :8]).squeeze(-1) - batch[:, 8]).square().mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


rows = torch.randn(64, 9, generator=torch.Generator().manual_seed(0))
data = torch.utils.data.DataLoader(rows, batch_size=2)
trainer = pl.Trainer(
    max_steps=4, accelerator="cpu", devices=4, strategy="ddp", logger=False,
    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    default_root_dir=sys.argv[1],
    callbacks=[DriftProbeCallback(every=2, group="world", out_dir=sys.argv[1])],
)
trainer.fit(Module(), data)
"""


def _torchrun(tmp_path: Path, source: str, run: int, *extra: str) -> tuple[int, str, Path]:
    script = tmp_path / "train.py"
    script.write_text(source)
    out = tmp_path / f"run{run}"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            str(WORLD),
            str(script),
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    return done.returncode, done.stdout + done.stderr, out


def _replica_steps(out: Path) -> list[list[int]]:
    """Per rank, the probed steps whose replica check ran (and agreed)."""
    steps = []
    for rank in range(WORLD):
        records = [json.loads(line) for line in (out / file_name(rank)).read_text().splitlines()]
        assert all(r["replica"]["agree"] for r in records)
        steps.append([r["step"] for r in records])
    return steps


def test_documented_pattern_exits_cleanly_twenty_times(tmp_path: Path) -> None:
    for run in range(20):
        code, output, out = _torchrun(tmp_path, _PLAIN, run)
        assert code == 0, f"run {run}:\n{output[-3000:]}"
        assert _replica_steps(out) == [[5, 10]] * WORLD


def test_training_past_the_last_probe_then_finish_exits_cleanly_ten_times(
    tmp_path: Path,
) -> None:
    for run in range(10):
        code, output, out = _torchrun(tmp_path, _TRAINS_PAST_THE_LAST_PROBE, run)
        assert code == 0, f"run {run}:\n{output[-3000:]}"
        assert _replica_steps(out) == [[5, 10]] * WORLD


def test_a_rank_raising_after_a_probe_exits_with_its_error_not_an_abort(tmp_path: Path) -> None:
    for run in range(2):
        code, output, _ = _torchrun(tmp_path, _PLAIN, run, "raise")
        assert code != 0 and "this rank fails after a probe" in output
        assert "terminate called" not in output and "exitcode  : -6" not in output, output


def test_hf_callback_under_torchrun_exits_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="transformers is not installed")
    pytest.importorskip("accelerate", reason="transformers' Trainer needs accelerate")
    for run in range(5):
        code, output, out = _torchrun(tmp_path, _HF, run)
        assert code == 0, f"run {run}:\n{output[-3000:]}"
        assert _replica_steps(out) == [[2, 4]] * WORLD


def test_lightning_callback_under_torchrun_exits_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("lightning", reason="lightning is not installed")
    for run in range(5):
        code, output, out = _torchrun(tmp_path, _LIGHTNING, run)
        assert code == 0, f"run {run}:\n{output[-3000:]}"
        assert _replica_steps(out) == [[2, 4]] * WORLD

"""The framework callbacks, driven by the frameworks' own trainers (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from denpex.fingerprints.records import file_name  # noqa: E402


def _steps(out: Path) -> list[int]:
    return [json.loads(line)["step"] for line in (out / file_name(0)).read_text().splitlines()]


def test_hf_trainer_callback_probes_every_n_optimizer_steps(tmp_path: Path) -> None:
    transformers = pytest.importorskip(
        "transformers", reason="transformers is not installed: its callback cannot be exercised"
    )
    pytest.importorskip(
        "accelerate", reason="transformers' Trainer needs accelerate, which is not installed"
    )
    from denpex.probe.callbacks_hf import DriftProbeCallback

    class Regressor(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Linear(8, 1)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
            return {"loss": (self.net(x).squeeze(-1) - labels).square().mean()}

    g = torch.Generator().manual_seed(0)
    data = [
        {"x": torch.randn(8, generator=g), "labels": torch.randn((), generator=g)}
        for _ in range(64)
    ]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=6,
        per_device_train_batch_size=4,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        remove_unused_columns=False,
        use_cpu=True,
    )
    model = Regressor()
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=data, callbacks=[DriftProbeCallback(every=2)]
    )
    trainer.train()
    out = tmp_path / "denpex-fingerprints"
    assert _steps(out) == [2, 4, 6]
    last = json.loads((out / file_name(0)).read_text().splitlines()[-1])
    norm = float(model.net.weight.detach().double().norm())
    assert next(t for t in last["tensors"] if t["name"] == "net.weight")["norm"] == pytest.approx(
        norm, rel=1e-12
    )


def test_lightning_callback_probes_each_optimizer_step_once(tmp_path: Path) -> None:
    try:
        import lightning.pytorch as pl
    except ImportError:
        pl = pytest.importorskip(
            "pytorch_lightning",
            reason="lightning is not installed: its callback cannot be exercised",
        )
    from denpex.probe.callbacks_lightning import DriftProbeCallback

    class Module(pl.LightningModule):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Linear(8, 1)

        def training_step(self, batch: torch.Tensor, batch_idx: int) -> torch.Tensor:
            return (self.net(batch[:, :8]).squeeze(-1) - batch[:, 8]).square().mean()

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = torch.utils.data.DataLoader(
        torch.randn(64, 9, generator=torch.Generator().manual_seed(0)), batch_size=4
    )
    trainer = pl.Trainer(
        max_steps=6,
        accumulate_grad_batches=2,  # two batch hooks per optimizer step: one record each
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(tmp_path),
        callbacks=[DriftProbeCallback(every=2)],
    )
    trainer.fit(Module(), data)
    assert _steps(tmp_path / "denpex-fingerprints") == [2, 4, 6]

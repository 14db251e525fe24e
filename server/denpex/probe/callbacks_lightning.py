"""The drift probe as a PyTorch Lightning ``Callback``.

    from denpex.probe.callbacks_lightning import DriftProbeCallback
    trainer = L.Trainer(..., callbacks=[DriftProbeCallback(every=100)])

Fingerprints go to ``<default_root_dir>/denpex-fingerprints`` unless ``out_dir`` is given.
Works with ``lightning`` (2.x) or the older ``pytorch_lightning`` package; only this module
imports them.
"""

from __future__ import annotations

from typing import Any

try:
    from lightning.pytorch import Callback
except ImportError:
    try:
        # Same class under its old package name; mypy sees two distinct types when both exist.
        from pytorch_lightning import Callback  # type: ignore[assignment, unused-ignore]
    except ImportError as exc:  # pragma: no cover - exercised only without Lightning
        raise ImportError(
            "denpex.probe.callbacks_lightning needs lightning (pip install lightning); "
            "use denpex.probe.DriftProbe directly in a plain training loop"
        ) from exc

from denpex.probe.probe import DriftProbe, ProbeOptions


class DriftProbeCallback(Callback):
    """Probes after the optimizer step whose ``trainer.global_step`` is a multiple of ``every``.

    With gradient accumulation the batch hook runs several times per optimizer step; only
    a batch that completed an optimizer step (``global_step`` moved) is probed, so the
    parameters fingerprinted for step N are those after N optimizer steps, as with HF.
    """

    def __init__(self, **options: Any) -> None:
        """``out_dir``, ``every``, ``group``, ``raise_on_mismatch``: as ``DriftProbe``'s;
        ``group="world"`` is the default process group once training has started."""
        self.options = ProbeOptions(**options)
        self.probe: DriftProbe | None = None
        self._seen_step = -1

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        self.probe = self.options.open(pl_module, trainer.default_root_dir)
        self._seen_step = trainer.global_step

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if self.probe is not None and trainer.global_step != self._seen_step:
            self._seen_step = trainer.global_step
            self.probe.step(trainer.global_step)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self.probe is not None:
            self.probe.finish()
            self.probe = None

"""The drift probe as a PyTorch Lightning ``Callback``.

    from denpex.probe.callbacks_lightning import DriftProbeCallback
    trainer = L.Trainer(..., callbacks=[DriftProbeCallback(every=100)])

Fingerprints go to ``<default_root_dir>/denpex-fingerprints`` unless ``out_dir`` is given.
Works with ``lightning`` (2.x) or the older ``pytorch_lightning`` package; only this module
imports them.
"""

from __future__ import annotations

import os
from typing import Any

try:
    from lightning.pytorch import Callback
except ImportError:
    try:
        from pytorch_lightning import Callback
    except ImportError as exc:  # pragma: no cover - exercised only without Lightning
        raise ImportError(
            "denpex.probe.callbacks_lightning needs lightning (pip install lightning); "
            "use denpex.probe.DriftProbe directly in a plain training loop"
        ) from exc

from denpex.probe.probe import DriftProbe


class DriftProbeCallback(Callback):
    """Probes after the optimizer step whose ``trainer.global_step`` is a multiple of ``every``.

    With gradient accumulation the batch hook runs several times per optimizer step; only
    a batch that completed an optimizer step (``global_step`` moved) is probed, so the
    parameters fingerprinted for step N are those after N optimizer steps, as with HF.
    """

    def __init__(
        self,
        out_dir: str | None = None,
        every: int = 100,
        group: Any = None,
        raise_on_mismatch: bool = False,
    ) -> None:
        self.out_dir = out_dir
        self.every = every
        self.group = group
        self.raise_on_mismatch = raise_on_mismatch
        self.probe: DriftProbe | None = None
        self._seen_step = -1

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        out = self.out_dir or os.path.join(trainer.default_root_dir, "denpex-fingerprints")
        self.probe = DriftProbe(pl_module, out, self.every, self.group, self.raise_on_mismatch)
        self._seen_step = trainer.global_step

    def on_train_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if self.probe is not None and trainer.global_step != self._seen_step:
            self._seen_step = trainer.global_step
            self.probe.step(trainer.global_step)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self.probe is not None:
            self.probe.close()
            self.probe = None

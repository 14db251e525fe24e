"""The drift probe as a Hugging Face Transformers ``TrainerCallback``.

    from denpex.probe.callbacks_hf import DriftProbeCallback
    trainer = Trainer(..., callbacks=[DriftProbeCallback(every=100)])

Fingerprints go to ``<output_dir>/denpex-fingerprints`` unless ``out_dir`` is given. Only
this module needs transformers; the rest of Denpex never imports it.
"""

from __future__ import annotations

from typing import Any

try:
    from transformers import TrainerCallback
except ImportError as exc:  # pragma: no cover - exercised only without transformers
    raise ImportError(
        "denpex.probe.callbacks_hf needs transformers (pip install transformers); "
        "use denpex.probe.DriftProbe directly in a plain training loop"
    ) from exc

from denpex.probe.probe import DriftProbe, ProbeOptions


class DriftProbeCallback(TrainerCallback):
    """Probes after every optimizer step whose ``global_step`` is a multiple of ``every``."""

    def __init__(self, **options: Any) -> None:
        """``out_dir``, ``every``, ``group``, ``raise_on_mismatch``: as ``DriftProbe``'s;
        ``group="world"`` is the default process group once training has started."""
        self.options = ProbeOptions(**options)
        self.probe: DriftProbe | None = None

    def on_train_begin(
        self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any
    ) -> None:
        self.probe = self.options.open(model, args.output_dir)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.probe is not None:
            self.probe.step(state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.probe is not None:
            self.probe.finish()
            self.probe = None

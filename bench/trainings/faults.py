"""The faults a faulty GPU would cause, injected into a real training loop.

- ``compute``: one output channel of one layer scaled by ``1 + eps`` on every forward from
  the onset step on (a permanently faulty multiplier lane).
- ``lane``: one row of one weight receives its optimizer update scaled by ``1 + eps``
  (a corrupted local update).
- ``flip`` / ``flip-state``: one bit flipped once, in a weight or in Adam's first moment.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class Fault:
    kind: str  # compute | lane | flip | flip-state
    site: str  # a module name (compute) or a parameter name (the others)
    onset: int  # first faulty step
    eps: float = 0.0
    channel: int = 3
    bit: int = 22

    @property
    def label(self) -> str:
        size = f"eps={self.eps:g}" if self.kind in ("compute", "lane") else f"bit={self.bit}"
        return f"{self.kind}:{self.site}:{size}@{self.onset}"


def _flip(t: torch.Tensor, index: int, bit: int) -> None:
    flat = t.data.view(-1)
    value = float(flat[index])
    (word,) = struct.unpack("<I", struct.pack("<f", value))
    (flipped,) = struct.unpack("<f", struct.pack("<I", word ^ (1 << bit)))
    flat[index] = flipped


def _channel_dim(module: nn.Module, out: torch.Tensor) -> int:
    # Linear layers, embeddings and norms over the last dim put channels last, whatever the
    # rank (ConvNeXt runs its pointwise layers and LayerNorm on NHWC maps); convolutions,
    # BatchNorm and channels-first norms on NCHW maps put them in dim 1, and so do 1-d
    # convolutions on (batch, channels, time) maps (Whisper's conv stem).
    if isinstance(module, nn.Linear | nn.Embedding):
        return -1
    if isinstance(module, nn.LayerNorm):
        # SqueezeBERT's LayerNorm reads and writes (batch, channels, time) maps (it permutes
        # them channels-last and back): its channels are where its normalized size is.
        return -1 if out.shape[-1] == module.normalized_shape[-1] else 1
    if isinstance(module, nn.Conv1d):
        return 1
    if isinstance(module, nn.GroupNorm):
        # GroupNorm reads (batch, channels, *) maps of any rank: EnCodec's GroupNorm after
        # each 1-d convolution writes (batch, channels, time).
        return 1
    if getattr(module, "data_format", None) == "channels_last" or out.dim() != 4:
        return -1
    return 1


def _lane(weight: torch.Tensor, row: int, transposed: bool = False) -> torch.Tensor:
    # One output row of a matrix or one filter of a convolution; in fused MoE experts stacked
    # as (experts, out, in), the same row of every expert, as one lane of the grouped kernel;
    # in experts stacked as (experts, in, out) (GPT-OSS's, is_transposed), the same output
    # column of every expert.
    if transposed and weight.dim() == 3:
        return weight[:, :, row]
    return weight[:, row] if weight.dim() == 3 else weight[row]


class Injector:
    """Hooks one fault into a model and its optimizer; ``step`` is the 1-based step number."""

    def __init__(self, fault: Fault | None, model: nn.Module, opt: torch.optim.Optimizer) -> None:
        self.fault, self.model, self.opt = fault, model, opt
        self.step = 0
        # Output elements the compute fault actually changed: scaling a bf16 activation by
        # 1 + eps rounds back to the same value when eps is below half its rounding step.
        self.changed = 0
        self._before: torch.Tensor | None = None
        if fault and fault.kind == "compute":
            dict(model.named_modules())[fault.site].register_forward_hook(self._scale)

    def _param(self) -> torch.Tensor:
        assert self.fault
        return dict(self.model.named_parameters())[self.fault.site]

    def _active(self, kind: str) -> bool:
        return bool(self.fault and self.fault.kind == kind and self.step >= self.fault.onset)

    def _scale(self, module: nn.Module, _inp: object, out: object) -> object:
        if not self._active("compute") or not isinstance(out, torch.Tensor):
            return None
        assert self.fault
        dim = _channel_dim(module, out)
        scaled = out.clone()
        scaled.select(dim, self.fault.channel).mul_(1 + self.fault.eps)
        channel = (scaled.select(dim, self.fault.channel), out.select(dim, self.fault.channel))
        self.changed += int((channel[0] != channel[1]).sum())
        return scaled

    def before_update(self) -> None:
        if self._active("lane"):
            self._before = self._param().detach().clone()

    def after_update(self) -> None:
        f = self.fault
        if f is None or self.step < f.onset:
            return
        if f.kind == "lane" and self._before is not None:
            owner = self.model.get_submodule(f.site.rpartition(".")[0])
            t = bool(getattr(owner, "is_transposed", False))
            p, before = _lane(self._param().data, f.channel, t), _lane(self._before, f.channel, t)
            p.copy_(before + (p - before) * (1 + f.eps))
        elif f.kind == "flip" and self.step == f.onset:
            _flip(self._param(), f.channel * 7 + 1, f.bit)
        elif f.kind == "flip-state" and self.step == f.onset:
            _flip(self.opt.state[self._param()]["exp_avg"], f.channel * 7 + 1, f.bit)

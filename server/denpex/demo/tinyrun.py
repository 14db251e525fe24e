"""Real training of a tiny transformer on CPU: the runs behind ``denpex demo`` and the drift
tests. It ships in the package (not under tests/) because the demo command runs it.

Everything a drift verdict has to tell apart is produced by actual training, not by drawing
numbers: a healthy rerun that differs from the reference only by reduction-order round-off,
a permanent compute fault, a one-off bit flip and a data-parallel replica whose local
update goes wrong. The model is small enough (28k parameters) that a few hundred steps
take a second or two on one CPU core.

torch is imported inside the functions so importing the demo command stays cheap.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

FaultKind = Literal["compute", "bitflip", "replica_update"]

VOCAB = 32
WIDTH = 32
HEADS = 2
LAYERS = 2
SEQ = 16
BATCH = 16


@dataclass(frozen=True)
class FaultSpec:
    """A fault injected into a simulated run.

    ``step`` is the first training iteration (1-based) the fault acts in, so the
    checkpoint saved after iteration ``step`` is the first one that carries it.

    - ``compute``: a permanent fault in one matmul: output column ``index`` of the
      ``nn.Linear`` named ``target`` (e.g. ``blocks.0.mlp.fc1``) is off by a relative
      ``eps`` in every forward pass from ``step`` on.
    - ``bitflip``: after the update of iteration ``step``, bit ``bit`` of flat element
      ``index`` of parameter ``target`` is flipped once (a memory upset).
    - ``replica_update``: replica mode only; replica ``rank`` applies its optimizer update
      of parameter ``target`` with row ``index`` off by a relative ``eps`` from ``step`` on
      (the all-reduced gradient is still identical on every rank).
    """

    kind: FaultKind
    step: int
    target: str = "blocks.0.mlp.fc1"
    index: int = 0
    eps: float = 1e-4
    bit: int = 25
    rank: int = 0

    def __post_init__(self) -> None:
        if self.step < 1:
            raise ValueError("fault step is 1-based: the first training iteration is 1")
        if not 0 <= self.bit <= 31:
            raise ValueError("bit must be 0..31 (float32)")


def _model(seed: int) -> torch.nn.Module:
    import torch
    from torch import nn

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # Separate q/k/v projections with biases: the key bias has no true gradient
            # (softmax ignores a shift shared by every key score), which is where benign
            # round-off drift collects in real transformers.
            self.q = nn.Linear(WIDTH, WIDTH)
            self.k = nn.Linear(WIDTH, WIDTH)
            self.v = nn.Linear(WIDTH, WIDTH)
            self.proj = nn.Linear(WIDTH, WIDTH)
            self.causal = torch.ones(SEQ, SEQ).tril().bool()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            b, t, d = x.shape
            q, k, v = (
                m(x).view(b, t, HEADS, d // HEADS).transpose(1, 2) for m in (self.q, self.k, self.v)
            )
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // HEADS)
            scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
            y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
            out: torch.Tensor = self.proj(y)  # a module call is untyped in torch's stubs
            return out

    class Mlp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(WIDTH, 4 * WIDTH)
            self.fc2 = nn.Linear(4 * WIDTH, WIDTH)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.fc2(torch.nn.functional.gelu(self.fc1(x)))
            return out

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(WIDTH)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(WIDTH)
            self.mlp = Mlp()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.attn(self.ln1(x))
            out: torch.Tensor = x + self.mlp(self.ln2(x))
            return out

    class TinyLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(VOCAB, WIDTH)
            self.pos = nn.Parameter(torch.zeros(SEQ, WIDTH))
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln_f = nn.LayerNorm(WIDTH)
            self.head = nn.Linear(WIDTH, VOCAB)

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            x = self.embed(tokens) + self.pos[: tokens.shape[1]]
            for block in self.blocks:
                x = block(x)
            out: torch.Tensor = self.head(self.ln_f(x))
            return out

    torch.manual_seed(seed)
    return TinyLM()


def _batches(seed: int, steps: int) -> torch.Tensor:
    """Token sequences from a random sparse Markov chain: learnable, fixed by the seed."""
    import torch

    gen = torch.Generator().manual_seed(seed + 10_007)
    logits = torch.randn(VOCAB, VOCAB, generator=gen) * 3.0
    probs = logits.softmax(-1)
    seqs = torch.empty(steps, BATCH, SEQ + 1, dtype=torch.long)
    seqs[:, :, 0] = torch.randint(VOCAB, (steps, BATCH), generator=gen)
    for t in range(1, SEQ + 1):
        prev = seqs[:, :, t - 1].reshape(-1)
        seqs[:, :, t] = torch.multinomial(probs[prev], 1, generator=gen).view(steps, BATCH)
    return seqs


def _optimizer(model: torch.nn.Module, steps: int) -> tuple[Any, Any]:
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, foreach=True)
    # Warm-up then cosine decay, as real runs do: the benign drift flattens as lr decays.
    warm = max(1, steps // 20)

    def factor(i: int) -> float:
        if i < warm:
            return (i + 1) / warm
        return 0.1 + 0.45 * (1 + math.cos(math.pi * (i - warm) / max(1, steps - warm)))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


class _RoundOff:
    """Emulates reduction-order nondeterminism: moves a random fraction of gradient elements
    by one ulp up or down, with its own seed per run (same data, same init)."""

    def __init__(self, rate: float, seed: int) -> None:
        import torch

        self.rate = rate
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self, grads: list[torch.Tensor]) -> None:
        import torch

        if self.rate <= 0:
            return
        for g in grads:
            hit = torch.rand(g.shape, generator=self.gen) < self.rate
            up = torch.rand(g.shape, generator=self.gen) < 0.5
            toward = torch.where(up, math.inf, -math.inf).to(g.dtype)
            g.copy_(torch.where(hit, torch.nextafter(g, toward), g))


def _flip_bit(param: torch.Tensor, index: int, bit: int) -> None:
    import torch

    with torch.no_grad():
        words = param.data.view(-1).view(torch.int32)
        mask = -(2**31) if bit == 31 else 1 << bit
        words[index] ^= mask


def _compute_fault_hook(fault: FaultSpec, iteration: list[int]) -> Any:
    import torch

    def hook(module: torch.nn.Module, _inputs: Any, out: torch.Tensor) -> torch.Tensor | None:
        if iteration[0] < fault.step:
            return None
        scale = torch.ones(out.shape[-1], dtype=out.dtype)
        scale[fault.index] += fault.eps
        return out * scale

    return hook


def _check_target(
    named: Mapping[str, torch.Tensor], fault: FaultSpec, *, row: bool = False
) -> None:
    """The fault's parameter exists and ``index`` is inside it (a row when ``row``)."""
    if fault.target not in named:
        raise ValueError(f"no parameter {fault.target!r}; one of: {', '.join(named)}")
    param = named[fault.target]
    size = param.shape[0] if row else param.numel()
    if not 0 <= fault.index < size:
        raise ValueError(f"index {fault.index} is outside {fault.target} (size {size})")


def _snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _loss(model: torch.nn.Module, seqs: torch.Tensor) -> torch.Tensor:
    import torch

    logits = model(seqs[:, :-1])
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), seqs[:, 1:].reshape(-1))


class _OneThread:
    """One intra-op thread while training: bit-reproducible and polite on shared cores."""

    def __enter__(self) -> None:
        import torch

        self.saved = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *_exc: object) -> None:
        import torch

        torch.set_num_threads(self.saved)


def _check(steps: int, save_every: int, fault: FaultSpec | None) -> None:
    if steps < 1 or save_every < 1:
        raise ValueError("steps and save_every must be positive")
    if fault is not None and fault.step > steps:
        raise ValueError(f"fault step {fault.step} is after the last step {steps}")


def simulate_run(
    *,
    steps: int,
    save_every: int,
    seed: int = 0,
    fault: FaultSpec | None = None,
    nondeterminism: float = 0.0,
    noise_seed: int = 1,
) -> Iterator[tuple[int, dict[str, torch.Tensor]]]:
    """Train the tiny model and yield ``(step, state_dict)`` every ``save_every`` steps.

    ``seed`` fixes the data and the initialisation; two runs with the same seed and
    ``nondeterminism == 0`` are bitwise identical. ``nondeterminism`` is the fraction of
    gradient elements moved by one ulp each step, drawn from ``noise_seed``: reruns that
    differ only in ``noise_seed`` are the benign reruns a drift verdict must not flag.
    """
    _check(steps, save_every, fault)
    if fault is not None and fault.kind == "replica_update":
        raise ValueError("replica_update faults need simulate_replicas")
    with _OneThread():
        model = _model(seed)
        data = _batches(seed, steps)
        opt, sched = _optimizer(model, steps)
        params = list(model.parameters())
        round_off = _RoundOff(nondeterminism, noise_seed)
        iteration = [0]
        if fault is not None and fault.kind == "compute":
            model.get_submodule(fault.target).register_forward_hook(
                _compute_fault_hook(fault, iteration)
            )
        named = dict(model.named_parameters())
        if fault is not None and fault.kind == "bitflip":
            _check_target(named, fault)
        for i in range(1, steps + 1):
            iteration[0] = i
            opt.zero_grad(set_to_none=True)
            _loss(model, data[i - 1]).backward()
            round_off([p.grad for p in params if p.grad is not None])
            opt.step()
            sched.step()
            if fault is not None and fault.kind == "bitflip" and i == fault.step:
                _flip_bit(named[fault.target], fault.index, fault.bit)
            if i % save_every == 0:
                yield i, _snapshot(model)


def simulate_probed_run(
    out: str | os.PathLike[str], *, steps: int, every: int, seed: int = 0, **kwargs: Any
) -> None:
    """``simulate_run`` seen by a ``DriftProbe``: fingerprints every ``every`` steps in ``out``.

    ``kwargs`` are ``simulate_run``'s (fault, nondeterminism, noise_seed)."""
    from denpex.probe import DriftProbe

    model = _model(seed)
    with DriftProbe(model, out, every=every) as probe:
        for step, state in simulate_run(steps=steps, save_every=every, seed=seed, **kwargs):
            model.load_state_dict(state)
            probe.step(step)


def simulate_replicas(
    *,
    steps: int,
    save_every: int,
    replicas: int = 4,
    seed: int = 0,
    fault: FaultSpec | None = None,
    nondeterminism: float = 0.0,
    noise_seed: int = 1,
) -> Iterator[tuple[int, list[dict[str, torch.Tensor]]]]:
    """Data-parallel training: yield ``(step, [state_dict of rank 0, 1, ...])``.

    Each replica runs forward/backward on its own shard with its own weights; gradients
    are averaged in a fixed order (the all-reduce) and every replica applies the same
    gradient with its own optimizer. Healthy replicas therefore stay bitwise identical,
    round-off included; a ``replica_update`` fault corrupts one rank's local update.
    """
    import torch

    _check(steps, save_every, fault)
    if fault is not None and fault.kind != "replica_update":
        raise ValueError("simulate_replicas injects replica_update faults only")
    if fault is not None and not 0 <= fault.rank < replicas:
        raise ValueError(f"fault rank {fault.rank} is not one of the {replicas} replicas")
    if BATCH % replicas:
        raise ValueError(f"replicas must divide the batch of {BATCH}")
    with _OneThread():
        first = _model(seed)
        if fault is not None:
            _check_target(dict(first.named_parameters()), fault, row=True)
        models = [first] + [copy.deepcopy(first) for _ in range(replicas - 1)]
        data = _batches(seed, steps)
        opts = [_optimizer(m, steps) for m in models]
        round_off = _RoundOff(nondeterminism, noise_seed)
        shard = BATCH // replicas
        for i in range(1, steps + 1):
            for r, (m, (opt, _)) in enumerate(zip(models, opts, strict=True)):
                opt.zero_grad(set_to_none=True)
                _loss(m, data[i - 1, r * shard : (r + 1) * shard]).backward()
            # The all-reduce: a fixed-order mean, round-off and all, handed to every rank.
            by_param = list(zip(*(list(m.parameters()) for m in models), strict=True))
            means = [torch.stack([p.grad for p in ps]).mean(0) for ps in by_param]
            round_off(means)
            for ps, mean in zip(by_param, means, strict=True):
                for p in ps:
                    p.grad = mean.clone()
            for r, (m, (opt, sched)) in enumerate(zip(models, opts, strict=True)):
                if fault is not None and r == fault.rank and i >= fault.step:
                    _corrupt_update(m, opt, fault)
                else:
                    opt.step()
                sched.step()
            if i % save_every == 0:
                yield i, [_snapshot(m) for m in models]


def _corrupt_update(model: torch.nn.Module, opt: Any, fault: FaultSpec) -> None:
    """One rank's optimizer step with row ``fault.index`` of ``fault.target`` off by eps."""
    import torch

    param = model.get_parameter(fault.target)
    before = param.detach()[fault.index].clone()
    opt.step()
    with torch.no_grad():
        param[fault.index] += fault.eps * (param[fault.index] - before)

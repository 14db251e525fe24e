"""Make the same parameter carry the same name across checkpoint layouts.

Training code saves weights under wrappers (DDP's ``module.``, torch.compile's
``_orig_mod.``) and inside full training states (``{"model": ..., "optimizer": ...}``).
A reference saved by plain code must still match a run saved by DeepSpeed or HF.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from denpex.errors import InputError

# Wrapper prefixes that say how the model was run, not what it is.
_WRAPPER_PREFIXES = ("module.", "_orig_mod.")
# Containers that hold the model weights inside a full training state, most specific first.
_WEIGHT_CONTAINERS = ("model", "module", "state_dict", "model_state_dict", "model_state")


def normalise_key(name: str) -> str:
    """``module.module.enc._orig_mod.w`` -> ``enc.w``.

    DDP/DeepSpeed add ``module.`` in front (possibly repeated when wrappers nest);
    torch.compile inserts ``_orig_mod.`` wherever a compiled submodule sits. Only a
    *leading* ``module.`` is a wrapper: a submodule may legitimately be called ``module``.
    """
    while name.startswith(_WRAPPER_PREFIXES):
        name = name.split(".", 1)[1]
    return name.replace("._orig_mod.", ".")


def unwrap(state: Any, key: str | None = None) -> Mapping[str, Any]:
    """Return the model-weights mapping inside a loaded checkpoint object.

    ``key`` (``--key``) names the container explicitly, dotted for nesting
    (``"model.state_dict"``); otherwise the usual containers are tried in order and the
    object itself is used when it already is a flat mapping of tensors.
    """
    if not isinstance(state, Mapping):
        raise InputError(f"checkpoint holds a {type(state).__name__}, not a state dict")
    if key:
        node: Any = state
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                have = ", ".join(sorted(map(str, node))[:8]) if isinstance(node, Mapping) else "-"
                raise InputError(f"--key {key!r}: no {part!r} in the checkpoint (has: {have})")
            node = node[part]
        if not isinstance(node, Mapping):
            raise InputError(f"--key {key!r} names a {type(node).__name__}, not a state dict")
        return node
    for name in _WEIGHT_CONTAINERS:
        inner = state.get(name)
        if isinstance(inner, Mapping) and inner:
            return unwrap(inner)
    return state

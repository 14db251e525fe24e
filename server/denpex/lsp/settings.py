"""The ``denpex.*`` settings the server understands (shared-schema/lsp-settings.schema.json).

Clients send settings in different shapes: VS Code nests them (``{"checkpoints": {"watch":
[...]}}``), some clients flatten them (``{"checkpoints.watch": [...]}``), some wrap them in a
``denpex`` section. ``parse`` accepts all three and never raises: an unknown key or a value
of the wrong type is reported back as a message and the default is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from denpex.lsp.globs import MAX_GLOB

DEFAULT_GLOBS = ("**/*.log", "**/*.out", "**/*.err", "**/slurm-*.out")
DEVICES = ("auto", "cpu", "cuda")

# Settings the VS Code extension reads itself; the server accepts them silently.
CLIENT_SIDE = {
    "python.interpreter",
    "privacy.redactExports",
    "trace.server",
}


@dataclass(frozen=True)
class Settings:
    log_globs: tuple[str, ...] = DEFAULT_GLOBS
    max_size_mb: int = 128
    debounce_ms: int = 300
    watch: tuple[Path, ...] = ()
    reference: Path | None = None
    noise_reference: Path | None = None
    device: str = "auto"
    terminal_watch: bool = True
    problems: tuple[str, ...] = field(default=(), compare=False)


def _flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        # No setting takes an object as its value, so every nested object is a section.
        if isinstance(value, dict) and value:
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _paths(value: Any, root: Path | None) -> tuple[Path, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise TypeError("a list of directory paths")
    return tuple(_path(v, root) for v in items if v.strip())


def _path(value: str, root: Path | None) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() or root is None else root / p


def _optional_path(value: Any, root: Path | None) -> Path | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise TypeError("a directory path")
    return _path(value, root)


def _int_in(low: int, high: int) -> Callable[[Any, Path | None], int]:
    def conv(value: Any, _root: Path | None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise TypeError(f"an integer from {low} to {high}")
        return value

    return conv


def _globs(value: Any, _root: Path | None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, str) and 0 < len(v) <= MAX_GLOB for v in value
    ):
        raise TypeError(f"a list of glob patterns (each at most {MAX_GLOB} characters)")
    return tuple(value)


def _bool(value: Any, _root: Path | None) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _device(value: Any, _root: Path | None) -> str:
    if value not in DEVICES:
        raise TypeError(" or ".join(repr(d) for d in DEVICES))
    return str(value)


_FIELDS = {
    "logs.globs": ("log_globs", _globs),
    "logs.maxSizeMB": ("max_size_mb", _int_in(1, 4096)),
    "diagnostics.debounceMs": ("debounce_ms", _int_in(0, 10_000)),
    "checkpoints.watch": ("watch", _paths),
    "checkpoints.reference": ("reference", _optional_path),
    "checkpoints.noiseReference": ("noise_reference", _optional_path),
    "drift.device": ("device", _device),
    "terminal.watch": ("terminal_watch", _bool),
}


def parse(raw: Any, root: Path | None = None) -> Settings:
    """Settings from whatever the client sent; relative paths resolve against ``root``."""
    if raw is None:
        return Settings()
    if not isinstance(raw, dict):
        return Settings(problems=(f"settings must be an object, got {type(raw).__name__}",))
    if isinstance(raw.get("denpex"), dict):
        raw = raw["denpex"]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in _flatten(raw).items():
        if key in CLIENT_SIDE:
            continue
        if key not in _FIELDS:
            problems.append(f"unknown setting denpex.{key} ignored")
            continue
        attr, convert = _FIELDS[key]
        if value is None and attr not in ("reference", "noise_reference"):
            continue  # unset: keep the default
        try:
            values[attr] = convert(value, root)
        except TypeError as exc:
            problems.append(f"denpex.{key} must be {exc}; using the default")
    return Settings(**values, problems=tuple(problems))

"""In-training drift probe: ``from denpex.probe import DriftProbe``.

Kept lazy: ``denpex.probe.records`` (used by the drift reader and the language server) must
not pull torch in through this package's import.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DriftProbe", "ReplicaMismatchError"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from denpex.probe import probe

        return getattr(probe, name)
    raise AttributeError(f"module 'denpex.probe' has no attribute {name!r}")

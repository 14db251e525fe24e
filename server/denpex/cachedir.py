"""Where Denpex keeps what it can recompute: ``$XDG_CACHE_HOME/denpex``, else
``~/.cache/denpex`` (drift steps, the catalog's pattern analysis)."""

from __future__ import annotations

import os
from pathlib import Path


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "denpex"

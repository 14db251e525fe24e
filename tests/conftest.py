"""Suite-wide fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _cache_outside_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Denpex caches the catalog's analysis and drift steps under $XDG_CACHE_HOME/denpex; the
    suite and the CLI subprocesses it starts share one temporary cache, never the user's."""
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if before is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = before

"""Fixtures for the language-server tests (helpers live in lsp_harness.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_harness import Session, start, stop


@pytest_asyncio.fixture
async def lsp(tmp_path: Path) -> AsyncIterator[Session]:
    session = await start(tmp_path)
    yield session
    await stop(session)


@pytest.fixture
def logs() -> Path:
    return Path(__file__).resolve().parent / "data"

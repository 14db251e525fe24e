"""Fixtures for the language-server tests (helpers live in lsp_harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def logs() -> Path:
    return Path(__file__).resolve().parent / "data"

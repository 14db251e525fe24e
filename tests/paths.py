"""Where the tests' shared data lives, for test files at any depth under tests/ (pytest puts
tests/ on sys.path: `pythonpath` in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
LOGS = TESTS / "logs"
FIXTURES = TESTS / "fixtures"
CORPUS = TESTS / "corpus"
SCHEMAS = ROOT / "shared-schema"

"""The version has one source (denpex/__init__.py); what ships with it agrees."""

from __future__ import annotations

import json
import tomllib

import denpex
from paths import ROOT


def test_package_json_version_is_the_python_version() -> None:
    pkg = json.loads((ROOT / "package.json").read_text())
    assert pkg["version"] == denpex.__version__
    assert f"denpex-{denpex.__version__}.vsix" in pkg["scripts"]["package"]


def test_pyproject_reads_the_version_from_the_package() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "denpex.__version__"}


def test_every_package_folder_is_a_package() -> None:
    # A folder without __init__.py is left out of the wheel the extension installs.
    src = ROOT / "server" / "denpex"
    for folder in [src, *(p for p in src.rglob("*") if p.is_dir())]:
        if folder.name in ("__pycache__", "entries") or "samples" in folder.parts:
            continue
        assert (folder / "__init__.py").exists(), folder

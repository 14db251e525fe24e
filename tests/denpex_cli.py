"""Shared by the CLI tests: run `python -m denpex` as users do, and check reports against
shared-schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from paths import ROOT


def denpex(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "denpex", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def validate_drift_report(report: dict[str, Any]) -> None:
    import jsonschema
    import referencing

    schemas = {
        name: json.loads((ROOT / "shared-schema" / name).read_text())
        for name in ("drift-report.schema.json", "diagnosis.schema.json")
    }
    registry = referencing.Registry().with_resources(
        (f"denpex/{name}", referencing.Resource.from_contents(s)) for name, s in schemas.items()
    )
    jsonschema.Draft202012Validator(
        schemas["drift-report.schema.json"], registry=registry
    ).validate(report)

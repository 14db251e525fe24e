"""The failure catalog: one TOML data file per entry under ``entries/``.

Entries are data (validated against shared-schema/catalog-entry.schema.json by the tests);
this module only loads them and fills the templated verification commands.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from denpex.errors import InputError

Entry = dict[str, Any]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def entries() -> dict[str, Entry]:
    """All entries by id, loaded once per process."""
    out: dict[str, Entry] = {}
    folder = resources.files("denpex.catalog") / "entries"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".toml"):
            entry = tomllib.loads(item.read_text(encoding="utf-8"))
            out[entry["id"]] = entry
    return out


def get(entry_id: str) -> Entry:
    try:
        return entries()[entry_id]
    except KeyError:
        raise InputError(f"unknown catalog entry: {entry_id!r} (see `denpex catalog`)") from None


def fill_template(template: str, values: Mapping[str, object]) -> str:
    """Fill {name} placeholders; an unknown value stays visible as <name> for the user."""

    def sub(m: re.Match[str]) -> str:
        value = values.get(m.group(1))
        return f"<{m.group(1)}>" if value is None else str(value)

    return _PLACEHOLDER.sub(sub, template)


def verification_commands(entry: Entry, values: Mapping[str, object]) -> list[str]:
    return [fill_template(v["command"], values) for v in entry["verification"]]

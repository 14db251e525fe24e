"""One source for the settings: shared-schema/lsp-settings.schema.json. VS Code's
package.json declares exactly its keys with the same defaults and bounds (users see every
setting the server reads), and the server's parser reads each key the schema gives it."""

from __future__ import annotations

import json
from typing import Any

from denpex.lsp.settings import _FIELDS, CLIENT_SIDE, Settings, parse
from paths import ROOT

SCHEMA = json.loads((ROOT / "shared-schema" / "lsp-settings.schema.json").read_text())
MANIFEST = json.loads((ROOT / "package.json").read_text())
CONTRIBUTED = MANIFEST["contributes"]["configuration"]["properties"]


def _leaves(schema: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, sub in schema["properties"].items():
        if sub.get("type") == "object":
            out.update(_leaves(sub, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = sub
    return out


LEAVES = _leaves(SCHEMA)


def test_package_json_declares_the_schemas_settings() -> None:
    assert set(CONTRIBUTED) == {f"denpex.{k}" for k in LEAVES}
    for key, spec in LEAVES.items():
        declared = CONTRIBUTED[f"denpex.{key}"]
        assert declared["default"] == spec["default"], key
        for bound in ("enum", "minimum", "maximum"):
            assert declared.get(bound) == spec.get(bound), (key, bound)
        types = spec["type"] if isinstance(spec.get("type"), list) else [spec.get("type")]
        if "enum" not in spec:
            assert declared["type"] in types, key


def test_the_server_reads_every_setting_it_is_sent() -> None:
    """Each schema key is the server's (parsed, with the schema's default) or the client's."""
    assert set(_FIELDS) | CLIENT_SIDE == set(LEAVES)
    assert not set(_FIELDS) & CLIENT_SIDE
    defaults = Settings()
    for key, (attr, _convert) in _FIELDS.items():
        parsed = parse({key: LEAVES[key]["default"]})
        assert not parsed.problems, key
        assert getattr(parsed, attr) == getattr(defaults, attr), key

"""The typed params of the custom methods (denpex.lsp.protocol) against shared-schema/:
the same methods, the same wire names and required keys, and JSON types taken as sent."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from denpex.lsp import protocol
from denpex.lsp.protocol import (
    BadParams,
    DiagnoseParams,
    DiagnosisMarkdownParams,
    TerminalCommandEndParams,
    TerminalDataParams,
    converter_factory,
)
from paths import SCHEMAS


def _params_schemas() -> dict[str, dict[str, Any]]:
    """x-method → the schema of what the client sends (requests' params, notifications)."""
    out = {}
    for path in SCHEMAS.glob("lsp-*.schema.json"):
        doc = json.loads(path.read_text())
        if "x-method" in doc and not path.name.endswith("-result.schema.json"):
            out[doc["x-method"]] = doc
    return out


def _wire(cls: type) -> tuple[set[str], set[str]]:
    """The wire names of a params class: all of them, and those without a default."""
    fields = attrs.fields(cls)
    names = {protocol._camel(f.name) for f in fields}
    return names, {protocol._camel(f.name) for f in fields if f.default is attrs.NOTHING}


def test_every_typed_method_matches_its_schema() -> None:
    schemas = _params_schemas()
    typed = {**protocol.PARAMS, f"workspace/executeCommand {protocol.DIAGNOSE}": DiagnoseParams}
    client_to_server = {
        m for m, s in schemas.items() if "server→client" not in s.get("x-direction", "")
    }
    assert set(typed) == client_to_server
    for method, cls in typed.items():
        names, required = _wire(cls)
        schema = schemas[method]
        # Every key the server reads is in the schema (the schema may carry more: exitCode).
        assert names <= set(schema["properties"]), method
        assert required == set(schema.get("required", [])), method
    for method in (protocol.FINDING, protocol.DRIFT_UPDATE, protocol.STATUS):
        assert schemas[method]["x-direction"].startswith("server→client")


@pytest.mark.parametrize(
    ("params", "cls", "why"),
    [
        ({"terminalId": "t", "data": 5}, TerminalDataParams, "data must be a string"),
        ({"terminalId": ["t"], "data": "x"}, TerminalDataParams, "terminalId must be"),
        ({"terminalId": True, "data": "x"}, TerminalDataParams, "terminalId must be"),
        ({"data": "x"}, TerminalDataParams, "params must be"),
        (["t", "x"], TerminalDataParams, "params must be an object"),
        ({"diagnosis": {"findings": []}, "redact": "yes"}, DiagnosisMarkdownParams, "boolean"),
        (
            {"diagnosis": {"findings": [{"id": 1}]}, "redact": True},
            DiagnosisMarkdownParams,
            "finding 0",
        ),
        ({"text": 5}, DiagnoseParams, "text must be a string"),
        ({"uri": "file:///a.log"}, DiagnoseParams, "or uri and range"),
        ({"text": "x", "range": {"start": 1}}, DiagnoseParams, "range must be an LSP Range"),
    ],
)
def test_params_that_do_not_fit_are_refused_with_a_reason(params: Any, cls: type, why: str) -> None:
    with pytest.raises(BadParams, match=why):
        converter_factory().structure(params, cls)


def test_values_are_taken_as_sent() -> None:
    conv = converter_factory()
    data = conv.structure({"terminalId": 7, "data": "boom", "name": 3, "x": 1}, TerminalDataParams)
    assert data == TerminalDataParams(terminal_id=7, data="boom", name=None)
    end = conv.structure(
        {"terminalId": "t", "commandLine": "", "exitCode": None}, TerminalCommandEndParams
    )
    assert end.command_line == ""
    rng = {"start": {"line": 3, "character": 0}, "end": {"line": 5, "character": 0}}
    diagnose = conv.structure({"uri": "file:///a.log", "range": rng}, DiagnoseParams)
    assert diagnose.range is not None and diagnose.range.start.line == 3

"""The editor shows the initiating line first, and "Denpex: Diagnose" on a log the server
has already scanned does not count its problems twice."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import start, stop, validate
from lsprotocol import types

from paths import CORPUS

# A real torchelastic log (tests/corpus, a023): the launcher's SIGTERMs to the other
# children are stamped before the line naming the rank that died first.
CORPUS_LOG = CORPUS / "logs" / "a023.log"
Error = types.DiagnosticSeverity.Error


async def test_initiating_line_first_and_diagnose_does_not_double(tmp_path: Path) -> None:
    text = CORPUS_LOG.read_text()
    initiating = next(i for i, ln in enumerate(text.splitlines()) if "failed (exitcode" in ln)
    path = tmp_path / "job.log"
    path.write_text(text)
    uri = path.as_uri()
    s = await start(tmp_path)
    try:
        s.open(uri, text)
        diags = await s.diagnostics_for(uri, lambda d: any(x.severity == Error for x in d))
        assert diags[0].severity == Error
        assert diags[0].range.start.line == initiating
        scanned = [(d.range.start.line, d.code, d.severity) for d in diags]

        # What the extension's "Denpex: Diagnose" sends for the whole document.
        lines = text.count("\n")
        args = {
            "text": text,
            "uri": uri,
            "range": {
                "start": {"line": 0, "character": 0},
                "end": {"line": lines, "character": 0},
            },
        }
        s.client.diagnostics.pop(uri, None)
        result = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(command="denpex.diagnose", arguments=[args])
        )
        validate("diagnosis.schema.json", result)
        evidence = result["findings"][0]["evidence"]
        assert evidence[0]["role"] == "initiating"
        assert evidence[0]["line"] == initiating + 1

        again = await s.diagnostics_for(uri, lambda d: True)
        assert [(d.range.start.line, d.code, d.severity) for d in again] == scanned
    finally:
        await stop(s)

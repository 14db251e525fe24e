"""Flight Recorder dumps in the editor: a real gloo job's log opened with its dumps beside it.
The dumps are read by the dump worker process, and the finding they give lands on the log's
lines, with hover saying where each rank is."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import start, stop
from lsprotocol import types

from fr_job import run_job

STALL = "rank-stall-before-collective"


async def test_dumps_beside_an_open_log_name_the_rank_that_never_arrived(tmp_path: Path) -> None:
    job = run_job(tmp_path / "job", "skip")
    log = job / "train.log"
    text = log.read_text()
    s = await start(tmp_path)
    try:
        uri = log.as_uri()
        s.open(uri, text, language_id="plaintext")
        diags = await s.diagnostics_for(uri, lambda d: any(x.code == STALL for x in d))
        stall = [d for d in diags if d.code == STALL]
        # The waiting ranks' timeouts are collateral of rank 3, which the log never names.
        assert stall and all(d.severity == types.DiagnosticSeverity.Warning for d in stall)
        assert all("caused by rank 3" in d.message for d in stall), [d.message for d in stall]
        lines = text.splitlines()
        assert all("Timed out waiting" in lines[d.range.start.line] for d in stall)
        assert not [d for d in diags if d.severity == types.DiagnosticSeverity.Error]

        hover = await s.timed.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=stall[0].range.start.line, character=0),
            )
        )
        assert hover is not None
        # Text from logs and dumps is Markdown-escaped in the hover ("\#2"): compare unescaped.
        value = hover.contents.value.replace("\\", "")  # type: ignore[union-attr]
        assert "Initiating rank 3" in value
        assert (
            "Where each rank is: ranks 0-2 last entered all_reduce #2 on default_pg; "
            "rank 3 last entered all_reduce #1 on default_pg." in value
        )
    finally:
        await stop(s)

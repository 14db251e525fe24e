"""Log documents end to end: diagnostics with rank attribution, hover, code actions,
the catalog entry request, incremental re-diagnosis of a growing log."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import Session, start, stop, validate
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from denpex import catalog

Error = types.DiagnosticSeverity.Error
Warning = types.DiagnosticSeverity.Warning


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


def _lines_with(text: str, needle: str) -> set[int]:
    return {i for i, line in enumerate(text.splitlines()) if needle in line}


async def _open_oom_log(
    s: Session, tmp_path: Path, logs: Path
) -> tuple[str, str, list[types.Diagnostic]]:
    text = (logs / "oom_rank5.log").read_text()
    path = tmp_path / "job.log"
    path.write_text(text)
    uri = path.as_uri()
    s.open(uri, text, language_id="plaintext")  # claimed by the *.log glob, not the language id
    diags = await s.diagnostics_for(uri, lambda d: any(x.severity == Error for x in d))
    return uri, text, diags


async def test_multi_rank_log_ranks_roles_hover_and_actions(tmp_path: Path, logs: Path) -> None:
    s = await start(tmp_path)
    try:
        uri, text, diags = await _open_oom_log(s, tmp_path, logs)
        oom = _line_of(text, "OutOfMemoryError")
        watchdog_lines = _lines_with(text, "Watchdog caught collective operation timeout")

        errors = [d for d in diags if d.severity == Error]
        assert [e.range.start.line for e in errors] == [oom]
        error = errors[0]
        assert (error.source, error.code) == ("denpex", "cuda-oom")
        assert "initiating rank 5" in error.message

        # Seven ranks' watchdog timeouts: one grouped collateral warning, ranks listed.
        on_watchdog = [d for d in diags if d.range.start.line in watchdog_lines]
        assert len(on_watchdog) == 1
        collateral = on_watchdog[0]
        assert collateral.severity == Warning
        assert collateral.range.start.line == min(watchdog_lines)
        assert "collateral ranks 0-4,6-7" in collateral.message
        assert "caused by rank 5" in collateral.message
        related = collateral.related_information or []
        assert related[0].location.uri == uri
        assert related[0].location.range.start.line == oom

        # Hover on the initiating line and on the collateral line.
        hover = await s.timed.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(oom, 3))
        )
        assert hover is not None
        value = hover.contents.value  # type: ignore[union-attr]
        assert catalog.get("cuda-oom")["quick_answer"].split()[0] in value
        assert "Root cause" in value and "Fix" in value and "initiating" in value
        later = min(watchdog_lines)
        hover2 = await s.timed.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(later, 0))
        )
        assert hover2 is not None and "collateral" in hover2.contents.value  # type: ignore[union-attr]
        none = await s.timed.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
        )
        assert none is None

        # Code actions on the error.
        got = await s.timed.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri),
                range=error.range,
                context=types.CodeActionContext(diagnostics=[error]),
            )
        )
        assert got
        commands = [a.command for a in got if isinstance(a, types.CodeAction) and a.command]
        by_name: dict[str, list[types.Command]] = {}
        for c in commands:
            by_name.setdefault(c.command, []).append(c)
        run = by_name["denpex.runInTerminal"]
        assert run, "a verification command to run"
        for c in run:
            validate(
                "lsp-client-commands.schema.json", c.arguments[0], "#/$defs/denpex.runInTerminal"
            )
        for c in by_name["denpex.copyToClipboard"]:
            validate(
                "lsp-client-commands.schema.json", c.arguments[0], "#/$defs/denpex.copyToClipboard"
            )
        # Every command can be copied; only those without a blank to fill are offered to run.
        copies = [c.arguments[0]["text"] for c in by_name["denpex.copyToClipboard"]]
        assert [c.arguments[0]["command"] for c in run] == [t for t in copies if "<" not in t]
        [show] = by_name["denpex.showCatalogEntry"]
        validate(
            "lsp-client-commands.schema.json", show.arguments[0], "#/$defs/denpex.showCatalogEntry"
        )
        assert show.arguments[0] == {"id": "cuda-oom"}

        # The block around the error: the traceback, bounded by the log's structure.
        [block] = by_name["denpex.diagnose"]
        validate("lsp-diagnose-params.schema.json", block.arguments[0])
        result = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(command="denpex.diagnose", arguments=block.arguments)
        )
        validate("diagnosis.schema.json", result)
        assert result["findings"][0]["id"] == "cuda-oom"
        assert result["findings"][0]["initiating_rank"] == 5
        evidence_lines = {e["line"] for e in result["findings"][0]["evidence"]}
        assert oom + 1 in evidence_lines  # numbered as in the document (1-based)

        # The catalog entry behind "open the catalog entry".
        entry = await s.request("denpex/catalogEntry", {"id": "cuda-oom"})
        validate("lsp-catalog-entry-result.schema.json", entry)
        assert entry["title"] == catalog.get("cuda-oom")["title"]
        assert entry["title"] in entry["markdown"]
        with pytest.raises(JsonRpcInvalidParams, match="unknown catalog entry"):
            await s.request("denpex/catalogEntry", {"id": "no-such-entry"})
        with pytest.raises(JsonRpcInvalidParams):
            await s.request("denpex/catalogEntry", ["cuda-oom"])

        # Closing the document clears its diagnostics.
        s.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        )
        await s.diagnostics_for(uri, lambda d: d == [])
    finally:
        await stop(s)


async def test_growing_log_is_rescanned_incrementally(tmp_path: Path, logs: Path) -> None:
    s = await start(tmp_path)
    try:
        healthy = (logs / "healthy.log").read_text()
        failure = (logs / "oom_rank5.log").read_text()
        uri = (tmp_path / "train.out").as_uri()
        s.open(uri, healthy)
        await s.diagnostics_for(uri, lambda d: d == [])
        n = healthy.count("\n")

        def scans() -> list[str]:
            return [
                m.message
                for m in s.client.log_messages
                if uri in m.message and "scan of" in m.message
            ]

        assert "full scan of 398 line(s)" in scans()[-1]

        # The job appends the failure: only the new lines are read.
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(n, 0), types.Position(n, 0)), text=failure
                    )
                ],
            )
        )
        diags = await s.diagnostics_for(uri, lambda d: any(x.severity == Error for x in d))
        assert [d.range.start.line for d in diags if d.severity == Error] == [
            n + _line_of(failure, "OutOfMemoryError")
        ]
        assert f"incremental scan of {failure.count(chr(10))} line(s)" in scans()[-1]

        # An edit above the tail invalidates what was read: the whole log is read again.
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(0, 0), types.Position(1, 0)), text=""
                    )
                ],
            )
        )
        diags = await s.diagnostics_for(
            uri,
            lambda d: (
                [x.range.start.line for x in d if x.severity == Error]
                == [n - 1 + _line_of(failure, "OutOfMemoryError")]
            ),
        )
        assert "full scan" in scans()[-1]
    finally:
        await stop(s)

"""Bad input never stops the server, and the server never touches the network."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsp_harness import start, stop, validate
from lsprotocol import types

Error = types.DiagnosticSeverity.Error


async def test_bad_documents_and_settings_leave_the_server_serving(
    tmp_path: Path, logs: Path
) -> None:
    settings = {
        "logs": {"maxSizeMB": 1},
        "bogus": {"key": 1},
        "diagnostics": {"debounceMs": "fast"},
    }
    s = await start(tmp_path, settings)
    try:
        failure = (logs / "oom_rank5.log").read_text()
        # Too large for the configured cap: a clear message, no diagnostics, text not kept.
        big = tmp_path / "huge.log"
        s.open(big.as_uri(), ("[rank0]: step 1 | loss 2.0\n" * 60_000) + failure)
        # A binary file with a .log name.
        s.open(
            (tmp_path / "core.log").as_uri(),
            "\x7fELF\x02\x01\x01\x00\x00\x00" + "\x00" * 64 + failure,
        )
        # Invalid UTF-8 as an editor decodes it: replacement characters and lone surrogates.
        mangled = "\ufffd\ufffd garbage \udcff\udcfe line\n" + failure + "tail \ud800 end"
        mangled_uri = (tmp_path / "mangled.log").as_uri()
        s.open(mangled_uri, mangled)
        diags = await s.diagnostics_for(mangled_uri, lambda d: any(x.severity == Error for x in d))
        oom = next(i for i, line in enumerate(mangled.splitlines()) if "OutOfMemoryError" in line)
        assert [d.range.start.line for d in diags if d.severity == Error] == [oom]

        def shown() -> list[str]:
            return [m.message for m in s.client.messages]

        await s.wait_for(lambda: any("binary" in m for m in shown()))
        assert any(
            "above denpex.logs.maxSizeMB (1)" in m and "denpex diagnose" in m for m in shown()
        )
        assert big.as_uri() not in s.client.diagnostics
        logged = [m.message for m in s.client.log_messages]
        assert any("unknown setting denpex.bogus.key ignored" in m for m in logged)
        assert any("denpex.diagnostics.debounceMs must be an integer" in m for m in logged)
        # Edits to refused documents are ignored, closing them is fine.
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=big.as_uri(), version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="x")],
            )
        )
        s.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(big.as_uri()))
        )
        status = await s.status()
        assert status["documents"] == 1  # only the mangled log is held
        # A malformed request gets an LSP error, an unknown notification is ignored.
        s.client.protocol.notify("denpex/noSuchNotification", {"x": 1})
        # Still serving other documents.
        ok_uri = (tmp_path / "after.log").as_uri()
        s.open(ok_uri, failure)
        await s.diagnostics_for(ok_uri, lambda d: any(x.severity == Error for x in d))
        assert s.client.error is None
    finally:
        await stop(s)


def _mapped_libraries(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps")
async def test_guard_refuses_network_and_torch_stays_out(tmp_path: Path, logs: Path) -> None:
    s = await start(tmp_path, args=("--check-guard",))
    try:
        status = await s.wait_for(
            lambda: s.custom["denpex/status"] and s.custom["denpex/status"][-1]
        )
        validate("lsp-status.schema.json", status)
        # The self-test's connection attempt was refused in the server process and counted.
        status = await s.status()
        assert status["guardSelfTest"] == "refused"
        assert status["blockedConnections"] == 1
        assert status["privacy"] == "local-only"
        # Diagnosing a log does not load torch into the server (checked from outside).
        uri = (tmp_path / "job.log").as_uri()
        s.open(uri, (logs / "oom_rank5.log").read_text())
        await s.diagnostics_for(uri, lambda d: bool(d))
        assert "libtorch" not in _mapped_libraries(s.pid)
    finally:
        await stop(s, blocked=1)

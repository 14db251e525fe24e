"""Hostile log documents through the real language server (issue 13): a line built for
catastrophic regex backtracking must not stall the server, and verification commands
filled from the log are never offered to run when a value fails its check."""

from __future__ import annotations

import time
from pathlib import Path

from lsp_harness import start, stop
from lsprotocol import types

Error = types.DiagnosticSeverity.Error
IMA = "RuntimeError: CUDA error: an illegal memory access was encountered"


async def test_a_line_built_for_backtracking_does_not_stall_the_server(tmp_path: Path) -> None:
    # Before: 70 s of a frozen server for the 65 KB line, and the document's lines were
    # never cut. Each line below cost a backtracking engine the square of its length.
    lines = [
        "a" * 65_000 + " kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off",
        "NCCL WARN " * 6_500,
        "Row Remapper" * 5_400,
        "x" * (1 << 20),
        f"[rank2]:{IMA}",
    ]
    s = await start(tmp_path)
    try:
        uri = (tmp_path / "kern.log").as_uri()
        began = time.monotonic()
        s.open(uri, "\n".join(lines) + "\n")
        diags = await s.diagnostics_for(uri, lambda d: any(x.severity == Error for x in d))
        hover = await s.timed.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(4, 3))
        )
        assert time.monotonic() - began < 20, "the server answered, but only after a stall"
        assert any(d.code == "cuda-illegal-memory-access" for d in diags)
        assert hover is not None
    finally:
        await stop(s)


async def test_a_hostile_host_is_never_offered_to_run(tmp_path: Path) -> None:
    host = "x;touch${IFS}PWNED;#"
    text = (
        f"slurmstepd: error: *** JOB 1234 ON {host} CANCELLED AT 2024-05-01T12:00:00 "
        "DUE TO TIME LIMIT ***\n"
    )
    s = await start(tmp_path)
    try:
        uri = (tmp_path / "slurm.out").as_uri()
        s.open(uri, text)
        diags = await s.diagnostics_for(uri, lambda d: bool(d))
        got = await s.timed.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri),
                range=diags[0].range,
                context=types.CodeActionContext(diagnostics=diags),
            )
        )
        commands = [a.command for a in got or [] if isinstance(a, types.CodeAction) and a.command]
        run = [c.arguments[0]["command"] for c in commands if c.command == "denpex.runInTerminal"]
        copy = [c.arguments[0]["text"] for c in commands if c.command == "denpex.copyToClipboard"]
        tainted = [c for c in copy if "PWNED" in c]
        assert tainted and all(f"'{host}'" in c for c in tainted)  # shown, quoted
        assert not [c for c in run if "PWNED" in c]  # never offered to run
    finally:
        await stop(s)

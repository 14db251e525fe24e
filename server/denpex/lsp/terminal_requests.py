"""``denpex/diagnoseTerminal``: diagnose a terminal's last command from the server's buffer.

The client forwards raw terminal output (``denpex/terminalData``); the server strips the
escapes and keeps a bounded tail per terminal (terminals.py). "Diagnose Terminal Output"
then names the terminal instead of sending its text, so the editor holds no terminal
buffer and no escape grammar of its own.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from denpex.diagnosis import LogScanner
from denpex.finding import Finding, diagnosis_json
from denpex.lsp.protocol import DIAGNOSE_TERMINAL, DiagnoseTerminalParams
from denpex.lsp.terminals import CommandOutput

if TYPE_CHECKING:
    from denpex.lsp.server import DenpexServer


def _scan(output: CommandOutput) -> list[Finding]:
    scanner = LogScanner()
    scanner.feed_lines(output.name, output.lines, first_line=1)
    return scanner.findings()


async def diagnose_terminal(ls: DenpexServer, params: DiagnoseTerminalParams) -> dict[str, Any]:
    output = await ls.terminals.output(params.terminal_id)
    if output is None:  # no shell integration there, or the server restarted since
        return {
            "name": None,
            "commandLine": None,
            "lines": 0,
            "truncated": False,
            "diagnosis": diagnosis_json([]),
        }
    findings = await asyncio.get_running_loop().run_in_executor(ls.pool, _scan, output)
    return {
        "name": output.name,
        "commandLine": output.command_line,
        "lines": len(output.lines),
        "truncated": output.truncated,
        "diagnosis": diagnosis_json(findings),
    }


def register(server: DenpexServer) -> None:
    server.feature(DIAGNOSE_TERMINAL)(diagnose_terminal)

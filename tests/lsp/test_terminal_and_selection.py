"""Terminal output notifications and `denpex.diagnose` on a selection, over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import Session, start, stop, validate
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

Error = types.DiagnosticSeverity.Error


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _colour(text: str) -> str:
    """What a terminal sends: CRLF line ends, colours, a shell-integration OSC marker."""
    out = []
    for line in text.splitlines():
        if "Error" in line or "Watchdog" in line:
            line = f"\x1b[1;31m{line}\x1b[0m"
        out.append(line + "\r\n")
    return "\x1b]633;C\x07" + "".join(out)


async def _send_terminal(s: Session, tid: str, chunks: list[str]) -> None:
    for chunk in chunks:
        s.client.protocol.notify(
            "denpex/terminalData", {"terminalId": tid, "name": "train", "data": chunk}
        )


async def test_terminal_chunks_split_mid_line_give_one_finding(tmp_path: Path, logs: Path) -> None:
    s = await start(tmp_path)
    try:
        raw = _colour((logs / "oom_rank5.log").read_text())
        # 7-character chunks cut lines, CRLF pairs and escape sequences apart.
        chunks = _chunks(raw, 7)
        assert any(c.endswith("\x1b") or c.endswith("\x1b[1") for c in chunks)
        await _send_terminal(s, "t1", chunks)
        findings = await s.wait_for(lambda: s.custom["denpex/finding"])
        s.client.protocol.notify(
            "denpex/terminalCommandEnd",
            {"terminalId": "t1", "commandLine": "torchrun train.py", "exitCode": 1},
        )
        status = await s.status()  # a round trip: the command end has been handled
        assert status["terminals"] == 1
        await asyncio.sleep(0.8)  # longer than the server's quiet period
        assert len(s.custom["denpex/finding"]) == 1, "one notification per failure, not per chunk"
        [note] = findings
        validate("lsp-finding.schema.json", note)
        assert note["terminalId"] == "t1" and note["source"] == "train"
        top = note["diagnosis"]["findings"][0]
        assert top["id"] == "cuda-oom" and top["initiating_rank"] == 5
        oom = next(e for e in top["evidence"] if e["role"] == "initiating")
        assert "\x1b" not in oom["text"] and "\r" not in oom["text"]
        assert oom["text"].endswith("reserved by PyTorch but unallocated.")

        # The buffered output of the last command can be diagnosed on demand.
        result = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(command="denpex.diagnose", arguments=[{"terminalId": "t1"}])
        )
        validate("diagnosis.schema.json", result)
        assert result["findings"][0]["id"] == "cuda-oom"

        # The same failure in the next command is a new failure: reported again.
        await _send_terminal(s, "t1", _chunks(raw, 4096))
        await s.wait_for(lambda: len(s.custom["denpex/finding"]) == 2)

        # A healthy command's output reports nothing.
        await _send_terminal(s, "t2", [_colour((logs / "healthy.log").read_text())])
        s.client.protocol.notify(
            "denpex/terminalCommandEnd", {"terminalId": "t2", "commandLine": "ls", "exitCode": 0}
        )
        await asyncio.sleep(0.8)
        assert len(s.custom["denpex/finding"]) == 2

        # Malformed notifications are logged and ignored; the server keeps serving.
        s.client.protocol.notify("denpex/terminalData", {"name": "x", "data": "boom"})
        s.client.protocol.notify("denpex/terminalData", {"terminalId": "t3", "data": 42})
        s.client.protocol.notify("denpex/terminalData", ["not", "an", "object"])
        s.client.protocol.notify("denpex/terminalClosed", {"terminalId": "t2"})
        status = await s.status()
        assert status["terminals"] == 1  # t1: a message whose params do not fit is not read
        warnings = [m.message for m in s.client.log_messages if m.type == types.MessageType.Warning]
        assert sum("denpex/terminalData: ignored" in w for w in warnings) == 3
    finally:
        await stop(s)


async def test_diagnose_selection_publishes_on_the_range(tmp_path: Path, logs: Path) -> None:
    s = await start(tmp_path)
    try:
        failure = (logs / "oom_rank5.log").read_text()
        prose = "Notes from the on-call shift.\nThe job died overnight, log pasted below.\n\n"
        text = prose + failure + "\nFollow-up: check node 5.\n"
        uri = (tmp_path / "notes.md").as_uri()
        s.open(uri, text, language_id="markdown")  # not a log: nothing published on open
        first = prose.count("\n")
        last = first + failure.count("\n")
        selection = "\n".join(text.splitlines()[first:last])
        rng = {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}
        args = {"text": selection, "uri": uri, "range": rng}
        validate("lsp-diagnose-params.schema.json", args)
        result = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(command="denpex.diagnose", arguments=[args])
        )
        validate("diagnosis.schema.json", result)
        top = result["findings"][0]
        assert (top["id"], top["initiating_rank"]) == ("cuda-oom", 5)
        oom_line = next(i for i, line in enumerate(text.splitlines()) if "OutOfMemoryError" in line)
        initiating = [e for e in top["evidence"] if e["role"] == "initiating"]
        assert [e["line"] for e in initiating] == [oom_line + 1]
        diags = await s.diagnostics_for(uri, lambda d: bool(d))
        assert [d.range.start.line for d in diags if d.severity == Error] == [oom_line]

        # Without text: the server reads the range from the open document.
        again = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="denpex.diagnose", arguments=[{"uri": uri, "range": rng}]
            )
        )
        assert again == result

        # Text alone: diagnosis returned, nothing published.
        alone = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(command="denpex.diagnose", arguments=[{"text": failure}])
        )
        validate("diagnosis.schema.json", alone)
        assert alone["findings"][0]["evidence"][0]["source"] == "<selection>"

        # Healthy text: no findings, and the selection's diagnostics are replaced.
        healthy = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="denpex.diagnose",
                arguments=[
                    {
                        "text": "all good\n",
                        "uri": uri,
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 1, "character": 0},
                        },
                    }
                ],
            )
        )
        assert healthy == {"schema_version": 2, "findings": []}
        await s.diagnostics_for(uri, lambda d: d == [])

        for bad in (
            [],
            [{}],
            [{"text": 5}],
            [{"uri": uri}],
            [{"text": "x", "range": {"start": 1}}],
            [{"terminalId": "nope"}],
            [{"uri": "file:///not/open.txt", "range": rng}],
            ["text"],
            [{"text": "a"}, {"text": "b"}],
        ):
            with pytest.raises(JsonRpcInvalidParams):
                await s.timed.workspace_execute_command_async(
                    types.ExecuteCommandParams(command="denpex.diagnose", arguments=bad)
                )
        assert (await s.status())["privacy"] == "local-only"
    finally:
        await stop(s)

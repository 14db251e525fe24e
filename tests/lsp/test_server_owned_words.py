"""The server owns the words the editor shows: the catalog as data, a terminal's output
diagnosed from the server's own buffer, and findings that carry their phrases ready to show.
Each through a real `denpex serve` over stdio."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import Session, start, stop, validate
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from denpex import catalog
from denpex.lsp.terminals import BUFFER_LINES


def _terminal_output(text: str) -> str:
    """What a terminal sends: CRLF, colour on the failure lines, a progress bar redrawn with
    carriage returns, and a shell-integration OSC marker."""
    out = ["\x1b]633;C\x07", "loading 10%\rloading 50%\rloading 100%\r\n"]
    for line in text.splitlines():
        out.append((f"\x1b[1;31m{line}\x1b[0m" if "Error" in line else line) + "\r\n")
    return "".join(out)


def _send(s: Session, tid: str, name: str, data: str, size: int = 1000) -> None:
    for i in range(0, len(data), size):
        s.client.protocol.notify(
            "denpex/terminalData", {"terminalId": tid, "name": name, "data": data[i : i + size]}
        )


async def test_catalog_list_is_the_cli_listing(tmp_path: Path) -> None:
    s = await start(tmp_path)
    try:
        result = await s.request("denpex/catalogList", {})
        validate("lsp-catalog-list-result.schema.json", result)
        cli = subprocess.run(
            [sys.executable, "-m", "denpex", "catalog", "--json"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        assert result["entries"] == json.loads(cli.stdout)
        assert len(result["entries"]) == len(catalog.entries())
    finally:
        await stop(s)


async def test_catalog_entry_carries_its_lists(tmp_path: Path) -> None:
    s = await start(tmp_path)
    try:
        entry = await s.request("denpex/catalogEntry", {"id": "nccl-timeout"})
        validate("lsp-catalog-entry-result.schema.json", entry)
        toml = catalog.get("nccl-timeout")
        assert entry["prevention"] == toml["prevention"] and len(entry["prevention"]) > 0
        assert entry["fix"] == toml["fix"]
        assert entry["quick_answer"] == toml["quick_answer"]
        assert [v["command"] for v in entry["verification"]] == [
            v["command"] for v in toml["verification"]
        ]
        with pytest.raises(JsonRpcInvalidParams, match="unknown catalog entry"):
            await s.request("denpex/catalogEntry", {"id": "no-such-entry"})
    finally:
        await stop(s)


async def test_diagnose_terminal_by_id_from_the_servers_buffer(tmp_path: Path, logs: Path) -> None:
    s = await start(tmp_path)
    try:
        raw = _terminal_output((logs / "oom_rank5.log").read_text())
        _send(s, "t1", "train", raw, size=7)  # chunks cut lines and escapes apart
        s.client.protocol.notify(
            "denpex/terminalCommandEnd",
            {"terminalId": "t1", "commandLine": "torchrun train.py", "exitCode": 1},
        )
        result = await s.request("denpex/diagnoseTerminal", {"terminalId": "t1"})
        validate("lsp-diagnose-terminal-result.schema.json", result)
        assert result["name"] == "train" and result["commandLine"] == "torchrun train.py"
        assert result["lines"] == len((logs / "oom_rank5.log").read_text().splitlines()) + 1
        assert result["truncated"] is False
        top = result["diagnosis"]["findings"][0]
        assert top["id"] == "cuda-oom" and top["initiating_rank"] == 5
        # The server's stripping is what the editor gets: no escapes, the bar's last redraw.
        texts = [e["text"] for e in top["evidence"]]
        assert all("\x1b" not in t and "\r" not in t for t in texts)
        # Evidence lines count the terminal's lines from 1 (the progress bar is line 1).
        oom = next(e for e in top["evidence"] if e["role"] == "initiating")
        assert oom["source"] == "train" and oom["line"] >= 2

        # A terminal the server never heard of: nothing held, the client reads the screen.
        unknown = await s.request("denpex/diagnoseTerminal", {"terminalId": 99})
        validate("lsp-diagnose-terminal-result.schema.json", unknown)
        assert unknown["lines"] == 0 and unknown["diagnosis"]["findings"] == []
        for bad in ({}, {"terminalId": True}, ["t1"]):
            with pytest.raises(JsonRpcInvalidParams):
                await s.request("denpex/diagnoseTerminal", bad)
    finally:
        await stop(s)


async def test_terminal_buffer_is_bounded_and_says_so(tmp_path: Path, logs: Path) -> None:
    """A job that prints forever costs the server a bounded tail, and the answer says that
    earlier output was dropped; the failure at the end is still found."""
    s = await start(tmp_path)
    try:
        noise = "".join(f"step {i} loss 1.0\r\n" for i in range(BUFFER_LINES + 2000))
        _send(
            s, "t1", "train", noise + _terminal_output((logs / "oom_rank5.log").read_text()), 65536
        )
        s.client.protocol.notify(
            "denpex/terminalCommandEnd", {"terminalId": "t1", "commandLine": "x", "exitCode": 1}
        )
        result = await s.request("denpex/diagnoseTerminal", {"terminalId": "t1"})
        assert result["lines"] == BUFFER_LINES and result["truncated"] is True
        assert result["diagnosis"]["findings"][0]["id"] == "cuda-oom"

        # The next command starts a fresh buffer.
        _send(s, "t1", "train", "hello\r\n")
        again = await s.request("denpex/diagnoseTerminal", {"terminalId": "t1"})
        assert again["lines"] == 1 and again["truncated"] is False
        assert again["commandLine"] is None  # still running
    finally:
        await stop(s)


async def test_announcements_follow_the_setting_and_spare_the_verify_terminal(
    tmp_path: Path, logs: Path
) -> None:
    raw = _terminal_output((logs / "oom_rank5.log").read_text())
    s = await start(tmp_path)
    try:
        _send(s, "v", "Denpex verify", raw)  # verification commands grep the failure
        _send(s, "t", "train", raw)
        await s.wait_for(lambda: s.custom["denpex/finding"])
        await asyncio.sleep(0.8)  # longer than the server's quiet period
        assert [n["terminalId"] for n in s.custom["denpex/finding"]] == ["t"]
        verify = await s.request("denpex/diagnoseTerminal", {"terminalId": "v"})
        assert verify["diagnosis"]["findings"][0]["id"] == "cuda-oom"  # on demand: yes
    finally:
        await stop(s)

    s = await start(tmp_path, {"terminal": {"watch": False}})
    try:
        _send(s, "t", "train", raw)
        result = await s.request("denpex/diagnoseTerminal", {"terminalId": "t"})
        assert result["diagnosis"]["findings"][0]["id"] == "cuda-oom"
        await asyncio.sleep(0.8)
        assert s.custom["denpex/finding"] == []
    finally:
        await stop(s)


async def test_findings_carry_their_phrases(tmp_path: Path, logs: Path) -> None:
    """The editor shows the initiator and rank sets as sent; the Markdown export says the same."""
    s = await start(tmp_path)
    try:
        diagnosis = await s.timed.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="denpex.diagnose",
                arguments=[{"text": (logs / "oom_rank5.log").read_text()}],
            )
        )
        validate("diagnosis.schema.json", diagnosis)
        top = diagnosis["findings"][0]
        assert top["initiator"] == "rank 5, GPU 5"
        assert top["collateral_ranks_text"] == "0-4,6-7" and top["suspect_ranks_text"] == ""
        md = await s.request("denpex/diagnosisMarkdown", {"diagnosis": diagnosis, "redact": False})
        assert f"- **Initiating:** {top['initiator']}\n" in md["markdown"]
        assert f"- **Collateral ranks:** {top['collateral_ranks_text']}\n" in md["markdown"]
    finally:
        await stop(s)

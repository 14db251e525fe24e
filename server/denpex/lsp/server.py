"""The Denpex language server: the wiring of its parts to the LSP messages.

Custom protocol (shared-schema/lsp-*.schema.json, docs/language-server.md; the names and the
typed params are in protocol.py): client → server notifications ``denpex/terminalData``,
``denpex/terminalCommandEnd``, ``denpex/terminalClosed``; requests ``denpex/catalogList``,
``denpex/catalogEntry`` (catalog_requests.py), ``denpex/diagnoseTerminal``
(terminal_requests.py), ``denpex/getStatus``, ``denpex/diagnosisMarkdown``;
``workspace/executeCommand`` ``denpex.diagnose``. Server → client notifications ``denpex/finding``,
``denpex/driftUpdate``, ``denpex/status``.

Each job has its own module; this one creates them, holds the settings and routes messages:

- log_documents.py: which open documents are logs, and their scans (documents.py: one log);
- terminal_registry.py: terminal output to ``denpex/finding`` (terminals.py: one terminal);
- layers.py: the published diagnostics by origin (diagnostics.py: findings to diagnostics);
- diagnose.py: the ``denpex.diagnose`` command;
- checkpoints.py: the watched checkpoint folders; drift_diagnostics.py: what a drift report
  shows; progress.py: the work-done progress of a check;
- dumps.py: Flight Recorder dumps beside a log; workers.py: the processes that read
  untrusted files (drift_worker.py, dump_worker.py);
- actions.py: hover and code actions; notices.py: messages to the user;
- framing.py: the stdio loop, defended against a hostile peer; guard.py: no network.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from threading import Event
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import lsp_method
from pygls.uris import to_fs_path

from denpex import __version__
from denpex.diagnosis.scanner import prepare_screen
from denpex.export.markdown import diagnosis_markdown, local_names
from denpex.lsp import (
    actions,
    catalog_requests,
    compare,
    diagnose,
    drift_diagnostics,
    framing,
    guard,
    protocol,
    terminal_requests,
)
from denpex.lsp.checkpoints import CheckpointWatcher, Outcome
from denpex.lsp.layers import Layers
from denpex.lsp.log_documents import LogDocuments
from denpex.lsp.notices import Notices
from denpex.lsp.progress import DriftProgress
from denpex.lsp.protocol import TypedParamsProtocol, converter_factory
from denpex.lsp.settings import Settings, parse
from denpex.lsp.terminal_registry import Terminals

log = logging.getLogger(__name__)

CHECKPOINT_SETTINGS = ("watch", "reference", "noise_reference", "device")


class DenpexProtocol(TypedParamsProtocol):
    """Routes log documents to the server's own store (log_documents.py), other documents to
    pygls' workspace; custom methods get typed params (protocol.py).

    Document notifications that arrive before the settings are known (the client answers
    workspace/configuration after `initialized`) are queued and replayed in order, so the
    first diagnosis already uses the user's globs and size cap.
    """

    _server: DenpexServer

    def params_ignored(self, method: str, why: str) -> None:
        self._server.notices.log(f"{method}: ignored, {why}", types.MessageType.Warning)

    def _in_order(self, handler: Callable[[Any], None], params: Any) -> None:
        if self._server.backlog is None:
            handler(params)
        else:
            self._server.backlog.append((handler, params))

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._in_order(self._open, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._in_order(self._change, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._in_order(self._close, params)

    def _open(self, params: types.DidOpenTextDocumentParams) -> None:
        encoding = str(self.workspace.position_encoding or "utf-16")
        if not self._server.documents.open(params.text_document, encoding):
            self.workspace.put_text_document(params.text_document)

    def _change(self, params: types.DidChangeTextDocumentParams) -> None:
        if not self._server.documents.change(params):
            for change in params.content_changes:
                self.workspace.update_text_document(params.text_document, change)

    def _close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if not self._server.documents.close(uri):
            self.workspace.remove_text_document(uri)
        self._server.layers.forget_selection(uri)


class DenpexServer(LanguageServer):
    def __init__(self, check_guard: bool = False) -> None:
        super().__init__(
            "denpex",
            __version__,
            protocol_cls=DenpexProtocol,
            converter_factory=converter_factory,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.settings = Settings()
        self.root: Path | None = None
        # Document notifications held until the settings are known (None: ready).
        self.backlog: list[tuple[Callable[[Any], None], Any]] | None = []
        self.notices = Notices(self)
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="denpex-scan")
        self.layers = Layers(self.text_document_publish_diagnostics)
        self.documents = LogDocuments(self.notices, self.layers, self.pool)
        self.terminals = Terminals(self.notices, self.protocol.notify)
        self.watcher = CheckpointWatcher(self.on_drift, self.send_status, DriftProgress(self))
        self.last_check: str | None = None
        self.check_guard = check_guard
        self.guard_self_test: str | None = None

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' stdio server with the defensive framing of framing.py."""
        self._stop_event = stop = Event()
        try:
            framing.serve_stdio(
                self.protocol,
                self.thread_pool,
                stdin or sys.stdin.buffer,
                stdout or sys.stdout.buffer,
                stop,
            )
        finally:
            self.shutdown()

    # -- settings and status ------------------------------------------------------------------

    def use_settings(self, settings: Settings) -> None:
        """The settings the parts read (the checkpoint watcher is reconfigured apart)."""
        self.settings = settings
        self.documents.configure(settings)
        self.terminals.configure(settings)

    def apply_settings(self, raw: Any) -> None:
        new = parse(raw, self.root)
        for problem in new.problems:
            self.notices.log(problem, types.MessageType.Warning)
        old = self.settings
        self.use_settings(new)
        if any(getattr(old, k) != getattr(new, k) for k in CHECKPOINT_SETTINGS):
            for message in self.watcher.configure(new):
                self.notices.show_once(message)
        self.send_status()

    async def pull_settings(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        try:
            result = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="denpex")])
            )
        except Exception as exc:  # a client that fails the request keeps the current settings
            self.notices.log(f"workspace/configuration failed: {exc}", types.MessageType.Warning)
            return
        self.apply_settings(result[0] if result else None)

    def status(self) -> dict[str, Any]:
        watching, missing = self.watcher.status()
        out: dict[str, Any] = {
            "watching": watching,
            "missing": missing,
            "reference": str(self.settings.reference) if self.settings.reference else None,
            "lastCheck": self.last_check,
            "privacy": "local-only",
            "blockedConnections": guard.refused_count(),
            "documents": len(self.documents),
            "terminals": len(self.terminals),
        }
        if self.guard_self_test is not None:
            out["guardSelfTest"] = self.guard_self_test
        return out

    def send_status(self) -> None:
        self.protocol.notify(protocol.STATUS, self.status())

    # -- documents ------------------------------------------------------------------------------

    def text_of_lines(self, uri: str, first: int, last: int) -> tuple[list[str], int] | None:
        """0-based lines first..last of an open document (a log or not), and the index of
        the first; None when the document is not open."""
        found = self.documents.lines(uri, first, last)
        if found is None and uri in self.workspace.text_documents:
            lines = self.workspace.get_text_document(uri).lines
            first = min(first, len(lines))
            found = [ln.rstrip("\r\n") for ln in lines[first : last + 1]], first
        return found

    # -- checkpoints ----------------------------------------------------------------------------

    async def on_drift(self, outcome: Outcome) -> None:
        self.last_check = datetime.now(UTC).isoformat(timespec="seconds")
        run, report = str(outcome.run), outcome.report
        if report is None:
            error = outcome.error or f"drift check of {outcome.run} failed"
            self.notices.show_once(error, types.MessageType.Warning)
        else:
            self.protocol.notify(protocol.DRIFT_UPDATE, {"report": report})
            for warning in drift_diagnostics.warnings(report):  # each skipped checkpoint once
                self.notices.log_once(warning, f"{run}: {warning}", types.MessageType.Warning)
            mark = drift_diagnostics.drift_mark(run, outcome.alarm)
            if mark is not None:
                # The message goes first: a client that sees the diagnostic has seen it too.
                self.notices.show_once(mark.message, types.MessageType.Warning)
            self.layers.replace_drift(run, mark.layer if mark else {})
        self.send_status()


def create_server(check_guard: bool = False) -> DenpexServer:
    server = DenpexServer(check_guard)

    @server.feature(types.INITIALIZE)
    def initialize(ls: DenpexServer, params: types.InitializeParams) -> None:
        folders = params.workspace_folders or []
        root = folders[0].uri if folders else params.root_uri
        path = to_fs_path(root) if root else None
        ls.root = Path(path) if path else None
        opts = params.initialization_options
        if isinstance(opts, dict):
            ls.use_settings(parse(opts.get("settings", opts), ls.root))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DenpexServer, params: types.InitializedParams) -> None:
        if ls.check_guard:
            ls.guard_self_test = guard.self_test()
        # Compile the catalog's patterns now rather than when the first log is opened.
        asyncio.get_running_loop().run_in_executor(ls.pool, prepare_screen)
        for message in ls.watcher.configure(ls.settings):
            ls.notices.show_once(message)
        for problem in ls.settings.problems:
            ls.notices.log(problem, types.MessageType.Warning)
        await ls.pull_settings()
        backlog, ls.backlog = ls.backlog or [], None
        for handler, queued in backlog:
            handler(queued)
        ls.send_status()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(ls: DenpexServer, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if isinstance(raw, dict) and raw:
            ls.apply_settings(raw)
        else:  # "something changed": ask for the new values
            await ls.pull_settings()

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: DenpexServer, params: types.HoverParams) -> types.Hover | None:
        line = params.position.line
        return actions.hover(ls.layers.marks_at(params.text_document.uri, line, line), line)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: DenpexServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri, line = params.text_document.uri, params.range.start.line
        marks = ls.layers.marks_at(uri, line, params.range.end.line)
        if not marks:
            return []
        reach = actions.BLOCK_REACH
        around = ls.text_of_lines(uri, max(0, line - reach), line + reach)
        block = actions.surrounding_block(*around, line) if around and around[0] else None
        return actions.code_actions(uri, marks, block)

    @server.command(protocol.DIAGNOSE)
    async def diagnose_command(
        ls: DenpexServer, params: protocol.DiagnoseParams | None = None
    ) -> dict[str, Any]:
        if params is None:
            raise JsonRpcInvalidParams("denpex.diagnose takes exactly one argument object")
        return await diagnose.diagnose(ls, params)

    @server.feature(protocol.DIAGNOSIS_MARKDOWN)
    async def markdown(
        ls: DenpexServer, params: protocol.DiagnosisMarkdownParams
    ) -> dict[str, Any]:
        names = local_names() if params.redact else None
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(ls.pool, diagnosis_markdown, params.diagnosis, names)
        return {"markdown": text}

    @server.feature(protocol.COMPARE_CHECKPOINTS)
    async def compare_checkpoints(
        ls: DenpexServer, params: protocol.CompareCheckpointsParams
    ) -> dict[str, Any]:
        return await compare.compare_checkpoints(params, ls.settings.device)

    @server.feature(protocol.GET_STATUS)
    def get_status(ls: DenpexServer, params: Any) -> dict[str, Any]:
        return ls.status()

    @server.feature(protocol.TERMINAL_DATA)
    def terminal_data(ls: DenpexServer, params: protocol.TerminalDataParams) -> None:
        ls.terminals.data(params)

    @server.feature(protocol.TERMINAL_COMMAND_END)
    def terminal_command_end(ls: DenpexServer, params: protocol.TerminalCommandEndParams) -> None:
        ls.terminals.command_end(params)

    @server.feature(protocol.TERMINAL_CLOSED)
    def terminal_closed(ls: DenpexServer, params: protocol.TerminalClosedParams) -> None:
        ls.terminals.closed(params)

    catalog_requests.register(server)
    terminal_requests.register(server)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DenpexServer, params: Any) -> None:
        ls.watcher.stop()

    return server

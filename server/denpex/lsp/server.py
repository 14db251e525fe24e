"""The Denpex language server: wiring of documents, terminals, checkpoints and the guard.

Custom protocol (described in shared-schema/lsp-*.schema.json and docs/language-server.md):
client → server notifications ``denpex/terminalData``, ``denpex/terminalCommandEnd``,
``denpex/terminalClosed``; requests ``denpex/catalogList``, ``denpex/catalogEntry``
(catalog_requests.py), ``denpex/diagnoseTerminal`` (terminal_requests.py),
``denpex/getStatus``, ``denpex/diagnosisMarkdown``;
``workspace/executeCommand`` ``denpex.diagnose``. Server → client notifications
``denpex/finding``, ``denpex/driftUpdate``, ``denpex/status``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from threading import Event
from typing import Any, BinaryIO

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.uris import to_fs_path

from denpex import __version__
from denpex.diagnosis import LogScanner
from denpex.errors import InputError
from denpex.export.markdown import diagnosis_markdown, local_names
from denpex.finding import Finding, diagnosis_json, findings_from_json
from denpex.lsp import (
    actions,
    catalog_requests,
    diagnostics,
    framing,
    guard,
    positions,
    terminal_requests,
)
from denpex.lsp.checkpoints import CheckpointWatcher, DriftAlarm, Outcome, Progress
from denpex.lsp.documents import LogDocument, Scan, looks_binary
from denpex.lsp.dumps import (
    FOLDER_TIMEOUT,
    DumpsBeside,
    WorkerFailed,
    folder_diagnostics,
    run_worker,
)
from denpex.lsp.globs import Glob
from denpex.lsp.scheduling import Coalescer
from denpex.lsp.settings import Settings, parse
from denpex.lsp.terminals import TerminalSession

log = logging.getLogger(__name__)

TERMINAL_DATA = "denpex/terminalData"
TERMINAL_COMMAND_END = "denpex/terminalCommandEnd"
TERMINAL_CLOSED = "denpex/terminalClosed"
GET_STATUS = "denpex/getStatus"
DIAGNOSIS_MARKDOWN = "denpex/diagnosisMarkdown"
FINDING = "denpex/finding"
DRIFT_UPDATE = "denpex/driftUpdate"
STATUS = "denpex/status"

TERMINAL_QUIET_S = 0.3  # output pause after which a terminal's new lines are judged
MAX_TERMINALS = 64
MAX_TERMINAL_BACKLOG = 64 * 2**20  # characters of terminal output waiting to be scanned


def _raw_params(obj: dict[str, Any], cls: type) -> Any:
    # Custom messages keep their params as plain JSON (pygls would turn them into
    # namedtuples); each handler validates what it reads.
    return cls(**obj)


def converter_factory() -> cattrs.Converter:
    from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

    conv = default_converter()
    for cls in (JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, _raw_params)
    return conv


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("terminal scan failed", exc_info=future.exception())


def _invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message)


class DenpexProtocol(LanguageServerProtocol):
    """Routes log documents to the server's own store (see documents.py for why).

    Document notifications that arrive before the settings are known (the client answers
    workspace/configuration after `initialized`) are queued and replayed in order, so the
    first diagnosis already uses the user's globs and size cap.
    """

    _server: DenpexServer

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
        if not self._server.open_log(params.text_document):
            self.workspace.put_text_document(params.text_document)

    def _change(self, params: types.DidChangeTextDocumentParams) -> None:
        if not self._server.change_log(params):
            for change in params.content_changes:
                self.workspace.update_text_document(params.text_document, change)

    def _close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if not self._server.close_log(uri):
            self.workspace.remove_text_document(uri)
        self._server.forget_selection(uri)


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
        self.logs: dict[str, LogDocument] = {}
        # Diagnostics by origin, merged per document when published: document scans,
        # denpex.diagnose on a selection, flagged drift on a checkpoint file, and
        # denpex.diagnose on a job folder.
        self.scanned: dict[str, diagnostics.Published] = {}
        self.selections: dict[str, diagnostics.Published] = {}
        self.drift: dict[str, diagnostics.Published] = {}
        self.folders: dict[str, diagnostics.Published] = {}  # denpex.diagnose on a job folder
        self.folder_marks: dict[str, list[str]] = {}  # job folder → uris of its logs
        self.refused: set[str] = set()  # log documents claimed but not diagnosed
        # Document notifications held until the settings are known (None: ready).
        self.backlog: list[tuple[Callable[[Any], None], Any]] | None = []
        self.scans: dict[str, Coalescer] = {}
        self.terminals: OrderedDict[str, TerminalSession] = OrderedDict()
        self.terminal_checks: dict[str, Coalescer] = {}
        self.shown: set[str] = set()
        self.last_check: str | None = None
        self.drift_marks: dict[str, str] = {}  # watched dir → uri of its flagged checkpoint
        self.check_guard = check_guard
        self.guard_self_test: str | None = None
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="denpex-scan")
        # Terminal output is scanned off the event loop too, by one thread: a session's
        # chunks must be read in order, and no two threads may touch one session.
        self.terminal_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="denpex-term")
        self._terminal_backlog = 0
        self.watcher = CheckpointWatcher(self.on_drift, self.send_status, self.drift_progress)
        self.dumps = DumpsBeside()  # Flight Recorder dumps beside open logs
        self._globs: list[Glob] = []
        self._progress_tokens = 0
        self._configure_globs()

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' stdio server with the defensive framing of framing.py."""
        import sys

        from pygls.io_ import StdoutWriter

        source = stdin or sys.stdin.buffer
        read_chunk = getattr(source, "read1", source.read)
        self._stop_event = stop = Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def main() -> None:
            loop = asyncio.get_running_loop()
            reader = framing.FrameReader(
                lambda: loop.run_in_executor(self.thread_pool, read_chunk, 1 << 16)
            )
            await framing.serve(reader, self.protocol, stop)

        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("connection to the client lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    # -- messages to the user -------------------------------------------------------------

    def log_line(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        log.info("%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=f"denpex: {message}"))

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """A pop-up, shown once per distinct message (no storms from a busy directory)."""
        self.log_line(message, kind)
        if message not in self.shown:
            self.shown.add(message)
            self.window_show_message(
                types.ShowMessageParams(type=kind, message=f"Denpex: {message}")
            )

    # -- settings ---------------------------------------------------------------------------

    def _configure_globs(self) -> None:
        self._globs = [Glob(g) for g in self.settings.log_globs]

    def apply_settings(self, raw: Any) -> None:
        new = parse(raw, self.root)
        for problem in new.problems:
            self.log_line(problem, types.MessageType.Warning)
        old, self.settings = self.settings, new
        self._configure_globs()
        checkpoint_keys = ("watch", "reference", "noise_reference", "device")
        if any(getattr(old, k) != getattr(new, k) for k in checkpoint_keys):
            for message in self.watcher.configure(new):
                self.tell(message)
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
            self.log_line(f"workspace/configuration failed: {exc}", types.MessageType.Warning)
            return
        self.apply_settings(result[0] if result else None)

    # -- status ---------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        watching, missing = self.watcher.status()
        out: dict[str, Any] = {
            "watching": watching,
            "missing": missing,
            "reference": str(self.settings.reference) if self.settings.reference else None,
            "lastCheck": self.last_check,
            "privacy": "local-only",
            "blockedConnections": guard.refused_count(),
            "documents": len(self.logs),
            "terminals": len(self.terminals),
        }
        if self.guard_self_test is not None:
            out["guardSelfTest"] = self.guard_self_test
        return out

    def send_status(self) -> None:
        self.protocol.notify(STATUS, self.status())

    # -- log documents ----------------------------------------------------------------------

    def is_log(self, doc: types.TextDocumentItem) -> bool:
        if doc.language_id == "log":
            return True
        path = to_fs_path(doc.uri) or doc.uri
        path = path.replace("\\", "/")
        return any(g.match(path) for g in self._globs)

    def open_log(self, doc: types.TextDocumentItem) -> bool:
        if not self.is_log(doc):
            return False
        cap = self.settings.max_size_mb
        if len(doc.text) > cap * 2**20:
            size = len(doc.text) / 2**20
            self.tell(
                f"{doc.uri} is {size:.0f} MB, above denpex.logs.maxSizeMB ({cap}); not diagnosed "
                f"in the editor. Run `denpex diagnose {to_fs_path(doc.uri) or doc.uri}` instead "
                "(it streams files of any size)."
            )
            self.refused.add(doc.uri)
            return True  # claimed, so the text is not kept anywhere
        if looks_binary(doc.text):
            self.tell(f"{doc.uri} looks like a binary file (NUL bytes); not diagnosed.")
            self.refused.add(doc.uri)
            return True
        source = to_fs_path(doc.uri) if doc.uri.startswith("file:") else doc.uri
        encoding = str(self.workspace.position_encoding or "utf-16")
        self.logs[doc.uri] = LogDocument(
            doc.uri, source or doc.uri, doc.text, doc.version, encoding
        )
        self._schedule(doc.uri, 0.0)
        return True

    def change_log(self, params: types.DidChangeTextDocumentParams) -> bool:
        uri = params.text_document.uri
        doc = self.logs.get(uri)
        if doc is None:
            return uri in self.refused  # refused at open (too large, binary): edits ignored
        grew = True
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                grew = grew and change.range.start.line >= doc.last_line()
            doc.apply(change, params.text_document.version)
        # Appends are cheap (only the new tail is read) and run at once; other edits wait
        # for a pause in typing, since they mean a full rescan.
        self._schedule(uri, 0.0 if grew else self.settings.debounce_ms / 1000)
        return True

    def close_log(self, uri: str) -> bool:
        doc = self.logs.pop(uri, None)
        scan = self.scans.pop(uri, None)
        if scan:
            scan.cancel()
        self.scanned.pop(uri, None)
        if doc is None:
            if uri in self.refused:
                self.refused.discard(uri)
                return True
            return False
        return True

    def forget_selection(self, uri: str) -> None:
        self.selections.pop(uri, None)
        self.publish(uri)

    def _schedule(self, uri: str, delay: float) -> None:
        c = self.scans.get(uri)
        if c is None:
            c = self.scans[uri] = Coalescer(lambda: self._scan(uri))
        c.trigger(delay)

    async def _scan(self, uri: str) -> None:
        doc = self.logs.get(uri)
        if doc is None:
            return
        loop = asyncio.get_running_loop()
        try:
            scan: Scan = await loop.run_in_executor(self.pool, doc.scan)
        except Exception as exc:
            log.exception("scan of %s failed", uri)
            self.tell(f"could not diagnose {uri}: {exc}", types.MessageType.Error)
            return
        path = to_fs_path(uri) if uri.startswith("file:") else None
        findings = await self.dumps.merge(path, scan.findings)
        if self.logs.get(uri) is not doc:
            return  # closed meanwhile
        placer = diagnostics.Placer(scan.last_line, scan.last_line_units)
        self.scanned[uri] = diagnostics.build(findings, doc.source, uri, placer)
        kind = "full scan" if scan.full else "incremental scan"
        self.log_line(f"{uri}: {kind} of {scan.lines_read} line(s), {len(findings)} finding(s)")
        self.publish(uri, scan.version)

    def publish(self, uri: str, version: int | None = None) -> None:
        diags = diagnostics.merged([layer[uri] for layer in self._layers() if uri in layer])
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version)
        )

    def _layers(self) -> tuple[dict[str, diagnostics.Published], ...]:
        return (self.scanned, self.selections, self.drift, self.folders)

    def marks_at(self, uri: str, first: int, last: int) -> list[diagnostics.Mark]:
        out: list[diagnostics.Mark] = []
        for layer in self._layers():
            pub = layer.get(uri)
            if pub:
                for line in range(first, last + 1):
                    out.extend(pub.marks.get(line, []))
        return out

    def text_of_lines(self, uri: str, first: int, last: int) -> tuple[list[str], int] | None:
        doc = self.logs.get(uri)
        if doc is not None:
            text, start = doc.line_range_text(first, last)
            return positions.lines_of(text), start
        if uri in self.workspace.text_documents:
            lines = self.workspace.get_text_document(uri).lines
            first = min(first, len(lines))
            return [ln.rstrip("\r\n") for ln in lines[first : last + 1]], first
        return None

    # -- denpex.diagnose --------------------------------------------------------------------

    async def diagnose(self, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise _invalid(
                "denpex.diagnose takes one argument: {text?, uri?, range?, terminalId?, folder?}"
            )
        if params.get("folder") is not None:
            return await self.diagnose_folder(params["folder"])
        text, uri, rng, terminal = (params.get(k) for k in ("text", "uri", "range", "terminalId"))
        if uri is not None and not isinstance(uri, str):
            raise _invalid("denpex.diagnose: uri must be a string")
        start_line = 0
        if rng is not None:
            try:
                r = self.protocol._converter.structure(rng, types.Range)
            except Exception:
                raise _invalid("denpex.diagnose: range must be an LSP Range") from None
            start_line = r.start.line
        if text is None and terminal is not None:
            session = self.terminals.get(str(terminal))
            if session is None:
                raise _invalid(f"denpex.diagnose: no output recorded for terminal {terminal!r}")
            text = await self._on_terminal_thread(session.buffered_text)
            source = session.name
        elif text is None and uri is not None and rng is not None:
            found = self.text_of_lines(
                uri, r.start.line, max(r.end.line - (r.end.character == 0), r.start.line)
            )
            if found is None:
                raise _invalid(f"denpex.diagnose: {uri} is not open; send its text")
            text = "\n".join(found[0])
            source = self._source_of(uri)
        elif isinstance(text, str):
            source = self._source_of(uri) if uri else "<selection>"
        else:
            raise _invalid(
                "denpex.diagnose needs text (a string), or uri and range, or terminalId, or folder"
            )

        def run() -> list[Finding]:
            scanner = LogScanner()
            scanner.feed_lines(source, positions.lines_of(text), first_line=start_line + 1)
            return scanner.findings()

        findings = await asyncio.get_running_loop().run_in_executor(self.pool, run)
        if uri is not None and terminal is None:
            self.selections[uri] = diagnostics.build(findings, source, uri, diagnostics.Placer())
            self.publish(uri)
        return diagnosis_json(findings)

    async def diagnose_folder(self, folder_uri: Any) -> dict[str, Any]:
        """A job folder, read as `denpex diagnose DIR` reads it, in the dump worker: its dumps
        are untrusted pickles, and a folder of any size costs the server one child process,
        bounded by the worker's timeout. The findings are published on the logs' lines."""
        path = to_fs_path(folder_uri) if isinstance(folder_uri, str) else None
        if not path or not folder_uri.startswith("file:") or not os.path.isdir(path):
            raise _invalid(
                f"denpex.diagnose: folder must be the file: URI of a folder, not {folder_uri!r}"
            )
        self.log_line(f"diagnosing the job folder {path} in the dump worker")
        try:
            msg = await run_worker({"folder": path}, FOLDER_TIMEOUT)
            findings = findings_from_json(msg.get("diagnosis"))
        except (WorkerFailed, InputError) as exc:
            # The folder was read and refused (no files, a timeout): a failed request, not bad
            # params; the CLI streams any size and shows why.
            raise JsonRpcInternalError(
                f"denpex.diagnose: {path}: {exc}; run `denpex diagnose {shlex.quote(path)}` "
                "in a terminal"
            ) from None
        for notice in msg.get("notices", []):
            self.log_line(str(notice), types.MessageType.Warning)
        loop = asyncio.get_running_loop()
        layer = await loop.run_in_executor(self.pool, folder_diagnostics, findings, path)
        for uri in self.folder_marks.pop(path, []):
            self.folders.pop(uri, None)
            self.publish(uri)
        self.folders.update(layer)
        self.folder_marks[path] = list(layer)
        for uri in layer:
            self.publish(uri)
        self.log_line(f"{path}: {len(findings)} finding(s)")
        return diagnosis_json(findings)

    def _source_of(self, uri: str) -> str:
        doc = self.logs.get(uri)
        if doc is not None:
            return doc.source
        return (to_fs_path(uri) if uri.startswith("file:") else None) or uri

    # -- terminals --------------------------------------------------------------------------

    def terminal(self, params: Any, method: str) -> TerminalSession | None:
        if not isinstance(params, dict) or not isinstance(params.get("terminalId"), (str, int)):
            self.log_line(
                f"{method}: ignored, params need a terminalId (string or number)",
                types.MessageType.Warning,
            )
            return None
        tid = str(params["terminalId"])
        session = self.terminals.get(tid)
        if session is None:
            name = params.get("name")
            session = TerminalSession(
                tid, name if isinstance(name, str) and name else f"terminal {tid}"
            )
            self.terminals[tid] = session
            if len(self.terminals) > MAX_TERMINALS:
                old, _ = self.terminals.popitem(last=False)
                self.terminal_checks.pop(old, None)
        self.terminals.move_to_end(tid)
        return session

    def terminal_data(self, params: Any) -> None:
        session = self.terminal(params, TERMINAL_DATA)
        if session is None:
            return
        data = params.get("data")
        if not isinstance(data, str):
            self.log_line(
                f"{TERMINAL_DATA}: ignored, data must be a string", types.MessageType.Warning
            )
            return
        if self._terminal_backlog + len(data) > MAX_TERMINAL_BACKLOG:
            self.log_line(
                f"{session.name}: output arrives faster than it is scanned; "
                f"{len(data)} characters skipped",
                types.MessageType.Warning,
            )
            return
        self._terminal_backlog += len(data)
        done = self._on_terminal_thread(session.feed, data)
        done.add_done_callback(lambda _: self._scanned_terminal_data(len(data)))
        check = self.terminal_checks.get(session.terminal_id)
        if check is None:
            check = self.terminal_checks[session.terminal_id] = Coalescer(
                lambda: self._report_terminal(session, params["terminalId"])
            )
        check.trigger(TERMINAL_QUIET_S)

    def terminal_command_end(self, params: Any) -> None:
        session = self.terminal(params, TERMINAL_COMMAND_END)
        if session is None:
            return
        line = params.get("commandLine")
        self._on_terminal_thread(session.command_end, line if isinstance(line, str) else None)
        self.terminal_checks.setdefault(
            session.terminal_id,
            Coalescer(lambda: self._report_terminal(session, params["terminalId"])),
        ).trigger(0.0)

    def _on_terminal_thread(self, work: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run session work on the terminal thread, after the work queued before it."""
        future = asyncio.get_running_loop().run_in_executor(self.terminal_pool, work, *args)
        future.add_done_callback(_log_failure)
        return future

    def _scanned_terminal_data(self, size: int) -> None:
        self._terminal_backlog -= size

    async def _report_terminal(self, session: TerminalSession, terminal_id: str | int) -> None:
        # Output is always buffered (for denpex/diagnoseTerminal); failures are announced
        # unless the user turned that off, and never from the terminal that verification
        # commands are typed into (they grep the failure on purpose).
        if not self.settings.terminal_watch or session.name == actions.TERMINAL_NAME:
            return
        findings = await self._on_terminal_thread(session.unreported)
        if findings:
            self.protocol.notify(
                FINDING,
                {
                    "source": session.name,
                    "terminalId": terminal_id,
                    "commandLine": session.command_line,
                    "diagnosis": diagnosis_json(findings),
                },
            )

    def terminal_closed(self, params: Any) -> None:
        if isinstance(params, dict) and params.get("terminalId") is not None:
            tid = str(params["terminalId"])
            self.terminals.pop(tid, None)
            check = self.terminal_checks.pop(tid, None)
            if check:
                check.cancel()

    # -- checkpoints ------------------------------------------------------------------------

    async def drift_progress(self, run: Path) -> Progress | None:
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return None
        self._progress_tokens += 1
        token = f"denpex-drift-{self._progress_tokens}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            return None
        progress = self.work_done_progress

        def report(phase: str, done: int, total: int) -> None:
            if phase == "begin":
                progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="Denpex: comparing checkpoints", message=str(run), percentage=0
                    ),
                )
            elif phase == "report":
                pct = int(100 * done / total) if total else 0
                progress.report(
                    token, types.WorkDoneProgressReport(message=f"{done}/{total}", percentage=pct)
                )
            else:
                progress.end(token, types.WorkDoneProgressEnd(message="done"))

        return report

    async def on_drift(self, outcome: Outcome) -> None:
        self.last_check = datetime.now(UTC).isoformat(timespec="seconds")
        key = str(outcome.run)
        if outcome.report is None:
            self.tell(
                outcome.error or f"drift check of {outcome.run} failed", types.MessageType.Warning
            )
            self.send_status()
            return
        report = outcome.report
        self.protocol.notify(DRIFT_UPDATE, {"report": report})
        for warning in report.get("warnings", []):
            if warning not in self.shown:  # each skipped or unreadable checkpoint once
                self.shown.add(warning)
                self.log_line(f"{outcome.run}: {warning}", types.MessageType.Warning)
        previous = self.drift_marks.pop(key, None)
        if previous:
            self.drift.pop(previous, None)
            self.publish(previous)
        if outcome.alarm is not None:
            self._flag_drift(key, outcome.alarm)
        self.send_status()

    def _flag_drift(self, key: str, alarm: DriftAlarm) -> None:
        # The message goes first: a client that sees the diagnostic has seen it too.
        self.tell(alarm.message + ".", types.MessageType.Warning)
        if alarm.path:
            uri = Path(alarm.path).resolve().as_uri()
            line = alarm.line - 1  # a probe record's line; else the top
            diag = types.Diagnostic(
                range=types.Range(types.Position(line, 0), types.Position(line, 0)),
                severity=types.DiagnosticSeverity.Error,
                source="denpex",
                code=alarm.code,
                message=alarm.message + ". " + diagnostics.first_sentence(alarm.root_cause),
                data={"run": key, "onset_step": alarm.onset_step},
            )
            self.drift[uri] = diagnostics.Published(diagnostics=[diag])
            self.drift_marks[key] = uri
            self.publish(uri)


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
            ls.settings = parse(opts.get("settings", opts), ls.root)
            ls._configure_globs()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DenpexServer, params: types.InitializedParams) -> None:
        if ls.check_guard:
            ls.guard_self_test = guard.self_test()
        # Compile the catalog's patterns now rather than when the first log is opened.
        asyncio.get_running_loop().run_in_executor(ls.pool, LogScanner)
        for message in ls.watcher.configure(ls.settings):
            ls.tell(message)
        for problem in ls.settings.problems:
            ls.log_line(problem, types.MessageType.Warning)
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
        marks = ls.marks_at(params.text_document.uri, line, line)
        if not marks:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value=actions.hover_markdown(marks)
            ),
            range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)),
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: DenpexServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        first, last = params.range.start.line, params.range.end.line
        marks = ls.marks_at(uri, first, last)
        if not marks:
            return []
        line = first
        around = ls.text_of_lines(
            uri, max(0, line - actions.BLOCK_REACH), line + actions.BLOCK_REACH
        )
        block = (
            actions.surrounding_block(around[0], around[1], line) if around and around[0] else None
        )
        return actions.code_actions(uri, marks, block)

    @server.command(actions.DIAGNOSE)
    async def diagnose(ls: DenpexServer, *args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise _invalid("denpex.diagnose takes exactly one argument object")
        return await ls.diagnose(args[0])

    @server.feature(DIAGNOSIS_MARKDOWN)
    async def markdown(ls: DenpexServer, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or not isinstance(params.get("redact"), bool):
            raise _invalid(f"{DIAGNOSIS_MARKDOWN} needs {{diagnosis, redact: boolean}}")
        try:
            findings = findings_from_json(params.get("diagnosis"))
        except InputError as exc:
            raise _invalid(f"{DIAGNOSIS_MARKDOWN}: {exc}") from None
        names = local_names() if params["redact"] else None
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(ls.pool, diagnosis_markdown, findings, names)
        return {"markdown": text}

    @server.feature(GET_STATUS)
    def get_status(ls: DenpexServer, params: Any) -> dict[str, Any]:
        return ls.status()

    @server.feature(TERMINAL_DATA)
    def terminal_data(ls: DenpexServer, params: Any) -> None:
        ls.terminal_data(params)

    @server.feature(TERMINAL_COMMAND_END)
    def terminal_command_end(ls: DenpexServer, params: Any) -> None:
        ls.terminal_command_end(params)

    @server.feature(TERMINAL_CLOSED)
    def terminal_closed(ls: DenpexServer, params: Any) -> None:
        ls.terminal_closed(params)

    catalog_requests.register(server)
    terminal_requests.register(server)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DenpexServer, params: Any) -> None:
        ls.watcher.stop()

    return server

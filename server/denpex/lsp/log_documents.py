"""The registry of log documents: which open documents are logs, and their scans.

A document is a log when the client says so (language ``log``) or its path matches one of
``denpex.logs.globs``. The server keeps a log's text itself (documents.py says why), refuses
one above ``denpex.logs.maxSizeMB`` or that looks binary (claimed, so its text is kept
nowhere), and rescans it on each change: at once after an append, which only reads the new
tail, and after a pause in typing after any other edit, which means a full rescan. Scans run
on the server's worker threads; their findings, merged with Flight Recorder dumps beside
the log, become the document's ``scanned`` layer.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.uris import to_fs_path

from denpex.diagnosis.lines import looks_binary
from denpex.lsp import diagnostics, positions
from denpex.lsp.documents import LogDocument, Scan
from denpex.lsp.dumps import DumpsBeside
from denpex.lsp.globs import Glob
from denpex.lsp.layers import Layers
from denpex.lsp.notices import Notices
from denpex.lsp.scheduling import Coalescer
from denpex.lsp.settings import Settings

log = logging.getLogger(__name__)


def source_of(uri: str) -> str:
    """What evidence lines name for a document: its file path, else its uri."""
    return (to_fs_path(uri) if uri.startswith("file:") else None) or uri


class LogDocuments:
    def __init__(self, notices: Notices, layers: Layers, pool: ThreadPoolExecutor) -> None:
        self._notices = notices
        self._layers = layers
        self._pool = pool
        self._dumps = DumpsBeside()  # Flight Recorder dumps beside open logs
        self._logs: dict[str, LogDocument] = {}
        self._refused: set[str] = set()  # claimed but not diagnosed
        self._scans: dict[str, Coalescer] = {}
        self.configure(Settings())

    def configure(self, settings: Settings) -> None:
        self._globs = [Glob(g) for g in settings.log_globs]
        self._max_size_mb = settings.max_size_mb
        self._debounce_s = settings.debounce_ms / 1000

    def __len__(self) -> int:
        return len(self._logs)

    def is_log(self, doc: types.TextDocumentItem) -> bool:
        if doc.language_id == "log":
            return True
        path = (to_fs_path(doc.uri) or doc.uri).replace("\\", "/")
        return any(g.match(path) for g in self._globs)

    def source_of(self, uri: str) -> str:
        doc = self._logs.get(uri)
        return doc.source if doc is not None else source_of(uri)

    def open(self, doc: types.TextDocumentItem, encoding: str) -> bool:
        """Claim a log document (True), or leave it to pygls' workspace (False)."""
        if not self.is_log(doc):
            return False
        cap = self._max_size_mb
        if len(doc.text) > cap * 2**20:
            size = len(doc.text) / 2**20
            self._notices.show_once(
                f"{doc.uri} is {size:.0f} MB, above denpex.logs.maxSizeMB ({cap}); not diagnosed "
                f"in the editor. Run `denpex diagnose {to_fs_path(doc.uri) or doc.uri}` instead "
                "(it streams files of any size)."
            )
            self._refused.add(doc.uri)
            return True  # claimed, so the text is not kept anywhere
        if looks_binary(doc.text):
            self._notices.show_once(
                f"{doc.uri} looks like a binary file (NUL bytes); not diagnosed."
            )
            self._refused.add(doc.uri)
            return True
        self._logs[doc.uri] = LogDocument(
            doc.uri, source_of(doc.uri), doc.text, doc.version, encoding
        )
        self._schedule(doc.uri, 0.0)
        return True

    def change(self, params: types.DidChangeTextDocumentParams) -> bool:
        uri = params.text_document.uri
        doc = self._logs.get(uri)
        if doc is None:
            return uri in self._refused  # refused at open (too large, binary): edits ignored
        grew = True
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                grew = grew and change.range.start.line >= doc.last_line()
            doc.apply(change, params.text_document.version)
        # Appends are cheap (only the new tail is read) and run at once; other edits wait
        # for a pause in typing, since they mean a full rescan.
        self._schedule(uri, 0.0 if grew else self._debounce_s)
        return True

    def close(self, uri: str) -> bool:
        doc = self._logs.pop(uri, None)
        scan = self._scans.pop(uri, None)
        if scan:
            scan.cancel()
        self._layers.scanned.pop(uri, None)
        if doc is None:
            if uri in self._refused:
                self._refused.discard(uri)
                return True
            return False
        return True

    def lines(self, uri: str, first: int, last: int) -> tuple[list[str], int] | None:
        """0-based lines first..last of a log and the index of the first; None if not held."""
        doc = self._logs.get(uri)
        if doc is None:
            return None
        text, start = doc.line_range_text(first, last)
        return positions.lines_of(text), start

    def _schedule(self, uri: str, delay: float) -> None:
        c = self._scans.get(uri)
        if c is None:
            c = self._scans[uri] = Coalescer(lambda: self._scan(uri))
        c.trigger(delay)

    async def _scan(self, uri: str) -> None:
        doc = self._logs.get(uri)
        if doc is None:
            return
        loop = asyncio.get_running_loop()
        try:
            scan: Scan = await loop.run_in_executor(self._pool, doc.scan)
        except Exception as exc:
            log.exception("scan of %s failed", uri)
            self._notices.show_once(f"could not diagnose {uri}: {exc}", types.MessageType.Error)
            return
        path = to_fs_path(uri) if uri.startswith("file:") else None
        findings = await self._dumps.merge(path, scan.findings)
        if self._logs.get(uri) is not doc:
            return  # closed meanwhile
        placer = diagnostics.Placer(scan.last_line, scan.last_line_units)
        self._layers.scanned[uri] = diagnostics.build(findings, doc.source, uri, placer)
        kind = "full scan" if scan.full else "incremental scan"
        self._notices.log(f"{uri}: {kind} of {scan.lines_read} line(s), {len(findings)} finding(s)")
        self._layers.publish(uri, scan.version)

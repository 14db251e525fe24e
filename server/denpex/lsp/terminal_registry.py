"""The registry of client terminals: their sessions, when each is judged, and its reports.

Output arrives as ``denpex/terminalData`` chunks; each terminal has a ``TerminalSession``
(terminals.py), at most MAX_TERMINALS of them, the least recently active evicted first.
A terminal is judged once its output pauses for TERMINAL_QUIET_S, and at once when a
command ends; a failure not reported yet for the current command goes to the client as
one ``denpex/finding``.

Sessions are fed on one thread of their own (a burst of output takes seconds to scan, which
the event loop must not wait for): a session's chunks must be read in order, and no two
threads may touch one session. Output waiting on that thread is capped at
MAX_TERMINAL_BACKLOG characters; past it, chunks are skipped and the user is told.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lsprotocol import types

from denpex.finding import diagnosis_json
from denpex.lsp.actions import TERMINAL_NAME
from denpex.lsp.notices import Notices
from denpex.lsp.protocol import (
    FINDING,
    TerminalClosedParams,
    TerminalCommandEndParams,
    TerminalDataParams,
)
from denpex.lsp.scheduling import Coalescer
from denpex.lsp.settings import Settings
from denpex.lsp.terminals import CommandOutput, TerminalSession

log = logging.getLogger(__name__)

TERMINAL_QUIET_S = 0.3  # output pause after which a terminal's new lines are judged
MAX_TERMINALS = 64
# Characters of terminal output waiting to be scanned. What a burst costs is this cap: a full
# backlog's memory stays with the allocator after it drains (at 64 Mi characters the server
# stood 90+ MB above its start after a flood on a loaded machine, 40-75 MB on an idle one).
# A 16 Mi-character backlog is a second or more of scanning.
MAX_TERMINAL_BACKLOG = 16 * 2**20

T = TypeVar("T")


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("terminal scan failed", exc_info=future.exception())


class Terminals:
    def __init__(self, notices: Notices, notify: Callable[[str, Any], None]) -> None:
        self._notices = notices
        self._notify = notify
        self._sessions: OrderedDict[str, TerminalSession] = OrderedDict()
        self._checks: dict[str, Coalescer] = {}
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="denpex-term")
        self._backlog = 0
        self._announce = True

    def configure(self, settings: Settings) -> None:
        self._announce = settings.terminal_watch

    def __len__(self) -> int:
        return len(self._sessions)

    def data(self, params: TerminalDataParams) -> None:
        session = self._session(params.terminal_id, params.name)
        size = len(params.data)
        if self._backlog + size > MAX_TERMINAL_BACKLOG:
            self._notices.log(
                f"{session.name}: output arrives faster than it is scanned; "
                f"{size} characters skipped",
                types.MessageType.Warning,
            )
            return
        self._backlog += size
        done = self._on_thread(session.feed, params.data)
        done.add_done_callback(lambda _: self._scanned(size))
        self._check(session, params.terminal_id).trigger(TERMINAL_QUIET_S)

    def command_end(self, params: TerminalCommandEndParams) -> None:
        session = self._session(params.terminal_id, params.name)
        self._on_thread(session.command_end, params.command_line)
        self._check(session, params.terminal_id).trigger(0.0)

    def closed(self, params: TerminalClosedParams) -> None:
        self._forget(str(params.terminal_id))

    async def output(self, terminal_id: str | int) -> CommandOutput | None:
        """The terminal's current (or last finished) command's output; None if unknown."""
        session = self._sessions.get(str(terminal_id))
        return None if session is None else await self._on_thread(session.output)

    def _session(self, terminal_id: str | int, name: str | None) -> TerminalSession:
        tid = str(terminal_id)
        session = self._sessions.get(tid)
        if session is None:
            session = self._sessions[tid] = TerminalSession(tid, name or f"terminal {tid}")
            if len(self._sessions) > MAX_TERMINALS:
                self._forget(next(iter(self._sessions)))
        self._sessions.move_to_end(tid)
        return session

    def _forget(self, tid: str) -> None:
        self._sessions.pop(tid, None)
        check = self._checks.pop(tid, None)
        if check:
            check.cancel()

    def _check(self, session: TerminalSession, terminal_id: str | int) -> Coalescer:
        check = self._checks.get(session.terminal_id)
        if check is None:
            check = self._checks[session.terminal_id] = Coalescer(
                lambda: self._report(session, terminal_id)
            )
        return check

    def _on_thread(self, work: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Run session work on the terminal thread, after the work queued before it."""
        future = asyncio.get_running_loop().run_in_executor(self._thread, work, *args)
        future.add_done_callback(_log_failure)
        return future

    def _scanned(self, size: int) -> None:
        self._backlog -= size

    async def _report(self, session: TerminalSession, terminal_id: str | int) -> None:
        # Output is always buffered (for denpex/diagnoseTerminal); failures are announced
        # unless the user turned that off, and never from the terminal that verification
        # commands are typed into (they grep the failure on purpose).
        if not self._announce or session.name == TERMINAL_NAME:
            return
        findings = await self._on_thread(session.unreported)
        if findings:
            self._notify(
                FINDING,
                {
                    "source": session.name,
                    "terminalId": terminal_id,  # as the client sent it
                    "commandLine": session.command_line,
                    "diagnosis": diagnosis_json(findings),
                },
            )

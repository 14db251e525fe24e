"""Messages to the user: lines in the client's log and pop-ups shown once.

A busy directory or a log full of the same problem must not become a storm of pop-ups,
so each distinct pop-up (and each distinct once-only log line) is shown once per session.
"""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class Notices:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._shown: set[str] = set()

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A line in the client's output (window/logMessage) and in the server's log."""
        log.info("%s", message)
        self._server.window_log_message(
            types.LogMessageParams(type=kind, message=f"denpex: {message}")
        )

    def log_once(self, key: str, message: str, kind: types.MessageType) -> None:
        """``log``, the first time ``key`` is seen."""
        if key not in self._shown:
            self._shown.add(key)
            self.log(message, kind)

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """A pop-up (window/showMessage), shown once per distinct message; always logged."""
        self.log(message, kind)
        if message not in self._shown:
            self._shown.add(message)
            self._server.window_show_message(
                types.ShowMessageParams(type=kind, message=f"Denpex: {message}")
            )

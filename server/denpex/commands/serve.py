"""`denpex serve`: the language server on stdio, for any LSP client (VS Code, Neovim, Helix)."""

from __future__ import annotations

import argparse
import logging
import sys


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="run the Denpex language server on stdin/stdout",
        description="Run the Denpex language server on stdin/stdout (JSON-RPC). Logs go to stderr.",
    )
    p.add_argument(
        "--check-guard",
        action="store_true",
        help="at start-up, attempt one outbound connection and report in denpex/status "
        "whether the local-only guard refused it",
    )
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.set_defaults(func=run)


def _client_errors_in_one_line(record: logging.LogRecord) -> bool:
    """A request the client got wrong (InvalidParams) is answered with an error; the log
    needs one line about it, not pygls' traceback."""
    from pygls.exceptions import JsonRpcInvalidParams

    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, JsonRpcInvalidParams):
        record.msg, record.args, record.exc_info = "invalid params: %s", (exc,), None
        record.levelno, record.levelname = logging.INFO, "INFO"
        return logging.getLogger("pygls").isEnabledFor(logging.INFO)
    return True


def run(args: argparse.Namespace) -> int:
    # stdout carries JSON-RPC only: keep the real stream for the protocol and send every
    # stray print (ours or a dependency's) to stderr before anything can write.
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="denpex-lsp %(levelname)s %(name)s: %(message)s",
    )
    # pygls logs every message body at INFO: far too much for a 100 MB log document.
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLogger().level))
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_client_errors_in_one_line)

    from denpex.lsp import guard

    guard.install()
    from denpex.lsp.server import create_server

    create_server(check_guard=args.check_guard).start_io(sys.stdin.buffer, protocol_out)
    return 0

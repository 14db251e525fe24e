"""The `denpex` command line: a thin argparse layer over the engines.

Each subcommand lives in ``denpex.commands.<name>`` and exposes ``register(subparsers)``,
which adds its parser and sets ``func(args) -> int`` (the exit code).
Exit codes everywhere: 0 nothing found, 1 a failure/drift found, 2 usage or input error
(and any unexpected error: 1 must only ever mean "found").
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import traceback

from denpex import __version__
from denpex.errors import InputError

# The modules of commands/; each registers its subcommands (drift.py: drift, replicas, watch).
COMMAND_MODULES = ("diagnose", "catalog", "drift", "serve", "demo")
# Failures of the machine, not of denpex: a full disk or quota, a dying device.
_WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's default prints usage over several lines; keep the one-line contract.
        _say(f"denpex: error: {message}")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="denpex", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"denpex {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected error"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"denpex.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if sys.stdout is None:  # started with `>&-`: Python leaves sys.stdout unset
            raise InputError("standard output is closed")
        code = int(args.func(args))
        sys.stdout.flush()  # a full disk shows here, not in an unhandled flush at exit
        return code
    except InputError as exc:
        _say(f"denpex: error: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `denpex ... | head` closed the pipe: not an error worth a message.
        _drop_stdout()
        return 0
    except OSError as exc:
        if exc.errno not in _WRITE_ERRORS:
            return _internal_error(exc, args.debug)
        _drop_stdout()  # most often the output's disk: the exit's flush would fail again
        where = f"{exc.filename}: " if exc.filename else ""
        _say(f"denpex: error: cannot write: {where}{exc.strerror}")
        return 2
    except Exception as exc:  # the catch-all: one line, never exit 1
        return _internal_error(exc, args.debug)


def _internal_error(exc: BaseException, debug: bool) -> int:
    if debug:
        traceback.print_exception(exc)
        return 2
    _say(
        f"denpex: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)"
    )
    return 2


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null, so that the interpreter's final flush of what could not be
    written does not print a second error (the recipe in Python's signal docs)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def _say(line: str) -> None:
    """One line on stderr, if there is a stderr to write to (`2>&-` leaves none)."""
    if sys.stderr is not None:
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except OSError:
            pass

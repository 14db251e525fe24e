"""The `denpex` command line: a thin argparse layer over the engines.

Each subcommand lives in ``denpex.commands.<name>`` and exposes ``register(subparsers)``,
which adds its parser and sets ``func(args) -> int`` (the exit code).
Exit codes everywhere: 0 nothing found, 1 a failure/drift found, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from denpex import __version__
from denpex.errors import InputError

COMMANDS = ("diagnose", "catalog", "drift", "serve", "demo")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse's default prints usage over several lines; keep the one-line contract.
        sys.stderr.write(f"denpex: error: {message}\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="denpex", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"denpex {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"denpex.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except InputError as exc:
        sys.stderr.write(f"denpex: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `denpex ... | head` closed the pipe: not an error worth a traceback.
        return 0

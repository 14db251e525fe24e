"""`denpex diagnose LOG... [--json]`: which failure, which rank started it, what to do."""

from __future__ import annotations

import argparse
import json
import sys

from denpex.errors import InputError
from denpex.finding import diagnosis_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "diagnose",
        help="diagnose training logs: failure, initiating rank, collateral ranks, fix",
        description="Read one or more logs of one job (per-rank files, a slurm .out, a "
        "torchrun log, Flight Recorder dumps, a directory holding them; '-' for stdin) and "
        "report the failure, the rank that started it, the ranks that only reported it, the "
        "fix and commands that verify it. "
        "Exit code 0: no failure found, 1: a failure found, 2: bad usage or input.",
    )
    p.add_argument(
        "logs",
        nargs="+",
        metavar="LOG",
        help="log file, Flight Recorder dump, a directory of them, or '-' for stdin",
    )
    p.add_argument("--json", action="store_true", help="output shared-schema/diagnosis.schema.json")
    p.add_argument(
        "--markdown", action="store_true", help="output the diagnosis as Markdown for a ticket"
    )
    p.add_argument(
        "--redact",
        action="store_true",
        help="with --markdown: replace tokens, keys, passwords, host names, IP addresses and "
        "user names",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.json and args.markdown:
        raise InputError("choose one of --json and --markdown")
    if args.redact and not args.markdown:
        raise InputError("--redact applies to --markdown output")
    # Imported here: importing the log engine takes ~0.15 s (scanner, Flight Recorder
    # reader) that the other subcommands need not pay. Its catalog compiles on first use.
    from denpex.diagnosis import DumpSet, LogScanner, diagnose_paths, log_files
    from denpex.diagnosis.report import format_report

    scanner = LogScanner()
    files = log_files(args.logs)
    dumps = DumpSet()
    findings = diagnose_paths(args.logs, scanner, dumps, look_beside=True)
    for notice in scanner.notices:
        sys.stderr.write(f"denpex: {notice}\n")
    if len(scanner.notices) == len(files) and not len(dumps):
        raise InputError("no text log to diagnose (every input was skipped)")
    if args.json:
        sys.stdout.write(json.dumps(diagnosis_json(findings), indent=2, ensure_ascii=False) + "\n")
    elif args.markdown:
        from denpex.export.markdown import diagnosis_markdown, local_names

        sys.stdout.write(diagnosis_markdown(findings, local_names() if args.redact else None))
    else:
        sys.stdout.write(format_report(findings))
    return 1 if findings else 0

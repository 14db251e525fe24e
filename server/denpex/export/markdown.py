"""A diagnosis as a ticket-ready Markdown block, optionally redacted.

The one implementation behind ``denpex diagnose --markdown [--redact]`` and the language
server's ``denpex/diagnosisMarkdown`` request (the editor's "Copy Diagnosis as Markdown").
Redaction runs on each log-derived field before it is placed, so that Markdown escapes never
hide a secret from the patterns; the catalog's own text (title, fix, prevention) is placed
as written.
"""

from __future__ import annotations

import getpass
import platform
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from denpex import catalog
from denpex.errors import InputError
from denpex.export import markup
from denpex.export.redact import Redactor
from denpex.finding import Finding, compress_ranks, describe_initiator

REDACTED_NOTE = "_Host names, IP addresses, user names and tokens redacted._"


@dataclass(frozen=True)
class Names:
    """Host and user names to redact beyond those the diagnosis shows."""

    hosts: tuple[str, ...] = ()
    users: tuple[str, ...] = ()


def local_names() -> Names:
    """This machine's host name and user name (logs written here carry them)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no USER/LOGNAME
        user = ""
    return Names(hosts=tuple(filter(None, [platform.node()])), users=tuple(filter(None, [user])))


def _log_texts(f: Finding) -> Iterator[str]:
    """Every field of a finding that can come from a log."""
    if f.host:
        yield f.host
    yield f.root_cause
    for e in f.evidence:
        yield e.source
        yield e.text
    yield from f.verification


def _prevention(entry_id: str) -> list[str]:
    try:
        return [str(p) for p in catalog.get(entry_id).get("prevention", [])]
    except InputError:  # a finding from an older catalog
        return []


def _finding(f: Finding, clean: Any) -> str:
    host = clean(f.host) if f.host else None
    lines = [f"## {markup.text(f.title)}", ""]
    lines.append(
        f"- **Catalog entry:** {markup.code(f.id)} ({markup.text(f.category)}), "
        f"confidence {round(f.confidence * 100)}%"
    )
    initiator = describe_initiator(f.initiating_rank, host and markup.text(host), f.gpu)
    lines.append(f"- **Initiating:** {initiator}")
    collateral = compress_ranks(f.collateral_ranks) if f.collateral_ranks else "none"
    lines.append(f"- **Collateral ranks:** {collateral}")
    if f.suspect_ranks:
        lines.append(f"- **Suspect ranks:** {compress_ranks(f.suspect_ranks)}")
    if f.attribution is not None:
        why = markup.text(clean(f.attribution.reason))  # names the log's path: redacted
        lines.append(f"- **Attribution:** {f.attribution.confidence} confidence, {why}")
    lines += ["", f"**Root cause:** {markup.text(clean(f.root_cause))}"]
    if f.fix:
        lines += ["", "**Fix:**", "", f.fix]
    prevention = _prevention(f.id)
    if prevention:
        lines += ["", "**Prevention:**", "", *(f"- {p}" for p in prevention)]
    if f.evidence:
        evidence = "\n".join(
            f"{clean(e.source)}:{e.line} [{e.role}] {clean(e.text)}" for e in f.evidence
        )
        lines += ["", "**Evidence:**", "", markup.fence(evidence)]
    if f.verification:
        commands = "\n".join(clean(c) for c in f.verification)
        lines += ["", "**Verify:**", "", markup.fence(commands)]
    return "\n".join(lines)


def diagnosis_markdown(findings: list[Finding], redact: Names | None = None) -> str:
    """The Markdown block; redacted when ``redact`` is given (with those names as well)."""
    redactor = None
    if redact is not None:
        # Labels in order of appearance: the diagnosis's hosts, then the logs', then these.
        redactor = Redactor(users=redact.users)
        for f in findings:
            if f.host:
                redactor.add_host(f.host)
        for f in findings:
            for text in _log_texts(f):
                redactor.learn(text)
        for host in redact.hosts:
            redactor.add_host(host)

    def clean(text: str) -> str:
        return redactor.redact(text) if redactor is not None else text

    body = "\n\n".join(_finding(f, clean) for f in findings) or "No known failure found."
    out = f"# Denpex diagnosis\n\n{body}\n"
    return f"{out}\n{REDACTED_NOTE}\n" if redactor is not None else out

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
from denpex.finding import Evidence, Finding, compress_ranks

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


def _initiator(f: Finding, host: str | None) -> str:
    if f.initiating_rank is None and host is None and f.gpu is None:
        return "not identified"
    text = "unknown rank" if f.initiating_rank is None else f"rank {f.initiating_rank}"
    if host is not None:
        text += f" on {markup.text(host)}"
    if f.gpu is not None:
        text += f", GPU {f.gpu}"
    return text


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
    lines.append(f"- **Initiating:** {_initiator(f, host)}")
    collateral = compress_ranks(f.collateral_ranks) if f.collateral_ranks else "none"
    lines.append(f"- **Collateral ranks:** {collateral}")
    if f.suspect_ranks:
        lines.append(f"- **Suspect ranks:** {compress_ranks(f.suspect_ranks)}")
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


# -- the diagnosis JSON (shared-schema/diagnosis.schema.json) back into findings -----------


_MAX_INT = 2**63  # ranks, GPUs and line numbers; a bigger number is not one (nor printable)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_INT


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        ok = int in (kind if isinstance(kind, tuple) else (kind,)) and _count(value)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise InputError(f"{what}: {key} has the wrong type or is out of range")
    return value


def _ints(obj: dict[str, Any], key: str, what: str) -> list[int]:
    values = _field(obj, key, list, what)
    if not all(_count(v) for v in values):
        raise InputError(f"{what}: {key} must hold integers from 0")
    return list(values)


def _confidence(obj: dict[str, Any], what: str) -> float:
    value = obj.get("confidence")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"{what}: confidence must be a number from 0 to 1")
    return float(value)


def _strings(obj: dict[str, Any], key: str, what: str) -> list[str]:
    values = _field(obj, key, list, what)
    if not all(isinstance(v, str) for v in values):
        raise InputError(f"{what}: {key} must hold strings")
    return list(values)


def _evidence(obj: Any, what: str) -> Evidence:
    if not isinstance(obj, dict):
        raise InputError(f"{what}: evidence must be objects")
    role = _field(obj, "role", str, what)
    if role not in ("initiating", "collateral", "context"):
        raise InputError(f"{what}: unknown evidence role {role[:40]!r}")
    return Evidence(
        source=_field(obj, "source", str, what),
        line=_field(obj, "line", int, what),
        text=_field(obj, "text", str, what),
        rank=_field(obj, "rank", (int, type(None)), what),
        role=role,
    )


def findings_from_json(diagnosis: Any) -> list[Finding]:
    """The findings of a diagnosis document; InputError names what does not fit."""
    if not isinstance(diagnosis, dict) or not isinstance(diagnosis.get("findings"), list):
        raise InputError("a diagnosis is an object with a findings list")
    out: list[Finding] = []
    for i, f in enumerate(diagnosis["findings"]):
        what = f"finding {i}"
        if not isinstance(f, dict):
            raise InputError(f"{what} is not an object")
        out.append(
            Finding(
                id=_field(f, "id", str, what),
                title=_field(f, "title", str, what),
                category=_field(f, "category", str, what),
                confidence=_confidence(f, what),
                initiating_rank=_field(f, "initiating_rank", (int, type(None)), what),
                collateral_ranks=_ints(f, "collateral_ranks", what),
                suspect_ranks=_ints(f, "suspect_ranks", what),
                host=_field(f, "host", (str, type(None)), what),
                gpu=_field(f, "gpu", (int, type(None)), what),
                evidence=[_evidence(e, what) for e in _field(f, "evidence", list, what)],
                root_cause=_field(f, "root_cause", str, what),
                fix=_field(f, "fix", str, what),
                verification=_strings(f, "verification", what),
                related=_strings(f, "related", what) if "related" in f else [],
            )
        )
    return out

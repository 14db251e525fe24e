"""Findings → LSP diagnostics.

Each finding becomes: an Error on its initiating evidence line, one Warning per distinct
collateral message (the same watchdog timeout from 500 ranks is one diagnostic listing the
ranks, not 500), one Information per distinct context message. Collateral and context
diagnostics point at the initiating line through ``relatedInformation``. Every diagnostic
has ``source: "denpex"`` and ``code: <catalog id>``.

``Marks`` remembers which finding and role each evidence line belongs to, so hover and
code actions answer from the server's own state rather than from what the client echoes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types

from denpex.finding import Evidence, Finding, compress_ranks, initiator_summary

_SEVERITY = {
    "initiating": types.DiagnosticSeverity.Error,
    "collateral": types.DiagnosticSeverity.Warning,
    "context": types.DiagnosticSeverity.Information,
}
_NUMBER = re.compile(r"\d+")
MAX_RELATED = 20  # further occurrences listed under a grouped diagnostic


@dataclass
class Mark:
    finding: Finding
    role: str
    diagnostic: types.Diagnostic


@dataclass
class Published:
    """What the server published for one document, by 0-based line."""

    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    marks: dict[int, list[Mark]] = field(default_factory=dict)


def merged(layers: list[Published]) -> list[types.Diagnostic]:
    """One document's diagnostics from every origin (scan, denpex.diagnose on a selection,
    drift). "Denpex: Diagnose" on a log already scanned finds the same failures on the same
    lines: each line keeps one diagnostic per finding and severity, the first origin's, so
    the Problems view counts a failure once."""
    out: list[types.Diagnostic] = []
    seen: set[tuple[int, object, object]] = set()
    for pub in layers:
        for d in pub.diagnostics:
            key = (d.range.start.line, d.code, d.severity)
            if key not in seen:
                seen.add(key)
                out.append(d)
    return out


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    cut = re.search(r"(?<=[.!?])\s", text)
    return text[: cut.start()] if cut else text


def _group_key(e: Evidence) -> tuple[str, str]:
    # Ranks, sequence numbers, pids and timestamps differ between ranks' copies of the
    # same report; masking digits groups the copies while keeping different reports apart.
    return e.role, _NUMBER.sub("#", " ".join(e.text.split()))[:300]


def _uri_of(source: str, doc_source: str, doc_uri: str) -> str | None:
    if source == doc_source:
        return doc_uri
    if source.startswith(("file:", "untitled:")):
        return source
    path = Path(source)
    return path.resolve().as_uri() if path.is_absolute() or path.exists() else None


class Placer:
    """Ranges for 0-based lines of one document snapshot."""

    def __init__(self, last_line: int | None = None, last_line_units: int = 0) -> None:
        self.last_line = last_line
        self.last_line_units = last_line_units

    def line(self, n: int) -> types.Range:
        # The whole line including its break is "to the start of the next line"; the last
        # line has no next line, so end at its length when known.
        if self.last_line is not None and n >= self.last_line:
            return types.Range(types.Position(n, 0), types.Position(n, self.last_line_units))
        return types.Range(types.Position(n, 0), types.Position(n + 1, 0))


def build(findings: list[Finding], doc_source: str, doc_uri: str, placer: Placer) -> Published:
    out = Published()
    seen: set[tuple[int, str]] = set()
    for f in findings:
        mine = [e for e in f.evidence if e.source == doc_source]
        if not mine:
            continue
        initiating = next((e for e in f.evidence if e.role == "initiating"), None)
        origin = _origin(f, initiating, doc_source, doc_uri, placer)
        groups: dict[tuple[str, str], dict[int, Evidence]] = {}
        for e in mine:
            groups.setdefault(_group_key(e), {}).setdefault(e.line, e)  # one per line
        for (role, _key), by_line in groups.items():
            members = [by_line[n] for n in sorted(by_line)]
            head = members[0]
            line = head.line - 1
            if (line, f.id) in seen:
                continue
            seen.add((line, f.id))
            diag = types.Diagnostic(
                range=placer.line(line),
                severity=_SEVERITY.get(role, types.DiagnosticSeverity.Information),
                source="denpex",
                code=f.id,
                message=_message(f, role, members),
                related_information=_related(role, members, origin, doc_uri, placer) or None,
                data={"id": f.id, "role": role, "lines": [e.line for e in members[:100]]},
            )
            out.diagnostics.append(diag)
            for e in members:
                out.marks.setdefault(e.line - 1, []).append(Mark(f, role, diag))
    return out


def _origin(
    f: Finding, initiating: Evidence | None, doc_source: str, doc_uri: str, placer: Placer
) -> types.DiagnosticRelatedInformation | None:
    if initiating is None:
        return None
    uri = _uri_of(initiating.source, doc_source, doc_uri)
    if uri is None:
        return None
    rank = "" if initiating.rank is None else f" on rank {initiating.rank}"
    where = (
        placer.line(initiating.line - 1) if uri == doc_uri else Placer().line(initiating.line - 1)
    )
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=where),
        message=f"initiating: {f.title}{rank}",
    )


def _related(
    role: str,
    members: list[Evidence],
    origin: types.DiagnosticRelatedInformation | None,
    doc_uri: str,
    placer: Placer,
) -> list[types.DiagnosticRelatedInformation]:
    if role == "initiating":
        return []
    out = [origin] if origin else []
    for e in members[1 : 1 + MAX_RELATED]:
        rank = "" if e.rank is None else f" (rank {e.rank})"
        out.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=doc_uri, range=placer.line(e.line - 1)),
                message=f"same {role} report{rank}",
            )
        )
    return out


def _message(f: Finding, role: str, members: list[Evidence]) -> str:
    if role == "initiating":
        return (
            f"{f.title}: {initiator_summary(f)}. {first_sentence(f.root_cause)}".rstrip(". ") + "."
        )
    # The engine already folds the same report from many ranks into one evidence line, so
    # the ranks come from the finding: the line's own ranks, then the whole collateral set.
    ranks = sorted({e.rank for e in members if e.rank is not None})
    text = f"{f.title}: {role} report"
    if ranks:
        text += f" from rank{'s' if len(ranks) > 1 else ''} {compress_ranks(ranks)}"
    if len(members) > 1:
        text += f" ({len(members)} lines)"
    if role == "collateral" and f.collateral_ranks:
        text += f"; collateral ranks {compress_ranks(f.collateral_ranks)}"
    if f.initiating_rank is not None:
        return f"{text}; caused by rank {f.initiating_rank}."
    return f"{text}; {initiator_summary(f)}."

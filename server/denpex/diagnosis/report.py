"""The human report: one compact block per finding, root cause first."""

from __future__ import annotations

import textwrap

from denpex.finding import Finding, compress_ranks, initiator_field

_WIDTH = 100


def format_report(findings: list[Finding]) -> str:
    if not findings:
        return "No failure found in the log(s).\n"
    blocks = [_block(i, f, len(findings)) for i, f in enumerate(findings, 1)]
    return "\n".join(blocks)


def _block(index: int, f: Finding, total: int) -> str:
    label = "Root cause" if index == 1 else "Also found"
    out = [f"{label} ({index}/{total}): {f.title}  [{f.id}]  confidence {f.confidence:.2f}"]
    out.append(f"  Initiating rank : {initiator_field(f)}")
    if f.collateral_ranks:
        out.append(
            f"  Collateral ranks: {compress_ranks(f.collateral_ranks)} "
            f"({len(f.collateral_ranks)} rank{'s' if len(f.collateral_ranks) != 1 else ''})"
        )
    if f.suspect_ranks:
        out.append(f"  Suspect ranks   : {compress_ranks(f.suspect_ranks)}")
    if f.attribution is not None:
        a = f.attribution
        out.append(f"  Attribution     : {a.confidence} confidence, {a.reason}")
    out.append("  Evidence:")
    for ev in f.evidence:
        rank = f"rank {ev.rank}" if ev.rank is not None else "rank ?"
        text = ev.text if len(ev.text) <= 160 else ev.text[:157] + "..."
        out.append(f"    {ev.source}:{ev.line}  [{ev.role}, {rank}]")
        out.append(f"      {text.strip()}")
    out.append("  Why:")
    out.extend(_wrap(f.root_cause, "    "))
    out.append("  Fix:")
    for step in f.fix.splitlines():
        out.extend(_wrap(step, "    ", "       "))
    if f.verification:
        out.append("  Verify:")
        for cmd, runnable in zip(f.verification, f.verification_runnable, strict=True):
            out.append(f"    $ {cmd}" if runnable else f"    ! {cmd}")
        if not all(f.verification_runnable):
            out.append("    (!: fill in the <blanks> or check the values taken from the log first)")
    if f.related:
        out.append(f"  Related: {', '.join(f.related)}  (denpex catalog ID)")
    return "\n".join(out) + "\n"


def _wrap(text: str, indent: str, subsequent: str | None = None) -> list[str]:
    return textwrap.wrap(
        text, _WIDTH, initial_indent=indent, subsequent_indent=subsequent or indent
    ) or [indent]

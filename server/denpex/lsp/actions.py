"""Hover text and code actions for lines that carry Denpex evidence.

The verification commands run in the *client's* terminal, typed for the user to read and
run with Enter, and only those flagged runnable: a code action carries a client-side
command (``denpex.runInTerminal``, ``denpex.copyToClipboard``, ``denpex.showCatalogEntry``)
with the command line as its argument. Only
``denpex.diagnose`` is executed by the server.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from denpex import catalog
from denpex.errors import InputError
from denpex.export import markup
from denpex.finding import initiator_summary
from denpex.lsp.diagnostics import Mark

RUN_IN_TERMINAL = "denpex.runInTerminal"
COPY_TO_CLIPBOARD = "denpex.copyToClipboard"
SHOW_CATALOG_ENTRY = "denpex.showCatalogEntry"
DIAGNOSE = "denpex.diagnose"
TERMINAL_NAME = "Denpex verify"  # fixed by lsp-client-commands.schema.json
BLOCK_REACH = 200  # lines searched on each side for the edges of a block


def _quick_answer(entry_id: str) -> str | None:
    try:
        return str(catalog.get(entry_id)["quick_answer"])
    except InputError:
        return None


def hover_markdown(marks: list[Mark]) -> str:
    """The hover for a line. Text that can come from a log (host, file names, the story of
    the failure) is escaped; only the catalog's own Markdown (quick answer, fix) is not."""
    parts: list[str] = []
    done: set[str] = set()
    for mark in marks:
        f = mark.finding
        if f.id in done:
            continue
        done.add(f.id)
        head = f"**{markup.text(f.title)}** · {markup.code(f.id)} · {markup.text(f.category)}"
        lines = [f"{head} · this line is *{mark.role}*", ""]
        summary = initiator_summary(f)
        lines.append(markup.text(f"{summary[0].upper()}{summary[1:]}."))
        quick = _quick_answer(f.id)
        if quick:
            lines += ["", f"**Quick answer.** {quick}"]
        if f.root_cause:
            lines += ["", f"**Root cause.** {markup.text(f.root_cause)}"]
        if f.fix:
            lines += ["", f"**Fix.** {f.fix}"]
        if f.verification:
            lines += ["", "**Verify:**", *(f"- {markup.code(cmd)}" for cmd in f.verification)]
        parts.append("\n".join(lines))
    return "\n\n---\n\n".join(parts)


def hover(marks: list[Mark], line: int) -> types.Hover | None:
    """The hover on 0-based ``line`` carrying ``marks``; None for a line without any."""
    if not marks:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(marks)),
        range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)),
    )


def _quick_fix(
    title: str,
    command: tuple[str, str, dict[str, Any]],
    diagnostics: list[types.Diagnostic] | None = None,
) -> types.CodeAction:
    """A quick fix that sends one client command: ``command`` is (its title, its name, its
    one argument)."""
    name_title, name, argument = command
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=diagnostics,
        command=types.Command(title=name_title, command=name, arguments=[argument]),
    )


def code_actions(uri: str, marks: list[Mark], block: types.Range | None) -> list[types.CodeAction]:
    actions: list[types.CodeAction] = []
    done: set[str] = set()
    for mark in marks:
        f = mark.finding
        if f.id in done:
            continue
        done.add(f.id)
        diags = [m.diagnostic for m in marks if m.finding.id == f.id]
        for cmd, runnable in zip(f.verification, f.verification_runnable, strict=True):
            # The client types the command and the user presses Enter. A command with a
            # blank to fill or a value that failed its check is offered to copy only.
            if runnable:
                typed = {"command": cmd, "name": TERMINAL_NAME}
                actions.append(
                    _quick_fix(
                        f"Denpex: run `{cmd}` in a terminal",
                        ("Type verification command", RUN_IN_TERMINAL, typed),
                        diags,
                    )
                )
            copied = ("Copy verification command", COPY_TO_CLIPBOARD, {"text": cmd})
            actions.append(_quick_fix(f"Denpex: copy `{cmd}`", copied, diags))
        entry = ("Open catalog entry", SHOW_CATALOG_ENTRY, {"id": f.id})
        actions.append(_quick_fix(f"Denpex: open the catalog entry “{f.title}”", entry, diags))
    if block is not None:
        scan = ("Diagnose block", DIAGNOSE, {"uri": uri, "range": _range_json(block)})
        actions.append(_quick_fix("Denpex: diagnose the surrounding block", scan))
    return actions


def _range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def surrounding_block(lines: list[str], first: int, line: int) -> types.Range:
    """The run of non-blank lines around 0-based ``line``; ``lines`` starts at line ``first``."""
    i = line - first
    top = i
    while top > 0 and lines[top - 1].strip():
        top -= 1
    bottom = i
    while bottom + 1 < len(lines) and lines[bottom + 1].strip():
        bottom += 1
    return types.Range(types.Position(first + top, 0), types.Position(first + bottom + 1, 0))

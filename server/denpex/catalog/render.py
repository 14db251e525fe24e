"""Render a catalog entry as one Markdown page.

The same page is printed by `denpex catalog ID` and returned by the language server for
`denpex/catalogEntry`, so it holds every field of the entry: nothing is kept back for a
"premium" view. Text fields are already written as Markdown in the entry files and are
copied verbatim; only regex patterns and commands are wrapped so that Markdown never
reinterprets their characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from denpex.catalog import Entry, entries, fill_template


def to_markdown(entry: Entry, values: Mapping[str, object] | None = None) -> str:
    """The entry as a Markdown page.

    With ``values`` (rank, host, gpu, log, pid, run, ref, step) the verification commands
    are filled in as they would be for a finding; without, their placeholders stay visible.
    """
    out: list[str] = [f"# {entry['title']}", ""]
    tags = ", ".join(_code(t) for t in entry["tags"])
    out += [f"{_code(entry['id'])} · category: **{entry['category']}** · tags: {tags}", ""]

    _section(out, "Quick answer", [entry["quick_answer"]])
    _section(out, "Mechanism", [entry["mechanism"]])
    symptoms = [f"- {s['symptom']}\n  - *Why:* {s['why']}" for s in entry["symptoms"]]
    _section(out, "Symptoms", symptoms)
    _section(out, "Affected systems", [f"- {s}" for s in entry["affected_systems"]])
    _section(out, "How to confirm", [f"- [ ] {c}" for c in entry["confirm"]])
    _section(out, "Fix", [f"{i}. {step}" for i, step in enumerate(entry["fix"], 1)])
    _section(out, "Prevention", [f"- {p}" for p in entry["prevention"]])
    commands = [_verification(v, values) for v in entry["verification"]]
    _section(out, "Verification commands", commands, loose=True)
    _section(out, "Fingerprint to monitor", [entry["fingerprint"]])
    _section(out, "Log signals", _signals(entry))
    if entry.get("conditions"):
        _section(out, "Conditions", [f"- {_condition(c)}" for c in entry["conditions"]])
    _section(out, "Related", _related(entry["related"]))
    _section(out, "References", [_reference(r) for r in entry["references"]])
    return "\n".join(out).rstrip() + "\n"


def _section(out: list[str], heading: str, items: list[str], *, loose: bool = False) -> None:
    """A heading and its items; ``loose`` puts a blank line between items (code blocks)."""
    out += [f"## {heading}", ""]
    out.append(("\n\n" if loose else "\n").join(items) if items else "_None._")
    out.append("")


def _code(text: str) -> str:
    """An inline code span that survives backticks inside ``text`` (CommonMark rule: the
    fence is one backtick longer than the longest run inside, padded by spaces)."""
    runs = re.findall(r"`+", text)
    if not runs:
        return f"`{text}`"
    fence = "`" * (max(len(r) for r in runs) + 1)
    return f"{fence} {text} {fence}"


def _verification(v: Mapping[str, str], values: Mapping[str, object] | None) -> str:
    command = fill_template(v["command"], values).text if values is not None else v["command"]
    return f"```sh\n{command}\n```\n{v['why']}"


def _signals(entry: Entry) -> list[str]:
    if not entry["signals"]:
        return [
            "No log patterns: this failure is found by comparing checkpoints "
            "(`denpex drift`, `denpex replicas`)."
        ]
    lines = []
    for s in entry["signals"]:
        flags = ", case-insensitive" if s.get("ignore_case") else ""
        if s.get("after_bad_exit"):
            flags += ", teardown after a launcher's report of a task's own bad exit"
        if s.get("swallowed_after"):
            names = ", ".join(_code(n) for n in s["swallowed_after"])
            flags += f", not counted when it follows {names} (an error caught and gone on from)"
        if s.get("benign_with"):
            names = ", ".join(_code(n) for n in s["benign_with"])
            flags += f", not counted when the log also shows {names} (handled)"
        if s.get("traceback_frame"):
            flags += ", a traceback frame: names the generic exception that ends its traceback"
        weight = s.get("weight", 0.5)
        head = f"{_code(s['name'])} ({s['role']}, weight {weight}{flags})"
        lines.append(f"- {head}: {_code(s['pattern'])}")
    if entry.get("hang"):
        lines.append(
            "- Read as a hang: ranks missing from these reports are suspects, and a launcher's "
            "SIGABRT or exit-code report beside them is the watchdog's abort."
        )
    if entry.get("exit_report"):
        lines.append(
            "- Reports how a process ended, not why: after an incident's first failure it is "
            "that failure's exit, and another entry names the incident."
        )
    return lines


def _condition(c: Mapping[str, Any]) -> str:
    kind = c["kind"]
    if kind == "requires":
        what = "all of these signals must match: " + ", ".join(_code(n) for n in c["signals"])
    elif kind == "min_count":
        what = f"{_code(c['signal'])} must match at least {c['count']} lines"
    else:  # value_jump
        what = (
            f"the value of {_code(c['signal'])} must jump to at least {c['ratio']}× the running "
            f"median of its earlier values (after {c.get('warmup', 10)} values)"
        )
    return f"{_code(kind)}: {what}"


def _related(ids: list[str]) -> list[str]:
    known = entries()
    return [f"- {_code(i)} — {known[i]['title']}" if i in known else f"- {_code(i)}" for i in ids]


def _reference(r: Mapping[str, str]) -> str:
    return f"- {r['title']} — {r['where']}" if r.get("where") else f"- {r['title']}"

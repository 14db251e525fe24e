"""Putting untrusted text (log lines, host names, file names) into Markdown safely.

Markdown renderers turn ``![x](https://…)`` into a fetch of a remote image and pass raw
HTML through, so text from a log must never reach them as Markdown. ``text`` puts a
backslash (CommonMark's escape: the character renders as itself) before every character
that can open a construct inside a line: emphasis, code, links and images, HTML and
entities, tables, strikethrough, and the autolinks of GFM (``https:``, ``www.``, ``a@b``).
Other punctuation stays as it is, so the Markdown stays readable as plain text.
``code``/``fence`` wrap text in a code span or block whose backtick run is longer than any
inside, so the text cannot close it.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"[\\`*_\[\]<>!&|~#@:]|(?<=[Ww]{3})\.")
_BACKTICKS = re.compile(r"`+")


def text(value: str) -> str:
    """``value`` as inline Markdown that renders as exactly its characters, on one line."""
    return _SPECIAL.sub(r"\\\g<0>", " ".join(value.split()))


def _longest_run(value: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(value)), default=0)


def code(value: str) -> str:
    """An inline code span holding ``value`` verbatim (on one line)."""
    value = " ".join(value.split())
    ticks = "`" * (_longest_run(value) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def fence(value: str) -> str:
    """A fenced code block holding ``value`` verbatim."""
    ticks = "`" * max(3, _longest_run(value) + 1)
    return f"{ticks}\n{value}\n{ticks}"

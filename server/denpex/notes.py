"""A warning that says what it is about: ``Note``.

Warnings travel as plain strings (the JSON ``warnings`` is a list of strings, and most
warnings are only ever shown). Those a caller must recognise, e.g. ``denpex watch``
saying once per checkpoint that it is still incomplete, are made as a ``Note``: still a
``str`` (so every list of warnings and the JSON are unchanged), carrying its ``kind`` and
its ``subject``, so callers group by those and never by the wording.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["incomplete", "vanished"]


class Note(str):
    """Warning text with its ``kind`` and ``subject`` (the checkpoint it is about)."""

    kind: Kind
    subject: str

    def __new__(cls, kind: Kind, subject: str, text: str) -> Note:
        note = super().__new__(cls, text)
        note.kind = kind
        note.subject = subject
        return note


__all__ = ["Kind", "Note"]

"""Integers captured from log text, parsed through one bounded door.

A log line may hold a "rank" or "pid" of thousands of digits: Python refuses to convert
more than 4,300 digits (ValueError), and no real rank, pid, GPU index, exit code or step
has more than a handful. So a captured number is a number only when it is short ASCII
digits; anything else reads as "not a number" (None) and the field stays unknown.
"""

from __future__ import annotations

MAX_DIGITS = 18  # below 2**63: every real count, id or index fits


def to_int(text: str | None, *, signed: bool = False) -> int | None:
    """``text`` as an int, or None when it is not at most MAX_DIGITS ASCII digits (with one
    leading "-" when ``signed``). ``\\d`` in a str pattern also matches other scripts'
    digits and ``str.isdigit`` superscripts: neither is a number in a log field."""
    if text is None:
        return None
    digits = text[1:] if signed and text.startswith("-") else text
    if not (0 < len(digits) <= MAX_DIGITS and digits.isascii() and digits.isdigit()):
        return None
    return int(text)

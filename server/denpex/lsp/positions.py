"""LSP positions: lines end at \\r\\n, \\r or \\n; characters count in the negotiated encoding."""

from __future__ import annotations

import re

BREAK = re.compile(r"\r\n|\r|\n")


def count_breaks(text: str) -> int:
    n = text.count("\n")
    if "\r" not in text:  # most logs: "in" is a faster scan than two more counts
        return n
    return n + text.count("\r") - text.count("\r\n")


def last_break_end(text: str, start: int = 0, end: int | None = None) -> int:
    """Offset just after the last line break in text[start:end], or -1 when there is none."""
    end = len(text) if end is None else end
    i = text.rfind("\n", start, end)
    # "\r" only after the last "\n": most logs have none, and searching a whole document
    # for one costs a pass over it.
    i = max(i, text.rfind("\r", i + 1 if i >= 0 else start, end))
    return -1 if i < 0 else i + 1


def split_lines(block: str) -> list[str]:
    """Lines of a block that ends with a line break (the empty remainder is dropped)."""
    parts = BREAK.split(block) if "\r" in block else block.split("\n")
    parts.pop()
    return parts


def lines_of(text: str) -> list[str]:
    """All lines of ``text``, the last one with or without its line break."""
    return split_lines(text if text.endswith(("\n", "\r")) else text + "\n")


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in position units (utf-8 bytes, utf-16 code units, code points)."""
    if text.isascii() or encoding == "utf-32":
        return len(text)
    codec = "utf-8" if encoding == "utf-8" else "utf-16-le"
    size = len(text.encode(codec, errors="surrogatepass"))
    return size if encoding == "utf-8" else size // 2


def index_of_units(line: str, count: int, encoding: str) -> int:
    """Python index in ``line`` of the position ``count`` units from its start (clamped)."""
    if line.isascii() or encoding == "utf-32":
        return min(count, len(line))
    used = 0
    for i, ch in enumerate(line):
        if used >= count:
            return i
        used += units(ch, encoding)
    return len(line)


_COUNT_BLOCK = 1 << 16


def line_start(text: str, line: int) -> int:
    """Offset of the start of 0-based ``line`` (len(text) past the end). O(offset), run on
    the event loop for edits in the middle and code actions: without "\r", whole blocks are
    counted by str.count (C speed), and only the last block is walked line by line."""
    if line == 0:
        return 0
    if "\r" not in text:
        pos, left = 0, line
        while (n := text.count("\n", pos, pos + _COUNT_BLOCK)) < left:
            if pos + _COUNT_BLOCK >= len(text):
                return len(text)
            pos, left = pos + _COUNT_BLOCK, left - n
        for _ in range(left):
            pos = text.index("\n", pos) + 1
        return pos
    for seen, m in enumerate(BREAK.finditer(text), start=1):
        if seen == line:
            return m.end()
    return len(text)


def line_at(text: str, start: int) -> str:
    """The line that starts at offset ``start``, without its line break."""
    m = BREAK.search(text, start)
    return text[start : m.start()] if m else text[start:]

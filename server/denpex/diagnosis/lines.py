"""Bounded streaming of log bytes: whole-line blocks, overlong lines cut, text cleaned.

The scanner works on multi-megabyte blocks of complete lines so that healthy lines never
reach Python code one by one (see matcher.py). Everything here keeps memory and time
bounded: a line longer than ``MAX_LINE`` bytes is cut to its head and the rest is skipped
while streaming, so a 500 MB single line costs no more memory than a short one, and
``bound_lines`` cuts every line of a block before any regex sees it, so no pattern's
backtracking can cost more than its worst case on ``MAX_LINE`` bytes.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from typing import Protocol

BLOCK_SIZE = 4 << 20
# Longest line head we keep. Real log lines are < 4 KiB; a longer one is a dump (a tensor
# printout, a base64 blob) whose head is what matters.
MAX_LINE = 64 << 10
# A NUL byte in the first KiBs means the file is not a text log (a checkpoint, a core dump).
_BINARY_PROBE = 8 << 10

# Terminal escape sequences, the one grammar for logs and for terminal output (lsp/terminals.py
# streams it): CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC strings, charset designations
# and the remaining two-byte escapes.
ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b[()*+][ -~]"
    r"|\x1b[ -/]*[0-~]"
)


def looks_binary(head: bytes | str) -> bool:
    """A NUL in the first 8 KiB, the way git and grep tell binary files from text: of a
    file's bytes, or of an editor's text (the language server's documents)."""
    if isinstance(head, bytes):
        return b"\x00" in head[:_BINARY_PROBE]
    return "\x00" in head[:_BINARY_PROBE]


class Reader(Protocol):
    def read(self, n: int, /) -> bytes: ...


class FileReader:
    """A regular file from byte ``start`` to byte ``stop`` (None: its end) read as a stream,
    except that a read ends at the last line end within the bytes the stream would have
    given, when the line cut off there is short: iter_blocks_at then finds a block of whole
    lines and uses it as it is, where it would join the previous read's cut line to this
    read and cut this one's, two copies of the block (a third of its reading time).
    iter_blocks_at gives the same blocks either way: what this read holds back is what it
    would have carried over. Each read is one ``os.pread`` of its exact size, after a small
    one of the bytes before the stream's position that finds the line end."""

    def __init__(self, fd: int, start: int, stop: int | None, max_line: int) -> None:
        """``max_line``: iter_blocks_at's. A line cut off by a read is held back only when it
        is shorter than the probe, so never one that iter_blocks_at would cut."""
        self._fd = fd
        self._pos = start  # the next byte to give
        self._grid = start  # where a plain stream would be: reads end at a line end before it
        self._stop = stop
        self._probe = min(4096, max_line)

    @staticmethod
    def of(stream: Reader, max_line: int) -> FileReader | None:
        """A FileReader for ``stream`` from its position when it is a regular file."""
        try:
            fd = stream.fileno()  # type: ignore[attr-defined]
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return FileReader(fd, stream.tell(), None, max_line)  # type: ignore[attr-defined]
        except (AttributeError, OSError, ValueError):
            return None

    def read(self, n: int) -> bytes:
        grid = self._grid + n
        if self._stop is not None:
            grid = min(grid, self._stop)
        self._grid = grid
        pos = self._pos
        if grid <= pos:
            return b""
        cut = -1  # the last line end before ``grid``, when the line it cuts off is short
        if grid - self._probe > pos:
            tail = os.pread(self._fd, self._probe, grid - self._probe)
            nl = tail.rfind(b"\n") if len(tail) == self._probe else -1
            cut = grid - self._probe + nl + 1 if nl >= 0 else -1
        if cut > 0:
            data = os.pread(self._fd, cut - pos, pos)
        else:  # a read shorter than the probe, a long line, the file's end: as a stream
            data = os.pread(self._fd, grid - pos, pos)
            nl = data.rfind(b"\n")
            if nl >= 0 and len(data) == grid - pos and len(data) - nl - 1 < self._probe:
                data = data[: nl + 1]
        self._pos = pos + len(data)
        return data


def iter_blocks(
    stream: Reader, block_size: int = BLOCK_SIZE, max_line: int = MAX_LINE
) -> Iterator[bytes]:
    """Yield blocks that hold only complete lines (see iter_blocks_at)."""
    for _offset, block in iter_blocks_at(stream, block_size, max_line):
        yield block


def iter_blocks_at(
    stream: Reader, block_size: int = BLOCK_SIZE, max_line: int = MAX_LINE
) -> Iterator[tuple[int, bytes]]:
    """Yield (offset in the stream of the block's first byte, block): blocks that hold only
    complete lines, each ending in b"\\n", each at most ``block_size + max_line + 1`` bytes.

    A line still unfinished at the end of a chunk that has grown beyond ``max_line`` is
    yielded as its first ``max_line`` bytes plus a newline (always as the block's last
    line), and the rest of it is read and dropped chunk by chunk, never accumulated. (Long
    lines wholly inside a chunk are cut later, when a line is examined.) A regular file is
    read through a FileReader: the same blocks, each read once.
    """
    if not isinstance(stream, FileReader):
        stream = FileReader.of(stream, max_line) or stream
    carry, carry_at = b"", 0
    read_pos = 0
    skipping = False  # inside the dropped tail of an overlong line
    while True:
        chunk = stream.read(block_size)
        if not chunk:
            break
        chunk_at = read_pos
        read_pos += len(chunk)
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            chunk, chunk_at = chunk[nl + 1 :], chunk_at + nl + 1
            skipping = False
        data, data_at = (carry + chunk, carry_at) if carry else (chunk, chunk_at)
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > max_line:
                yield data_at, data[:max_line] + b"\n"
                carry, skipping = b"", True
            else:
                carry, carry_at = data, data_at
            continue
        block, carry, carry_at = data[: cut + 1], data[cut + 1 :], data_at + cut + 1
        if len(carry) > max_line:
            block += carry[:max_line] + b"\n"
            carry, skipping = b"", True
        yield data_at, block
    if carry:
        yield carry_at, carry + b"\n"


def bound_lines(block: bytes, max_line: int = MAX_LINE) -> bytes:
    """``block`` with every line cut to its first ``max_line`` bytes (newlines kept, so line
    numbers stay true). Every block passes here before the screen, the value series or a
    signal's regex run on it, whichever way it came in (file, stdin, editor document,
    terminal data). Checks ``max_line`` bytes per step in C, so a block of normal lines
    costs a few ``rfind`` calls."""
    if len(block) <= max_line:
        return block
    parts: list[bytes] = []
    pos = kept = 0  # pos: a line start; block[kept:pos] is known to be short lines
    size = len(block)
    while size - pos > max_line:
        nl = block.rfind(b"\n", pos, pos + max_line + 1)
        if nl >= 0:
            pos = nl + 1
            continue
        # The line at ``pos`` runs past max_line: keep its head, drop the rest.
        parts.append(block[kept : pos + max_line])
        end = block.find(b"\n", pos + max_line)
        if end < 0:
            return b"".join(parts)
        pos = kept = end  # the newline itself is kept
    if not parts:
        return block
    parts.append(block[kept:])
    return b"".join(parts)


def bound_line(text: str, max_line: int = MAX_LINE) -> str:
    """One line of text cut like ``bound_lines`` cuts lines (by characters: the scanner
    encodes it, and a character is at most 4 bytes, so this holds within 4 x max_line)."""
    return text if len(text) <= max_line else text[:max_line]


def visible_segments(raw: bytes) -> list[str]:
    """What a terminal would have shown for one raw line: decoded, colours removed, and split
    on carriage returns (tqdm redraws its bar with "\\r", and an error printed after a bar
    shares the bar's line)."""
    text = raw.decode("utf-8", "replace")
    if "\x1b" in text:
        text = ESCAPE.sub("", text)
    if "\r" not in text:
        return [text.rstrip()]
    return [seg.rstrip() for seg in text.split("\r") if seg.strip()]

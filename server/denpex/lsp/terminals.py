"""Terminal output: raw chunks in, clean lines out, one report per failure.

Clients forward terminal output as it is produced: arbitrary chunks, with colour codes,
cursor movement, OSC shell-integration markers, ``\\r\\n`` line ends and progress bars
redrawn with ``\\r``. A chunk can end in the middle of a line or of an escape sequence.
``TerminalSession`` keeps only bounded state per terminal: a partial line (capped), the
last command's recent lines (at most BUFFER_LINES lines and BUFFER_CHARS characters, each
line cut at MAX_LINE, for on-demand diagnosis) and the incremental scanner, and remembers
which failures it already reported for the current command.

A session is not thread-safe: the server calls it from one worker thread only (scanning
a burst of output takes seconds, which the event loop must not wait for).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from denpex.diagnosis import LogScanner
from denpex.diagnosis.lines import ESCAPE, MAX_LINE
from denpex.finding import Finding

# The start of an escape sequence (of the ESCAPE grammar) that the next chunk may complete.
_INCOMPLETE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[()*+]|[ -/]*)\Z"
)
# Control characters a terminal would not print (keep \t, \n, \r).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")

MAX_PENDING_ESCAPE = 4096  # an "escape sequence" longer than this is garbage, not held
BUFFER_LINES = 5000  # lines of the last command kept for on-demand diagnosis
BUFFER_CHARS = 4 * 2**20  # and at most this much of their text


class EscapeStripper:
    """Removes terminal escape sequences from a stream of chunks."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, data: str) -> str:
        text = self._pending + data
        self._pending = ""
        # Hold back a sequence cut by the chunk boundary before stripping: a cut CSI
        # ("\x1b[31") would otherwise lose its introducer and leave "31" in the text.
        m = _INCOMPLETE.search(text)
        if m and len(text) - m.start() <= MAX_PENDING_ESCAPE:
            self._pending = text[m.start() :]
            text = text[: m.start()]
        return _CONTROL.sub("", ESCAPE.sub("", text).replace("\x1b", ""))


def _displayed(line: str) -> str:
    """What a terminal shows for a line redrawn with carriage returns: the last redraw."""
    line = line.removesuffix("\r")
    cut = line.rfind("\r")
    return line if cut < 0 else line[cut + 1 :]


@dataclass(frozen=True)
class CommandOutput:
    """What a terminal's current (or last finished) command printed, as buffered."""

    name: str
    command_line: str | None  # known once the command has ended
    lines: list[str]
    truncated: bool  # earlier lines were dropped to stay within the buffer's bounds


class TerminalSession:
    def __init__(self, terminal_id: str, name: str) -> None:
        self.terminal_id = terminal_id
        self.name = name
        self._stripper = EscapeStripper()
        self._partial = ""
        self._skipping = False  # inside the rest of a line that was cut at MAX_LINE
        self.lines: deque[str] = deque()
        self._buffered = 0  # characters in self.lines
        self._dropped = False  # lines of this command fell out of the buffer
        self.command_line: str | None = None
        self._start_command()

    def _start_command(self) -> None:
        self._scanner = LogScanner()
        self._line_no = 0
        self._reported: set[str] = set()
        self._has_new_lines = False
        self._ended = False

    def _feed_lines(self, lines: list[str]) -> None:
        if not lines:
            return
        self._scanner.feed_lines(self.name, lines, first_line=self._line_no + 1)
        self._line_no += len(lines)
        self.lines.extend(lines)
        self._buffered += sum(map(len, lines))
        while len(self.lines) > BUFFER_LINES or self._buffered > BUFFER_CHARS:
            self._buffered -= len(self.lines.popleft())
            self._dropped = True
        self._has_new_lines = True

    def _clear(self) -> None:
        self.lines.clear()
        self._buffered = 0
        self._dropped = False
        self.command_line = None

    def feed(self, data: str) -> None:
        if self._ended:
            # Output after a command end belongs to the next command: start afresh, so a
            # failure seen again in a new command is reported again.
            self._clear()
            self._start_command()
        text = self._stripper.feed(data)
        if self._skipping:
            end = text.find("\n")
            if end < 0:
                return
            text, self._skipping = text[end + 1 :], False
        parts = (self._partial + text).split("\n")
        self._partial = parts.pop()
        if len(self._partial) > MAX_LINE:
            parts.append(self._partial)
            self._partial, self._skipping = "", True
        self._feed_lines([_displayed(p[:MAX_LINE]) for p in parts])

    def command_end(self, command_line: str | None) -> None:
        """The command finished: its last unterminated line is complete now."""
        if self._partial:
            self._feed_lines([_displayed(self._partial)])
            self._partial = ""
        self.command_line = command_line
        self._ended = True

    def unreported(self) -> list[Finding]:
        """The diagnosis (all findings, root cause first) when it holds a failure not yet
        reported for the current command; [] otherwise. Each failure id is reported once."""
        if not self._has_new_lines:
            return []
        self._has_new_lines = False
        findings = self._scanner.findings()
        fresh = {f.id for f in findings} - self._reported
        self._reported |= fresh
        return findings if fresh else []

    def buffered_text(self) -> str:
        """The current (or last finished) command's output, at most BUFFER_LINES lines."""
        return "\n".join(self.output().lines)

    def output(self) -> CommandOutput:
        """The buffered output of the current (or last finished) command."""
        lines = [*self.lines, self._partial] if self._partial else list(self.lines)
        return CommandOutput(self.name, self.command_line, lines, self._dropped)

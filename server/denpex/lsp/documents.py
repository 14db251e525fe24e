"""Log documents held by the server and their incremental diagnosis.

pygls' own workspace re-splits the whole document into a tuple of lines on every
incremental change, which costs a second and a second copy of the text for a 100 MB log.
Log documents are kept here instead, as one string plus the few numbers needed to place
an edit: the number of line breaks and where the last line starts. A log grows at its end,
so an edit there is placed in O(size of the edit); an edit elsewhere pays one scan.

Diagnosis streams over the text in blocks of about 1 MB into one ``LogScanner`` per
document. When every edit since the last scan lies after what the scanner has already
read (a job appending to its log), the scanner is kept and fed only the new lines;
otherwise it is rebuilt from the start.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass

from lsprotocol import types

from denpex.diagnosis import LogScanner
from denpex.finding import Finding
from denpex.lsp import positions
from denpex.lsp.pieces import PieceTable

BLOCK = 1 << 20  # characters fed to the scanner per step: bounds the extra memory


@dataclass
class Scan:
    version: int
    findings: list[Finding]
    full: bool  # rescanned from the start (False: only the new tail was read)
    lines_read: int
    last_line: int  # 0-based index of the snapshot's last line
    last_line_units: int  # its length in position units


class LogDocument:
    def __init__(self, uri: str, source: str, text: str, version: int, encoding: str) -> None:
        self.uri = uri
        self.source = source  # what evidence lines name: the file path, else the uri
        self.encoding = encoding
        self.version = version
        self._text = PieceTable(text)
        # The number of line breaks; None until the first scan counts them as it feeds the
        # lines (a pass over the text saved at open), or an edit needs them first. None
        # therefore also means: the text is still the one the document was opened with.
        self._breaks: int | None = None
        self._last_start = max(positions.last_break_end(text), 0)
        self._lock = threading.Lock()
        self._min_edit = 0
        # Scanner state, touched only by scan(); scans of one document never overlap.
        self._scanner: LogScanner | None = None
        self._fed_offset = 0
        self._fed_lines = 0
        self._partial_fed = False
        self.findings: list[Finding] = []

    # -- edits (event-loop thread) -------------------------------------------------------

    def last_line(self) -> int:
        """0-based index of the last line (the number of line breaks)."""
        with self._lock:
            return self._break_count()

    def _break_count(self) -> int:
        """The number of line breaks (the lock held)."""
        if self._breaks is None:
            self._breaks = positions.count_breaks(self._text.whole())
        return self._breaks

    @property
    def text(self) -> str:
        """The whole text (joins the pieces: O(size) after appends)."""
        with self._lock:
            return self._text.whole()

    def _offset(self, pos: types.Position) -> int:
        breaks = self._break_count()
        if pos.line >= breaks:
            if pos.line > breaks:
                return self._text.length
            start = self._last_start
            line = self._text.tail(start)  # the last line: no break after it
        else:
            text = self._text.whole()
            start = positions.line_start(text, pos.line)
            line = positions.line_at(text, start)
        return start + positions.index_of_units(line, pos.character, self.encoding)

    def apply(self, change: types.TextDocumentContentChangeEvent, version: int) -> None:
        with self._lock:
            self.version = version
            if isinstance(change, types.TextDocumentContentChangeWholeDocument):
                self._replace_all(change.text)
            else:
                start = self._offset(change.range.start)
                self._edit(start, max(self._offset(change.range.end), start), change.text)

    def _replace_all(self, new: str) -> None:
        # Clients with full sync resend everything; a log that only grew keeps its prefix.
        old, keep = self._text.whole(), self._last_start
        same_prefix = len(new) >= keep and new.startswith(old[:keep])
        self._min_edit = min(self._min_edit, keep if same_prefix else 0)
        self._text = PieceTable(new)
        self._breaks = positions.count_breaks(new)
        self._last_start = max(positions.last_break_end(new), 0)

    def _edit(self, start: int, end: int, inserted: str) -> None:
        ls, breaks = self._last_start, self._break_count()
        before = self._text.char_at(ls - 1) if ls > 0 else ""
        self._text.replace(start, end, inserted)
        self._min_edit = min(self._min_edit, start)
        if start >= ls:
            # Within the last line: only the new text can add breaks. A "\n" landing right
            # after a "\r" joins it into one "\r\n" break instead of adding one.
            tail = self._text.tail(ls)
            joined = before == "\r" and tail.startswith("\n")
            self._breaks = breaks + positions.count_breaks(tail) - joined
            end_in_tail = positions.last_break_end(tail)
            if end_in_tail > 0:
                self._last_start = ls + end_in_tail
        else:
            text = self._text.whole()
            self._breaks = positions.count_breaks(text)
            self._last_start = max(positions.last_break_end(text), 0)

    # -- diagnosis (worker thread) -------------------------------------------------------

    def scan(self) -> Scan:
        with self._lock:
            version, min_edit = self.version, self._min_edit
            self._min_edit = sys.maxsize
            last_start = self._last_start
            full = self._scanner is None or self._partial_fed or min_edit < self._fed_offset
            # A full scan of the text as opened counts its breaks below, as it feeds them.
            last_line = self._breaks if full else self._break_count()
            base = 0 if full else self._fed_offset
            # Only what the scanner has not read is copied out: O(growth) for a growing log.
            window = self._text.whole() if full else self._text.tail(base)
            last_text = self._text.tail(last_start)
        if full:
            self._scanner = LogScanner()
            self._fed_lines = 0
        scanner = self._scanner
        assert scanner is not None
        lines_before = self._fed_lines
        # Complete lines end at the last break; a trailing "\r" may still become "\r\n".
        end = positions.last_break_end(window, 0, len(window) - window.endswith("\r"))
        pos = 0
        while pos < end:
            stop = positions.last_break_end(window, pos, min(pos + BLOCK, end))
            if stop < 0:  # one line longer than a block
                m = positions.BREAK.search(window, pos + BLOCK)
                stop = m.end() if m and m.end() <= end else end
            elif window[stop - 1] == "\r" and stop < end and window[stop] == "\n":
                stop += 1
            first = self._fed_lines + 1
            self._fed_lines += scanner.feed_text(
                self.source, window[pos:stop], first, cr_breaks=True
            )
            pos = stop
        self._fed_offset = base + pos
        tail = window[pos:].removesuffix("\r")
        # A last line without its break is read too (a pasted traceback often lacks one),
        # but since the next edit may extend it, that edit triggers a full rescan.
        self._partial_fed = bool(tail)
        if tail:
            scanner.feed_lines(self.source, [tail], first_line=self._fed_lines + 1)
            self._fed_offset = base + len(window)
        if last_line is None:
            # The breaks of the whole text: the lines fed, and a trailing "\r" held back.
            last_line = self._fed_lines + window.endswith("\r")
            with self._lock:
                if self._breaks is None:  # else an edit came meanwhile and counted them
                    self._breaks = last_line
        self.findings = scanner.findings()
        return Scan(
            version=version,
            findings=self.findings,
            full=full,
            lines_read=self._fed_lines - lines_before + bool(tail),
            last_line=last_line,
            last_line_units=positions.units(positions.line_at(last_text, 0), self.encoding),
        )

    def line_range_text(self, first: int, last: int) -> tuple[str, int]:
        """Text of 0-based lines first..last (inclusive) and the index of the first one."""
        with self._lock:
            text, breaks = self._text.whole(), self._break_count()
        start = positions.line_start(text, first)
        end = positions.line_start(text, last + 1) if last + 1 <= breaks else len(text)
        return text[start:end], first

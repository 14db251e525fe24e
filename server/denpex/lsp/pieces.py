"""A document's text as a list of pieces, so that a growing log costs O(growth) per change.

A Python string cannot grow in place (CPython only does so opportunistically), so keeping a
100 MB log as one string means copying 100 MB for every appended line. Pieces are views
``(string, lo, hi)``; an edit that reaches the end of the text trims the last pieces and
appends one, and only an edit in the middle joins everything into one piece again.
"""

from __future__ import annotations

from bisect import bisect_right

MAX_PIECES = 1024  # joined into one beyond this: amortised O(1) per append, bounded overhead


class PieceTable:
    def __init__(self, text: str = "") -> None:
        self._pieces: list[tuple[str, int, int]] = [(text, 0, len(text))]
        self._starts: list[int] = [0]
        self.length = len(text)

    def _find(self, offset: int) -> int:
        return max(bisect_right(self._starts, offset) - 1, 0)

    def whole(self) -> str:
        if (
            len(self._pieces) > 1
            or self._pieces[0][1] != 0
            or self._pieces[0][2] != len(self._pieces[0][0])
        ):
            text = "".join(s[lo:hi] for s, lo, hi in self._pieces)
            self._pieces, self._starts = [(text, 0, len(text))], [0]
        return self._pieces[0][0]

    def tail(self, start: int) -> str:
        """text[start:], in O(len of the result)."""
        start = min(max(start, 0), self.length)
        i = self._find(start)
        s, lo, hi = self._pieces[i]
        parts = [s[lo + start - self._starts[i] : hi]]
        parts += [s[lo:hi] for s, lo, hi in self._pieces[i + 1 :]]
        return "".join(parts)

    def char_at(self, offset: int) -> str:
        i = self._find(offset)
        s, lo, _hi = self._pieces[i]
        return s[lo + offset - self._starts[i]]

    def replace(self, start: int, end: int, inserted: str) -> None:
        if end == self.length:
            # The common case for logs: the change reaches the end. Trim, then append.
            i = self._find(start)
            s, lo, _hi = self._pieces[i]
            cut = lo + start - self._starts[i]
            del self._pieces[i + 1 :], self._starts[i + 1 :]
            if cut > lo:
                self._pieces[i] = (s, lo, cut)
            else:
                del self._pieces[i], self._starts[i]
            self.length = start
            if inserted or not self._pieces:
                self._starts.append(start)
                self._pieces.append((inserted, 0, len(inserted)))
                self.length += len(inserted)
            if len(self._pieces) > MAX_PIECES:
                self.whole()
            return
        text = self.whole()
        new = text[:start] + inserted + text[end:]
        self._pieces, self._starts, self.length = [(new, 0, len(new))], [0], len(new)

"""Numeric series (loss, grad norm) checked for jumps a whole block at a time.

``value_jump``: a value at least ``ratio`` times the running median of the values before it
(after ``warmup`` values). The median of a window is at least its smallest positive value,
so a block whose largest value is below ``ratio`` times the smallest positive value seen in
it or in the window cannot hold a jump. That test runs on all of a block's values pulled out
by one C-level ``findall`` (of the fast, loose form of the pattern: a superset of the real
values, which only makes the test more careful); only lines of a block that fails it, and
the last lines that refill the window, are matched exactly one by one. Once the window is
warm, a block is first searched for a value outside a range that cannot hold a jump
(value_screen.py; one Hyperscan pass when Hyperscan screens): when there is none, only its
last values are read. A worker process screening a part of a file (parallel.py) does the
same with the range of its previous block's last values (``RangeSummaries``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from denpex.diagnosis import hyperscreen
from denpex.diagnosis.candidates import uses_hyperscan
from denpex.diagnosis.matcher import ValueSignal
from denpex.diagnosis.value_screen import bounds, decimal, hyper_screen, screen

Range = tuple[tuple[int, int], tuple[int, int]]  # value_screen.bounds: (d, e) of lo and of hi

WINDOW = 101
PIECE = 256 << 10  # a block that may hold a jump is looked at in pieces of about this size


@dataclass(frozen=True)
class BlockValues:
    """What one C-level pass learns about a block's values: with the running window, enough
    to rule out a jump, and the window to carry on with when there is none."""

    low: float  # smallest positive value (inf: none)
    high: float  # largest value (-inf: no value)
    tail: list[float]  # the block's last exact values, oldest first (at most WINDOW)


def summarize(spec: ValueSignal, block: bytes) -> BlockValues | None:
    """None when a value is not a finite number: that block takes the careful path."""
    fast = spec.loose or spec.exact
    raw = fast.findall(block)
    if not raw:
        return BlockValues(math.inf, -math.inf, [])
    values = _floats(raw)
    if values is None:
        return None
    low = min(values)
    if low <= 0:  # rare: only then pay for a Python-level filter
        low = min((v for v in values if v > 0), default=math.inf)
    step = len(block) * (WINDOW + WINDOW // 4) // len(raw)
    return BlockValues(low, max(values), _tail(spec, block, step)[0])


class OutsideSearch:
    """Whether a block may hold a value of a series outside a range (value_screen.py): one
    Hyperscan pass, with scratch space of its own, when Hyperscan screens, else one regex
    search; the search is re-made when the range changes."""

    def __init__(self, spec: ValueSignal) -> None:
        self._fast = spec.loose or spec.exact
        self._range: Range | None = None
        self._search: Callable[[bytes], object] | None = None

    def __call__(self, found: Range, block: bytes) -> bool:
        """False only when ``block`` holds no value outside ``found`` (a series whose value
        group no screen fits always may)."""
        if found != self._range:
            self._range, self._search = found, self._make(found)
        return self._search is None or bool(self._search(block))

    def _make(self, found: Range) -> Callable[[bytes], object] | None:
        fast = self._fast
        if uses_hyperscan():
            hyper = hyper_screen(fast.pattern, fast.flags, *found)
            if hyper is not None:
                return hyper.own_scratch().found
        rx = screen(fast.pattern, fast.flags, *found)
        return rx.search if rx is not None else None


def literal_search(spec: ValueSignal) -> Callable[[bytes], bool]:
    """False only for a block without the series' leading literal, which holds no value: a
    Hyperscan pass when Hyperscan screens (with scratch of its own), else ``bytes``' find."""
    literal = spec.literal
    if literal is None:
        return lambda _block: True
    if uses_hyperscan():
        return hyperscreen.literal_search(literal).own_scratch().found
    return lambda block: literal in block


class RangeSummaries:
    """``summarize`` for the consecutive blocks of one part of a file (a worker's): the last
    values of a block give a range that cannot jump (value_screen.bounds), and a next block
    without a value outside it is summarized by that range, an envelope of its values
    (all ``can_skip`` needs), and its last values, without converting the others."""

    def __init__(self, spec: ValueSignal) -> None:
        self.spec = spec
        self._outside = OutsideSearch(spec)
        self._holds_values = literal_search(spec)
        self._before: list[float] = []  # the previous block's last values
        self._tail_step = 0

    def seed(self, lines: bytes) -> None:
        """Start from the last values of ``lines`` (whole lines, those before the part)."""
        self._before = [v for _, v in exact_values(self.spec, lines, 0)][-WINDOW:]

    def summary(self, block: bytes) -> BlockValues | None:
        spec = self.spec
        if not self._holds_values(block):
            return BlockValues(math.inf, -math.inf, [])  # no value at all
        found = _quiet_range(spec, self._before)
        if found is not None and not self._outside(found, block):
            tail, self._tail_step = _tail(spec, block, self._tail_step)
            if tail:  # else values only the loose pattern reads: summarize them
                self._before = tail
                return BlockValues(decimal(found[0]), decimal(found[1]), tail)
        summary = summarize(spec, block)
        if summary is not None and summary.tail:
            self._before = summary.tail
        return summary


class ValueSeries:
    def __init__(self, spec: ValueSignal) -> None:
        self.spec = spec
        self.window: deque[float] = deque(maxlen=WINDOW)
        self.seen = 0
        self._tail_step = 0  # how far from a block's end its last WINDOW values were
        self._outside = OutsideSearch(spec)
        self._holds_values = literal_search(spec)

    def jumps(self, block: bytes) -> list[int]:
        """Offsets in ``block`` of the values that jump; updates the running window."""
        if not self._holds_values(block):
            return []  # no value at all: a literal search instead of a regex pass
        if self.seen >= self.spec.warmup:
            return self._warm_jumps(block)
        # Warm-up values are never skipped: take the lines that hold them one by one, and
        # the rest of the block the usual way (a summary, when that rules jumps out).
        end = _warmup_end(self.spec, block, self.spec.warmup - self.seen)
        if end == 0:
            return []  # no value at all (a log without this series)
        out = self._careful(block[:end])
        if end < len(block):
            out.extend(end + pos for pos in self._warm_jumps(block[end:]))
        return out

    def _warm_jumps(self, block: bytes) -> list[int]:
        if self._skipped(block):
            return []
        if len(block) <= 2 * PIECE:
            return self._careful(block)
        # Only part of a large block may need the careful path (the warm-up values, or the
        # lines around a jump): summarize it piece by piece.
        out: list[int] = []
        for offset, piece in _pieces(block):
            if not self._skipped(piece):
                out.extend(offset + pos for pos in self._careful(piece))
        return out

    def _skipped(self, block: bytes) -> bool:
        """True (and the window carried on) when ``block`` cannot hold a jump."""
        if self._quiet(block):
            return True
        summary = summarize(self.spec, block)
        if summary is None or not self.can_skip(summary):
            return False
        self.absorb(summary)
        return True

    def _quiet(self, block: bytes) -> bool:
        """True (and the window carried on) when no value of ``block`` is outside the range
        that the window proves cannot jump: one C-level search, no value converted."""
        if self.seen < self.spec.warmup:
            return False
        found = _quiet_range(self.spec, self.window)
        if found is None or self._outside(found, block):
            return False
        tail, self._tail_step = _tail(self.spec, block, self._tail_step)
        self.window.extend(tail)
        self.seen += len(tail)
        return True

    def _careful(self, block: bytes) -> list[int]:
        """Each value against the median of the window before it."""
        out: list[int] = []
        window, ratio = self.window, self.spec.ratio
        # A positive median is one of the window's positive values, so at least ``low``
        # (kept at or below their smallest): a value under ratio x low needs no median.
        low = _min_positive(window)
        for pos, v in exact_values(self.spec, block, 0):
            if self.seen >= self.spec.warmup and v >= ratio * low:
                med = sorted(window)[(len(window) - 1) // 2]
                if med > 0 and v >= ratio * med:
                    out.append(pos)
                low = _min_positive(window)  # values have left the window: tighten
            window.append(v)
            if 0 < v < low:
                low = v
            self.seen += 1
        return out

    def can_skip(self, summary: BlockValues) -> bool:
        """True when the block cannot hold a jump (its values all below ratio x the smallest
        positive value around, which no median can undercut), or holds no value at all."""
        if not summary.tail and summary.high == -math.inf:
            return True
        if self.seen < self.spec.warmup:
            return False
        return summary.high < self.spec.ratio * min(_min_positive(self.window), summary.low)

    def absorb(self, summary: BlockValues) -> None:
        self.window.extend(summary.tail)
        self.seen += len(summary.tail)


def _pieces(block: bytes) -> list[tuple[int, bytes]]:
    """(offset, piece) of ``block`` cut at line ends into pieces of about PIECE bytes."""
    out = []
    start = 0
    while start < len(block):
        end = block.find(b"\n", start + PIECE) + 1 or len(block)
        out.append((start, block[start:end]))
        start = end
    return out


def _warmup_end(spec: ValueSignal, block: bytes, needed: int) -> int:
    """End of the line of the ``needed``-th loose match (or of the block; 0 when there is no
    match): the exact values are among the loose ones, so a warm-up that falls short there
    goes on in the rest."""
    fast = spec.loose or spec.exact
    found = 0
    for found, m in enumerate(fast.finditer(block), start=1):
        if found >= needed:
            return block.find(b"\n", m.end()) + 1 or len(block)
    return len(block) if found else 0


def _quiet_range(spec: ValueSignal, window: Collection[float]) -> Range | None:
    """The range in which no value can jump after ``window`` (value_screen.bounds)."""
    low = _min_positive(window)
    return bounds(spec.ratio, low, max(window)) if low < math.inf else None


def _min_positive(values: Iterable[float]) -> float:
    return min((v for v in values if v > 0), default=math.inf)


def _tail(spec: ValueSignal, block: bytes, step: int) -> tuple[list[float], int]:
    """The block's last exact values, reading lines from the end. ``step``: how many bytes
    the first look spans, as many as a full window needs at the density of the values (the
    look is doubled until it holds a full window or the whole block). Returns the values
    and a first look for the next block: the bytes this block's window spanned, and a
    quarter more (each value is converted with a Python step: reading twice the window,
    as the doubling can, costs twice as much)."""
    start = len(block)
    step = max(8 << 10, step)
    found: list[tuple[int, float]] = []
    while start > 0 and len(found) < WINDOW:
        start = max(0, len(block) - step)
        step *= 2
        found = exact_values(spec, block, start)
    found = found[-WINDOW:]
    span = len(block) - (found[0][0] if len(found) == WINDOW else start)
    return [v for _, v in found], span + span // 4


def exact_values(spec: ValueSignal, block: bytes, start: int) -> list[tuple[int, float]]:
    """(offset, value) of the exact matches from ``start`` on, finite values only."""
    exact = spec.exact
    if spec.loose is None:
        matches = [(m.start(), m.group(1)) for m in exact.finditer(block, start)]
    else:
        # Confirm each loose hit's line with the exact pattern, each line once.
        matches = []
        line_end = -1
        for m in spec.loose.finditer(block, start):
            if m.start() < line_end:
                continue
            line_start = block.rfind(b"\n", 0, m.start()) + 1
            line_end = block.find(b"\n", m.start())
            matches.extend(
                (line_start + e.start(), e.group(1))
                for e in exact.finditer(block[line_start:line_end])
            )
    out = []
    for pos, text in matches:
        try:
            v = float(text)
        except ValueError:
            continue
        if math.isfinite(v):  # NaN/Inf readings are their own catalog entry
            out.append((pos, v))
    return out


def _floats(raw: list[bytes]) -> list[float] | None:
    """All values as finite floats, or None when one is not (the careful path handles it)."""
    try:
        values = list(map(float, raw))
    except ValueError:
        return None
    if not math.isfinite(sum(values)):
        return None
    return values

"""Screening a large file in worker processes.

CPython's regex engine holds the GIL, so the screen's passes over a multi-gigabyte log run
on one core unless they run in other processes. The screen is stateless (candidates.py), so
workers screen byte ranges of the file and send back, per block, only what the main process
cannot cheaply recompute: its line count, its candidate lines (a few, with their text and
the timestamp found above each) and a summary of its value series. The main process walks
the results in file order and does everything stateful as the sequential path does; a
block whose values may hold a jump is re-read and scanned the sequential way.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import BinaryIO

from denpex.diagnosis.candidates import BlockScreen
from denpex.diagnosis.lines import BLOCK_SIZE, MAX_LINE, FileReader, bound_lines, iter_blocks_at
from denpex.diagnosis.matcher import default_catalog
from denpex.diagnosis.timestamps import stamp_before
from denpex.diagnosis.values import BlockValues, RangeSummaries

# Below this size starting workers costs more than it saves (on 2 cores, the metric-heavy
# log of bench_diagnose.py: 40 MB takes ~0.1 s less wall time in two workers, 100 MB ~0.3 s).
PARALLEL_MIN = 32 << 20
RANGE_SIZE = 64 << 20  # a worker's part of the file, at most
_RANGE_MIN = 16 << 20  # and at least, unless RANGE_SIZE is smaller: one part per worker
_SEED_SIZE = 64 << 10  # read before a range for the value series' last values
BLOCK = BLOCK_SIZE

Task = tuple[str, int, int, tuple[tuple[int, float], ...], tuple[int, ...], int]


@dataclass
class BlockResult:
    offset: int  # file offset of the block's first byte
    size: int  # len(block): re-reading (offset, size) gives it back
    lines: int
    # (line index within the block, offset within the block, stamp above it, text, keys)
    candidates: list[tuple[int, int, float | None, bytes, frozenset[int]]]
    values: list[BlockValues | None]  # per catalog value signal
    tail_stamp: float | None  # of the last stamped line near the block's end


def worker_count() -> int:
    return min(os.cpu_count() or 1, 8)


def screen_ranges(path: str, start: int, screen: BlockScreen) -> Iterator[BlockResult]:
    """BlockResults of ``path`` from ``start`` (a line start) to its end, in file order."""
    bounds = part_bounds(start, os.path.getsize(path), worker_count())
    freq = tuple(sorted((screen.freq or {}).items()))
    demoted = tuple(sorted(screen.demoted))
    tasks: list[Task] = [
        (path, lo, hi, freq, demoted, BLOCK) for lo, hi in itertools.pairwise(bounds)
    ]
    import multiprocessing  # here: most logs are small, and its import is ~10 ms of start-up

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    if method == "fork":
        _screen(freq, demoted)  # built here, where its database is compiled: workers inherit it
    with multiprocessing.get_context(method).Pool(worker_count()) as pool:
        for results in pool.imap(_screen_range, tasks):
            yield from results


def part_bounds(start: int, size: int, workers: int) -> list[int]:
    """Where the workers' parts of bytes ``start``..``size`` begin, and the end: parts of at
    most RANGE_SIZE, enough of them to keep every worker busy on a file of a few hundred MB
    (one part per worker), none smaller than _RANGE_MIN (unless RANGE_SIZE is)."""
    span = min(RANGE_SIZE, max(_RANGE_MIN, -(-(size - start) // workers)))
    return [*range(start, size, span), size]


def _screen_range(task: Task) -> list[BlockResult]:
    path, lo, hi, freq, demoted, block_size = task
    screen = _screen(freq, demoted)
    values = [RangeSummaries(spec) for spec in default_catalog().values]
    out = []
    with open(path, "rb") as f:
        begin = _align(f, lo)
        before = _lines_before(f, begin)  # the first block is screened with their values
        for series in values:
            series.seed(before)
        # The part ends with the line that holds its last byte (where the next part begins).
        part = FileReader(f.fileno(), begin, _align(f, hi), MAX_LINE)
        for at, raw_block in iter_blocks_at(part, block_size, MAX_LINE):
            block = bound_lines(raw_block)  # as LogScanner._scan_block does
            lines, _counts = screen.lines(block)
            found = []
            line = cursor = 0
            for start, end, keys in lines:
                line += block.count(b"\n", cursor, start)
                cursor = start
                text = block[start:end]
                found.append((line, start, stamp_before(block, start), text, frozenset(keys)))
            out.append(
                BlockResult(
                    offset=begin + at,
                    size=len(raw_block),
                    lines=line + block.count(b"\n", cursor),
                    candidates=found,
                    values=[series.summary(block) for series in values],
                    tail_stamp=stamp_before(block, len(block)),
                )
            )
    return out


@cache
def _screen(freq: tuple[tuple[int, float], ...], demoted: tuple[int, ...]) -> BlockScreen:
    return BlockScreen(default_catalog(), dict(freq) or None, demoted)


def _lines_before(f: BinaryIO, begin: int) -> bytes:
    """The whole lines in the ``_SEED_SIZE`` bytes before ``begin`` (a line start)."""
    start = max(0, begin - _SEED_SIZE)
    f.seek(start)
    data = f.read(begin - start)
    if start > 0:
        nl = data.find(b"\n")
        data = data[nl + 1 :] if nl >= 0 else b""
    return bound_lines(data)


def _align(f: BinaryIO, lo: int) -> int:
    """Offset of the first line that starts at or after ``lo``."""
    if lo == 0:
        return 0
    f.seek(lo - 1)
    skipped = 0
    while True:
        chunk = f.read(1 << 16)
        if not chunk:
            return lo - 1 + skipped
        nl = chunk.find(b"\n")
        if nl >= 0:
            return lo - 1 + skipped + nl + 1
        skipped += len(chunk)


def read_block(path: str, offset: int, size: int) -> bytes:
    """A block again, as iter_blocks_at gave it (a cut last line ends in a newline)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(size)
    return data if data.endswith(b"\n") else data[:-1] + b"\n"

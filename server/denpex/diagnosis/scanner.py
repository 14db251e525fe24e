"""LogScanner: feed it blocks or lines from any number of logs, ask for findings any time.

State is bounded (per-signal records, topology, value windows); no text is kept beyond the
few evidence lines, so feeding a 10 GB log or tailing a live one costs the same memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import BinaryIO

from denpex.diagnosis import parallel, timestamps
from denpex.diagnosis.attribution import build_findings
from denpex.diagnosis.candidates import BlockScreen, noisy_units, uses_hyperscan
from denpex.diagnosis.context import Topology, extractor
from denpex.diagnosis.frames import PendingFrames
from denpex.diagnosis.lines import (
    BLOCK_SIZE,
    bound_line,
    bound_lines,
    iter_blocks,
    iter_blocks_at,
    looks_binary,
    visible_segments,
)
from denpex.diagnosis.matcher import CompiledCatalog, Signal, ValueSignal, default_catalog
from denpex.diagnosis.numbers import to_int
from denpex.diagnosis.ranks import file_rank, message_rank, split_prefix
from denpex.diagnosis.recovery import Recovery
from denpex.diagnosis.screen import byte_freq
from denpex.diagnosis.store import TEXT_LIMIT, Hit, SignalRecord
from denpex.diagnosis.timestamps import LOOKBACK_BYTES, LOOKBACK_LINES, stamp_before
from denpex.diagnosis.values import ValueSeries
from denpex.finding import Finding

# Candidate lines per block, none of them a match, after which a unit is searched directly.
_NOISY_CANDIDATES = 512
_FREQ_SAMPLE = 256 << 10
_NOISE_SAMPLE = 64 << 10  # where anchors are first counted (cost: a bytes.count per anchor)


def prepare_screen() -> None:
    """Compile the catalog and its screen now (a server's start-up), not for the first log."""
    BlockScreen(default_catalog())


# A caught error's traceback follows its announcement within this many lines.
SWALLOWED_LINES = 200
# Files and ranks with an announcement pending, at most: memory must not grow with the log.
ANNOUNCED_MAX = 1024


class LogScanner:
    def __init__(self, compiled: CompiledCatalog | None = None) -> None:
        self._cat = compiled if compiled is not None else default_catalog()
        # Made at the first block (tuned to the log's start), re-made when the log's byte
        # shares are measured and when an anchor proves noisy.
        self._screen: BlockScreen | None = None
        self._value_base = len(self._cat.units)  # keys at and above: value-signal jumps
        self.topology = Topology()
        self.records: dict[int, SignalRecord] = {}
        self.notices: list[str] = []  # inputs skipped, with the reason (shown on stderr)
        self._series: dict[tuple[int, str], ValueSeries] = {}
        self._file_rank: dict[str, int | None] = {}
        self._last_ts: dict[str, float] = {}
        self._tail_ts: dict[str, float] = {}  # last stamp near the end of the last block
        self._first_ts: float | None = None  # the job's first stamp: where years are counted
        self._seq = 0
        # Signals that announce a caught error (Python's "Exception ignored in:"), and per
        # file and rank the line of the last one not yet followed by the error it announced.
        self._announcers = {(s.entry_id, n) for s in self._cat.signals for n in s.swallowed_after}
        self._announced: dict[tuple[str, int | None], int] = {}
        self._recovery = Recovery()  # NaN series values a later finite value clears
        self._frames = PendingFrames()  # traceback frames waiting for their exception line

    # ---- input -------------------------------------------------------------------------

    def feed_lines(self, source: str, lines: Iterable[str], first_line: int = 1) -> None:
        """Lines without their newline; call again with later lines to continue."""
        batch: list[str] = []
        size = 0
        line = first_line
        for text in lines:
            text = bound_line(text)  # a terminal's or an editor's line may be any length
            batch.append(text)
            size += len(text) + 1
            if size >= BLOCK_SIZE:
                line += self._scan_block(source, _encode(batch), line)
                batch, size = [], 0
        if batch:
            self._scan_block(source, _encode(batch), line)

    def feed_text(
        self, source: str, text: str, first_line: int = 1, *, cr_breaks: bool = False
    ) -> int:
        """Complete lines (an editor's document) as ``feed_lines`` takes them, but encoded in
        one piece, without a Python step per line; returns their number. ``cr_breaks``: "\\r"
        and "\\r\\n" end lines too, as they do in an editor (else "\\r" is a redrawn tqdm bar
        within a line). ``text`` is scanned as one block: keep it to a few MB (a text longer than
        BLOCK_SIZE is one huge line, fed line by line so it is never encoded whole)."""
        block = b""
        if len(text) <= BLOCK_SIZE:  # else one huge line: never encoded whole
            block = text.encode("utf-8", "replace")
            if cr_breaks and b"\r" in block:  # on bytes: 20x faster than on a non-ASCII str
                block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not block or bound_lines(block) is not block:
            # A line over MAX_LINE bytes: feed_lines cuts it by characters, as it always has.
            if cr_breaks:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            lines.pop()
            self.feed_lines(source, lines, first_line)
            return len(lines)
        return self._scan_block(source, block, first_line)

    def feed_stream(self, source: str, stream: BinaryIO) -> bool:
        """Scan a binary stream to its end; False (and a notice) when it is not text."""
        line = 1
        for i, block in enumerate(iter_blocks(stream)):
            if i == 0 and looks_binary(block):
                self.notices.append(f"{source}: skipped, binary data (not a text log)")
                return False
            line += self._scan_block(source, block, line)
        return True

    def feed_file(self, path: str) -> bool:
        """Scan a file; a large one is screened by worker processes (see parallel.py)."""
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < parallel.PARALLEL_MIN or parallel.worker_count() < 2:
                return self.feed_stream(path, f)
            first = next(iter_blocks_at(f, parallel.BLOCK), None)
        if first is None:
            return True
        _, block = first
        if looks_binary(block):
            self.notices.append(f"{path}: skipped, binary data (not a text log)")
            return False
        if parallel.read_block(path, 0, len(block)) != block or len(block) >= size:
            # The first line was cut (no newline in its first 64 KiB) or that was all of it.
            with open(path, "rb") as f:
                return self.feed_stream(path, f)
        line = 1 + self._scan_block(path, block, 1)  # measures the log, tunes the screen
        assert self._screen is not None
        for result in parallel.screen_ranges(path, len(block), self._screen):
            line += self._apply(path, result, line)
        return True

    def _apply(self, source: str, result: parallel.BlockResult, first_line: int) -> int:
        """A worker's screen of a block, applied in file order; returns its line count."""
        specs = self._cat.values
        pairs = [
            (self._series_for(spec, source), s)
            for spec, s in zip(specs, result.values, strict=True)
        ]
        if any(summary is None or not series.can_skip(summary) for series, summary in pairs):
            block = parallel.read_block(source, result.offset, result.size)
            return self._scan_block(source, block, first_line)  # may hold a jump: carefully
        for series, summary in pairs:
            assert summary is not None
            series.absorb(summary)
        for rel, start, stamp, raw, keys in result.candidates:
            if stamp is None and _near_block_start(rel, start):
                stamp = self._tail_ts.get(source)
            self._examine(source, first_line + rel, raw, set(keys), stamp)
            self._recovery.line_done(source, start + len(raw))
        if self._recovery.waiting(source):  # rare: after a NaN
            block = parallel.read_block(source, result.offset, result.size)
            self._recovery.block_done(source, block, self.records)
        self._set_tail_stamp(source, result.tail_stamp)
        return result.lines

    def findings(self) -> list[Finding]:
        return build_findings(self._cat, self.records, self.topology)

    # ---- the block path ------------------------------------------------------------------

    def _scan_block(self, source: str, block: bytes, first_line: int) -> int:
        """Examine the lines of ``block`` that can matter; returns its number of lines.
        Every input reaches the regexes through here (or parallel._screen_range, which does
        the same): cut its lines first, so regex time per line has a bound."""
        block = bound_lines(block)
        screen = self._screen_for(block)
        jumps: list[tuple[int, frozenset[int]]] = []
        for spec in self._cat.values:
            key = frozenset((self._value_base + spec.signal.key,))
            jumps.extend((pos, key) for pos in self._series_for(spec, source).jumps(block))
        candidates, counts = screen.lines(block, jumps)
        line = first_line
        cursor = 0  # offset up to which newlines are counted into ``line``
        confirmed: set[int] = set()  # signal keys that matched in this block
        for start, end, keys in candidates:
            line += block.count(b"\n", cursor, start)
            cursor = start
            stamp = stamp_before(block, start)
            if stamp is None and _near_block_start(line - first_line, start):
                stamp = self._tail_ts.get(source)  # the stamped line may end the last block
            raw = block[start:end]
            confirmed |= self._examine(source, line, raw, keys, stamp)
            self._recovery.line_done(source, end)
        self._recovery.block_done(source, block, self.records)
        self._demote_noisy(counts, confirmed)
        self._remember_tail_stamp(source, block)
        return line - first_line + block.count(b"\n", cursor)

    def _screen_for(self, block: bytes) -> BlockScreen:
        """The screen for ``block``, tuned to the log once it has ``_FREQ_SAMPLE`` bytes to
        measure: the anchors already noisy at its start are searched directly (one
        screen compiled, no Python step per healthy line before _demote_noisy catches them),
        and the regex screen anchors at bytes that are rare in *this* log."""
        screen = self._screen
        if screen is None or (screen.hyper is None and screen.freq is None):
            demoted = screen.demoted if screen is not None else frozenset()
            if len(block) >= _FREQ_SAMPLE:
                threshold = _NOISY_CANDIDATES * _NOISE_SAMPLE // BLOCK_SIZE  # same density
                demoted |= noisy_units(self._cat, block[:_NOISE_SAMPLE], threshold)
                freq = None if uses_hyperscan() else byte_freq(block[:_FREQ_SAMPLE])
                screen = BlockScreen(self._cat, freq, demoted)
            elif screen is None:
                screen = BlockScreen(self._cat)
            self._screen = screen
        return screen

    def _series_for(self, spec: ValueSignal, source: str) -> ValueSeries:
        series = self._series.get((spec.signal.key, source))
        if series is None:
            series = self._series[(spec.signal.key, source)] = ValueSeries(spec)
        return series

    def _remember_tail_stamp(self, source: str, block: bytes) -> None:
        self._set_tail_stamp(source, stamp_before(block, len(block)))

    def _set_tail_stamp(self, source: str, stamp: float | None) -> None:
        """The stamp that the next block's first lines may sit under. A block whose end holds
        none clears it: an older block's stamp is not "just above" them, and keeping it made
        the answer depend on where blocks (or a parallel scan's ranges) were cut."""
        if stamp is None:
            self._tail_ts.pop(source, None)
        else:
            self._tail_ts[source] = stamp

    def _demote_noisy(self, candidates: dict[int, int], confirmed: set[int]) -> None:
        """An anchor that keeps landing on healthy lines ("number of nan iterations:" in
        every Megatron step line) costs Python time per line; search its unit directly."""
        noisy = {
            uid
            for uid, n in candidates.items()
            if 0 <= uid < self._value_base
            and n >= _NOISY_CANDIDATES
            and self._cat.units[uid].signal not in confirmed
        }
        screen = self._screen
        assert screen is not None  # made by the block these counts are of
        if noisy - screen.demoted:
            self._screen = BlockScreen(self._cat, screen.freq, screen.demoted | noisy)

    def _examine(
        self, source: str, line: int, raw: bytes, keys: set[int], stamp: float | None = None
    ) -> set[int]:
        """Match the line's candidate signals; returns the keys of those that matched."""
        cat = self._cat
        extractors = sorted(k for k in keys if k < 0)  # layout facts first, then failures
        signal_keys = sorted(
            {
                k - self._value_base if k >= self._value_base else cat.units[k].signal
                for k in keys
                if k >= 0
            }
        )
        hit_keys: set[int] = set()
        for segment in visible_segments(raw):
            prefix_rank, body = split_prefix(segment)
            matched: list[tuple[Signal, dict[str, str]]] = []
            for key in extractors:
                name, rx = extractor(key)
                m = rx.search(body)
                if m:
                    self.topology.extract(name, m, source, line, body, prefix_rank)
            for key in signal_keys:
                sig = cat.signals[key]
                sm = sig.regex.search(body)
                if sm:
                    groups = {k: v for k, v in sm.groupdict().items() if v is not None}
                    matched.append((sig, groups))
            if matched:
                hit_keys.update(sig.key for sig, _ in matched)
                self._record(
                    source, line, segment, body, prefix_rank, _most_specific(matched), stamp
                )
        return hit_keys

    def _record(
        self,
        source: str,
        line: int,
        segment: str,
        body: str,
        prefix_rank: int | None,
        matched: list[tuple[Signal, dict[str, str]]],
        stamp: float | None,
    ) -> None:
        matched = self._not_swallowed(source, line, prefix_rank, matched)
        matched, frames = self._frames.step((source, prefix_rank), line, matched)
        if not matched:
            return
        # The frame takes the generic exception line as its hit (the line's own groups).
        matched = matched + [(sig, matched[0][1]) for sig in frames]
        topo = self.topology
        if source not in self._file_rank:
            self._file_rank[source] = file_rank(source)
        # A catalog pattern's own rank group is the rank the message is about, which is not
        # always the rank that printed it (Horovod's coordinator lists the rank it waits for
        # as "[missing ranks: 1]" under its own "[1,0]<stderr>:" prefix): it comes first.
        rank = to_int(next((g["rank"] for _, g in matched if g.get("rank")), None))
        if rank is None:
            rank = prefix_rank if prefix_rank is not None else self._file_rank[source]
        from_table = False
        if rank is None:
            rank = topo.table_rank(source, line)
            from_table = rank is not None
        if rank is None:
            pid = next((p for _, g in matched if (p := to_int(g.get("pid"))) is not None), None)
            rank = topo.rank_of_pid(pid) if pid is not None else None
        facts = topo.observe(body, rank)
        if from_table:
            facts["table_row"] = True  # the launcher's summary, not the rank's own line
        if rank is None and isinstance(facts.get("rank"), int):
            rank = int(facts["rank"])  # type: ignore[call-overload]
        if rank is None:
            rank = message_rank(body)
        if rank is not None:
            topo.see_rank(rank)
        ts = timestamps.parse(segment)
        if ts is None:
            # A traceback's lines carry no time of their own; they belong to the stamped line
            # just above them, else to the last stamped line seen in the same log.
            ts = stamp if stamp is not None else self._last_ts.get(source)
        if ts is not None:
            # Stamps carry no year: count them from the job's first, so that a job running
            # over New Year keeps its order (within a log and across logs).
            if self._first_ts is None:
                self._first_ts = ts
            ts = timestamps.unwrap(ts, self._first_ts)
            self._last_ts[source] = ts
        text = segment[:TEXT_LIMIT]
        for sig, groups in matched:
            self._seq += 1
            hit = Hit(sig, source, line, text, rank, ts, self._seq, groups, facts, body)
            record = self.records.get(sig.key)
            if record is None:
                record = self.records[sig.key] = SignalRecord(sig)
            record.add(hit)
            if sig.recovers:
                self._recovery.hit(record, source, sig.regex.search(body))

    def _not_swallowed(
        self,
        source: str,
        line: int,
        rank: int | None,
        matched: list[tuple[Signal, dict[str, str]]],
    ) -> list[tuple[Signal, dict[str, str]]]:
        """Drop the error a program caught and went on from: Python prints "Exception ignored
        in: ..." and then the traceback of an exception a destructor raised at exit (a
        DataLoader shutting its workers down), and carries on."""
        where = (source, rank)
        kept = []
        for sig, groups in matched:
            if sig.swallowed_after:
                announced = self._announced.pop(where, None)
                if announced is not None and line - announced <= SWALLOWED_LINES:
                    continue
            if (sig.entry_id, sig.name) in self._announcers:
                self._announced.pop(where, None)
                if len(self._announced) >= ANNOUNCED_MAX:  # a log of endless rank prefixes
                    del self._announced[next(iter(self._announced))]  # the oldest
                self._announced[where] = line
            kept.append((sig, groups))
        return kept


def _most_specific(
    matched: list[tuple[Signal, dict[str, str]]],
) -> list[tuple[Signal, dict[str, str]]]:
    """A line that several signals match counts for the most specific ones only: a CUDA OOM
    line is not also a generic "a rank raised an exception" line, and a launcher's summary
    raised as an exception (Horovod's driver) is the summary, not a rank's exception. A lighter
    signal of the same entry still says which rank the line is about (DeepSpeed's "OVERFLOW!
    Rank 0 Skipping step ... reducing to 1")."""
    top = max(sig.weight for sig, _ in matched)
    kept = [(s, g) for s, g in matched if s.weight >= top - 1e-9]
    entries = {s.entry_id for s, _ in kept}
    rank = next((g["rank"] for s, g in matched if s.entry_id in entries and g.get("rank")), None)
    if rank is not None and not any(g.get("rank") for _, g in kept):
        kept = [(s, {**g, "rank": rank}) for s, g in kept]
    return kept


def _encode(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8", "replace")


def _near_block_start(line_in_block: int, start: int) -> bool:
    """A line whose look-back for a stamp ran off its block's start, so that the stamp just
    above it may end the previous block. Deeper in a block, the look-back found none: an
    older block's stamp is no nearer (counting bytes alone once reached past the stamped
    lines between, and the answer changed with where blocks were cut)."""
    return line_in_block < LOOKBACK_LINES and start < LOOKBACK_BYTES

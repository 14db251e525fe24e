"""The screen's passes as one Hyperscan database, when the ``hyperscan`` package is installed.

screen.Screen works around CPython's regex engine, which searches one pattern per pass:
anchors are cut, translated and grouped so that a healthy block costs a few passes, and
the literal-less (or noisy) units each cost a ``finditer`` of their own, case-insensitive
ones on a lower-cased copy of the block. Hyperscan compiles every required literal and
every directly searched unit into one automaton, as grep does, and scans a block once.

It finds what those passes find: every occurrence of a unit's required literal (a unit's
literals hold for every match, so a line without one cannot match), every match of a
directly searched unit's pattern, case-insensitive ones with HS_FLAG_CASELESS instead of
on a lower-cased block. Hyperscan reports each match through a Python callback, so the
database holds only what the regex passes searched for: the value series (a loss on every
step line) stay with their bulk ``findall`` (values.py), and a noisy literal is demoted to
its unit's direct pattern exactly as before (scanner._demote_noisy). Databases are compiled
once per machine: hyperscan_cache.py keeps them on disk between runs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from denpex.diagnosis.hyperscan_cache import compile_block_database
from denpex.diagnosis.literals import newline_only_last

try:
    import hyperscan
except ImportError:  # the optional fast screen; candidates.py falls back to screen.Screen
    hyperscan = None  # type: ignore[assignment]

Hit = tuple[int, frozenset[int]]  # (offset in the block, keys), as screen.Screen.hits gives
# Where a direct unit's match is placed (its literals' are placed by their length).
_BY_START = -1
_BY_LAST_BYTE = -2


def available() -> bool:
    return hyperscan is not None


class HyperScreen:
    """Offsets of every required literal and direct-unit match in a block, in one scan."""

    def __init__(
        self,
        exact: dict[str, set[int]],
        folded: dict[str, set[int]],
        direct: Iterable[tuple[int, bytes, bool]],
    ) -> None:
        """``exact``/``folded``: required literal -> keys it guards (folded: matched without
        regard to ASCII case). ``direct``: (unit id, pattern on raw bytes, caseless). Raises
        ValueError when a pattern is outside what Hyperscan compiles."""
        assert hyperscan is not None
        expressions: list[bytes] = []
        flags: list[int] = []
        self._keys: list[frozenset[int]] = []
        # Literals: the match's start is its end minus its length, no start-of-match
        # tracking needed. Folded literals are grouped by their lower-cased form.
        merged: dict[tuple[bytes, bool], set[int]] = {}
        for table, caseless in ((exact, False), (folded, True)):
            for text, keys in table.items():
                lit = text.encode("utf-8")
                merged.setdefault((lit.lower() if caseless else lit, caseless), set()).update(keys)
        self._lengths: list[int] = []
        self._literals = list(merged)  # (literal, caseless) by expression id, first in the db
        for (lit, caseless), keys in merged.items():
            expressions.append(literal_pattern(lit))
            flags.append(hyperscan.HS_FLAG_CASELESS if caseless else 0)
            self._keys.append(frozenset(keys))
            self._lengths.append(len(lit))
        # Direct units: the start of the leftmost match decides the line, as finditer's did
        # (a pattern with \s or [^...] may run over a newline). Tracking starts costs a
        # third of the scan, so a pattern that can hold a newline only as its last byte is
        # placed by that byte instead.
        for uid, pattern, caseless in direct:
            expressions.append(pattern)  # PCRE syntax: (?P<name>...) included
            by_end = newline_only_last(pattern)
            flags.append(
                hyperscan.HS_FLAG_MULTILINE
                | (0 if by_end else hyperscan.HS_FLAG_SOM_LEFTMOST)
                | (hyperscan.HS_FLAG_CASELESS if caseless else 0)
            )
            self._keys.append(frozenset((uid,)))
            self._lengths.append(_BY_LAST_BYTE if by_end else _BY_START)
        self._db: Any = None
        self._scratch: Any = None
        if expressions:
            try:
                self._db = compile_block_database(expressions, flags)
            except hyperscan.error as exc:
                raise ValueError(f"Hyperscan cannot compile the screen: {exc}") from exc
            self._scratch = hyperscan.Scratch(self._db)

    def own_scratch(self) -> HyperScreen:
        """This screen with scratch space of its own: one compiled database is shared by
        every scanner of the process, and two threads must not scan with one scratch."""
        other = copy.copy(self)
        if self._db is not None:
            other._scratch = hyperscan.Scratch(self._db)
        return other

    def hits(self, block: bytes) -> list[Hit]:
        if self._db is None:
            return []
        found: list[tuple[int, int]] = []
        append = found.append
        lengths = self._lengths

        def on_match(eid: int, start: int, end: int, _flags: int, _ctx: object) -> None:
            n = lengths[eid]
            append((end - n if n >= 0 else start if n == _BY_START else end - 1, eid))

        self._db.scan(block, match_event_handler=on_match, scratch=self._scratch)
        keys = self._keys
        return [(pos, keys[eid]) for pos, eid in found]

    def literals_in(self, block: bytes) -> set[tuple[bytes, bool]]:
        """(literal, caseless) of this screen's literals that occur in ``block`` (caseless
        ones lower-cased): what ``literal in block`` (``in block.lower()``) finds for each,
        in one pass, at the cost of a callback per occurrence."""
        if self._db is None:
            return set()
        found: set[int] = set()
        add = found.add

        def on_match(eid: int, _start: int, _end: int, _flags: int, _ctx: object) -> None:
            add(eid)

        self._db.scan(block, match_event_handler=on_match, scratch=self._scratch)
        literals = self._literals
        return {literals[eid] for eid in found if eid < len(literals)}


def literal_pattern(literal: bytes) -> bytes:
    """``literal`` as a Hyperscan expression (every byte escaped)."""
    return b"".join(b"\\x%02x" % b for b in literal)


class HyperSearch:
    """Whether one pattern (Python syntax, Hyperscan's dialect) matches anywhere in a block:
    ``re.search`` as one automaton pass that stops at the first match."""

    def __init__(self, pattern: bytes, flags: int) -> None:
        """``flags``: the ``re`` flags of the pattern. Raises ValueError when Hyperscan cannot
        compile it."""
        assert hyperscan is not None
        if flags & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL):
            raise ValueError("a flag Hyperscan has no equivalent of")
        hs_flags = hyperscan.HS_FLAG_SINGLEMATCH
        for flag, hs_flag in (
            (re.IGNORECASE, hyperscan.HS_FLAG_CASELESS),
            (re.MULTILINE, hyperscan.HS_FLAG_MULTILINE),
            (re.DOTALL, hyperscan.HS_FLAG_DOTALL),
        ):
            hs_flags |= hs_flag if flags & flag else 0
        try:
            self._db: Any = compile_block_database([pattern], [hs_flags])
        except hyperscan.error as exc:
            raise ValueError(f"Hyperscan cannot compile {pattern!r}: {exc}") from exc
        self._scratch: Any = hyperscan.Scratch(self._db)

    def own_scratch(self) -> HyperSearch:
        """This search with scratch space of its own (see HyperScreen.own_scratch)."""
        other = copy.copy(self)
        other._scratch = hyperscan.Scratch(self._db)
        return other

    def found(self, block: bytes) -> bool:
        def stop(_eid: int, _start: int, _end: int, _flags: int, _ctx: object) -> bool:
            return True

        try:
            self._db.scan(block, match_event_handler=stop, scratch=self._scratch)
        except hyperscan.error:  # ScanTerminated where the package names it
            return True  # stopped at a match (or failed: "may match" is the careful answer)
        return False


@lru_cache(maxsize=64)
def literal_search(literal: bytes) -> HyperSearch:
    """``literal in block`` as a Hyperscan pass: about 10x faster than ``bytes``' own search
    on a 4 MiB block without it (callers scan with own_scratch())."""
    return HyperSearch(literal_pattern(literal), 0)

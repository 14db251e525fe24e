"""Which lines of a block may match which signals: the stateless half of scanning.

Stateless on purpose: given the compiled catalog and the screen's configuration (the log's
byte shares, the units searched directly), a block's candidate lines depend on the block
alone, so worker processes can compute them for parts of a large file (see parallel.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from denpex.diagnosis import hyperscreen
from denpex.diagnosis.context import extractor
from denpex.diagnosis.hyperscreen import HyperScreen
from denpex.diagnosis.literals import anchors_line_start
from denpex.diagnosis.matcher import CompiledCatalog

Candidate = tuple[int, int, set[int]]  # (line start, line end, keys) within a block


class BlockScreen:
    def __init__(
        self,
        cat: CompiledCatalog,
        freq: dict[int, float] | None = None,
        demoted: Iterable[int] = (),
    ) -> None:
        self.cat = cat
        self.freq = freq
        self.demoted = frozenset(demoted)
        self._direct = cat.direct_units(set(self.demoted))  # unit ids
        self.value_base = len(cat.units)  # keys at and above: value-signal jumps
        # One Hyperscan scan per block when the package is there, else the regex passes.
        # An extractor's anchor sits on healthy lines too ("nranks" in every NCCL collective
        # trace line): its pattern on the raw line drops those in C, as a unit's confirm does,
        # and Hyperscan searches that pattern itself instead of the anchor.
        self._extractor_confirm = {
            key: _raw_confirm(extractor(key)[1])
            for keys in cat.extractor_literals.values()
            for key in keys
        }
        self.hyper = _hyper_screen(cat, self.demoted, self._direct, self._extractor_confirm)
        if self.hyper is None:
            self._screen, self._folded = cat.screens(set(self.demoted), freq)

    def lines(
        self, block: bytes, extra: Iterable[tuple[int, frozenset[int]]] = ()
    ) -> tuple[list[Candidate], dict[int, int]]:
        """The candidate lines of ``block`` in order, and per unit how many lines its anchors
        sent (the measure of a noisy anchor). ``extra``: more (offset, keys), e.g. jumps."""
        found = self.hyper.hits(block) if self.hyper is not None else self._regex_hits(block)
        found.extend(extra)
        if not found:
            return [], {}
        found.sort(key=lambda item: item[0])
        out: list[Candidate] = []
        counts: dict[int, int] = {}
        i = 0
        while i < len(found):
            pos = found[i][0]
            start = block.rfind(b"\n", 0, pos) + 1
            end = block.find(b"\n", pos)
            keys: set[int] = set(found[i][1])
            i += 1
            while i < len(found) and found[i][0] <= end:  # (a match may end on the newline)
                keys |= found[i][1]
                i += 1
            for key in keys:
                counts[key] = counts.get(key, 0) + 1
            raw = block[start:end]
            if b"\x1b" not in raw and b"\r" not in raw:
                # A plain line: test the candidates' own patterns in C first, so that an
                # anchor common in healthy lines costs a regex call, not a decoded line.
                # (rstrip: the examined text is right-stripped, which "$" may rely on.)
                plain = raw.rstrip()
                keys = {k for k in keys if self._may_match(k, plain)}
                if not keys:
                    continue
            out.append((start, end, keys))
        return out, counts

    def _regex_hits(self, block: bytes) -> list[tuple[int, frozenset[int]]]:
        found: list[tuple[int, frozenset[int]]] = list(self._screen.hits(block))
        if self._folded is not None:
            found.extend(self._folded.hits(block.lower()))  # ignore_case signals' anchors
        lowered: bytes | None = None
        for uid in self._direct:
            only = frozenset((uid,))
            unit = self.cat.units[uid]
            text = block
            if unit.folded:
                lowered = block.lower() if lowered is None else lowered
                text = lowered
            found.extend((m.start(), only) for m in unit.direct.finditer(text))
        return found

    def _may_match(self, key: int, raw: bytes) -> bool:
        if key < 0:
            confirm = self._extractor_confirm.get(key)
        elif key < self.value_base:
            confirm = self.cat.units[key].confirm
        else:
            return True  # value jumps are examined as they are
        return confirm is None or confirm.search(raw) is not None


def uses_hyperscan() -> bool:
    """Whether screens are Hyperscan databases (DENPEX_SCREEN=regex asks for the regex passes)."""
    return hyperscreen.available() and os.environ.get("DENPEX_SCREEN") != "regex"


def noisy_units(cat: CompiledCatalog, sample: bytes, threshold: int) -> frozenset[int]:
    """Units whose anchors occur ``threshold`` times or more in ``sample`` (a log's first
    bytes) while their own pattern, loosened to its direct form, matches nowhere in it: a
    healthy line's words ("'grad_norm': " in every HF step dict), cheaper searched directly."""
    exact, folded = cat.screen_literals(set())
    lowered = sample.lower() if folded else sample
    present = _literals_present(cat, sample)
    hits: dict[int, int] = {}
    for table, text, caseless in ((exact, sample, False), (folded, lowered, True)):
        for literal, keys in table.items():
            raw = literal.encode("utf-8")
            if present is not None and (raw.lower() if caseless else raw, caseless) not in present:
                continue  # counting it would give 0
            n = text.count(raw)
            for key in keys if n else ():
                if key >= 0:  # a unit (extractors' anchors have keys below 0)
                    hits[key] = hits.get(key, 0) + n
    return frozenset(
        uid
        for uid, n in hits.items()
        if n >= threshold
        and cat.units[uid].direct.search(lowered if cat.units[uid].folded else sample) is None
    )


def _literals_present(cat: CompiledCatalog, sample: bytes) -> set[tuple[bytes, bool]] | None:
    """The screen literals that occur in ``sample``, found by the catalog's undemoted
    Hyperscan screen when it is already compiled (a server compiles it at start-up), else
    None: count them all. Counting each of the ~340 literals in 64 KiB costs ~6 ms for every
    log opened in the editor; the screen finds the few that occur in ~0.2 ms. The screen
    holds every literal that guards a unit (only extractors' anchors searched by their own
    pattern are left out, and noisy_units does not count those)."""
    compiled = _COMPILED.get((id(cat), frozenset())) if uses_hyperscan() else None
    screen = compiled[1] if compiled is not None else None
    return screen.own_scratch().literals_in(sample) if screen is not None else None


def _raw_confirm(rx: re.Pattern[str]) -> re.Pattern[bytes] | None:
    """``rx`` on raw bytes; None when it anchors on ^, which a line's rank prefix defeats."""
    if anchors_line_start(rx.pattern):
        return None
    return re.compile(rx.pattern.encode("utf-8"), rx.flags & re.IGNORECASE)


# Compiled databases by (catalog, demoted units): compiling takes ~25 ms, as long as
# scanning a few MB, and every scanner (a document opened in the editor) needs one. The
# catalog is kept with its entry so that its id is not reused while cached.
_COMPILED: dict[tuple[int, frozenset[int]], tuple[CompiledCatalog, HyperScreen | None]] = {}
_COMPILED_MAX = 16


def _hyper_screen(
    cat: CompiledCatalog,
    demoted: frozenset[int],
    direct: list[int],
    extractors: dict[int, re.Pattern[bytes] | None],
) -> HyperScreen | None:
    if not uses_hyperscan():
        return None
    key = (id(cat), demoted)
    if key not in _COMPILED:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = (cat, _compile_hyper_screen(cat, demoted, direct, extractors))
    screen = _COMPILED[key][1]
    return screen.own_scratch() if screen is not None else None


def _compile_hyper_screen(
    cat: CompiledCatalog,
    demoted: frozenset[int],
    direct: list[int],
    extractors: dict[int, re.Pattern[bytes] | None],
) -> HyperScreen | None:
    exact, folded = cat.screen_literals(set(demoted))
    searched = {key: rx for key, rx in extractors.items() if rx is not None}
    exact = {lit: rest for lit, keys in exact.items() if (rest := keys - searched.keys())}
    patterns = [
        (uid, _direct_pattern(cat.units[uid].direct_source[0]), cat.units[uid].folded)
        for uid in direct
    ] + [(key, rx.pattern, bool(rx.flags & re.IGNORECASE)) for key, rx in searched.items()]
    try:
        return HyperScreen(exact, folded, patterns)
    except ValueError:
        return None  # a pattern Hyperscan cannot compile: the regex passes handle it


def _direct_pattern(source: str) -> bytes:
    """A unit's direct pattern for Hyperscan, which has no atomic groups (an automaton needs
    none: it never backtracks). Its flags are all in the unit (MULTILINE, folded)."""
    return source.encode("utf-8").replace(b"(?>", b"(?:")

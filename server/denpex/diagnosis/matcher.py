"""The catalog's signals, compiled once: screening anchors, line regexes, value series.

A signal named by a ``value_jump`` condition (a loss or grad-norm reading) matches almost
every step line of a healthy run, so it is not screened line by line: the scanner pulls
all its values out of a block with one ``findall`` and only looks closer when the block
holds a jump (see values.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, TypeVar

from denpex import catalog
from denpex.cachedir import default_dir
from denpex.diagnosis.literals import (
    anchors_line_start,
    linear_form,
    literal_suffix,
    required_covers,
    split_literal_run,
    top_level_branches,
)
from denpex.diagnosis.screen import Screen
from denpex.errors import InputError
from denpex.finding import Role

T = TypeVar("T", str, bytes)
# A pattern as the analysis yields it and its cache keeps it: (source, re flags).
Pattern = tuple[str, int]


@dataclass(frozen=True)
class Signal:
    key: int
    entry_id: str
    name: str
    role: Role
    weight: float
    source: Pattern  # of ``regex``, compiled at first use (a log's candidates need few)
    # Lines it must match before it counts (benign once, a failure when it persists), entries
    # whose firing makes it fallout, whether a launcher's earlier report of a task's own
    # bad exit does, and the signals announcing an error caught and gone on from
    # (catalog-entry.schema.json).
    min_count: int = 1
    not_with: frozenset[str] = frozenset()
    after_bad_exit: bool = False
    swallowed_after: frozenset[str] = frozenset()
    benign_with: frozenset[str] = frozenset()  # signals whose line anywhere makes it benign
    recovers: bool = False  # a later finite value of the same key clears a hit
    # A traceback frame that places the generic exception ending its traceback (frames.py).
    traceback_frame: bool = False
    ends_traceback: bool = False

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return _first_use(*self.source)


@dataclass(frozen=True)
class ValueSignal:
    signal: Signal
    ratio: float
    warmup: int
    exact: re.Pattern[bytes]  # the pattern on raw bytes, capturing only the value
    # The pattern from its longest literal run on (literals.literal_suffix): fast to search,
    # matches at least wherever ``exact`` does. None when that is ``exact`` itself.
    loose: re.Pattern[bytes] | None
    # Bytes every match holds (the fast pattern's leading literal), when searching for them
    # is exact (no case folding, no escape): a block without them holds no value at all.
    literal: bytes | None = None


@dataclass(frozen=True)
class Unit:
    """One top-level alternative of a signal's pattern, as the screen sees it."""

    signal: int  # Signal.key
    literals: tuple[str, ...]  # the cover it is screened on (empty: scanned directly)
    folded: bool  # screen lower-cased text (case-insensitive signal)
    # A regex that matches at least wherever the alternative does, starting with a literal
    # when the alternative has one: searched over whole blocks in C when the literals are
    # too common to screen on. Compiled at first use, as ``confirm`` is: with Hyperscan,
    # only its source is needed, and most units never see a candidate line.
    direct_source: Pattern
    # The alternative itself on raw bytes, to drop a candidate line in C before it is decoded
    # and cleaned (None when it anchors on ^, which a line's rank prefix would defeat).
    confirm_source: Pattern | None

    @cached_property
    def direct(self) -> re.Pattern[bytes]:
        return _first_use(self.direct_source[0].encode("utf-8"), self.direct_source[1])

    @cached_property
    def confirm(self) -> re.Pattern[bytes] | None:
        if self.confirm_source is None:
            return None
        return _first_use(self.confirm_source[0].encode("utf-8"), self.confirm_source[1])


@dataclass
class CompiledCatalog:
    entries: dict[str, catalog.Entry]
    signals: list[Signal]  # indexed by key
    units: list[Unit]  # indexed by unit id (the screen's keys; extractors use -1, -2, ...)
    extractor_literals: dict[str, set[int]]
    values: list[ValueSignal]
    conditions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Ids of the entries marked ``hang`` and ``exit_report`` (catalog-entry.schema.json).
    hangs: frozenset[str] = frozenset()
    exit_reports: frozenset[str] = frozenset()

    def screens(
        self, demoted: set[int], freq: dict[int, float] | None = None
    ) -> tuple[Screen, Screen | None]:
        """(case-sensitive screen, lower-cased screen) over the units not scanned directly."""
        exact, folded = self.screen_literals(demoted)
        return Screen(exact, freq), (Screen(folded, freq) if folded else None)

    def screen_literals(self, demoted: set[int]) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
        """(case-sensitive, lower-cased) literal -> keys, over the units not scanned directly."""
        exact: dict[str, set[int]] = {k: set(v) for k, v in self.extractor_literals.items()}
        folded: dict[str, set[int]] = {}
        for uid, unit in enumerate(self.units):
            if unit.literals and uid not in demoted:
                for lit in unit.literals:
                    (folded if unit.folded else exact).setdefault(lit, set()).add(uid)
        return exact, folded

    def direct_units(self, demoted: set[int]) -> list[int]:
        """The ids of the units searched directly (no literal to screen on, or demoted)."""
        return [uid for uid, u in enumerate(self.units) if not u.literals or uid in demoted]


def compile_catalog(
    entries: dict[str, catalog.Entry], extra_literals: dict[str, set[int]] | None = None
) -> CompiledCatalog:
    """``extra_literals``: anchors of the context extractors, keyed from -1 downwards."""
    return build_catalog(entries, analyze_catalog(entries), extra_literals)


# What the analysis of a catalog's patterns yields, as plain data (catalog_cache.py keeps it
# on disk as JSON): per signal its linear pattern; per screen unit (signal key, cover,
# folded, direct pattern, confirm pattern or None); per value series (signal key, exact
# pattern, loose pattern or None, leading literal or None). Patterns are (source, re flags).
Analysis = dict[str, list[Any]]


def analyze_catalog(entries: dict[str, catalog.Entry]) -> Analysis:
    """The slow half of compiling a catalog: every pattern parsed for its literals."""
    signals: list[Pattern] = []
    units: list[list[Any]] = []
    values: list[list[Any]] = []
    for entry in entries.values():
        jumps = {c["signal"] for c in entry.get("conditions", []) if c["kind"] == "value_jump"}
        for spec in entry.get("signals", []):
            key = len(signals)
            regex = re.compile(linear_form(spec["pattern"]), _flags(spec))
            signals.append(_source(regex))
            if spec["name"] in jumps:
                suffix = literal_suffix(spec["pattern"])
                all_flags = regex.flags & re.IGNORECASE
                loose = suffix if suffix is not None and suffix != spec["pattern"] else None
                run = split_literal_run(loose or spec["pattern"])[0]
                values.append(
                    [
                        key,
                        _source(_value_only(spec["pattern"], all_flags)),
                        _source(_value_only(loose, all_flags)) if loose is not None else None,
                        run if run and not all_flags and "\\" not in run else None,
                    ]
                )
                continue
            units.extend(_units(key, spec["pattern"], regex, _flags(spec)))
    return {"signals": signals, "units": units, "values": values}


def build_catalog(
    entries: dict[str, catalog.Entry],
    analysis: Analysis,
    extra_literals: dict[str, set[int]] | None = None,
) -> CompiledCatalog:
    """The catalog compiled from ``entries`` and their ``analysis``. Raises ValueError (or
    re.error) when the analysis is not one of these entries."""
    signals: list[Signal] = []
    conditions: dict[str, list[dict[str, Any]]] = {}
    jumps: dict[int, dict[str, Any]] = {}
    patterns = analysis["signals"]
    for entry_id, entry in entries.items():
        named = {c["signal"]: c for c in entry.get("conditions", []) if c["kind"] == "value_jump"}
        conditions[entry_id] = list(entry.get("conditions", []))
        for spec in entry.get("signals", []):
            if len(signals) >= len(patterns):
                raise ValueError("fewer analysed signals than the catalog has")
            source, flags = patterns[len(signals)]
            if spec["name"] in named:
                jumps[len(signals)] = named[spec["name"]]
            signals.append(
                Signal(
                    key=len(signals),
                    entry_id=entry_id,
                    name=spec["name"],
                    role=spec["role"],
                    weight=float(spec.get("weight", 0.5)),
                    source=_pattern((source, flags)),
                    min_count=int(spec.get("min_count", 1)),
                    not_with=frozenset(spec.get("not_with", [])),
                    after_bad_exit=bool(spec.get("after_bad_exit", False)),
                    swallowed_after=frozenset(spec.get("swallowed_after", [])),
                    benign_with=frozenset(spec.get("benign_with", [])),
                    recovers=bool(spec.get("recovers", False)),
                    traceback_frame=bool(spec.get("traceback_frame", False)),
                    ends_traceback=bool(spec.get("ends_traceback", False)),
                )
            )
    if len(signals) != len(patterns):
        raise ValueError("more analysed signals than the catalog has")
    units = [
        Unit(key, tuple(cover), folded, _pattern(direct), _pattern(confirm) if confirm else None)
        for key, cover, folded, direct, confirm in analysis["units"]
    ]
    values = [
        ValueSignal(
            signals[key],
            float(jumps[key]["ratio"]),
            int(jumps[key].get("warmup", 10)),
            _bytes(exact),
            _bytes(loose) if loose is not None else None,
            literal.encode() if literal is not None else None,
        )
        for key, exact, loose, literal in analysis["values"]
    ]
    if {v.signal.key for v in values} != set(jumps) or not all(
        0 <= u.signal < len(signals) and u.signal not in jumps for u in units
    ):
        raise ValueError("the analysis does not match the catalog's signals")
    return CompiledCatalog(
        entries=entries,
        signals=signals,
        units=units,
        extractor_literals=dict(extra_literals or {}),
        values=values,
        conditions=conditions,
        hangs=frozenset(i for i, e in entries.items() if e.get("hang")),
        exit_reports=frozenset(i for i, e in entries.items() if e.get("exit_report")),
    )


def _flags(spec: dict[str, Any]) -> int:
    return re.IGNORECASE if spec.get("ignore_case") else 0


def _source(rx: re.Pattern[Any]) -> Pattern:
    pattern = rx.pattern
    return (pattern.decode("utf-8") if isinstance(pattern, bytes) else pattern, rx.flags)


def _pattern(pattern: Any) -> Pattern:
    """(source, flags) from the analysis, checked for its types (it may come from a file):
    a pattern compiled at first use must at least be one."""
    source, flags = pattern
    if not isinstance(source, str) or not isinstance(flags, int) or isinstance(flags, bool):
        raise ValueError("an analysed pattern is not (source, flags)")
    return (source, flags)


def _bytes(pattern: Pattern) -> re.Pattern[bytes]:
    source, flags = pattern
    return re.compile(source.encode("utf-8"), flags)


def _first_use(source: T, flags: int) -> re.Pattern[T]:
    """A pattern compiled at first use. Every pattern compiled when the catalog was analysed,
    so one that does not compile now came from a cache file that was damaged after its
    checksum was written (catalog_cache.py): a bad input, not a crash."""
    try:
        return re.compile(source, flags)
    except (re.error, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise InputError(
            f"a catalog pattern from the analysis cache does not compile ({exc}); "
            f"delete {default_dir()} and run again"
        ) from exc


def _units(key: int, pattern: str, regex: re.Pattern[str], flags: int) -> list[list[Any]]:
    # Case-insensitive signals (flag or inline "(?i)") screen lower-cased blocks.
    folds = bool(regex.flags & re.IGNORECASE)
    out = []
    for branch in top_level_branches(pattern):
        covers = [[s.lower() for s in c] if folds else c for c in required_covers(branch)]
        linear = linear_form(branch)
        suffix = literal_suffix(branch) if linear == branch else None
        direct = _direct_regex(suffix, folds) if suffix is not None else None
        cover = _pick_cover(covers) if covers else []
        if cover and _too_common(cover) and direct is not None:
            cover = []
        if direct is None:
            # No literal to start from: the whole branch is what a direct search runs (at once
            # when there is nothing to screen on, else if the screen's anchor proves noisy).
            direct = re.compile(linear.encode("utf-8"), flags | re.MULTILINE)
        confirm = None if anchors_line_start(linear) else re.compile(linear.encode("utf-8"), flags)
        out.append([key, cover, folds, _source(direct), _source(confirm) if confirm else None])
    return out


@cache
def default_catalog() -> CompiledCatalog:
    from denpex.diagnosis.catalog_cache import cached_catalog
    from denpex.diagnosis.context import EXTRACTOR_LITERALS

    return cached_catalog(catalog.entries(), EXTRACTOR_LITERALS)


# Words that fill healthy step lines; a cover made of them would send every step line to
# the slow path, so a signal screens on its rarer literals when it has any.
_COMMON = ("loss", "step", "iter", "rank", "INFO", "lr", "grad", "norm", "time", "epoch")


def _direct_regex(suffix: str, folds: bool) -> re.Pattern[bytes]:
    """The suffix compiled for a whole-block search. A case-insensitive one is searched in the
    lower-cased block: its leading literal lower-cased and matched case-sensitively (so the
    engine can jump between its occurrences) and only the rest case-insensitively."""
    if not folds:
        return re.compile(suffix.encode("utf-8"), re.MULTILINE)
    run, rest = split_literal_run(suffix)
    pattern = run.lower() + (f"(?i:{rest})" if rest else "")
    return re.compile(pattern.encode("utf-8"), re.MULTILINE)


def _too_common(cover: list[str]) -> bool:
    """Short, or little more than a word of healthy step lines ("loss", "lm loss")."""
    return any(
        len(s) < 5 or any(s in w or (w in s and len(s) <= len(w) + 3) for w in _COMMON)
        for s in cover
    )


def _pick_cover(covers: list[list[str]]) -> list[str]:
    return max(covers, key=lambda c: (not _too_common(c), min(len(s) for s in c), -len(c)))


_GROUP = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\((\?P<(\w+)>|\?)?")


def _value_only(pattern: str, flags: int) -> re.Pattern[bytes]:
    """The pattern with every group but ``value`` made non-capturing, so that ``findall``
    returns the values themselves (a C-level loop, no match objects)."""

    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if not token.startswith("("):
            return token  # an escape or a character class, kept as is
        if m.group(2) == "value" or m.group(1) == "?":
            return token
        return "(?:"

    rewritten = _GROUP.sub(sub, pattern)
    rx = re.compile(rewritten.encode("utf-8"), flags | re.MULTILINE)
    if rx.groups != 1 or "value" not in rx.groupindex:
        raise ValueError(f"value_jump signal needs one (?P<value>...) group: {pattern!r}")
    return rx

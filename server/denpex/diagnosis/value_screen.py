"""One regex search that tells whether a block may hold a jump of a value series, without
pulling its values out.

A value series with a running window whose smallest positive value is ``low`` cannot jump on
a value below ``hi`` when ``hi <= ratio * low`` and ``hi <= ratio * lo``, as long as every
value of the block is in ``[lo, hi)``: each median is then a positive value at least
``min(low, lo)``, or no median counts. ``lo`` and ``hi`` are one-digit decimals
(``d * 10**e``), so "in range" is a matter of the value's text: its leading digit and where
it stands (``0.00d…``, ``d…`` with so many digits, ``d.…E+ee``). ``screen`` compiles the
series' pattern with its value replaced by "a number that is not in range as written": a
search that finds nothing proves the block holds no jump, and the values are never
converted. Anything unusual (leading zeros, ``12.3E+00``, an exponent out of range, a value
of 0, a huge number that is no finite float) is not "in range" and sends the block to the
value-by-value path, so the screen can only cost time, never a finding.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from denpex.diagnosis import hyperscreen
from denpex.diagnosis.hyperscreen import HyperSearch

# The value group every catalog value signal uses; a custom one with another gets no screen.
VALUE_GROUP = rb"(?P<value>[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?)"
# Where the value as that group reads it ends: no further digit, point or exponent.
_END = rb"(?![0-9.]|[eE][-+]?[0-9])"
_MARGIN = 1 + 1e-9  # float rounding of ratio x low never turns "below" into "at or above"
_MAX_EXPONENT = 300


def bounds(ratio: float, low: float, high: float) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """((d, e) of lo, (d, e) of hi) for a window of positive values from ``low`` to ``high``:
    of the ranges with ``lo <= low`` and ``hi < ratio * lo``, the one that leaves the most
    room on both sides of the window. None when none holds the window."""
    if not (0 < low <= high and math.isfinite(ratio * high)):
        return None
    e0 = math.floor(math.log10(low))
    if abs(e0) > _MAX_EXPONENT:
        return None
    best = None
    best_room = 1.0
    for e in (e0 - 1, e0):
        for d in range(1, 10):
            lo = decimal((d, e))
            if lo > low:
                break
            hi = _below(ratio * lo)
            room = min(low / lo, decimal(hi) / high)
            if room > best_room:
                best, best_room = ((d, e), hi), room
    return best


def _below(top: float) -> tuple[int, int]:
    """The largest one-digit decimal whose float is below ``top`` (with a margin: a value
    under it, however many digits it has, stays under ``top`` as a float)."""
    e0 = math.floor(math.log10(top))
    return next(
        (d, e)
        for e in (e0 + 1, e0, e0 - 1, e0 - 2)
        for d in range(9, 0, -1)
        if decimal((d, e)) * _MARGIN < top
    )


@lru_cache(maxsize=64)
def screen(
    pattern: bytes, flags: int, lo: tuple[int, int], hi: tuple[int, int]
) -> re.Pattern[bytes] | None:
    """The series' (loose) pattern made to match only a value outside ``[lo, hi)``; None when
    its value group is not the usual one."""
    if not pattern.endswith(VALUE_GROUP):
        return None
    prefix = pattern[: -len(VALUE_GROUP)]
    in_range = b"|".join(_in_range(lo, hi))
    return re.compile(prefix + rb"(?=[0-9])(?!(?:" + in_range + rb")" + _END + rb")", flags)


@lru_cache(maxsize=64)
def hyper_screen(
    pattern: bytes, flags: int, lo: tuple[int, int], hi: tuple[int, int]
) -> HyperSearch | None:
    """``screen`` as one Hyperscan search, compiled per range and cached (a caller scans with
    its own_scratch()); None without Hyperscan, when the value group is not the usual one or
    when Hyperscan cannot compile the series' pattern."""
    if not hyperscreen.available() or not pattern.endswith(VALUE_GROUP):
        return None
    try:
        return HyperSearch(pattern[: -len(VALUE_GROUP)] + outside(lo, hi), flags)
    except ValueError:
        return None


@lru_cache(maxsize=8192)  # bounds() asks for ~20 per block and series, from a few hundred
def decimal(de: tuple[int, int]) -> float:
    """``d * 10**e`` as the float that ``bounds`` compared."""
    d, e = de
    return float(f"{d}e{e}")


def _value(de: tuple[int, int]) -> Fraction:
    d, e = de
    return Fraction(d) * Fraction(10) ** e


def _leads(lo: tuple[int, int], hi: tuple[int, int]) -> dict[int, list[int]]:
    """Per power ``e`` of ten, the leading digits ``d`` that put all of ``[d * 10**e,
    (d + 1) * 10**e)`` inside ``[lo, hi)`` (none: the list is empty)."""
    return {
        e: [
            d
            for d in range(1, 10)
            if _value((d, e)) >= _value(lo) and (d + 1) * Fraction(10) ** e <= _value(hi)
        ]
        for e in range(lo[1], hi[1] + 1)
    }


def _in_range(lo: tuple[int, int], hi: tuple[int, int]) -> list[bytes]:
    """Alternatives matching the plainly written numbers whose leading digit ``d`` at
    ``10**e`` puts all of ``[d * 10**e, (d + 1) * 10**e)`` inside ``[lo, hi)``."""
    out = []
    for e, digits in _leads(lo, hi).items():
        if not digits:
            continue
        lead = _class(digits)
        if e >= 0:
            out.append(lead + rb"[0-9]{%d}(?:\.[0-9]*)?" % e)
        else:
            out.append(rb"0\." + b"0" * (-e - 1) + lead + rb"[0-9]*")
        if e > 0:
            exponent = rb"\+?0*%d" % e
        elif e < 0:
            exponent = rb"-0*%d" % -e
        else:
            exponent = rb"[-+]?0+"
        out.append(lead + rb"(?:\.[0-9]*)?[eE]" + exponent)
    return out


# What may follow a number written without exponent (no digit, point or exponent), and what
# makes a number unusual after its last digit (a second point, a second exponent).
_PLAIN_END = rb"(?:[^0-9.eE]|[eE](?:[^-+0-9]|[-+][^0-9]|[-+]?$)|$)"
_BAD_END = rb"(?:\.|[eE][-+]?[0-9])"


@lru_cache(maxsize=64)
def outside(lo: tuple[int, int], hi: tuple[int, int]) -> bytes:
    """What ``screen``'s look-ahead finds, written positively for Hyperscan (which has no
    look-around): matches at a value's first digit exactly when the number read there (as
    the value group reads it, to its last digit) is not in ``[lo, hi)`` as written."""
    leads = _leads(lo, hi)
    alts = [rb"0(?:[^.]|$)"]  # 0, 00…, 0e…: zero or leading zeros
    # 0.0…0d…: as many zeros as the range allows, then an allowed first digit.
    most = max((-e - 1 for e, digits in leads.items() if e < 0 and digits), default=-1)
    for zeros in range(most + 1):
        allowed = b"".join(b"%d" % d for d in leads.get(-zeros - 1, []))
        alts.append(rb"0\." + b"0" * zeros + rb"(?:[^0" + allowed + rb"]|$)")
    alts.append(rb"0\." + b"0" * (most + 1))
    alts.append(rb"0\.0*[1-9][0-9]*" + _BAD_END)
    # d… with e + 1 digits before the point, no exponent: e in range, d allowed at e.
    top = max(max(leads) + 1, 1)
    alts.append(rb"[1-9][0-9]{%d}" % top)
    for e in range(1, top):
        if wrong := [d for d in range(1, 10) if d not in leads.get(e, [])]:
            alts.append(_class(wrong) + rb"[0-9]{%d}(?:[^0-9]|$)" % e)
    alts.append(rb"[1-9][0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]")  # 12.3E+00
    alts.append(rb"[1-9][0-9]*\.[0-9]*\.")
    if wrong := [d for d in range(1, 10) if d not in leads.get(0, [])]:
        alts.append(_class(wrong) + rb"(?:\.[0-9]*)?" + _PLAIN_END)
    # d.…E±ee: the exponent one at which d is allowed.
    alts.append(rb"[1-9](?:\.[0-9]*)?[eE][-+]?[0-9]+" + _BAD_END)
    by_exponents: dict[frozenset[int], list[int]] = {}
    for d in range(1, 10):
        at = frozenset(e for e, digits in leads.items() if d in digits)
        by_exponents.setdefault(at, []).append(d)
    for at, digits in by_exponents.items():
        alts.append(_class(digits) + rb"(?:\.[0-9]*)?[eE]" + _exponent_not_in(at))
    return b"(?:" + b"|".join(alts) + b")"


def _exponent_not_in(allowed: frozenset[int]) -> bytes:
    """An exponent (``[-+]?[0-9]+``, read to its last digit) whose value is not allowed."""
    alts = [] if 0 in allowed else [rb"[-+]?0+(?:[^0-9]|$)"]
    alts.append(rb"\+?0*" + _number_not_in({b"%d" % e for e in allowed if e > 0}))
    alts.append(rb"-0*" + _number_not_in({b"%d" % -e for e in allowed if e < 0}))
    return b"(?:" + b"|".join(alts) + b")"


def _number_not_in(words: set[bytes]) -> bytes:
    """Digits from a nonzero one on, read to the last, that spell none of ``words``: the
    trie of ``words``, leaving it at each node by a digit it lacks or by the number's end."""
    alts = []

    def leave(prefix: bytes) -> None:
        nexts = {w[len(prefix)] for w in words if len(w) > len(prefix) and w.startswith(prefix)}
        others = bytes(d for d in (b"0123456789" if prefix else b"123456789") if d not in nexts)
        exits = [b"[" + others + b"]"] if others else []
        if prefix and prefix not in words:
            exits.append(rb"[^0-9]|$")
        if exits:
            alts.append(prefix + b"(?:" + b"|".join(exits) + b")")
        for d in sorted(nexts):
            leave(prefix + bytes((d,)))

    leave(b"")
    return b"(?:" + b"|".join(alts) + b")"


def _class(digits: list[int]) -> bytes:
    return b"[" + b"".join(b"%d" % d for d in digits) + b"]"

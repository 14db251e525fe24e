"""Required literals of a regex: strings at least one of which every match must contain.

This is what lets the scanner skip healthy lines in C: a line that contains none of a
signal's required literals cannot match the signal, so only lines holding one of them are
ever decoded and matched (the same idea as grep's "must" strings).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

# The stdlib's own regex parser: private, so looked up by name (re._parser from 3.11,
# sre_parse before).
try:
    sre_parse: Any = importlib.import_module("re._parser")
    sre_constants: Any = importlib.import_module("re._constants")
except ImportError:  # pragma: no cover - Python 3.10
    sre_parse = importlib.import_module("sre_parse")
    sre_constants = importlib.import_module("sre_constants")

LITERAL = sre_constants.LITERAL
SUBPATTERN = sre_constants.SUBPATTERN
BRANCH = sre_constants.BRANCH
MAX_REPEAT = sre_constants.MAX_REPEAT
MIN_REPEAT = sre_constants.MIN_REPEAT
POSSESSIVE_REPEAT = sre_constants.POSSESSIVE_REPEAT
ATOMIC_GROUP = sre_constants.ATOMIC_GROUP
IGNORECASE = sre_constants.SRE_FLAG_IGNORECASE

Cover = list[str]  # every match contains at least one of these strings


def required_covers(pattern: str) -> list[Cover]:
    """The alternative covers of ``pattern`` at its top level (each on its own is enough),
    empty when no literal is required (e.g. ``\\d+``). Literals come as written; case folding
    is the caller's business (lower-case them and screen lower-cased text)."""
    parsed = sre_parse.parse(pattern)
    return _candidates(list(parsed))


def _score(cover: Cover) -> tuple[int, int]:
    # Prefer covers whose weakest string is longest (fewer accidental hits), then fewer strings.
    return (min(len(s) for s in cover), -len(cover))


def _best(candidates: list[Cover]) -> Cover | None:
    return max(candidates, key=_score) if candidates else None


def _cover(items: list[tuple[Any, Any]]) -> Cover | None:
    return _best(_candidates(items))


def _candidates(items: list[tuple[Any, Any]]) -> list[Cover]:
    candidates: list[Cover] = []
    run: list[str] = []
    for op, av in items:
        if op is LITERAL:
            run.append(chr(av))
            continue
        if run:
            candidates.append(["".join(run)])
            run = []
        sub = _item_cover(op, av)
        if sub:
            candidates.append(sub)
    if run:
        candidates.append(["".join(run)])
    return [c for c in candidates if min(len(s) for s in c) >= 3]


def _item_cover(op: Any, av: Any) -> Cover | None:
    if op is SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        if (add_flags & IGNORECASE) or (del_flags & IGNORECASE):
            return None
        return _cover(list(sub))
    if op is BRANCH:
        _, branches = av
        union: Cover = []
        for branch in branches:
            c = _cover(list(branch))
            if c is None:
                return None
            union.extend(c)
        return sorted(set(union))
    if op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
        lo, _hi, sub = av
        return _cover(list(sub)) if lo >= 1 else None
    if op is ATOMIC_GROUP:  # "^(?>.*?NCCL WARN )": what it holds is required all the same
        return _cover(list(av))
    return None


_TOKEN = re.compile(
    r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|\(|\)|[*+?]|\{\d*(?:,\d*)?\}|\||[^\\\[()*+?{|]"
)


def literal_suffix(pattern: str) -> str | None:
    """``pattern`` cut to start at its longest top-level run of literal characters, or None.

    The result matches wherever ``pattern`` does (it is the pattern minus a prefix), and
    starts with a literal, which CPython searches for fast. It may match more (what the cut
    prefix excluded), so its matches are candidates to confirm with the full pattern.
    """
    tokens = _TOKEN.findall(pattern)
    depth = 0
    top: list[tuple[int, str]] = []  # (index into tokens, token) at depth 0
    for i, tok in enumerate(tokens):
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            if tok == "|":
                return None  # a top-level alternation has no common run
            top.append((i, tok))
    best: tuple[int, int] = (0, -1)  # (length, start token index)
    run_start, run_len = -1, 0
    for pos, (i, tok) in enumerate(top):
        literal = _is_literal(tok) and not _quantified(tokens, i)
        contiguous = pos > 0 and top[pos - 1][0] == i - 1
        if literal:
            if run_len and contiguous:
                run_len += 1
            else:
                run_start, run_len = i, 1
            if run_len > best[0]:
                best = (run_len, run_start)
        else:
            run_len = 0
    length, start = best
    if length < 3:
        return None
    return "".join(tokens[start:])


def _is_literal(tok: str) -> bool:
    if tok.startswith("\\"):
        return len(tok) == 2 and not tok[1].isalnum()
    return len(tok) == 1 and tok not in ".^$*+?|()"


def _quantified(tokens: list[str], i: int) -> bool:
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    return nxt in ("*", "+", "?") or nxt.startswith("{")


def top_level_branches(pattern: str) -> list[str]:
    """``a|b(c|d)`` -> ["a", "b(c|d)"]: the alternatives a match must take one of. A pattern
    that is one group, ``(a|b)``, is the alternatives inside it."""
    tokens = _TOKEN.findall(pattern)
    inner = _sole_group(tokens)
    if inner is not None:
        return top_level_branches(inner)
    branches: list[str] = [""]
    depth = 0
    for tok in tokens:
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        if tok == "|" and depth == 0:
            branches.append("")
        else:
            branches[-1] += tok
    return branches


def _sole_group(tokens: list[str]) -> str | None:
    """The inside of a pattern that is exactly one unquantified group, else None."""
    if len(tokens) < 2 or tokens[0] != "(" or tokens[-1] != ")":
        return None
    depth = 0
    for i, tok in enumerate(tokens):
        depth += tok == "("
        depth -= tok == ")"
        if depth == 0 and i < len(tokens) - 1:
            return None  # the first group closes before the end
    inner = "".join(tokens[1:-1])
    for opener in ("?:", "?P<"):
        if inner.startswith(opener):
            return inner[inner.index(">") + 1 :] if opener == "?P<" else inner[2:]
    return None if inner.startswith("?") else inner


def split_literal_run(pattern: str) -> tuple[str, str]:
    """("Watchdog caught ", "(?P<x>...)..."): the pattern's leading literal characters (as
    written, escapes kept) and the rest."""
    tokens = _TOKEN.findall(pattern)
    n = 0
    while n < len(tokens) and _is_literal(tokens[n]) and not _quantified(tokens, n):
        n += 1
    return "".join(tokens[:n]), "".join(tokens[n:])


def anchors_line_start(pattern: str) -> bool:
    """Does ``pattern`` use ``^`` (outside character classes) to anchor at the line start?
    ``^(?>.*?X)``, the catalog's linear form of ``X.*Y`` (only the first X is tried), does
    not: it matches a line wherever X is, launcher prefix or not."""
    tokens = _TOKEN.findall(pattern)
    return any(
        tok == "^" and "".join(tokens[i : i + len(FIRST_OCCURRENCE)]) != FIRST_OCCURRENCE
        for i, tok in enumerate(tokens)
    )


FIRST_OCCURRENCE = "^(?>.*?"


def linear_form(pattern: str) -> str:
    """``pattern`` with each top-level ``P.*R`` (or ``P.+R``) branch as ``^(?>.*?P).*R``.

    A backtracking engine tries ``P.*R`` at every occurrence of P and scans the rest of the
    line from each: a line of thousands of "NCCL WARN " costs the square of its length.
    A line matches ``P.*R`` exactly when R matches after the *first* occurrence of P (a
    later P leaves less room for R), so the atomic group commits to that one occurrence
    and the line is scanned about twice. Catalog patterns stay POSIX ERE (grep -E, the
    benchmark's baseline, has no atomic groups); this form is only what Python runs.
    """
    branches = top_level_branches(pattern)
    linear = [_first_occurrence(b) for b in branches]
    if linear == branches:
        return pattern
    out = "|".join(linear)
    if re.compile(out).groupindex.keys() != re.compile(pattern).groupindex.keys():
        raise ValueError(f"cannot rewrite a pattern that is one named group: {pattern!r}")
    return out


def _first_occurrence(branch: str) -> str:
    tokens = _TOKEN.findall(branch)
    depth = 0
    for i, tok in enumerate(tokens):
        depth += tok == "("
        depth -= tok == ")"
        if depth == 0 and tok in ("^", "|"):
            return branch  # already anchored, or not one branch
        if depth == 0 and tok == "." and tokens[i + 1 : i + 2] in (["*"], ["+"]) and i > 0:
            if tokens[i + 2 : i + 3] == ["?"]:
                return branch  # a lazy ".*?": leave it as written
            return FIRST_OCCURRENCE + "".join(tokens[:i]) + ")" + "".join(tokens[i:])
    return branch


def newline_only_last(pattern: bytes) -> bool:
    """True when no match of ``pattern`` holds a newline but as its last byte: then the
    line of a match's last byte is the line it starts on, and Hyperscan needs no
    start-of-match tracking to place it (a third of its scan time). False when unsure."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return False
    return _last_only(list(parsed))


_NEWLINE = ord("\n")
_ZERO_WIDTH = (sre_constants.AT,)
# Classes that never hold a newline (\d, \w, \S); any other class is assumed to.
_NO_NEWLINE_CLASSES = (
    sre_constants.CATEGORY_DIGIT,
    sre_constants.CATEGORY_WORD,
    sre_constants.CATEGORY_NOT_SPACE,
    sre_constants.CATEGORY_NOT_LINEBREAK,
)


def _last_only(items: list[tuple[Any, Any]]) -> bool:
    """Every item but the consuming last one matches no newline; that one at most a newline
    as one byte (a class) or, within a group, by the same rule."""
    consuming = [i for i, (op, _) in enumerate(items) if op not in _ZERO_WIDTH]
    last = consuming[-1] if consuming else -1
    return all(
        _no_newline(op, av) or (i == last and _last_may_be_newline(op, av))
        for i, (op, av) in enumerate(items)
    )


def _last_may_be_newline(op: Any, av: Any) -> bool:
    if op in (LITERAL, sre_constants.NOT_LITERAL, sre_constants.IN):
        return True  # one byte
    if op is SUBPATTERN:
        return _last_only(list(av[-1]))
    if op is ATOMIC_GROUP:
        return _last_only(list(av))
    if op is BRANCH:
        return all(_last_only(list(branch)) for branch in av[1])
    return False


def _no_newline(op: Any, av: Any) -> bool:
    if op in _ZERO_WIDTH:
        return True
    if op is LITERAL:
        return bool(av != _NEWLINE)
    if op is sre_constants.IN:
        return all(_class_part_no_newline(o, a) for o, a in av)
    if op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
        return all(_no_newline(o, a) for o, a in av[2])
    if op is SUBPATTERN:
        return all(_no_newline(o, a) for o, a in av[-1])
    if op is ATOMIC_GROUP:
        return all(_no_newline(o, a) for o, a in av)
    if op is BRANCH:
        return all(_no_newline(o, a) for branch in av[1] for o, a in branch)
    return False  # ANY, NOT_LITERAL, back-references, look-arounds: may be a newline


def _class_part_no_newline(op: Any, av: Any) -> bool:
    if op is LITERAL:
        return bool(av != _NEWLINE)
    if op is sre_constants.RANGE:
        return not av[0] <= _NEWLINE <= av[1]
    if op is sre_constants.CATEGORY:
        return av in _NO_NEWLINE_CLASSES
    return False  # NEGATE, and anything else: assume the class holds a newline

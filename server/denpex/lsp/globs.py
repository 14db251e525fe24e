"""Which documents are logs: ``denpex.logs.globs`` matched in time linear in their size.

The globs come from workspace settings, so a cloned repository chooses them. Translated
into a backtracking regex, ``**/*a*a*a*a*a*a*a*b`` took 47 s per opened file. Here a glob
is matched segment by segment with the greedy wildcard algorithm (remember the last star,
retry from there): at most len(pattern) × len(path) steps, no recursion, for ``*`` and
``?`` within a segment and for ``**`` over whole segments alike.

A glob matches a path at any depth (``*.log`` is ``**/*.log``); ``**`` inside a segment
(``a**b``) is one ``*``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

P = TypeVar("P")
T = TypeVar("T")

MAX_GLOB = 512  # characters; a longer "glob" in the settings is refused


def _wildcard(
    pattern: Sequence[P],
    text: Sequence[T],
    is_star: Callable[[P], bool],
    one: Callable[[P, T], bool],
) -> bool:
    p = t = 0
    star_p, star_t = -1, 0
    while t < len(text):
        if p < len(pattern) and is_star(pattern[p]):
            star_p, star_t = p, t  # the star matches nothing for now
            p += 1
        elif p < len(pattern) and one(pattern[p], text[t]):
            p += 1
            t += 1
        elif star_p >= 0:  # let the last star take one more element, retry after it
            star_t += 1
            p, t = star_p + 1, star_t
        else:
            return False
    while p < len(pattern) and is_star(pattern[p]):
        p += 1
    return p == len(pattern)


def _char(p: str, c: str) -> bool:
    return p == "?" or p == c


def _segment(pattern: str, name: str) -> bool:
    return _wildcard(pattern, name, lambda p: p == "*", _char)


class Glob:
    def __init__(self, pattern: str) -> None:
        # Runs of "**" are one; a leading "**" lets the glob match at any depth. Within a
        # segment "**" is two stars, which match what one does.
        self._segments: list[str] = ["**"]
        for s in pattern.split("/"):
            if not (s == "**" and self._segments[-1] == "**"):
                self._segments.append(s)

    def match(self, path: str) -> bool:
        return _wildcard(self._segments, path.split("/"), lambda s: s == "**", _segment)

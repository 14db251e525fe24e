"""One cheap pass per block that finds the few lines worth matching.

CPython's regex engine is only fast when a pattern starts with a literal: it then jumps
from one occurrence of that first byte to the next in C. A plain alternation of many
literals, or a character class, is tried at every byte and runs ~10x slower, and one
``find`` per literal costs a pass each. So:

1. each required literal is cut to start at its rarest byte (keeping enough of it to stay
   selective), e.g. "Watchdog caught" stays whole, "an illegal memory access" becomes
   "y access";
2. ``bytes.translate`` maps all those start bytes to one sentinel byte;
3. a single regex, the sentinel followed by a trie of the anchors' remainders, scans the
   translated block. It stops only at the (rare) start bytes, and a trie rejects a stop
   after a byte or two.

Literals with no rare byte, or that translation would leave unselective, get a pass of
their own per start byte, on the block as written. A healthy line costs these C-level
passes and no Python code. A hit is only a candidate: the signals it guards are then
matched on the real line.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import TypeAlias

# Rough share (%) of each byte in training logs; anchors start at the rarest byte they have.
_FREQ = {
    **dict.fromkeys(b"0123456789", 2.0),
    **dict.fromkeys(b" ", 14.0),
    **dict.fromkeys(b"e", 8.0),
    **dict.fromkeys(b"taoinsr", 5.0),
    **dict.fromkeys(b"lcd:.=_", 3.0),
    **dict.fromkeys(b"umphg/-,[]", 2.0),
    **dict.fromkeys(b"fywbvINFOECARST", 1.0),
    **dict.fromkeys(b"k()|<>'\"LPDMGUB", 0.5),
}
_FREQ.update({b: 0.2 for b in range(32, 127) if b not in _FREQ})  # capitals, rare letters
# An anchor keeps at least this many bytes (or the whole literal when shorter): fewer bytes
# would match healthy text too often ("oss" is in every loss line).
_MIN_ANCHOR = 5
# Bytes at most this frequent (%) share the translated pass: the scan stops on each of them,
# and a stop costs as much as ~100 bytes of plain scanning.
_RARE = 0.8
_MIN_OWN = 3  # bytes of an anchor that translation must leave as they are
_SENTINEL = 0


class Screen:
    """Finds, in a block, the anchors of the signals that may match there."""

    def __init__(self, literals: dict[str, set[int]], freq: dict[int, float] | None = None) -> None:
        """``literals``: required literal -> keys of the signals it guards. ``freq``: share (%)
        of each byte in the log being read (see byte_freq), else a generic estimate."""
        encoded: dict[bytes, set[int]] = defaultdict(set)
        for text, keys in literals.items():
            encoded[text.encode("utf-8")] |= keys
        freq = freq or _FREQ
        cut: dict[bytes, set[int]] = defaultdict(set)
        for lit, keys in encoded.items():
            last = max(0, len(lit) - _MIN_ANCHOR)
            start = min(range(last + 1), key=lambda k: (freq.get(lit[k], 0.0), k))
            cut[lit[start:]] |= keys
        # Anchors that start at a rare byte share the translated pass, unless translation
        # leaves them too few bytes of their own ("EXIT" when E, I and T are all rare would
        # match "INFO"): those, like the ones with no rare byte, are searched as written.
        translated = {a for a in cut if freq.get(a[0], 0.0) <= _RARE}
        while True:
            self._table = _sentinel_table({a[0] for a in translated})
            weak = {a for a in translated if _own_bytes(a.translate(self._table)) < _MIN_OWN}
            if not weak:
                break
            translated -= weak
        rare = {a[0] for a in translated}
        # Anchors starting at a rare byte: one translated pass. The others (a literal with no
        # rare byte, "unhandled cuda error") get one pass per start byte, untranslated.
        self._keys: dict[bytes, frozenset[int]] = {}
        groups: dict[int, list[bytes]] = defaultdict(list)
        for anchor, keys in cut.items():
            word = anchor.translate(self._table) if anchor in translated else anchor
            self._keys[word] = self._keys.get(word, frozenset()) | frozenset(keys)
            groups[word[0]].append(word)
        # The trie matches the longest anchor at a position; an anchor that is a prefix of it
        # is there too, so the longer one carries its keys.
        self._keys = {
            word: frozenset().union(*(k for w, k in self._keys.items() if word.startswith(w)))
            for word in self._keys
        }
        self._passes = [
            (
                first == _SENTINEL and bool(rare),
                re.compile(re.escape(bytes([first])) + _trie_regex([w[1:] for w in set(words)])),
            )
            for first, words in sorted(groups.items())
        ]

    def hits(self, block: bytes) -> Iterable[tuple[int, frozenset[int]]]:
        """(offset of an anchor, keys it guards) for every anchor occurrence in ``block``."""
        keys = self._keys
        translated: bytes | None = None
        for on_translated, rx in self._passes:
            if on_translated and translated is None:
                translated = block.translate(self._table)
            text = translated if on_translated and translated is not None else block
            search = rx.search
            m = search(text)
            while m is not None:
                yield m.start(), keys[m.group()]
                # Restart one byte on, not after the match: anchors may overlap.
                m = search(text, m.start() + 1)


def _sentinel_table(starts: set[int]) -> bytes:
    table = bytearray(range(256))
    for b in starts:
        table[b] = _SENTINEL
    return bytes(table)


def _own_bytes(word: bytes) -> int:
    return len(word) - word.count(_SENTINEL)


def byte_freq(sample: bytes) -> dict[int, float]:
    """Share (%) of each byte in ``sample``: what the scan of this very log will stop on."""
    counts = Counter(sample)
    total = max(1, len(sample))
    return {b: 100.0 * n / total for b, n in counts.items()}


# A byte trie: each byte leads to the trie of what may follow it.
_Trie: TypeAlias = dict[int, "_Trie"]


def _trie_regex(words: list[bytes]) -> bytes:
    """A regex matching exactly ``words`` at a position, shaped as a trie so the engine
    rejects a non-matching position after looking at a byte or two. Where one word is a
    prefix of another, the longer one is matched when present."""
    trie: _Trie = {}
    end = -1
    for w in words:
        node = trie
        for b in w:
            node = node.setdefault(b, {})
        node[end] = {}

    def emit(node: _Trie) -> bytes:
        branches = [
            re.escape(bytes([b])) + emit(child) for b, child in sorted(node.items()) if b != end
        ]
        if end in node:
            branches.append(b"")
        if len(branches) == 1:
            return branches[0]
        return b"(?:" + b"|".join(branches) + b")"

    return emit(trie)

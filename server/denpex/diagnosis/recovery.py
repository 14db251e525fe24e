"""Non-finite series values that a later finite value clears (catalog field ``recovers``).

A loss or grad norm printed as NaN or Inf is a failure when the series stays there; when the
same key is finite again later in the file, the fp16 loss scaler skipped that step (or a
logged window's average held one overflow). The key is the hit's text before its value
(``loss_bbox: `` in ``loss_bbox: inf``); the finite value is searched on raw bytes, once per
block, and only while a file has a hit waiting: a healthy log never pays for it.
"""

from __future__ import annotations

import functools
import re

from denpex.diagnosis.store import SignalRecord

# The non-finite value that ends a series signal's match: its key is the text before it.
_NON_FINITE = re.compile(r"\[?-?(nan|inf|tensor\()", re.IGNORECASE)
_KEY_MAX = 64
# One word of letters and underscores, alone before the key and a single space.
_WORD_BEFORE = re.compile(r"(?<![^ \t])[A-Za-z_]{2,32} $")


@functools.lru_cache(maxsize=64)
def _finite_after(key: str) -> re.Pattern[bytes]:
    # Not inside a longer key ("cls_loss = 87.3" is not "loss = "), then a number.
    # A value of exactly zero does not clear it: a NaN masked to 0 ("loss: 0.00000" after
    # "loss: nan") is the same broken series, not a step the scaler skipped.
    return re.compile(
        rb"(?<![A-Za-z0-9_.])" + re.escape(key.encode("utf-8")) + rb"\[?-?[0-9]*\.?[0-9]*[1-9]"
    )


def _finite_value_of(match: re.Match[str] | None) -> re.Pattern[bytes] | None:
    """The pattern of a finite value of the key a non-finite hit names ("loss_bbox: inf" ->
    "loss_bbox: 0.51"); None when the match holds no key before its value."""
    if match is None:
        return None
    text = match.group(0)
    value = _NON_FINITE.search(text)
    if value is None or not 0 < value.start() <= _KEY_MAX:
        return None
    # A pattern may match inside a longer key ("loss: nan" in "val_loss: nan"): the series is
    # the whole key, which a finite training "loss: 7.02" does not clear.
    line, start = match.string, match.start()
    while (
        start > 0
        and (line[start - 1].isalnum() or line[start - 1] in "_.")
        and value.start() + match.start() - start < _KEY_MAX
    ):
        start -= 1
    # A word before the key names the series too ("Mean value_function loss: inf" is not
    # cleared by "Mean entropy loss: 21.97", rsl_rl's PPO table). Only letters: a step
    # number ("epoch 3 loss: nan", then "epoch 4 loss: 0.51") is no part of the key.
    word = _WORD_BEFORE.search(line, max(0, start - _KEY_MAX), start)
    if word is not None:
        start = word.start()
    return _finite_after(line[start : match.start() + value.start()])


class Recovery:
    """Per (file, signal key), the last hit no finite value of its key has followed yet."""

    def __init__(self) -> None:
        # The finite-value pattern and the offset in the current block to search from (0: a
        # later block); and the hits recorded on the line being examined.
        self._waiting: dict[tuple[str, int], tuple[re.Pattern[bytes], int]] = {}
        self._on_line: list[tuple[int, re.Pattern[bytes]]] = []

    def hit(self, record: SignalRecord, source: str, match: re.Match[str] | None) -> None:
        finite = _finite_value_of(match)
        if finite is not None:
            record.unrecovered.add(source)
            self._on_line.append((record.signal.key, finite))

    def line_done(self, source: str, end: int) -> None:
        """The hits of the line just examined (which ends at ``end``) wait after it."""
        for key, finite in self._on_line:
            self._waiting[(source, key)] = (finite, end)
        self._on_line.clear()

    def waiting(self, source: str) -> bool:
        return any(src == source for src, _ in self._waiting)

    def block_done(self, source: str, block: bytes, records: dict[int, SignalRecord]) -> None:
        """One C-level search per waiting signal of ``source`` over the rest of ``block``."""
        for (src, key), (finite, offset) in list(self._waiting.items()):
            if src != source:
                continue
            if finite.search(block, offset):
                del self._waiting[(src, key)]
                records[key].unrecovered.discard(source)
            else:
                self._waiting[(src, key)] = (finite, 0)

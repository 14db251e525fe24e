"""Where a generic exception was raised (catalog fields ``traceback_frame`` and
``ends_traceback``).

An exception line of no known kind (``OSError: [Errno 5] ...``, ``ValueError: ...``) says
little; the traceback above it says where it happened. A frame in torch.save or a trainer's
save_checkpoint makes it a failed checkpoint save, one in the rendezvous a failed rendezvous.
A frame signal never counts by itself (a frame is only a place): it waits, per file and rank,
for the line that ends its traceback. When that is a generic exception line, the frame's
signal takes that line as its hit; any other signal's line ends the wait (the traceback
ended in an error the catalog knows, or something else came between).
"""

from __future__ import annotations

from typing import TypeVar

from denpex.diagnosis.matcher import Signal

# A traceback's last frame is a few lines above its exception; its first, a deep stack above.
FRAME_LINES = 200
# Files and ranks with a frame waiting, at most: memory must not grow with the log.
PENDING_MAX = 1024

G = TypeVar("G")


class PendingFrames:
    def __init__(self) -> None:
        self._pending: dict[tuple[str, int | None], tuple[int, Signal]] = {}

    def step(
        self, where: tuple[str, int | None], line: int, matched: list[tuple[Signal, G]]
    ) -> tuple[list[tuple[Signal, G]], list[Signal]]:
        """The line's signals to record, frames left out; and the waiting frame signals the
        line completes (recorded on it too)."""
        frames = [sig for sig, _ in matched if sig.traceback_frame]
        rest = [(sig, g) for sig, g in matched if not sig.traceback_frame]
        if frames:
            self._pending.pop(where, None)
            if len(self._pending) >= PENDING_MAX:  # a log of endless rank prefixes
                del self._pending[next(iter(self._pending))]  # the oldest
            self._pending[where] = (line, frames[-1])  # the innermost place named
            return rest, []
        waiting = self._pending.pop(where, None)
        if (
            waiting is not None
            and line - waiting[0] <= FRAME_LINES
            and rest
            and all(sig.ends_traceback for sig, _ in rest)
        ):
            return rest, [waiting[1]]
        return rest, []

"""Coalescing of repeated triggers into one run at a time (per document, terminal, dir).

A trigger while a run is in progress marks the job dirty and it runs once more after;
triggers during the wait restart the wait (debounce), but never beyond ``max_wait`` so
a log that never stops changing is still diagnosed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Coalescer:
    def __init__(self, run: Callable[[], Awaitable[None]], max_wait: float = 2.0) -> None:
        self._run = run
        self._max_wait = max_wait
        self._task: asyncio.Task[None] | None = None
        self._dirty = False
        self._delay = 0.0
        self._deadline = 0.0
        self._wake = asyncio.Event()

    def trigger(self, delay: float = 0.0) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        if not self._dirty:
            self._deadline = now + self._max_wait
        self._dirty = True
        self._delay = delay
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._loop())

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while self._dirty:
            # Wait until `delay` passes without a new trigger, or the deadline.
            while True:
                self._wake.clear()
                wait = min(self._delay, self._deadline - loop.time())
                if wait <= 0:
                    break
                try:
                    await asyncio.wait_for(self._wake.wait(), wait)
                except TimeoutError:
                    break
            self._dirty = False
            try:
                await self._run()
            except Exception:  # a failed run must not stop later ones
                log.exception("scheduled run failed")

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

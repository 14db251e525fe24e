"""File-system events for the watchers (``denpex watch`` and the language server's folders).

Only changes wake a watcher. The kernel is asked for creations, deletions, moves, writes and
closes after writing, never for opens, reads or closes without writing: a watcher lists and
reads the folders it watches, and with those events its own scan would wake it for the next
one, a busy loop on an idle folder. Events under a folder the watcher itself writes to (its
step cache) are dropped for the same reason.

A watch is recursive (a checkpoint's last write can be a few folders down), so a folder
holding a large tree (``/``, a home directory) is refused before anything is scheduled: the
tree is counted with a bounded walk that stops at ``MAX_DIRS`` folders or ``MAX_ENTRIES``
entries, whichever comes first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    DirCreatedEvent,
    FileModifiedEvent,
    DirModifiedEvent,
    FileDeletedEvent,
    DirDeletedEvent,
    FileMovedEvent,
    DirMovedEvent,
    FileClosedEvent,  # closed after writing
]
# A run keeping 500 checkpoints of 16 ranks is ~8,500 folders; /usr alone is far more.
MAX_DIRS = 10_000
MAX_ENTRIES = 200_000


def too_large(root: Path) -> str | None:
    """Why ``root`` holds too large a tree to watch, or None. Never follows links."""
    dirs = entries = 0
    stack = [str(root)]
    while stack:
        dirs += 1
        if dirs > MAX_DIRS:
            return f"more than {MAX_DIRS:,} folders under it"
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    entries += 1
                    if entries > MAX_ENTRIES:
                        return f"more than {MAX_ENTRIES:,} files and folders under it"
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:  # unreadable or vanished: nothing to count there
            continue
    return None


def is_change(event: FileSystemEvent, ignored: tuple[Path, ...]) -> bool:
    """A change worth a scan: not a read (backends without a kernel filter send those too)
    and not under one of the ``ignored`` folders."""
    if event.event_type in ("opened", "closed_no_write"):
        return False
    path = Path(os.fsdecode(event.src_path))
    return not any(path == d or d in path.parents for d in ignored)


def schedule(observer: Any, handler: FileSystemEventHandler, root: Path) -> None:
    observer.schedule(handler, str(root), recursive=True, event_filter=CHANGES)


__all__ = ["CHANGES", "MAX_DIRS", "MAX_ENTRIES", "is_change", "schedule", "too_large"]

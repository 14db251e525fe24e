"""Where Denpex keeps what it can recompute: ``$XDG_CACHE_HOME/denpex``, else
``~/.cache/denpex`` (drift steps, the catalog's pattern analysis, compiled Hyperscan
databases), and how a cache file is read and written.

A cache file is an input: whatever is in it only ever costs a recomputation. ``read_private``
reads only a regular file (no link, no FIFO) that the user running Denpex owns and that
nobody else may write, so another account cannot plant one (a shared ``XDG_CACHE_HOME``, a
world-writable cache folder); its callers still check what they read. ``write_private``
writes atomically (a reader never sees half a file) with owner-only permissions.
``read_record``/``write_record`` keep one JSON value under a key with a checksum: what the
catalog's caches store (a value whose key or checksum does not match is a miss).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "denpex"


def read_private(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes; None when it is missing, unreadable, larger than ``max_bytes``, not
    a regular file, owned by another user or writable by group or others."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.geteuid()
            or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            or st.st_size > max_bytes
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
        return data if len(data) <= max_bytes else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_private(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it), readable and
    writable by the owner only; False when it cannot be written (that costs only time)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()  # left by a crashed run of the same process id
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False


def read_record(path: Path, key: str, field: str, max_bytes: int) -> Any:
    """The JSON value ``write_record`` stored in ``field`` under ``key``; None when the file
    is missing or not private (``read_private``), does not parse, was written under another
    key or does not match its checksum. The caller still checks the value's shape."""
    raw = read_private(path, max_bytes)
    try:
        record = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    text = record.get(field)
    if not isinstance(text, str) or checksum(text) != record.get("sha256"):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def write_record(path: Path, key: str, field: str, text: str) -> bool:
    """Store ``text`` (a JSON value) in ``field`` under ``key``, with its checksum."""
    record = {"key": key, "sha256": checksum(text), field: text}
    return write_private(path, json.dumps(record).encode("utf-8"))


def checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

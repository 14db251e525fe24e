"""Compiled Hyperscan databases kept on disk, so that a run does not compile them again.

Compiling the screen's database (~900 literals and the directly searched patterns) takes
~50 ms, as long as screening 60 MB of log, and every ``denpex diagnose`` and language
server start needs it, and the value series' range screens a few ms each. Hyperscan
serializes a compiled database to bytes; those are kept in ``hyperscan/`` in the user's
cache directory (cachedir.py), one file per database, named and keyed by a hash of
everything the compile depends on: the expressions, their flags and ids, the mode, the
Hyperscan package version and this format's version.

A serialized database is machine code for Hyperscan's engines, and Hyperscan only checks
it for damage (a CRC), not for being harmless, so a file is read only as cachedir's
``read_private`` reads one (a regular file of the user's, that nobody else may write),
then checked against the key in its header and a SHA-256 of the database. A file that is
missing, foreign, damaged or refused by Hyperscan (another version, another CPU: a shared
home directory) is a miss: the database is compiled and the file rewritten atomically.
The folder keeps the ``_MAX_FILES`` databases used last.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

from denpex.cachedir import default_dir, read_private, write_private

try:
    import hyperscan
except ImportError:  # only called where hyperscreen.available()
    hyperscan = None  # type: ignore[assignment]

_FORMAT = b"denpex-hyperscan-db 1\n"
_FOLDER = "hyperscan"
_MAX_BYTES = 64 << 20  # the catalog's screen is ~250 KB
_MAX_FILES = 64  # a log's value ranges give a few databases each


def compile_block_database(expressions: list[bytes], flags: list[int]) -> Any:
    """A block-mode database of ``expressions`` (ids 0, 1, ...), read from the cache when it
    holds one, else compiled and cached. Raises hyperscan.error when it does not compile.
    The database has no scratch space of its own: scan with a ``hyperscan.Scratch``."""
    assert hyperscan is not None
    key = _key(expressions, flags)
    path = default_dir() / _FOLDER / f"{key[:40]}.db"
    db = _load(path, key)
    if db is not None:
        return db
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=expressions,
        ids=list(range(len(expressions))),
        elements=len(expressions),
        flags=flags,
    )
    blob = hyperscan.dumpb(db)
    if write_private(path, _FORMAT + key.encode() + hashlib.sha256(blob).digest() + blob):
        _prune(path.parent)
    return db


def _key(expressions: list[bytes], flags: list[int]) -> str:
    digest = hashlib.sha256(_FORMAT)
    version = getattr(hyperscan, "__version__", "?")  # not in the package's type stubs
    digest.update(f"{version} {hyperscan.HS_MODE_BLOCK} {len(expressions)}".encode())
    for expression, flag in zip(expressions, flags, strict=True):
        # Length-prefixed: no two lists of expressions hash the same bytes.
        digest.update(b"%d %d:" % (flag, len(expression)))
        digest.update(expression)
    return digest.hexdigest()


def _load(path: Path, key: str) -> Any:
    data = read_private(path, _MAX_BYTES)
    header = len(_FORMAT) + len(key) + 32
    if data is None or len(data) <= header or not data.startswith(_FORMAT + key.encode()):
        return None
    digest, blob = data[header - 32 : header], data[header:]
    if hashlib.sha256(blob).digest() != digest:
        return None
    try:
        db = hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
    except hyperscan.error:  # another Hyperscan build or CPU: compiled again
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # used: kept by _prune
    return db


def _prune(folder: Path) -> None:
    """Remove all but the ``_MAX_FILES`` databases used last."""
    with contextlib.suppress(OSError):
        files = sorted(folder.glob("*.db"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[_MAX_FILES:]:
            old.unlink()

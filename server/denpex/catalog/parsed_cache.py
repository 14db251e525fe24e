"""The catalog's entries kept on disk as JSON, so that a run does not parse its TOML again.

tomllib is pure Python: parsing the ~370 KB of entry files costs ~0.08 s, the largest part of
a ``denpex diagnose`` start-up (a 10 MB log scans in about as long). JSON of the same data
loads in ~6 ms. The record is keyed by a hash of the entry files' names and
bytes, the package version and the Python version (its tomllib), so an edited, added or
removed entry file, or another version, is a miss: parsed and rewritten.

The file is read as an input (cachedir.read_record, as catalog_cache.py reads its own): a
record that is too large, does not parse, fails its checksum or is not a table of entries
by id is ignored and the TOML parsed. Entries whose values JSON cannot hold exactly (a TOML
date) are not cached at all.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import denpex
from denpex.cachedir import default_dir, read_record, write_record

_VERSION = 1
_FILE = "catalog-entries.json"
_MAX_BYTES = 16 << 20  # the shipped catalog's is ~330 KB

Entries = dict[str, dict[str, Any]]


def load(files: list[tuple[str, bytes]], parse: Callable[[], Entries]) -> Entries:
    """The entries of ``files`` ((name, bytes) of each entry file): read from the cache when
    it holds these files', else ``parse()``'d and written there."""
    key = _key(files)
    path = default_dir() / _FILE
    cached = _read(path, key)
    if cached is not None:
        return cached
    entries = parse()
    try:
        text = json.dumps(entries)
    except (TypeError, ValueError):
        return entries  # not plain JSON data: parsed each time
    if json.loads(text) == entries:  # JSON holds them exactly (floats, tables, arrays)
        write_record(path, key, "entries", text)
    return entries


def _key(files: list[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256(f"{_VERSION} {denpex.__version__} {sys.version}".encode())
    for name, data in files:
        digest.update(b"\0%d %s\0" % (len(data), name.encode("utf-8", "surrogateescape")))
        digest.update(data)
    return digest.hexdigest()


def _read(path: Path, key: str) -> Entries | None:
    entries = read_record(path, key, "entries", _MAX_BYTES)
    if not isinstance(entries, dict) or not all(
        isinstance(e, dict) and e.get("id") == k for k, e in entries.items()
    ):
        return None
    return entries

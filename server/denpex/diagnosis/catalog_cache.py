"""The catalog's pattern analysis kept on disk, so that a run does not redo it.

Parsing the catalog's patterns for the literals they require (matcher.analyze_catalog) is
a third of the catalog's start-up, paid by every ``denpex diagnose`` and every language
server start. Its result is plain data, kept as JSON in the user's cache directory
(cachedir.py), keyed by a hash of the catalog's entries, the package version, the Python
version (its regex parser) and the analysing code: a file for any other catalog or version
is a miss, redone and rewritten.

The file is ours, but anything may have written it (a crash, a user, another version): it
is read as an input (cachedir.read_private: a regular file of the user's, that nobody
else may write). A file that is too large or does not parse, an analysis whose
checksum does not match it, of the wrong shape or types, a regex flag the analysis never
sets, or one that does not fit the entries (matcher.build_catalog checks) is ignored and
the analysis redone. The checksum matters because the signals' patterns are compiled at
first use, not when the file is read (matcher.Signal): a pattern garbled in the file would
otherwise surface mid-scan. It is written atomically (a temporary file renamed); a cache
that cannot be written only costs the next run its time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import denpex
from denpex import catalog
from denpex.cachedir import default_dir, read_record, write_record
from denpex.diagnosis import literals, matcher
from denpex.diagnosis.matcher import Analysis, CompiledCatalog, analyze_catalog, build_catalog

_VERSION = 2  # 2: the analysis as checksummed JSON text
_FILE = "catalog-analysis.json"
_MAX_BYTES = 16 << 20  # the shipped catalog's is ~150 KB
_FLAGS = re.IGNORECASE | re.MULTILINE | re.UNICODE  # all the analysis ever sets


def cached_catalog(
    entries: dict[str, catalog.Entry], extra_literals: dict[str, set[int]]
) -> CompiledCatalog:
    """``matcher.compile_catalog(entries, extra_literals)``, its analysis read from the
    cache when it holds this catalog's."""
    key = _key(entries)
    path = default_dir() / _FILE
    cached = _read(path, key) if key is not None else None
    if cached is not None:
        with contextlib.suppress(ValueError, TypeError, KeyError, IndexError, re.error):
            return build_catalog(entries, cached, extra_literals)
    analysis = analyze_catalog(entries)
    if key is not None:
        _write(path, key, analysis)
    return build_catalog(entries, analysis, extra_literals)


def _key(entries: dict[str, catalog.Entry]) -> str | None:
    """None when the entries are not plain JSON data or the analysing code is not readable
    (then nothing is cached)."""
    digest = hashlib.sha256()
    try:
        digest.update(json.dumps(entries, sort_keys=True).encode())
        for module in (matcher, literals):
            digest.update(Path(module.__file__ or "").read_bytes())
    except (TypeError, ValueError, OSError):
        return None
    digest.update(f"{_VERSION} {denpex.__version__} {sys.version}".encode())
    return digest.hexdigest()


def _read(path: Path, key: str) -> Analysis | None:
    analysis = read_record(path, key, "analysis", _MAX_BYTES)
    return analysis if _well_formed(analysis) else None


def _write(path: Path, key: str, analysis: Analysis) -> None:
    write_record(path, key, "analysis", json.dumps(analysis))


def _well_formed(analysis: Any) -> bool:
    """The shape and types matcher.analyze_catalog gives (build_catalog checks the rest)."""
    if not isinstance(analysis, dict) or set(analysis) != {"signals", "units", "values"}:
        return False
    signals, units, values = analysis["signals"], analysis["units"], analysis["values"]
    if not (isinstance(signals, list) and isinstance(units, list) and isinstance(values, list)):
        return False
    return (
        all(_pattern(p) for p in signals)
        and all(
            isinstance(u, list)
            and len(u) == 5
            and _index(u[0])
            and isinstance(u[1], list)
            and all(isinstance(s, str) and s for s in u[1])
            and isinstance(u[2], bool)
            and _pattern(u[3])
            and (u[4] is None or _pattern(u[4]))
            for u in units
        )
        and all(
            isinstance(v, list)
            and len(v) == 4
            and _index(v[0])
            and _pattern(v[1])
            and (v[2] is None or _pattern(v[2]))
            and (v[3] is None or (isinstance(v[3], str) and bool(v[3])))
            for v in values
        )
    )


def _pattern(p: Any) -> bool:
    return (
        isinstance(p, list)
        and len(p) == 2
        and isinstance(p[0], str)
        and _index(p[1])
        and p[1] & ~_FLAGS == 0
    )


def _index(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0

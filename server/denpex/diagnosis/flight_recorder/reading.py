"""Recognise a Flight Recorder dump by its content and read it as untrusted input.

Pickle dumps go through denpex.safepickle with no allowed globals (a dump is plain dicts,
lists, strings and numbers; anything else is refused before it can run). JSON dumps are read
with the json module. Every field is type-checked; a wrong type is an InputError naming the
file, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from typing import Any

from denpex import safepickle
from denpex.diagnosis.flight_recorder.model import Entry, Frame, RankDump, Sizes
from denpex.errors import InputError

MAX_DUMP_BYTES = 64 << 20  # a 2,000-entry buffer with stacks is a few MB
MAX_RANKS = 1 << 20  # beyond it a rank number is hostile: the analysis lists ranks up to it
# Dump format versions of torch 2.4-2.13 (2.13 writes "2.10"); see docs/flight-recorder.md.
KNOWN_MAJOR = 2
KNOWN_MINOR = range(1, 11)

_PICKLE_PROTOCOLS = (2, 3, 4, 5)
# nlohmann::json writes keys in sorted order, so the first key is one of these.
_JSON_HEAD = re.compile(
    rb'\A\s*\{\s*"(?:comm_lib_version|entries|nccl_comm_state|nccl_version|pg_config|pg_status'
    rb'|version)"\s*:'
)
_RANK_SUFFIX = re.compile(r"(\d+)(?:\.[A-Za-z]{1,8})?$")  # <prefix><rank>, maybe .json/.pkl
_DIGITS = re.compile(r"\d+")


def sniff(head: bytes) -> str | None:
    """ "pickle" or "json" when the first bytes can start a dump, else None (a text log)."""
    if len(head) >= 2 and head[0] == 0x80 and head[1] in _PICKLE_PROTOCOLS:
        return "pickle"
    if _JSON_HEAD.match(head[:4096]):
        return "json"
    return None


class NotADump(Exception):
    """Parsed, but not a Flight Recorder dump (another pickle, a JSON log line)."""


def read_dump(path: str, kind: str) -> RankDump:
    """Read the dump at ``path`` (``kind`` from :func:`sniff`). Raises InputError (refused or
    malformed, including RefusedPickle) or NotADump."""
    with open(path, "rb") as f:
        data = f.read(MAX_DUMP_BYTES + 1)
    if len(data) > MAX_DUMP_BYTES:
        if kind == "json":
            raise NotADump  # a large JSON-lines log can start like a dump: read it as a log
        raise InputError(f"{path}: over {MAX_DUMP_BYTES >> 20} MiB, too large for a dump")
    if kind == "pickle":
        doc = safepickle.loads(data, what=path)
    else:
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            raise NotADump from None
    if not isinstance(doc, dict) or "version" not in doc or "entries" not in doc:
        raise NotADump
    return _parse(path, doc)


def _parse(path: str, doc: dict[Any, Any]) -> RankDump:
    version = doc["version"]
    if not isinstance(version, str) or not _known(version):
        shown = repr(version)[:40]
        raise InputError(
            f"{path}: Flight Recorder dump version {shown} is unknown "
            f"(Denpex reads {KNOWN_MAJOR}.{KNOWN_MINOR[0]}-{KNOWN_MAJOR}.{KNOWN_MINOR[-1]}, "
            "written by torch 2.4-2.13)"
        )
    name = os.path.basename(path)
    m = _RANK_SUFFIX.search(name)
    if m is None:
        raise InputError(
            f"{path}: a Flight Recorder dump whose name does not end in its rank "
            "(torch writes <prefix><rank>)"
        )
    rank = _rank(m.group(1))
    if rank >= MAX_RANKS:
        raise InputError(f"{path}: rank {rank} in the file name is beyond any job's size")
    raw_entries = _field(path, doc, "entries", list)
    entries = [_entry(path, i, e) for i, e in enumerate(raw_entries)]
    _add_last_stack(entries, raw_entries)
    backends = {_backend(e) for e in raw_entries if isinstance(e, dict)} - {""}
    return RankDump(
        rank=rank,
        path=path,
        prefix=os.path.join(os.path.dirname(path), name[: m.start()]),
        version=version,
        backend=backends.pop() if len(backends) == 1 else "",
        entries=entries,
        group_ranks=_group_ranks(path, doc.get("pg_config")),
    )


def _rank(digits: str) -> int:
    # Bounded before int(): a 5,000-digit "rank" would make int() itself raise.
    return int(digits) if len(digits) <= 7 else MAX_RANKS


def _add_last_stack(entries: list[Entry], raw: list[Any]) -> None:
    """The stack of the rank's last collective only, the one a finding shows: parsing every
    frame of a 2,000-entry buffer per rank was most of the reading time, and memory."""
    collectives = [i for i, e in enumerate(entries) if not e.is_p2p and e.seq > 0]
    if collectives:
        i = max(collectives, key=lambda i: entries[i].record_id)
        entries[i] = replace(entries[i], frames=_frames(raw[i].get("frames")))


def _known(version: str) -> bool:
    parts = version.split(".")
    return (
        len(parts) == 2
        and all(p.isdigit() for p in parts)
        and int(parts[0]) == KNOWN_MAJOR
        and int(parts[1]) in KNOWN_MINOR
    )


def _backend(raw: dict[Any, Any]) -> str:
    name = raw.get("profiling_name")
    return name.split(":", 1)[0] if isinstance(name, str) and ":" in name else ""


def _field(path: str, doc: dict[Any, Any], key: str, kind: type) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InputError(f"{path}: malformed Flight Recorder dump ({key!r} is not {kind.__name__})")
    return value


def _entry(path: str, index: int, raw: object) -> Entry:
    where = f"{path}: entry {index}"
    if not isinstance(raw, dict):
        raise InputError(f"{where} is not a mapping")
    group = raw.get("process_group")
    if not (
        isinstance(group, (list, tuple))
        and len(group) == 2
        and all(isinstance(g, str) for g in group)
    ):
        raise InputError(f"{where}: malformed process_group")
    op = _field(where, raw, "profiling_name", str)
    seq = _field(where, raw, "collective_seq_id", int)
    return Entry(
        record_id=_field(where, raw, "record_id", int),
        group=group[0],
        group_desc=group[1],
        seq=seq,
        is_p2p=bool(raw.get("is_p2p", False)) or (seq == 0 and bool(raw.get("p2p_seq_id"))),
        op=op.split(":", 1)[-1],
        input_sizes=_sizes(where, raw.get("input_sizes")),
        input_dtypes=_strings(raw.get("input_dtypes")),
        output_sizes=_sizes(where, raw.get("output_sizes")),
        output_dtypes=_strings(raw.get("output_dtypes")),
        state=raw["state"] if isinstance(raw.get("state"), str) else "",
        frames=(),  # see _add_last_stack
    )


def _sizes(where: str, value: object) -> Sizes:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(
        isinstance(t, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in t)
        for t in value
    ):
        raise InputError(f"{where}: malformed tensor sizes")
    return tuple(tuple(t) for t in value)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _frames(value: object) -> tuple[Frame, ...]:
    if not isinstance(value, list):
        return ()  # the JSON form and dumps without stacks carry none
    out = []
    for f in value:
        if isinstance(f, dict):
            line = f.get("line")
            out.append(
                Frame(
                    str(f.get("filename", "?"))[:300],
                    line if isinstance(line, int) and not isinstance(line, bool) else 0,
                    str(f.get("name", "?"))[:200],
                )
            )
    return tuple(out)


def _group_ranks(path: str, config: object) -> dict[str, tuple[int, ...]]:
    """pg_config: {name: {"name", "desc", "ranks": "[0, 1]"}}; ranks is a string (read as
    digits, never evaluated). Gloo writes one nameless group, its ranks sometimes "[]"."""
    out: dict[str, tuple[int, ...]] = {}
    if not isinstance(config, dict):
        return out
    for key, group in config.items():
        if not isinstance(key, str) or not isinstance(group, dict):
            continue
        ranks = group.get("ranks")
        if isinstance(ranks, str) and len(ranks) < 1_000_000:
            members = tuple(_rank(r) for r in _DIGITS.findall(ranks))
        elif isinstance(ranks, list):
            members = tuple(r for r in ranks if isinstance(r, int) and not isinstance(r, bool))
        else:
            continue
        if any(r >= MAX_RANKS for r in members):
            raise InputError(f"{path}: pg_config names a rank beyond any job's size")
        if members:
            out[key] = members
    return out

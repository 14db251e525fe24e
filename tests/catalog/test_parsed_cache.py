"""The catalog's parsed entries kept on disk (catalog/parsed_cache.py): a second load reads
what the first wrote, an edited entry file is a miss, and a cache file is an input like any
other: garbage, a damaged record, a forged checksum over entries of the wrong shape, or a
record written for other files all give the TOML parsed again, through the CLI too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from denpex.cachedir import checksum
from denpex.catalog import parsed_cache

Files = list[tuple[str, bytes]]


@pytest.fixture
def cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "denpex" / "catalog-entries.json"


def _shipped() -> Files:
    folder = resources.files("denpex.catalog") / "entries"
    return sorted(
        (item.name, item.read_bytes()) for item in folder.iterdir() if item.name.endswith(".toml")
    )


class _Parser:
    """tomllib over ``files``, counting its calls."""

    def __init__(self, files: Files) -> None:
        self.files, self.calls = files, 0

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        entries = (tomllib.loads(data.decode()) for _, data in self.files)
        return {e["id"]: e for e in entries}


def _load(files: Files) -> tuple[dict[str, Any], int]:
    parse = _Parser(files)
    return parsed_cache.load(files, parse), parse.calls


def test_a_second_load_reads_what_the_first_wrote(cache_file: Path) -> None:
    files = _shipped()
    first, calls = _load(files)
    assert calls == 1 and cache_file.is_file()
    assert oct(cache_file.stat().st_mode & 0o777) == "0o600"
    second, calls = _load(files)
    assert calls == 0
    assert second == first == _Parser(files)()


def test_an_edited_added_or_removed_entry_file_is_parsed_again(cache_file: Path) -> None:
    files = _shipped()
    _load(files)
    name, data = files[0]
    edited = [(name, data.replace(b'title = "', b'title = "Edited: ', 1)), *files[1:]]
    entries, calls = _load(edited)
    assert calls == 1
    assert entries[tomllib.loads(data.decode())["id"]]["title"].startswith("Edited: ")
    assert _load(files[1:])[1] == 1  # one file fewer
    assert _load(files)[1] == 1  # the record now holds the last set's entries


def _tamper(cache_file: Path, change: Any) -> None:
    record = json.loads(cache_file.read_text())
    change(record)
    cache_file.write_text(json.dumps(record))


def _forge(record: dict[str, Any], entries: Any) -> None:
    record["entries"] = json.dumps(entries)
    record["sha256"] = checksum(record["entries"])


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(entries=r["entries"].replace("CUDA", "XUDA")),  # checksum fails
        lambda r: r.update(key="0" * 64),  # another catalog's
        lambda r: _forge(r, ["not", "a", "table"]),
        lambda r: _forge(r, {"cuda-oom": {"id": "nccl-timeout"}}),  # id under another key
        lambda r: _forge(r, {"cuda-oom": "a string"}),
        lambda r: r.update(entries=7),
    ],
    ids=["damaged", "foreign-key", "not-a-table", "wrong-id", "entry-not-a-table", "not-text"],
)
def test_a_tampered_record_is_ignored_and_the_toml_parsed(cache_file: Path, change: Any) -> None:
    files = _shipped()
    _load(files)
    _tamper(cache_file, change)
    entries, calls = _load(files)
    assert calls == 1 and entries == _Parser(files)()


def test_garbage_or_a_file_others_may_write_is_ignored(cache_file: Path) -> None:
    files = _shipped()
    cache_file.parent.mkdir(parents=True)
    cache_file.write_bytes(b"\x00{garbage")
    assert _load(files)[1] == 1
    assert _load(files)[1] == 0  # rewritten
    os.chmod(cache_file, 0o666)
    assert _load(files)[1] == 1  # writable by others: not read


def test_entries_json_cannot_hold_exactly_are_not_cached(cache_file: Path) -> None:
    files = [("dated.toml", b'id = "dated"\nadded = 2024-05-01\n')]
    entries, calls = _load(files)
    assert calls == 1 and str(entries["dated"]["added"]) == "2024-05-01"
    assert not cache_file.exists()


def test_the_cli_lists_the_same_catalog_from_a_written_or_a_damaged_cache(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "denpex", "catalog", "--json"]
    runs = [subprocess.run(cmd, capture_output=True, text=True, env=env) for _ in range(2)]
    cached = tmp_path / "denpex" / "catalog-entries.json"
    assert cached.is_file()
    cached.write_text('{"key": "')
    runs.append(subprocess.run(cmd, capture_output=True, text=True, env=env))
    assert [r.returncode for r in runs] == [0, 0, 0]
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert len(json.loads(runs[0].stdout)) >= 30

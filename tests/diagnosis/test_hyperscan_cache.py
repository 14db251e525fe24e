"""Compiled Hyperscan databases cached on disk (hyperscan_cache.py): a run reads what an
earlier one wrote and scans with it as with a fresh compile, and a cache file is an input:
a damaged, truncated, foreign or forged file, one that is a link, a FIFO or a folder, one
that someone else may write, or an unwritable folder all give a fresh compile (and the file
rewritten), never a crash or a hang; through the CLI too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from denpex.diagnosis import hyperscan_cache, hyperscreen
from paths import LOGS

pytestmark = pytest.mark.skipif(
    not hyperscreen.available(), reason="the optional hyperscan package is not installed"
)

EXPRESSIONS = [b"CUDA out of memory", b"grad[_ ]norm[:=] ?[0-9]{3,}", b"NCCL (WARN|ERROR)"]
BLOCK = (
    b"ok line\nRuntimeError: CUDA out of memory. Tried\n"
    b"step 3 grad_norm=12345 loss=1.2\nnode NCCL WARN socket\n" * 50
)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "denpex" / "hyperscan"


def _flags() -> list[int]:
    import hyperscan

    return [hyperscan.HS_FLAG_SINGLEMATCH, 0, hyperscan.HS_FLAG_MULTILINE]


def _matches(db: Any) -> list[tuple[int, int]]:
    import hyperscan

    found: list[tuple[int, int]] = []

    def on_match(eid: int, _start: int, end: int, _flags: int, _ctx: object) -> None:
        found.append((eid, end))

    db.scan(BLOCK, match_event_handler=on_match, scratch=hyperscan.Scratch(db))
    return found


def _fresh() -> list[tuple[int, int]]:
    import hyperscan

    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=EXPRESSIONS, ids=[0, 1, 2], elements=3, flags=_flags())
    return _matches(db)


def _cached() -> Any:
    return hyperscan_cache.compile_block_database(EXPRESSIONS, _flags())


def _only_file(cache_dir: Path) -> Path:
    (path,) = cache_dir.glob("*.db")
    return path


def _no_compile(monkeypatch: pytest.MonkeyPatch) -> None:

    def refuse(**_kwargs: Any) -> Any:
        raise AssertionError("compiled again although the cache holds the database")

    monkeypatch.setattr(hyperscan_cache.hyperscan, "Database", refuse)


def test_a_second_run_reads_the_database_an_earlier_one_wrote(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _matches(_cached())
    assert first == _fresh() and first
    path = _only_file(cache_dir)
    assert path.stat().st_mode & 0o777 == 0o600
    _no_compile(monkeypatch)
    assert _matches(_cached()) == first


def test_the_key_covers_every_expression_and_flag(cache_dir: Path) -> None:
    import hyperscan

    _cached()
    hyperscan_cache.compile_block_database(EXPRESSIONS[:2], _flags()[:2])
    hyperscan_cache.compile_block_database(EXPRESSIONS, [0, 0, hyperscan.HS_FLAG_CASELESS])
    assert len(list(cache_dir.glob("*.db"))) == 3


def _flip_in_database(data: bytes) -> bytes:
    return data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:]


def _flip_and_forge_digest(data: bytes) -> bytes:
    """A damaged database whose SHA-256 was recomputed: Hyperscan's own check refuses it."""
    import hashlib

    header = len(hyperscan_cache._FORMAT) + 64
    blob = _flip_in_database(data)[header + 32 :]
    return data[:header] + hashlib.sha256(blob).digest() + blob


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: b"",
        lambda d: d[: len(d) // 2],
        lambda d: d[:-1],
        _flip_in_database,
        _flip_and_forge_digest,
        lambda d: d.replace(hyperscan_cache._FORMAT, b"denpex-hyperscan-db 0\n"),
        lambda d: (
            d[: len(hyperscan_cache._FORMAT)] + b"0" * 64 + d[len(hyperscan_cache._FORMAT) + 64 :]
        ),
        lambda d: b"\x00\xff garbage" * 1000,
    ],
    ids=["empty", "half", "cut", "flipped", "flipped-forged", "format", "key", "garbage"],
)
def test_a_damaged_file_is_compiled_again_and_rewritten(
    cache_dir: Path, damage: Callable[[bytes], bytes]
) -> None:
    _cached()
    path = _only_file(cache_dir)
    good = path.read_bytes()
    path.write_bytes(damage(good))
    assert _matches(_cached()) == _fresh()
    assert path.read_bytes() == good


def test_a_link_a_fifo_or_a_folder_is_not_read(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cached()
    path = _only_file(cache_dir)
    elsewhere = tmp_path / "planted.db"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)  # a link to a valid database: not followed
    assert _matches(_cached()) == _fresh()
    assert not path.is_symlink()  # replaced by a file of its own
    path.unlink()
    os.mkfifo(path)  # would block a plain open()
    assert _matches(_cached()) == _fresh()
    path.unlink()
    path.mkdir()
    assert _matches(_cached()) == _fresh()


def _count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A list that gets one entry for each database Hyperscan compiles (not read from disk)."""
    compiled: list[bool] = []
    real = hyperscan_cache.hyperscan.Database
    monkeypatch.setattr(
        hyperscan_cache.hyperscan, "Database", lambda **kw: compiled.append(True) or real(**kw)
    )
    return compiled


def test_a_file_that_others_may_write_is_not_read(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cached()
    path = _only_file(cache_dir)
    path.chmod(0o622)
    fresh = _fresh()
    compiled = _count_compiles(monkeypatch)
    assert _matches(_cached()) == fresh
    assert compiled == [True]
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_not_read(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cached()
    path = _only_file(cache_dir)
    os.chown(path, 65534, 65534)
    fresh = _fresh()
    compiled = _count_compiles(monkeypatch)
    assert _matches(_cached()) == fresh
    assert compiled == [True]


def test_the_folder_keeps_the_databases_used_last(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hyperscan_cache, "_MAX_FILES", 2)
    for n in range(4):
        hyperscan_cache.compile_block_database([b"word%d" % n], [0])
    assert len(list(cache_dir.glob("*.db"))) == 2


def test_an_unwritable_cache_costs_only_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert _matches(_cached()) == _fresh()


def test_the_cli_with_damaged_databases_answers_as_without_them(tmp_path: Path) -> None:
    log = str(LOGS / "oom_then_watchdog_timeouts.log")

    def diagnose() -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
        env.pop("DENPEX_SCREEN", None)
        return subprocess.run(
            [sys.executable, "-m", "denpex", "diagnose", "--json", log],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

    clean = diagnose()
    assert clean.returncode == 1, clean.stderr
    files = list((tmp_path / "denpex" / "hyperscan").glob("*.db"))
    assert files
    for f in files:
        data = f.read_bytes()
        f.write_bytes(_flip_and_forge_digest(data))
    again = diagnose()
    assert (again.returncode, again.stdout, again.stderr) == (1, clean.stdout, "")
    assert json.loads(again.stdout) == json.loads(clean.stdout)

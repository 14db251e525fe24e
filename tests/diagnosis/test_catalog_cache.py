"""The catalog's analysis cache (catalog_cache.py): a run reads what an earlier one wrote,
and a cache file is an input like any other: garbage, a foreign catalog's analysis, an
analysis that does not match its checksum, wrong types or flags, an analysis that does not
fit the entries, or an unwritable directory all give the catalog compiled from scratch,
through the CLI too. A pattern that does not compile in a file whose checksum was forged to
match is found at its first use: exit 2 and one line, never a traceback."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from denpex import catalog
from denpex.cachedir import checksum
from denpex.diagnosis import catalog_cache, matcher
from denpex.diagnosis.context import EXTRACTOR_LITERALS
from denpex.diagnosis.matcher import CompiledCatalog, compile_catalog
from denpex.errors import InputError
from paths import LOGS


def _fresh() -> CompiledCatalog:
    return compile_catalog(catalog.entries(), EXTRACTOR_LITERALS)


def _same(a: CompiledCatalog, b: CompiledCatalog) -> bool:
    return (
        a.signals,
        a.units,
        a.values,
        a.conditions,
        a.extractor_literals,
        a.hangs,
        a.exit_reports,
    ) == (
        b.signals,
        b.units,
        b.values,
        b.conditions,
        b.extractor_literals,
        b.hangs,
        b.exit_reports,
    )


@pytest.fixture
def cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "denpex" / "catalog-analysis.json"


def _cached() -> CompiledCatalog:
    return catalog_cache.cached_catalog(catalog.entries(), EXTRACTOR_LITERALS)


def test_a_second_run_reads_the_analysis_an_earlier_one_wrote(
    cache_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _same(_cached(), _fresh())
    written = json.loads(cache_file.read_text())
    assert set(written) == {"key", "sha256", "analysis"}

    def no_analysis(entries: Any) -> Any:
        raise AssertionError("analysed again although the cache holds it")

    monkeypatch.setattr(catalog_cache, "analyze_catalog", no_analysis)
    assert _same(_cached(), _fresh())


def test_a_catalog_whose_behaviour_flags_changed_gets_the_new_flags(cache_file: Path) -> None:
    before = _cached()
    entries = copy.deepcopy(catalog.entries())
    entries["nccl-timeout"]["hang"] = False
    entries["rank-exception"]["exit_report"] = True
    for spec in entries["slurm-job-terminated"]["signals"]:
        spec["after_bad_exit"] = not spec.get("after_bad_exit", False)
    after = catalog_cache.cached_catalog(entries, EXTRACTOR_LITERALS)
    assert _same(after, compile_catalog(entries, EXTRACTOR_LITERALS))
    assert not _same(after, before)
    assert "nccl-timeout" not in after.hangs and "rank-exception" in after.exit_reports


def _tamper(cache_file: Path, change: Any, *, forge_checksum: bool) -> None:
    """Change the file's analysis; ``forge_checksum``: and its checksum to match (else the
    change is what a damaged file looks like)."""
    data = json.loads(cache_file.read_text())
    data["analysis"] = json.loads(data["analysis"])
    change(data)
    data["analysis"] = json.dumps(data["analysis"])
    if forge_checksum:
        data["sha256"] = checksum(data["analysis"])
    cache_file.write_text(json.dumps(data))


def _drop_signal(d: dict[str, Any]) -> None:
    d["analysis"]["signals"].pop()


def _debug_flag(d: dict[str, Any]) -> None:
    d["analysis"]["signals"][0][1] |= 128  # re.DEBUG: prints while compiling


def _cover_of_numbers(d: dict[str, Any]) -> None:
    d["analysis"]["units"][0][1] = [1, 2]


def _unit_on_value_signal(d: dict[str, Any]) -> None:
    d["analysis"]["units"][0][0] = d["analysis"]["values"][0][0]


def _bad_regex(d: dict[str, Any]) -> None:
    d["analysis"]["signals"][0][0] = "(unclosed"


def _foreign_key(d: dict[str, Any]) -> None:
    d["key"] = "0" * 64


def _value_row_short(d: dict[str, Any]) -> None:
    d["analysis"]["values"][0] = d["analysis"]["values"][0][:3]


def _bad_value_regex(d: dict[str, Any]) -> None:
    d["analysis"]["values"][0][1][0] = "(?P<value>unclosed"


def _pattern_of_wrong_types(d: dict[str, Any]) -> None:
    d["analysis"]["units"][0][3] = [1, 0]


@pytest.mark.parametrize("forge_checksum", [False, True])
@pytest.mark.parametrize(
    "change",
    [
        _drop_signal,
        _debug_flag,
        _cover_of_numbers,
        _unit_on_value_signal,
        _foreign_key,
        _value_row_short,
        _bad_value_regex,
        _pattern_of_wrong_types,
    ],
)
def test_a_tampered_cache_is_ignored_and_rewritten(
    cache_file: Path, change: Any, forge_checksum: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    _cached()
    _tamper(cache_file, change, forge_checksum=forge_checksum)
    assert _same(_cached(), _fresh())
    assert capsys.readouterr().out == ""
    written = json.loads(cache_file.read_text())
    analysis = json.loads(written["analysis"])
    assert written["sha256"] == checksum(written["analysis"])
    assert catalog_cache._well_formed(analysis)
    rebuilt = matcher.build_catalog(catalog.entries(), analysis, EXTRACTOR_LITERALS)
    assert _same(rebuilt, _fresh())


def test_a_damaged_signal_pattern_is_caught_by_the_checksum(cache_file: Path) -> None:
    _cached()
    _tamper(cache_file, _bad_regex, forge_checksum=False)
    assert _same(_cached(), _fresh())


def test_a_forged_signal_pattern_that_does_not_compile_is_an_input_error(
    cache_file: Path,
) -> None:
    """Signal patterns are compiled at first use (a log's candidates need few), so a forged
    file's bad pattern is only found then: an InputError naming the cache, not re.error."""
    _cached()
    _tamper(cache_file, _bad_regex, forge_checksum=True)
    cat = _cached()
    with pytest.raises(InputError, match="analysis cache"):
        _ = cat.signals[0].regex


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\xff garbage", b"[]", b'{"key": 1}', b"[" * 100000, b'{"analysis": {}}'],
)
def test_garbage_is_ignored(cache_file: Path, content: bytes) -> None:
    cache_file.parent.mkdir(parents=True)
    cache_file.write_bytes(content)
    assert _same(_cached(), _fresh())


def test_an_oversized_cache_is_not_read(cache_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cached()
    monkeypatch.setattr(catalog_cache, "_MAX_BYTES", 1000)
    assert catalog_cache._read(cache_file, catalog_cache._key(catalog.entries()) or "") is None


def test_an_unwritable_cache_directory_costs_only_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert _same(_cached(), _fresh())


def test_the_cli_with_a_corrupt_cache_answers_as_without_one(tmp_path: Path) -> None:
    log = str(LOGS / "oom_then_watchdog_timeouts.log")

    def diagnose(cache: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        return subprocess.run(
            [sys.executable, "-m", "denpex", "diagnose", "--json", log],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

    clean = diagnose(tmp_path / "clean")
    assert clean.returncode == 1, clean.stderr
    assert (tmp_path / "clean" / "denpex" / "catalog-analysis.json").is_file()
    corrupt = tmp_path / "corrupt" / "denpex" / "catalog-analysis.json"
    corrupt.parent.mkdir(parents=True)
    text = (tmp_path / "clean" / "denpex" / "catalog-analysis.json").read_text()
    corrupt.write_text(text[: len(text) // 2])  # a crash mid-write on another filesystem
    again = diagnose(tmp_path / "corrupt")
    assert (again.returncode, again.stdout, again.stderr) == (1, clean.stdout, "")
    assert diagnose(tmp_path / "clean").stdout == clean.stdout  # read from the cache


def test_a_cache_that_others_may_write_or_a_link_is_not_read(
    cache_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as cachedir.read_private reads (hyperscan_cache's files are tested the same way)."""
    _cached()
    cache_file.chmod(0o666)
    analysed: list[bool] = []
    real = catalog_cache.analyze_catalog
    monkeypatch.setattr(
        catalog_cache, "analyze_catalog", lambda e: analysed.append(True) or real(e)
    )
    assert _same(_cached(), _fresh())
    assert analysed == [True]
    assert cache_file.stat().st_mode & 0o777 == 0o600
    planted = tmp_path / "planted.json"
    cache_file.rename(planted)
    cache_file.symlink_to(planted)
    assert _same(_cached(), _fresh())
    assert analysed == [True, True]

"""The Hyperscan screen (hyperscreen.py) against the regex passes it replaces: it must send
every line that a signal or a context extractor matches to the exact matching, and the
findings must not depend on which screen ran."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from denpex.diagnosis import LogScanner, candidates, diagnose_paths, hyperscreen
from denpex.diagnosis.candidates import BlockScreen, noisy_units
from denpex.diagnosis.context import EXTRACTOR_NAMES, extractor
from denpex.diagnosis.lines import visible_segments
from denpex.diagnosis.matcher import compile_catalog, default_catalog
from denpex.diagnosis.ranks import split_prefix
from denpex.diagnosis.scanner import prepare_screen
from paths import CORPUS, LOGS

pytestmark = pytest.mark.skipif(
    not hyperscreen.available(), reason="the optional hyperscan package is not installed"
)

FIXTURES = sorted(p for p in LOGS.rglob("*") if p.is_file())


@pytest.fixture(params=["hyperscan", "regex"])
def screen(request, monkeypatch) -> str:
    if request.param == "regex":
        monkeypatch.setenv("DENPEX_SCREEN", "regex")
    else:
        monkeypatch.delenv("DENPEX_SCREEN", raising=False)
    return str(request.param)


def test_hyperscan_screen_is_chosen_unless_regex_is_asked_for(screen):
    chosen = BlockScreen(default_catalog()).hyper is not None
    assert chosen == (screen == "hyperscan")


def _expected_keys(raw: bytes) -> set[int]:
    """Brute force: the signals (by key) and extractors (negative keys) that match the line."""
    cat = default_catalog()
    value_keys = {v.signal.key for v in cat.values}
    keys: set[int] = set()
    for segment in visible_segments(raw):
        body = split_prefix(segment)[1]
        keys |= {s.key for s in cat.signals if s.key not in value_keys and s.regex.search(body)}
        for i in range(len(EXTRACTOR_NAMES)):
            if extractor(-1 - i)[1].search(body):
                keys.add(-1 - i)
    return keys


@pytest.fixture(scope="module")
def hyper_screens() -> dict[str, BlockScreen]:
    """Hyperscan screens (compiled once: a second each) on the units' required literals,
    and with every unit demoted, on the units' own patterns."""
    cat = default_catalog()
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DENPEX_SCREEN", raising=False)
        screens = {
            "literals": BlockScreen(cat),
            "direct": BlockScreen(cat, demoted=range(len(cat.units))),
        }
    assert all(s.hyper is not None for s in screens.values())
    return screens


@pytest.mark.parametrize("kind", ["literals", "direct"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(LOGS)))
def test_hyperscan_candidates_cover_every_matching_line(path, kind, hyper_screens):
    """Each line some signal or extractor matches is a candidate of the Hyperscan screen,
    with a key that leads to that signal."""
    cat = default_catalog()
    bscreen = hyper_screens[kind]
    block = path.read_bytes()
    block = block if block.endswith(b"\n") else block + b"\n"
    candidates = {start: keys for start, _end, keys in bscreen.lines(block)[0]}
    start = 0
    matched_lines = 0
    for raw in block.split(b"\n")[:-1]:
        expected = _expected_keys(raw)
        if expected:
            matched_lines += 1
            assert start in candidates, f"line at {start} missed: {raw[:120]!r}"
            keys = candidates[start]
            got = {k if k < 0 else cat.units[k].signal for k in keys}
            assert expected <= got, (raw[:120], expected - got)
        start += len(raw) + 1
    assert matched_lines > 0 or path.name == "healthy_run.log"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(LOGS)))
def test_findings_do_not_depend_on_the_screen(path, monkeypatch):
    def run() -> list[dict]:
        return [f.to_json() for f in diagnose_paths([str(path)])]

    monkeypatch.setenv("DENPEX_SCREEN", "regex")
    regex = run()
    monkeypatch.delenv("DENPEX_SCREEN")
    assert run() == regex
    assert regex or path.name == "healthy_run.log"


def _job_log(path: Path) -> None:
    """Every fixture's failure, each after a stretch of healthy steps, in one log."""
    healthy = (LOGS / "healthy_run.log").read_bytes()
    path.write_bytes(b"".join(healthy * 8 + failure.read_bytes() for failure in FIXTURES))


def test_generated_job_log_same_findings_and_counts_both_paths(tmp_path, monkeypatch):
    """Regex screen vs Hyperscan screen, read sequentially and by worker processes over small
    ranges (each worker builds its own database)."""
    from denpex.diagnosis import parallel

    log = tmp_path / "job.log"
    _job_log(log)
    monkeypatch.setattr(parallel, "BLOCK", 4096)
    monkeypatch.setattr(parallel, "RANGE_SIZE", 50_000)
    monkeypatch.setattr(parallel, "worker_count", lambda: 2)

    def scan(split: bool) -> tuple[list[dict], dict[str, int]]:
        scanner = LogScanner()
        monkeypatch.setattr(parallel, "PARALLEL_MIN", 0 if split else 1 << 40)
        assert scanner.feed_file(str(log))
        counts = {r.signal.name: r.count for r in scanner.records.values()}
        return [f.to_json() for f in scanner.findings()], counts

    for split in (False, True):
        monkeypatch.setenv("DENPEX_SCREEN", "regex")
        findings, counts = scan(split)
        assert {"cuda-oom", "loss-spike", "gpu-hardware-fault"} <= {f["id"] for f in findings}
        monkeypatch.delenv("DENPEX_SCREEN")
        assert scan(split) == (findings, counts)


def test_case_insensitive_and_literal_less_signals(screen):
    """The shipped catalog has no case-insensitive literal and few literal-less patterns:
    a small catalog exercises those (CASELESS literals, direct patterns with ^ and (?i))."""
    signals = [
        ("boom", r"BOOM at step (?P<step>\d+)", False),
        ("disk", r"fatal: disk", True),  # a literal, matched without regard to case
        ("code", r"^x\d+y", False),  # no literal: searched directly, ^ at every line start
        ("ratio", r"q\d+z", True),  # no literal, case-insensitive
    ]
    # A shipped entry's fields, with these signals only.
    entry = {
        **default_catalog().entries["cuda-oom"],
        "conditions": [],
        "signals": [
            {"name": n, "pattern": p, "role": "initiating", "ignore_case": folds}
            for n, p, folds in signals
        ],
    }
    cat = compile_catalog({"cuda-oom": entry})
    lines = [
        b"ok x1y",
        b"[rank2]:FATAL: Disk gone",
        b"BOOM at step 7",
        b"x42y at a line start",
        b"ratio Q7Z",
        b"boom at step 8",
        b"healthy x y q z",
    ]
    block = b"\n".join(lines) + b"\n"
    bscreen = BlockScreen(cat)
    assert (bscreen.hyper is not None) == (screen == "hyperscan")
    starts = [block.index(line) for line in lines]
    found = {starts.index(start) for start, _end, _keys in bscreen.lines(block)[0]}
    assert found == {1, 2, 3, 4}
    scanner = LogScanner(cat)
    scanner.feed_lines("t", [line.decode() for line in lines])
    assert {r.signal.name: r.count for r in scanner.records.values()} == {
        "boom": 1,
        "disk": 1,
        "code": 1,
        "ratio": 1,
    }


def test_pattern_hyperscan_cannot_compile_falls_back_to_the_regex_screen(monkeypatch):
    """A back-reference (outside what the catalog's tests allow, but possible in a user's
    catalog) is not in Hyperscan's dialect: the screen is then the regex passes, same result."""
    monkeypatch.delenv("DENPEX_SCREEN", raising=False)
    entry = {
        **default_catalog().entries["cuda-oom"],
        "conditions": [],
        "signals": [{"name": "twice", "pattern": r"(\w\w)\1x", "role": "initiating"}],
    }
    cat = compile_catalog({"cuda-oom": entry})
    assert BlockScreen(cat).hyper is None
    scanner = LogScanner(cat)
    scanner.feed_lines("t", ["abcx", "[rank3]: ababx", "ok"])
    assert [(f.id, f.initiating_rank) for f in scanner.findings()] == [("cuda-oom", 3)]


def test_direct_matches_are_placed_on_their_line_with_or_without_start_tracking():
    """A direct pattern that can hold a newline only as its last byte is placed by that byte
    (no start-of-match tracking); one that can run over a newline keeps its start. Either
    way every match lands on the line where finditer starts it."""
    from denpex.diagnosis.hyperscreen import HyperScreen
    from denpex.diagnosis.literals import newline_only_last

    patterns = [
        (rb"code (137|139)([^0-9]|$)", True),  # a class as last byte: may be the newline
        (rb"scale[:=] ?[0-9]+e-[0-9]", True),
        (rb"world size\s*(?:[=:]\s*)?\d+", False),  # \s may run onto the next line
        (rb"\(Trainer[^)]{0,20}\) Worker \d+ has failed", False),
    ]
    assert [newline_only_last(p) for p, _ in patterns] == [by_end for _, by_end in patterns]
    lines = [
        b"exit code 137",  # matched up to and with its newline
        b"ok",
        b"world size",
        b"  = 8 and more",  # the match started on the line above
        b"(Trainer pid=1",
        b") Worker 3 has failed",
        b"loss scale: 4e-5",
        b"exit code 139 now",
    ]
    block = b"\n".join(lines) + b"\n"
    screen = HyperScreen({}, {}, [(i, p, False) for i, (p, _) in enumerate(patterns)])
    hits = {
        (block.rfind(b"\n", 0, pos) + 1, key) for pos, keys in screen.hits(block) for key in keys
    }
    expected = {
        (block.rfind(b"\n", 0, m.start()) + 1, i)
        for i, (p, _) in enumerate(patterns)
        for m in re.finditer(p, block, re.MULTILINE)
    }
    assert hits == expected
    assert len(expected) == 5


def _hf_sample(lines: int) -> bytes:
    return b"".join(
        b"[rank%d]:{'loss': 2.%04d, 'grad_norm': 0.%06d, 'epoch': 0.01}\n" % (i % 8, i, i)
        for i in range(lines)
    )


def test_noisy_units_counted_after_the_screen_found_their_literals(monkeypatch):
    """A server compiles the catalog's screen at start-up (prepare_screen); each log it opens
    then counts only the literals that screen finds in its first 64 KiB. The noisy units
    must be those found by counting every literal, on every log of the tests."""
    monkeypatch.delenv("DENPEX_SCREEN", raising=False)
    cat = default_catalog()
    samples = [p.read_bytes()[: 64 << 10] for p in FIXTURES + sorted(CORPUS.rglob("*.log"))]
    samples += [_hf_sample(600), _hf_sample(600).upper()]
    thresholds = (1, 8)
    with monkeypatch.context() as uncompiled:
        uncompiled.setattr(candidates, "_COMPILED", {})
        counted = [noisy_units(cat, s, t) for s in samples for t in thresholds]
    prepare_screen()
    assert candidates._literals_present(cat, samples[-2]) is not None  # the screen is used
    assert [noisy_units(cat, s, t) for s in samples for t in thresholds] == counted
    assert sum(bool(n) for n in counted) > len(samples) // 2  # the comparison is not vacuous


def test_noisy_units_of_case_insensitive_literals(monkeypatch):
    """A case-insensitive literal is counted in the lower-cased sample: the screen must find
    it whatever the sample's case (the shipped catalog has no such literal)."""
    monkeypatch.delenv("DENPEX_SCREEN", raising=False)
    entry = {
        **default_catalog().entries["cuda-oom"],
        "conditions": [],
        "signals": [
            {
                "name": "disk",
                "pattern": r"fatal: disk (?P<dev>sd[a-z]) lost",
                "role": "initiating",
                "ignore_case": True,
            }
        ],
    }
    cat = compile_catalog({"cuda-oom": entry})
    assert cat.screen_literals(set())[1]  # a folded literal
    samples = [b"[rank1]: FATAL: Disk ok\n" * 12 + b"healthy\n", b"healthy\n"]
    samples.insert(1, samples[0].lower())
    counted = [noisy_units(cat, s, 8) for s in samples]
    assert counted[0] and counted[1] and not counted[2]
    BlockScreen(cat)  # compiles its screen
    assert candidates._literals_present(cat, samples[0]) is not None
    assert [noisy_units(cat, s, 8) for s in samples] == counted

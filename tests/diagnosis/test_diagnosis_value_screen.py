"""The value screen (value_screen.py) only ever skips blocks that hold no jump: a spike
written in any form the value pattern reads, a drop that lowers the median before a spike,
values too long for a float, and the last values that refill the window all give the answers
of the value-by-value path. Its Hyperscan form finds what its regex form finds, and a worker's
block summaries bound the block's values."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from denpex.diagnosis import LogScanner, hyperscreen, parallel, value_screen
from denpex.diagnosis import values as values_module
from denpex.diagnosis.matcher import ValueSignal, default_catalog
from denpex.diagnosis.values import RangeSummaries, ValueSeries, exact_values, summarize


@pytest.fixture(params=["hyperscan", "regex"])
def screen(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both value screens: Hyperscan's (when installed) and the regex one."""
    if request.param == "hyperscan" and not hyperscreen.available():
        pytest.skip("hyperscan is not installed")
    monkeypatch.setenv("DENPEX_SCREEN", request.param)
    return str(request.param)


def _spec(name: str) -> ValueSignal:
    return next(v for v in default_catalog().values if v.signal.name == name)


def _reference_jumps(spec: ValueSignal, blocks: list[bytes]) -> tuple[list[int], list[float]]:
    """Each value against the median of the (at most 101) values before it, after warm-up;
    offsets in the blocks joined, and the last window."""
    window: list[float] = []
    out = []
    block = b"".join(blocks)
    for seen, (pos, v) in enumerate(exact_values(spec, block, 0)):
        if seen >= spec.warmup:
            med = sorted(window)[(len(window) - 1) // 2]
            if med > 0 and v >= spec.ratio * med:
                out.append(pos)
        window = [*window, v][-101:]
    return out, window


def _series_jumps(spec: ValueSignal, blocks: list[bytes]) -> tuple[list[int], list[float]]:
    series = ValueSeries(spec)
    out = []
    offset = 0
    for block in blocks:
        out += [offset + p for p in series.jumps(block)]
        offset += len(block)
    return out, list(series.window)


def _steady(n: int, seed: int, key: str = "loss", around: float = 2.0) -> list[bytes]:
    rng = random.Random(seed)
    return [
        b"{'%s': %.4f, 'epoch': 0.1}\n" % (key.encode(), around + rng.random()) for _ in range(n)
    ]


# Spikes of ten times a median near 2.0-3.0, or more, in every form the pattern reads; and
# values just under a boundary with more digits than a float holds.
SPIKES = [
    b"30.0",
    b"3.0E+01",
    b"3e1",
    b"0030.5",
    b"300",
    b"29.99999999999999999999999",
    b"1.5E+02",
    b"3.0E+0001",
    b"1e400",  # not a finite float: skipped by both paths, the window unchanged
    b"99999999999999999999999999999999",
]


@pytest.mark.parametrize("spike", SPIKES)
@pytest.mark.parametrize("where", [0, 1, 4999, 5000, 9999])
def test_a_spike_in_any_form_is_found_where_the_screen_runs(spike: bytes, where: int) -> None:
    spec = _spec("loss_value")
    lines = _steady(10000, seed=len(spike) + where)
    lines[where] = b"{'loss': " + spike + b", 'epoch': 0.1}\n"
    blocks = [b"".join(lines[i : i + 1000]) for i in range(0, 10000, 1000)]
    got = _series_jumps(spec, blocks)
    assert got == _reference_jumps(spec, blocks)


@pytest.mark.parametrize("level", [b"2", b"2.0000", b"2.5E-03", b"0.125", b"7000"])
@pytest.mark.parametrize("times", [b"10", b"9.99", b"10.01", b"11", b"20", b"99.9"])
def test_a_value_near_ratio_times_a_flat_median_is_judged_as_without_screen(
    level: bytes, times: bytes
) -> None:
    """The tightest case for the screen's range: a flat series, then a value at, just under
    or just over ten times it (written with as many digits as it takes)."""
    spec = _spec("loss_value")
    spike = repr(float(level) * float(times)).encode()
    lines = [b"loss=%s\n" % level] * 3000
    lines[2500] = b"loss=%s\n" % spike
    blocks = [b"".join(lines[i : i + 400]) for i in range(0, 3000, 400)]
    got = _series_jumps(spec, blocks)
    assert got == _reference_jumps(spec, blocks)
    assert bool(got[0]) == (float(times) >= 10)


def test_a_drop_that_lowers_the_median_and_then_a_spike_is_found(screen: str) -> None:
    spec = _spec("grad_norm_value")
    lines = _steady(3000, seed=5, key="grad_norm", around=0.5)
    lines += [b"{'grad_norm': 0.05}\n"] * 300  # the median drops
    lines += [b"{'grad_norm': 0.9}\n"]  # 10x the new median, not the old window's
    lines += _steady(2000, seed=6, key="grad_norm", around=0.5)
    blocks = [b"".join(lines[i : i + 700]) for i in range(0, len(lines), 700)]
    got = _series_jumps(spec, blocks)
    assert got == _reference_jumps(spec, blocks)
    block = b"".join(blocks)
    assert block[got[0][0] :].startswith(b"grad_norm': 0.9}")  # the first jump is the spike


def test_random_series_in_mixed_forms_match_the_value_by_value_path(screen: str) -> None:
    """Values in plain, exponent and odd forms, drifting over decades, with spikes and
    zeros: jumps and the final window are those of checking every value."""
    forms = ["%.4f", "%.6E", "%.3e", "%g", "%.17g", "%.1f", "%08.3f", "%d"]
    for seed in range(12):
        rng = random.Random(seed)
        level = 10 ** rng.uniform(-6, 4)
        lines = []
        for i in range(6000):
            level *= 10 ** rng.uniform(-0.01, 0.01)
            v = level * rng.uniform(0.5, 2.0)
            if rng.random() < 0.002:
                v *= rng.choice([5.0, 9.99, 10.0, 10.01, 50.0, 0.0])
            form = rng.choice(forms)
            text = form % (int(v) if form == "%d" else v)
            lines.append(b"iter %d | lm loss: %s | grad norm: 1.0\n" % (i, text.encode()))
        size = rng.choice([97, 500, 2500])
        blocks = [b"".join(lines[i : i + size]) for i in range(0, len(lines), size)]
        for name in ("loss_value", "grad_norm_value"):
            spec = _spec(name)
            assert _series_jumps(spec, blocks) == _reference_jumps(spec, blocks), (seed, name)


def test_quiet_blocks_are_not_read_value_by_value(
    monkeypatch: pytest.MonkeyPatch, screen: str
) -> None:
    """The point of the screen: a warm series with no value out of range reads only the last
    values of each block, never all of them."""
    spec = _spec("loss_value")
    blocks = [b"".join(_steady(2000, seed=i)) for i in range(6)]
    summaries: list[int] = []
    original = values_module.summarize

    def spy(s: ValueSignal, block: bytes) -> values_module.BlockValues | None:
        summaries.append(len(block))
        return original(s, block)

    monkeypatch.setattr(values_module, "summarize", spy)
    assert _series_jumps(spec, blocks) == _reference_jumps(spec, blocks)
    assert len(summaries) <= 1  # the warm-up block's rest at most


NAN = "[rank2]:{'loss': nan, 'grad_norm': nan, 'learning_rate': 2.7e-05}\n"
LOSS_SPIKE = "[rank3]:{'loss': 64.5, 'grad_norm': 0.7, 'learning_rate': 2.7e-05}\n"
GRAD_SPIKE = "[rank1]:{'loss': 2.1, 'grad_norm': 5.5E+01, 'learning_rate': 2.7e-05}\n"


@pytest.mark.parametrize(
    ("line", "failure"),
    [(NAN, "nan-inf-loss"), (LOSS_SPIKE, "loss-spike"), (GRAD_SPIKE, "gradient-explosion")],
)
def test_findings_are_those_of_the_unscreened_scanner(
    line: str, failure: str, monkeypatch: pytest.MonkeyPatch, screen: str
) -> None:
    """A whole HF log through LogScanner, the failure's lines in a late block: the findings
    of the scanner without the screen."""
    rng = random.Random(9)
    lines = [
        f"[rank{i % 8}]:{{'loss': {2 + rng.random():.4f}, 'grad_norm': "
        f"{0.5 + rng.random():.15f}, 'learning_rate': 2.7e-05, 'epoch': {i / 3000:.2f}}}\n"
        for i in range(60000)
    ]
    for i in (41000, 41001, 41002):
        lines[i] = line
    # The log ends there: a finite loss after a NaN would be a step the scaler skipped.
    text = "".join(lines[:41003])

    def scan() -> list[dict]:
        scanner = LogScanner()
        scanner.feed_text("train.log", text)
        return [f.to_json() for f in scanner.findings()]

    screened = scan()
    monkeypatch.setattr(values_module.OutsideSearch, "_make", lambda *a: None)  # either screen
    assert screened == scan()
    assert failure in {f["id"] for f in screened}


def test_screen_patterns_stay_linear_on_hostile_lines() -> None:
    """A 64 KiB run of digits, points or exponents after the value's key is read once."""
    import time

    for spec in default_catalog().values:
        fast = spec.loose or spec.exact
        rx = value_screen.screen(fast.pattern, fast.flags, (1, -3), (9, 2))
        assert rx is not None
        for unit in (b"1", b"1.", b"1e", b"1E+0", b"0.", b"loss: 1", b"grad_norm=9.9e"):
            line = b"grad_norm=oss: gnorm=" + unit * (65536 // len(unit))
            start = time.process_time()
            rx.search(line)
            assert time.process_time() - start < 0.1, (spec.signal.name, unit)


def _number(rng: random.Random) -> bytes:
    """A number as the value group reads it, then what follows it: plain, with an exponent,
    with leading zeros, points and exponents where they do not belong."""
    digits = "0123456789" if rng.random() < 0.7 else "0001"
    text = "".join(rng.choice(digits) for _ in range(rng.choice([1, 1, 1, 2, 3, 4, 6])))
    if rng.random() < 0.6:
        text += "." + "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 1, 2, 8])))
    if rng.random() < 0.3:
        exponent = "".join(rng.choice(digits) for _ in range(rng.choice([0, 1, 2, 3])))
        text += rng.choice("eE") + rng.choice(["", "+", "-"]) + exponent
    text = rng.choice(["", "", "0", "00", "0.", "0.0", "0.000"]) + text
    after = [" ", ",", ".", ".5", "e", "e+", "e5", "E-1", "x", "", "\n", "}", "e-x", "5"]
    return (text + rng.choice(after)).encode()


def _ranges() -> list[tuple[tuple[int, int], tuple[int, int]]]:
    out = []
    for e in range(-6, 5):
        for d in range(1, 10):
            for ratio in (3.0, 10.0, 1000.0):
                hi = value_screen._below(ratio * float(f"{d}e{e}"))
                if value_screen._value(hi) > value_screen._value((d, e)):
                    out.append(((d, e), hi))
    return out


def test_outside_is_the_look_ahead_written_positively() -> None:
    """Hyperscan has no look-around: ``outside`` must match exactly the numbers that the
    regex screen's look-ahead calls out of range, for every range and every way of writing."""
    rng = random.Random(3)
    for lo, hi in _ranges():
        in_range = b"|".join(value_screen._in_range(lo, hi))
        look = re.compile(rb"x(?=[0-9])(?!(?:" + in_range + rb")" + value_screen._END + rb")")
        positive = re.compile(b"x" + value_screen.outside(lo, hi))
        numbers = [_number(rng) for _ in range(200)]
        numbers += [
            b"%d%s%d " % (d, e, x)
            for d in range(1, 10)
            for e in (b"e", b"E+0", b"e-")
            for x in range(12)
        ]
        numbers += [b"%.6g" % 10 ** rng.uniform(-8, 8) for _ in range(60)]
        for number in numbers:
            text = b"x" + number
            assert bool(look.match(text)) == bool(positive.match(text)), (lo, hi, number)


@pytest.mark.skipif(not hyperscreen.available(), reason="hyperscan is not installed")
def test_hyperscan_value_screen_finds_what_the_regex_screen_finds() -> None:
    rng = random.Random(4)
    keys = [
        "loss: ",
        "'loss': ",
        "train_loss=",
        "lm loss: ",
        "grad_norm': ",
        "grad norm: ",
        " gnorm=",
        "xgnorm=",
        "Loss=",
        "loss:  ",
    ]
    for spec in default_catalog().values:
        fast = spec.loose or spec.exact
        for lo, hi in _ranges()[::7]:
            rx = value_screen.screen(fast.pattern, fast.flags, lo, hi)
            hyper = value_screen.hyper_screen(fast.pattern, fast.flags, lo, hi)
            assert rx is not None and hyper is not None
            search = hyper.own_scratch()
            for _ in range(300):
                block = b"step\n" + rng.choice(keys).encode() + _number(rng) + b"\n"
                assert search.found(block) == bool(rx.search(block)), (spec.name, lo, block)


def test_range_summaries_bound_each_blocks_values_and_convert_only_the_first(
    screen: str,
) -> None:
    """A worker's summary of a quiet block is its range (an envelope: low at most the
    smallest positive value, high above the largest) and its exact last values; only a
    block the range does not hold is summarized value by value."""
    spec = _spec("loss_value")
    blocks = [b"".join(_steady(2000, seed=i)) for i in range(5)]
    blocks[3] = blocks[3].replace(b"'loss': 2.", b"'loss': 40.", 1)  # out of range
    converted: list[int] = []
    summaries = RangeSummaries(spec)
    original = values_module.summarize

    def spy(s: ValueSignal, block: bytes) -> values_module.BlockValues | None:
        converted.append(blocks.index(block))
        return original(s, block)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(values_module, "summarize", spy)
        got = [summaries.summary(block) for block in blocks]
        seeded = RangeSummaries(spec)  # a part's first block, after the lines before it
        seeded.seed(blocks[0][-5000:][blocks[0][-5000:].find(b"\n") + 1 :])
        assert seeded.summary(blocks[1]) == got[1]
    assert converted == [0, 3]
    for block, summary in zip(blocks, got, strict=True):
        exact = summarize(spec, block)
        assert summary is not None and exact is not None
        assert summary.low <= exact.low and summary.high >= exact.high
        assert summary.tail == exact.tail
    assert got[1].high < spec.ratio * got[1].low  # a quiet block can be skipped
    assert RangeSummaries(_spec("grad_norm_value")).summary(b"no values\n") == (
        values_module.BlockValues(math.inf, -math.inf, [])
    )


def test_worker_summaries_find_a_spike_after_quiet_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, screen: str
) -> None:
    """A metric log split over workers' ranges of many blocks: the spike late in a range,
    after blocks the workers screened from their own last values, is found as sequentially."""
    rng = random.Random(11)
    lines = [
        b"[rank%d]:{'loss': %.4f, 'grad_norm': %.6f, 'epoch': 0.1}\n"
        % (i % 8, 2 + rng.random(), 0.5 + rng.random())
        for i in range(40000)
    ]
    lines[33333] = b"[rank5]:{'loss': 2.5, 'grad_norm': 9.1E+01, 'epoch': 0.1}\n"
    log = tmp_path / "metrics.log"
    log.write_bytes(b"".join(lines))
    sequential = LogScanner()
    with log.open("rb") as f:
        sequential.feed_stream(str(log), f)
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 0)
    monkeypatch.setattr(parallel, "BLOCK", 64 << 10)
    monkeypatch.setattr(parallel, "RANGE_SIZE", 1 << 20)
    monkeypatch.setattr(parallel, "worker_count", lambda: 2)
    split = LogScanner()
    assert split.feed_file(str(log))
    expected = [f.to_json() for f in sequential.findings()]
    assert [f.to_json() for f in split.findings()] == expected
    assert [f["id"] for f in expected] == ["gradient-explosion"]

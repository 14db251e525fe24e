"""The value screen (value_screen.py) only ever skips blocks that hold no jump: a spike
written in any form the value pattern reads, a drop that lowers the median before a spike,
values too long for a float, and the last values that refill the window all give the answers
of the value-by-value path."""

from __future__ import annotations

import random

import pytest

from denpex.diagnosis import LogScanner, value_screen
from denpex.diagnosis import values as values_module
from denpex.diagnosis.matcher import ValueSignal, default_catalog
from denpex.diagnosis.values import ValueSeries, exact_values


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


def test_a_drop_that_lowers_the_median_and_then_a_spike_is_found() -> None:
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


def test_random_series_in_mixed_forms_match_the_value_by_value_path() -> None:
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


def test_quiet_blocks_are_not_read_value_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
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
    line: str, failure: str, monkeypatch: pytest.MonkeyPatch
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
    text = "".join(lines)

    def scan() -> list[dict]:
        scanner = LogScanner()
        scanner.feed_text("train.log", text)
        return [f.to_json() for f in scanner.findings()]

    screened = scan()
    monkeypatch.setattr(values_module, "screen", lambda *a: None)
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

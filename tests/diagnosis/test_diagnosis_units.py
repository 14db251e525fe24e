"""The diagnosis engine's parts: bounded line reading, rank markers, timestamps, literal
screening (never missing a line a signal matches), value jumps, incremental scanning."""

from __future__ import annotations

import io
import itertools
import random
from pathlib import Path

import pytest

from denpex.diagnosis import LogScanner, diagnose_text
from denpex.diagnosis.lines import iter_blocks, looks_binary, visible_segments
from denpex.diagnosis.literals import literal_suffix, required_covers, top_level_branches
from denpex.diagnosis.matcher import compile_catalog, default_catalog
from denpex.diagnosis.ranks import file_rank, message_rank, split_prefix
from denpex.diagnosis.screen import Screen
from denpex.diagnosis.timestamps import parse
from denpex.diagnosis.values import ValueSeries
from paths import LOGS

# ---- lines ----------------------------------------------------------------------------


def test_blocks_hold_whole_lines_and_cut_overlong_ones():
    data = b"a\n" + b"x" * 5000 + b"\nb\nc"
    blocks = list(iter_blocks(io.BytesIO(data), block_size=64, max_line=100))
    joined = b"".join(blocks)
    assert all(b.endswith(b"\n") for b in blocks)
    assert joined.split(b"\n")[:-1] == [b"a", b"x" * 100, b"b", b"c"]  # one line per line


def test_overlong_line_at_block_edges_keeps_line_count():
    data = b"".join(b"y" * n + b"\n" for n in (10, 300, 64, 65, 1, 900))
    for size in (7, 64, 65, 128, 4096):
        blocks = list(iter_blocks(io.BytesIO(data), block_size=size, max_line=100))
        assert max(len(b) for b in blocks) <= size + 101
        lengths = [len(x) for x in b"".join(blocks).split(b"\n")[:-1]]
        assert len(lengths) == 6, size
        assert lengths[0] == 10 and lengths[2:5] == [64, 65, 1], size


def test_visible_segments_handle_tqdm_and_colours():
    raw = "\x1b[32mEpoch 1\x1b[0m:  10%|█ | 1/10\r  20%|██ | 2/10\rRuntimeError: boom\r\n".encode()
    assert visible_segments(raw) == [
        "Epoch 1:  10%|█ | 1/10",
        "  20%|██ | 2/10",
        "RuntimeError: boom",
    ]
    assert visible_segments(b"caf\xe9") == ["caf\ufffd"]


def test_binary_probe():
    assert looks_binary(b"PK\x03\x04\x00\x00")
    assert not looks_binary("plain log line ✓\n".encode())


# ---- ranks and timestamps -------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "rank", "rest"),
    [
        ("[rank3]:[E501 12:00:01.000 x] boom", 3, "[E501 12:00:01.000 x] boom"),
        ("[default3]:boom", 3, "boom"),
        ("[default3]:[rank11]:boom", 11, "boom"),  # the global marker wins over the local one
        ("[1,3]<stderr>:boom", 3, "boom"),
        ("Fri Aug 18 12:44:11 2017[1,93]<stderr>:boom", 93, "boom"),  # --timestamp-output
        ("Fri Aug 18 12:44:11 2017 boom", None, "Fri Aug 18 12:44:11 2017 boom"),
        ("  3: boom", 3, "boom"),
        ("12:00:01 boom", None, "12:00:01 boom"),
    ],
)
def test_launcher_prefixes(line, rank, rest):
    assert split_prefix(line) == (rank, rest)


def test_message_markers_and_file_names():
    assert (
        message_rank("[2024-05-01 12:00:00,1] [INFO] [logging.py:96:log_dist] [Rank 7] step=1") == 7
    )
    assert message_rank("[PG ID 0 PG GUID 0(default_pg) Rank 9] Watchdog caught") == 9
    assert message_rank("[PG ID 2 PG GUID 5 Rank 1] Watchdog caught") is None  # a subgroup's rank
    assert message_rank("Received a dump signal from rank 4") is None
    assert [
        file_rank(p)
        for p in ("logs/rank_3.log", "rank3.log", "worker-12.out", "x/rank-2/stdout.log")
    ] == [3, 3, 12, 2]
    assert file_rank("oom_rank5_torchrun.log") is None


def test_timestamps_order_across_formats():
    iso = parse("2024-05-01 12:00:01,500 INFO x")
    bracket = parse("[2024-05-01 12:00:02] x")
    glog = parse("[rank1]:[E501 12:00:03.250000 ProcessGroupNCCL.cpp:1] x")
    glog_short = parse("[I501 12:00:04] x")
    syslog = parse("May  1 12:00:05 node-b kernel: NVRM: Xid")
    assert iso is not None and iso < bracket < glog < glog_short < syslog
    assert glog - iso == pytest.approx(1.75)
    assert parse("step 10 loss 2.3") is None


# ---- literal screening ----------------------------------------------------------------


def test_required_literals_and_suffixes():
    assert required_covers(r"Watchdog caught (?P<x>\d+)") == [["Watchdog caught "]]
    assert required_covers(r"[0-9]+") == []
    assert top_level_branches(r"(a|b(c|d))") == ["a", "b(c|d)"]
    suffix = literal_suffix(r"(^|[^A-Za-z_])[Ll]oss[:=] ?(?P<value>[0-9.]+)")
    assert suffix == r"oss[:=] ?(?P<value>[0-9.]+)"
    assert literal_suffix(r"a|b") is None


def test_screen_finds_every_anchor_occurrence():
    screen = Screen({"Watchdog caught": {1}, "NCCL WARN": {2}, "WARN": {3}, "memory access": {4}})
    text = b"x NCCL WARN y\nan illegal memory access\nWatchdog caught\n"
    found = sorted((pos, sorted(keys)) for pos, keys in screen.hits(text))
    keys = {k for _, ks in found for k in ks}
    assert keys == {1, 2, 3, 4}


def _signal_lines(paths: list[Path]) -> set[tuple[str, int]]:
    """Brute force: every (file, line) some non-value signal matches, regex by regex."""
    cat = default_catalog()
    value_keys = {v.signal.key for v in cat.values}
    out = set()
    for path in paths:
        for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            for segment in visible_segments(raw):
                body = split_prefix(segment)[1]
                if any(s.regex.search(body) for s in cat.signals if s.key not in value_keys):
                    out.add((str(path), n))
    return out


def test_screen_never_misses_a_matching_line():
    """Over every fixture line, the fast path examines and records at least the lines that a
    plain regex-per-signal scan finds (the screen over-approximates, it is never lossy)."""
    paths = sorted(p for p in LOGS.rglob("*") if p.is_file())
    expected = _signal_lines(paths)
    assert len(expected) > 100
    scanner = LogScanner()
    recorded: set[tuple[str, int]] = set()
    original = scanner._record

    def spy(source, line, *args):
        recorded.add((source, line))
        return original(source, line, *args)

    scanner._record = spy  # type: ignore[method-assign]
    for path in paths:
        with path.open("rb") as f:
            scanner.feed_stream(str(path), f)
    assert expected - recorded == set()


def test_screen_on_small_custom_catalog(tmp_path):
    entries = {
        "demo": {
            "id": "demo",
            "title": "Demo",
            "category": "process",
            "quick_answer": "q" * 20,
            "fix": ["f"],
            "verification": [{"command": "echo {rank}", "why": "w"}],
            "signals": [
                {"name": "boom", "pattern": r"BOOM at step (?P<step>\d+)", "role": "initiating"},
                {
                    "name": "case",
                    "pattern": r"fatal: disk",
                    "role": "initiating",
                    "ignore_case": True,
                },
            ],
        }
    }
    cat = compile_catalog(entries)
    scanner = LogScanner(cat)
    scanner.feed_lines("t", ["ok", "[rank2]:FATAL: DISK gone", "ok"])
    finding = scanner.findings()[0]
    assert (finding.id, finding.initiating_rank) == ("demo", 2)
    assert finding.verification == ["echo 2"]


# ---- value jumps ----------------------------------------------------------------------


def test_value_jump_found_inside_a_block_and_across_blocks():
    cat = default_catalog()
    spec = next(v for v in cat.values if v.signal.name == "loss_value")
    series = ValueSeries(spec)
    healthy = b"".join(b"step %d loss=%.3f\n" % (i, 2.0 + (i % 3) * 0.01) for i in range(60))
    assert series.jumps(healthy) == []
    spike = healthy + b"step 61 loss=45.0\n" + healthy
    positions = series.jumps(spike)
    assert len(positions) == 1
    assert spike[positions[0] - 10 : positions[0] + 12].count(b"45.0") == 1


def test_no_jump_during_warmup_or_on_slow_drift():
    cat = default_catalog()
    spec = next(v for v in cat.values if v.signal.name == "loss_value")
    series = ValueSeries(spec)
    warm = b"loss=0.1\nloss=50\n"  # within the warmup: no median yet
    assert series.jumps(warm) == []
    drift = b"".join(b"loss=%.3f\n" % (10.0 * 0.99**i) for i in range(400))
    assert series.jumps(drift) == []


# ---- the incremental API ----------------------------------------------------------------


def test_feed_lines_in_pieces_equals_one_shot():
    # read_text() would turn tqdm's "\r" into a line break; a log's lines end at "\n" only
    lines = (LOGS / "oom_then_watchdog_timeouts.log").read_bytes().decode().split("\n")[:-1]
    whole = diagnose_text("\n".join(lines), source="job.log")
    scanner = LogScanner()
    for start in range(0, len(lines), 7):
        scanner.feed_lines("job.log", lines[start : start + 7], first_line=start + 1)
        scanner.findings()  # cheap to ask while tailing
    pieces = scanner.findings()
    assert [f.to_json() for f in pieces] == [f.to_json() for f in whole]
    assert pieces[0].evidence[0].line == next(
        i for i, t in enumerate(lines, 1) if "OutOfMemoryError" in t
    )


def test_no_failure_text():
    assert diagnose_text("all good\nstep 1 loss=2.0\n") == []
    assert diagnose_text("") == []


def test_repeated_error_is_grouped():
    lines = [
        f"{r:3d}: RuntimeError: CUDA error: an illegal memory access was encountered"
        for r in range(500)
    ]
    finding = diagnose_text("\n".join(lines))[0]
    assert finding.id == "cuda-illegal-memory-access"
    # The same error on every rank is theirs in common: no rank is named, none is fallout.
    assert finding.initiating_rank is None and finding.collateral_ranks == []
    assert "0-499 printed this same error themselves" in finding.root_cause
    assert len(finding.evidence) <= 3  # one message group: a few examples, not 500 lines


# ---- parallel screening -----------------------------------------------------------------


def _job_log(path: Path) -> None:
    """A few thousand healthy lines around real failures, as one big-enough log."""
    healthy = (LOGS / "healthy_run.log").read_bytes()
    parts = [healthy] * 40
    parts.insert(20, (LOGS / "oom_then_watchdog_timeouts.log").read_bytes())
    parts.insert(30, (LOGS / "loss_spike_megatron.log").read_bytes())
    path.write_bytes(b"".join(parts))


def _tiny_parallel_blocks(monkeypatch) -> None:
    """Tiny blocks and ranges, so that a small file spans many workers' ranges and block
    edges."""
    from denpex.diagnosis import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN", 0)
    monkeypatch.setattr(parallel, "BLOCK", 4096)
    monkeypatch.setattr(parallel, "RANGE_SIZE", 20_000)
    monkeypatch.setattr(parallel, "worker_count", lambda: 2)


def test_parallel_screening_equals_sequential(tmp_path, monkeypatch):
    log = tmp_path / "job.log"
    _job_log(log)
    sequential = LogScanner()
    with log.open("rb") as f:
        sequential.feed_stream(str(log), f)
    _tiny_parallel_blocks(monkeypatch)
    split = LogScanner()
    assert split.feed_file(str(log))
    expected = [f.to_json() for f in sequential.findings()]
    assert [f.id for f in split.findings()] == [f["id"] for f in expected]
    assert [f.to_json() for f in split.findings()] == expected
    counts = {r.signal.name: r.count for r in sequential.records.values()}
    assert {r.signal.name: r.count for r in split.records.values()} == counts
    assert counts["loss_value"] == 1  # the one spike, found through block summaries too
    # the spike, a day after the OOM on another rank, is its own finding, not its fallout
    assert [f["id"] for f in expected] == ["cuda-oom", "loss-spike"]


def test_a_mid_size_file_is_cut_into_one_part_per_worker(tmp_path, monkeypatch):
    from denpex.diagnosis import parallel

    mb = 1 << 20
    assert parallel.part_bounds(4 * mb, 100 * mb, 2) == [4 * mb, 52 * mb, 100 * mb]
    assert parallel.part_bounds(4 * mb, 40 * mb, 8) == [4 * mb, 20 * mb, 36 * mb, 40 * mb]
    assert len(parallel.part_bounds(0, 1024 * mb, 2)) - 1 == 16  # 64 MB parts at most
    # the same findings as a sequential scan, the file cut that way (scaled down)
    log = tmp_path / "job.log"
    _job_log(log)
    sequential = LogScanner()
    with log.open("rb") as f:
        sequential.feed_stream(str(log), f)
    monkeypatch.setattr(parallel, "PARALLEL_MIN", 0)
    monkeypatch.setattr(parallel, "BLOCK", 4096)
    monkeypatch.setattr(parallel, "_RANGE_MIN", 1)
    monkeypatch.setattr(parallel, "worker_count", lambda: 3)
    assert len(parallel.part_bounds(4096, log.stat().st_size, 3)) - 1 == 3
    split = LogScanner()
    assert split.feed_file(str(log))
    assert [f.to_json() for f in split.findings()] == [f.to_json() for f in sequential.findings()]


def test_ranges_cover_every_line_once(tmp_path):
    from denpex.diagnosis.lines import FileReader, iter_blocks_at
    from denpex.diagnosis.parallel import _align

    data = b"".join(b"line %d %s\n" % (i, b"x" * (i % 37)) for i in range(3000))
    log = tmp_path / "l.log"
    log.write_bytes(data)
    seen = b""
    with log.open("rb") as f:
        bounds = [*range(0, len(data), 1000), len(data)]
        for lo, hi in itertools.pairwise(bounds):
            begin, stop = _align(f, lo), _align(f, hi)
            part = FileReader(f.fileno(), begin, stop, 100)
            blocks = list(iter_blocks_at(part, 256, 100))
            # A part of a file gives the blocks that a stream of just its bytes gives.
            assert blocks == list(iter_blocks_at(io.BytesIO(data[begin:stop]), 256, 100))
            for at, block in blocks:
                assert data[begin + at : begin + at + len(block)] == block
                seen += block
    assert seen == data


def _random_log(rng: random.Random) -> bytes:
    """Lines of every length around the block and line limits, sometimes no final newline."""
    lengths = [rng.choice((0, 1, 2, 4, 5, 6, 29, 30, 31, 99, 100, 101, 300)) for _ in range(60)]
    data = b"".join(bytes(rng.choice(b"abc \r") for _ in range(n)) + b"\n" for n in lengths)
    return data[: rng.choice((len(data), len(data) - 1, len(data) - 7))]


@pytest.mark.parametrize("seed", range(30))
def test_a_file_is_read_in_the_blocks_a_stream_of_it_gives(tmp_path, seed):
    """A regular file is read through lines.FileReader (each block read once, at its size):
    the blocks and their offsets must be the stream's, whatever the lines' lengths."""
    from denpex.diagnosis.lines import iter_blocks_at

    rng = random.Random(seed)
    data = _random_log(rng)
    log = tmp_path / "l.log"
    log.write_bytes(data)
    for size in (1, 7, 16, 64, 100, 257, 4096):
        for max_line in (5, 30, 100):
            expected = list(iter_blocks_at(io.BytesIO(data), size, max_line))
            with log.open("rb") as f:
                assert list(iter_blocks_at(f, size, max_line)) == expected, (size, max_line)


def _same_error_on(ranks: list[int]) -> str:
    # Megatron with NCCL_ALGO=CollNet (as pasted in the corpus, i113): every rank hits the
    # same configuration error at its first barrier.
    return "".join(
        f"[rank{r}]:node:{41367 + r}:{41367 + r} [{r % 8}] enqueue.cc:422 NCCL WARN Error : "
        "no algorithm/protocol available\n"
        for r in ranks
    )


def test_the_same_error_on_many_ranks_names_none_of_them():
    (finding,) = diagnose_text(_same_error_on([201, 202, 255, 251]))
    assert finding.id == "nccl-internal-error"
    assert finding.initiating_rank is None and finding.collateral_ranks == []
    assert finding.attribution is not None and finding.attribution.confidence == "low"
    assert "201-202,251,255 printed this same error themselves" in finding.root_cause


def test_the_same_error_on_two_ranks_still_names_the_first():
    (finding,) = diagnose_text(_same_error_on([3, 5]))
    assert (finding.initiating_rank, finding.collateral_ranks) == (3, [5])


SPAWN_RAISED = """\
torch.multiprocessing.spawn.ProcessRaisedException:

-- Process 2 terminated with the following error:
Traceback (most recent call last):
  File "/opt/lib/torch/multiprocessing/spawn.py", line 69, in _wrap
    fn(i, *args)
KeyError: 'labels'
"""


def test_spawn_names_the_process_whose_exception_it_raises_low():
    (finding,) = diagnose_text(SPAWN_RAISED)
    assert (finding.id, finding.initiating_rank) == ("rank-exception", 2)
    assert finding.attribution is not None and finding.attribution.confidence == "low"
    assert "first process that raised" in finding.attribution.reason
    # Under collective timeouts the first process to raise may be the watchdog's: no rank.
    timeout = (
        "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600093 milliseconds before timing out.\n"
    )
    assert all(f.initiating_rank != 2 for f in diagnose_text(timeout + SPAWN_RAISED))


def _metric_log(nan_at: int, lines: int, finite_after: str = "loss: 1.2") -> bytes:
    """mmdet-style step lines, one of them averaging an overflow (loss: inf)."""
    out = []
    for i in range(lines):
        value = "inf" if i == nan_at else "%.4f" % (2.0 - i / lines)
        out.append(f"Epoch [1][{i}/{lines}] lr: 1.0e-04, loss_cls: 0.9, loss: {value}")
    out.append(f"Epoch [1][{lines}/{lines}] lr: 1.0e-04, {finite_after}")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize(
    ("nan_at", "finite_after", "found"),
    [
        (3, "loss: 1.2", []),  # finite losses after it: a step the scaler skipped
        (50, "loss: 1.2", []),  # one is enough
        (50, "loss: nan", ["nan-inf-loss"]),  # the last value is not finite
        (50, "loss_cls: 1.2", ["nan-inf-loss"]),  # another key does not clear it
        (50, "cls_loss: 1.2", ["nan-inf-loss"]),  # nor a longer key ending the same way
    ],
)
def test_a_non_finite_loss_followed_by_a_finite_one_is_benign(nan_at, finite_after, found):
    scanner = LogScanner()
    scanner.feed_stream("m.log", io.BytesIO(_metric_log(nan_at, 51, finite_after)))
    assert [f.id for f in scanner.findings()] == found


@pytest.mark.parametrize(
    ("lines", "found"),
    [
        # rsl_rl's PPO table: the word before "loss" names the series.
        (["Mean value_function loss: inf", "Mean entropy loss: 21.9732"], ["nan-inf-loss"]),
        (["Mean value_function loss: inf", "Mean value_function loss: 0.3140"], []),
        # A step number before the key is no part of it.
        (["epoch 3 loss: nan", "epoch 4 loss: 0.51"], []),
    ],
)
def test_the_word_before_a_loss_key_names_its_series(lines, found):
    scanner = LogScanner()
    scanner.feed_stream("m.log", io.BytesIO(("\n".join(lines) + "\n").encode()))
    assert [f.id for f in scanner.findings()] == found


def test_recovery_is_seen_across_blocks_and_parallel_ranges(tmp_path, monkeypatch):
    """The finite value may sit blocks (and a worker's range) after the non-finite one."""
    log = tmp_path / "m.log"
    log.write_bytes(_metric_log(3, 3000))
    _tiny_parallel_blocks(monkeypatch)
    split = LogScanner()
    assert split.feed_file(str(log))
    assert split.findings() == []
    # ... and only after the last non-finite value: one near the end stays a finding.
    log.write_bytes(_metric_log(2999, 3000, "lr: 1.0e-04"))
    split = LogScanner()
    assert split.feed_file(str(log))
    assert [f.id for f in split.findings()] == ["nan-inf-loss"]


def _failure_table(kill_at: str) -> str:
    """torchelastic's ChildFailedError table: rank 3 raised at 13:02:58, rank 0 SIGKILLed at
    ``kill_at``, and the root cause (rank 1, the same second as rank 3)."""

    def row(n: int, time: str, rank: int, code: int, pid: int, tb: str) -> str:
        return (
            f"[{n}]:\n  time      : 2026-09-07_{time}\n  host      : localhost\n"
            f"  rank      : {rank} (local_rank: {rank})\n  exitcode  : {code} (pid: {pid})\n"
            f"  error_file: <N/A>\n  traceback : {tb}\n"
        )

    return (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "============================================================\ntrain.py FAILED\n"
        "------------------------------------------------------------\nFailures:\n"
        + row(1, "13:02:58", 3, 1, 14692, "To enable traceback see: https://pytorch.org/")
        + row(2, kill_at, 0, -9, 14689, "Signal 9 (SIGKILL) received by PID 14689")
        + "------------------------------------------------------------\n"
        "Root Cause (first observed failure):\n"
        + row(0, "13:02:58", 1, 1, 14690, "To enable traceback see: https://pytorch.org/")
    )


@pytest.mark.parametrize(
    ("kill_at", "found"),
    [
        # 31 s after the first failure: the agent's SIGKILL of a worker its SIGTERM left alive.
        ("13:03:29", "rank-exception"),
        # The same second: a death of its own.
        ("13:02:58", "process-killed-signal"),
    ],
)
def test_a_sigkill_row_of_the_agents_escalation_is_teardown(kill_at, found):
    assert [f.id for f in diagnose_text(_failure_table(kill_at))][:1] == [found]

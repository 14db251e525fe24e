"""`denpex diagnose` as users run it: a real subprocess, files or stdin, text or --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest

from paths import LOGS, ROOT

SCHEMA = json.loads((ROOT / "shared-schema" / "diagnosis.schema.json").read_text())


def denpex(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "denpex", "diagnose", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def test_oom_report_names_rank_host_gpu_and_collateral():
    out = denpex(str(LOGS / "oom_then_watchdog_timeouts.log"))
    assert out.returncode == 1, out.stderr
    assert "[cuda-oom]" in out.stdout
    assert "Initiating rank : 5 (host gpu-node-07, GPU 5)" in out.stdout
    assert "Collateral ranks: 0-4,6-7" in out.stdout
    assert "oom_then_watchdog_timeouts.log:31  [initiating, rank 5]" in out.stdout
    assert "Fix:" in out.stdout and "Verify:" in out.stdout
    assert out.stderr == ""


def test_json_validates_against_the_schema():
    out = denpex("--json", str(LOGS / "xid79_job.out"), str(LOGS / "xid79_node-b.syslog"))
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, SCHEMA)
    root = doc["findings"][0]
    assert (root["id"], root["initiating_rank"], root["host"], root["gpu"]) == (
        "gpu-hardware-fault",
        11,
        "node-b",
        3,
    )


def test_json_of_only_collateral_and_of_healthy_logs_validate():
    for name, code in (("timeouts_one_rank_silent.log", 1), ("healthy_run.log", 0)):
        out = denpex("--json", str(LOGS / name))
        assert out.returncode == code, out.stderr
        jsonschema.validate(json.loads(out.stdout), SCHEMA)


def test_healthy_log_exits_zero():
    out = denpex(str(LOGS / "healthy_run.log"))
    assert out.returncode == 0
    assert "No failure found" in out.stdout


def test_stdin():
    data = (LOGS / "dataloader_bus_error.log").read_bytes()
    out = denpex("--json", "-", stdin=data)
    assert out.returncode == 1, out.stderr
    root = json.loads(out.stdout)["findings"][0]
    assert root["id"] == "dataloader-worker-killed"
    assert root["initiating_rank"] == 2
    assert {e["source"] for e in root["evidence"]} == {"<stdin>"}


def test_missing_file_is_exit_2_naming_it(tmp_path):
    missing = tmp_path / "nope" / "rank_3.log"
    out = denpex(str(LOGS / "healthy_run.log"), str(missing))
    assert out.returncode == 2
    assert str(missing) in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_empty_directory_is_exit_2(tmp_path):
    out = denpex(str(tmp_path))
    assert out.returncode == 2
    assert "holds no files" in out.stderr and len(out.stderr.splitlines()) == 1


def test_a_directory_stands_for_the_logs_under_it(tmp_path):
    """A job's log folder (nested per node, with hidden editor files) reads like its files."""
    sample = ROOT / "server" / "denpex" / "samples" / "logs" / "llama-8gpu-oom"
    for rank in range(8):
        node = tmp_path / f"node{rank // 4}"
        node.mkdir(exist_ok=True)
        (node / f"rank_{rank}.log").write_bytes((sample / f"rank_{rank}.log").read_bytes())
    (tmp_path / "node0" / ".rank_5.log.swp").write_bytes(b"\x00\x01binary swap file\x00")
    by_dir = denpex(str(tmp_path), "--json")
    files = sorted(str(p) for p in tmp_path.rglob("rank_*.log"))
    by_files = denpex(*files, "--json")
    assert by_dir.returncode == 1 and by_dir.stderr == "", by_dir.stderr
    report = json.loads(by_dir.stdout)
    assert report == json.loads(by_files.stdout)
    root = report["findings"][0]
    assert root["initiating_rank"] == 5 and root["collateral_ranks"] == [0, 1, 2, 3, 4, 6, 7]


def test_a_named_pipe_is_read_like_a_file(tmp_path):
    """`denpex diagnose <(kubectl logs …)` hands over /dev/fd/N, a pipe, not a regular file."""
    fifo = tmp_path / "pod.log"
    os.mkfifo(fifo)
    sample = ROOT / "server" / "denpex" / "samples" / "logs" / "llama-8gpu-oom" / "rank_5.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "denpex", "diagnose", str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with fifo.open("wb") as writer:  # blocks until the CLI opens the pipe
        writer.write(sample.read_bytes())
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "[cuda-oom]" in out
    # One rank's own log without rank prefixes, under a name that names no rank.
    assert "Initiating rank : unknown (the log does not say which rank)" in out


def test_empty_input_is_no_failure(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert denpex(str(empty)).returncode == 0
    assert denpex("-", stdin=b"").returncode == 0


def test_binary_file_is_skipped_with_one_line(tmp_path):
    blob = tmp_path / "model.pt"
    blob.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 64)
    alone = denpex(str(blob))
    assert alone.returncode == 2
    assert "binary" in alone.stderr and "Traceback" not in alone.stderr
    # next to a real log it is skipped and the log is still diagnosed
    both = denpex(str(blob), str(LOGS / "save_no_space.log"))
    assert both.returncode == 1
    assert "checkpoint-save-error" in both.stdout
    assert "skipped, binary" in both.stderr


def test_invalid_utf8_is_decoded_with_replacement(tmp_path):
    log = tmp_path / "latin1.log"
    text = (LOGS / "illegal_memory_access.log").read_bytes()
    log.write_bytes(
        b"caf\xe9 \xff\xfe bad bytes\n" + text.replace(b"fused_attention", b"f\xe9\xff")
    )
    out = denpex("--json", str(log))
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["findings"][0]["id"] == "cuda-illegal-memory-access"


def test_usage_error_is_exit_2():
    out = denpex()
    assert out.returncode == 2
    assert "error" in out.stderr


@pytest.mark.slow
def test_huge_single_line_keeps_memory_bounded(tmp_path):
    """A ~50 MB line without a newline (a dumped tensor) followed by a real failure: read in
    bounded chunks, so the process stays small and the failure after it is still found."""
    log = tmp_path / "one_line.log"
    with log.open("wb") as f:
        chunk = b"0.123456, " * (1 << 16)  # 640 KiB
        for _ in range(80):
            f.write(chunk)
        f.write(b"\n")
        f.write((LOGS / "save_no_space.log").read_bytes())
    assert log.stat().st_size > 50_000_000
    probe = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'denpex', 'diagnose', '--json', sys.argv[1]],"
        " capture_output=True, text=True)\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(p.stdout)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(log)], capture_output=True, text=True, timeout=300
    )
    first, _, doc = out.stdout.partition("\n")
    code, rss_kib = (int(x) for x in first.split())
    assert code == 1, out.stderr
    root = json.loads(doc)["findings"][0]
    assert root["id"] == "checkpoint-save-error"
    # lines are counted across the cut line: the failure's line numbers are exact
    # ("enforce fail" is line 4 of the fixture, line 5 after the long line)
    assert 5 in {e["line"] for e in root["evidence"] if e["role"] == "initiating"}
    assert rss_kib < 150 * 1024, f"peak RSS {rss_kib // 1024} MiB"


@pytest.mark.parametrize(
    ("line", "entry", "rank"),
    [
        (
            "[rank0]:[E1103 04:12:55.118 ProcessGroupNCCL.cpp:1590] [PG 0 Rank 0]  - To our best"
            " knowledge, the lagging/dead/mismatched ranks that caused the desync are: [7]"
            " finished collective #183, but didn't join collective #184 (count from 1)",
            "rank-stall-before-collective",
            7,
        ),
        (
            "RuntimeError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 2000 ms",
            "rank-stall-before-collective",
            1,
        ),
    ],
)
def test_a_report_by_one_rank_that_names_another_is_the_root(tmp_path, line, entry, rank):
    """The line's own rank (0) is not the rank it accuses: alone in a log, it used to end in
    an internal error because the accused rank had no line of its own."""
    log = tmp_path / "report.log"
    log.write_text(line + "\n", encoding="utf-8")
    out = denpex("--json", str(log))
    assert out.returncode == 1, out.stderr
    root = json.loads(out.stdout)["findings"][0]
    assert (root["id"], root["initiating_rank"]) == (entry, rank)


def test_open_mpi_first_process_read_inside_a_markdown_quote(tmp_path):
    """Issue threads quote pasted output with "> ": Open MPI's summary still names the rank."""
    log = tmp_path / "quoted.log"
    log.write_text(
        "RuntimeError: boom\n"
        ">mpirun detected that one or more processes exited with non-zero status, thus causing\n"
        ">the job to be terminated. The first process to do so was:\n"
        ">\n"
        ">  Process name: [[29000,1],1]\n"
        ">  Exit code:    1\n",
        encoding="utf-8",
    )
    out = denpex("--json", str(log))
    assert out.returncode == 1, out.stderr
    root = json.loads(out.stdout)["findings"][0]
    assert (root["id"], root["initiating_rank"]) == ("rank-exception", 1)

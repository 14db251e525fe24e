"""Flight Recorder dumps in `denpex diagnose`: real gloo jobs under torchrun write real dumps
(tests/fr_job.py); the CLI runs as a subprocess on the job folder, on the dumps alone and on
the log with the dumps beside it. Hand-written dumps only for what gloo cannot write (NCCL's
states and group table, the older format versions), each saying where its format comes from."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fr_job import PREFIX, run_job
from paths import ROOT

SCHEMA = json.loads((ROOT / "shared-schema" / "diagnosis.schema.json").read_text())
FR_TRACE = [sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace"]


def denpex(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "denpex", "diagnose", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


class Jobs:
    """Each scenario's job runs once per module, when a test first asks for it."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.done: dict[str, Path] = {}

    def __getitem__(self, scenario: str) -> Path:
        if scenario not in self.done:
            # The died job writes the JSON form, to read both formats from real dumps.
            json_dumps = scenario == "died"
            self.done[scenario] = run_job(self.base / scenario, scenario, json_dumps=json_dumps)
        return self.done[scenario]


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Jobs:
    return Jobs(tmp_path_factory.mktemp("fr"))


def diagnosis(*args: str | Path) -> dict[str, Any]:
    out = denpex("--json", *args)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc["findings"][0]


def test_job_folder_rank_that_skipped_is_initiating_waiters_collateral(jobs):
    root = diagnosis(jobs["skip"])
    assert root["id"] == "rank-stall-before-collective"
    assert (root["initiating_rank"], root["collateral_ranks"]) == (3, [0, 1, 2])
    assert "all_reduce #2: ranks 0-2 entered it, rank 3 never did" in root["root_cause"]
    initiating = [e for e in root["evidence"] if e["role"] == "initiating"]
    assert initiating[0]["source"] == str(jobs["skip"] / f"{PREFIX}3")
    assert "fr_job.py" in initiating[0]["text"]  # the rank's stack, from its dump
    assert any("TORCH_NCCL_DESYNC_DEBUG=1" in v for v in root["verification"])
    fr_trace = [v for v in root["verification"] if "fr_trace" in v]
    assert fr_trace == [
        "python -m torch.distributed.flight_recorder.fr_trace "
        f"{jobs['skip']} -p {PREFIX} --allow-incomplete-ranks"
    ]


def test_dumps_alone_as_files_and_beside_the_log_give_the_same_verdict(jobs):
    dumps = sorted(jobs["skip"].glob(f"{PREFIX}*"))
    alone = diagnosis(*dumps)
    beside = denpex("--json", jobs["skip"] / "train.log")
    assert beside.returncode == 1, beside.stderr
    assert "read 4 Flight Recorder dump(s) beside the log" in beside.stderr
    merged = json.loads(beside.stdout)["findings"][0]
    for finding in (alone, merged):
        assert (finding["initiating_rank"], finding["collateral_ranks"]) == (3, [0, 1, 2])


def test_dumps_are_known_by_content_not_by_name(jobs, tmp_path):
    for rank, dump in enumerate(sorted(jobs["skip"].glob(f"{PREFIX}*"))):
        shutil.copy(dump, tmp_path / f"whatever-{rank}.bin")
    root = diagnosis(tmp_path)
    assert (root["initiating_rank"], root["collateral_ranks"]) == (3, [0, 1, 2])


def test_mismatch_names_the_odd_rank_and_the_differing_op_and_sizes(jobs):
    root = diagnosis(jobs["mismatch"])
    assert root["id"] == "collective-mismatch"
    assert (root["initiating_rank"], root["collateral_ranks"]) == (3, [0, 1, 2])
    assert (
        "the calls differ at seq 2: op: all_reduce on ranks 0-2, all_gather on rank 3"
        in (root["root_cause"])
    )
    assert "output sizes: [[4]] on ranks 0-2, [[4, 4]] on rank 3" in root["root_cause"]
    # rank 3's own gloo timeout is no cause: it waited in its all_gather
    assert not [f for f in json.loads(denpex("--json", jobs["mismatch"]).stdout)["findings"][1:]]


def test_stall_in_one_of_two_subgroups_follows_the_wait_to_the_rank(jobs):
    root = diagnosis(jobs["subgroup"])
    assert (root["initiating_rank"], root["collateral_ranks"]) == (3, [0, 1, 2])
    story = root["root_cause"]
    assert "On default_pg (ranks 0-3) the oldest unfinished collective is all_reduce #2" in story
    assert "ranks 2-3 never did" in story
    assert "group 2 (ranks not in the dumps)" in story  # rank 2 waits there, for rank 3


def test_rank_that_died_before_dumping_joins_its_log_exception(jobs):
    assert not (jobs["died"] / f"{PREFIX}3").exists()
    assert (jobs["died"] / f"{PREFIX}0").read_bytes().startswith(b"{")  # the JSON form
    root = diagnosis(jobs["died"])
    assert root["id"] == "rank-exception", root  # the log says why rank 3 never came
    assert (root["initiating_rank"], root["collateral_ranks"]) == (3, [0, 1, 2])
    assert (
        "Rank 3 (host localhost) left no dump: dead, or hung before dumping."
        in (root["root_cause"])
    )
    texts = [e["text"] for e in root["evidence"]]
    assert any("IndexError" in t for t in texts), texts
    assert any(t.startswith("rank 0: last collective all_reduce #2") for t in texts), texts
    assert any("fr_trace" in v for v in root["verification"])


class _Payload:
    """Unpickling this with the standard unpickler would create the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def _hostile_dump(path: Path, marker: Path) -> None:
    doc = {"version": "2.10", "pg_config": {}, "entries": [_Payload(marker)]}
    path.write_bytes(pickle.dumps(doc, protocol=2))


def test_malicious_pickle_dump_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "marker"
    dump = tmp_path / f"{PREFIX}0"
    _hostile_dump(dump, marker)
    out = denpex(dump)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "refused a pickle that asks for" in out.stderr
    assert "Traceback" not in out.stderr
    assert not marker.exists()


def test_malicious_pickle_inside_a_job_folder_is_skipped_with_a_warning(jobs, tmp_path):
    folder = tmp_path / "job"
    shutil.copytree(jobs["skip"], folder)
    marker = tmp_path / "marker"
    _hostile_dump(folder / "fr_rank_extra_9", marker)
    out = denpex("--json", folder)
    assert out.returncode == 1, out.stderr
    assert "skipped:" in out.stderr and "refused a pickle" in out.stderr
    top = json.loads(out.stdout)["findings"][0]
    assert top["initiating_rank"] == 3
    assert top["attribution"]["confidence"] == "high"  # the dumps, not a launcher, name it
    assert not marker.exists()


def test_unknown_dump_version_is_named(jobs, tmp_path):
    real = pickle.loads((jobs["skip"] / f"{PREFIX}0").read_bytes())  # our own job's file
    real["version"] = "3.0"
    dump = tmp_path / f"{PREFIX}0"
    dump.write_bytes(pickle.dumps(real, protocol=2))
    out = denpex(dump)
    assert out.returncode == 2
    assert "Flight Recorder dump version '3.0' is unknown" in out.stderr
    assert out.stderr.count("\n") == 1


def test_fr_trace_stops_on_gloo_dumps_from_this_torch(jobs):
    """Documented in docs/flight-recorder.md: gloo's pg_config names its group "" while the
    entries say "0", so fr_trace's lookup of (group, rank) fails. Fails here if torch fixes it."""
    out = subprocess.run(
        [*FR_TRACE, str(jobs["skip"]), "-p", PREFIX],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0 and "KeyError: ('0', 0)" in out.stderr


# ---- hand-written dumps: NCCL's format, which a CPU-only gloo job cannot write -------------


def nccl_dump(version: str, entries: list[dict[str, Any]], members: str) -> dict[str, Any]:
    """The dump dict ProcessGroupNCCL pickles. Keys: torch/csrc/distributed/c10d/TraceUtils.h
    (version "2.3", the NCCLTraceBuffer era) and FlightRecorder.hpp (2.10, which adds thread
    fields and renames nccl_version to comm_lib_version); a field one version lacks is left
    out where that version left it out."""
    doc: dict[str, Any] = {
        "version": version,
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": members}},
        "pg_status": {},
        "entries": entries,
    }
    doc["comm_lib_version" if version == "2.10" else "nccl_version"] = "2.21.5"
    return doc


def nccl_entry(record: int, seq: int, op: str, state: str, size: int = 4) -> dict[str, Any]:
    return {
        "record_id": record,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": f"nccl:{op}",
        "time_created_ns": 1000 + record,
        "input_sizes": [[size]],
        "input_dtypes": ["Float"],
        "output_sizes": [[size]],
        "output_dtypes": ["Float"],
        "state": state,
        "time_discovered_started_ns": None,
        "time_discovered_completed_ns": None,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "is_p2p": False,
        "frames": [{"name": "train_step", "filename": "train.py", "line": 40 + seq}],
    }


def _write_nccl_job(folder: Path, version: str, culprit: int) -> Path:
    folder.mkdir()
    for rank in range(4):
        entries = [nccl_entry(0, 1, "all_reduce", "completed")]
        if rank != culprit:
            entries.append(nccl_entry(1, 2, "all_reduce", "started"))
        doc = nccl_dump(version, entries, "[0, 1, 2, 3]")
        (folder / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(doc, protocol=2))
    return folder


@pytest.mark.parametrize("version", ["2.3", "2.10"])
def test_nccl_dumps_same_verdict_as_fr_trace(tmp_path, version):
    folder = _write_nccl_job(tmp_path / "job", version, culprit=2)
    root = diagnosis(folder)
    assert (root["initiating_rank"], root["collateral_ranks"]) == (2, [0, 1, 3])
    out = subprocess.run(
        [*FR_TRACE, str(folder), "-p", "nccl_trace_rank_"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    report = out.stdout + out.stderr  # fr_trace reports through its logger
    assert "Not all ranks joining collective, sequence number: 2" in report
    assert "missing ranks: {2}" in report


def test_nccl_entered_by_all_but_not_completed_is_no_missing_rank(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    for rank in range(2):
        entries = [nccl_entry(0, 1, "all_reduce", "started")]
        doc = nccl_dump("2.10", entries, "[0, 1]")
        (folder / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(doc, protocol=2))
    root = diagnosis(folder)
    assert root["id"] == "nccl-timeout"
    assert root["initiating_rank"] is None and root["suspect_ranks"] == []


def test_hostile_numbers_in_a_dump_stay_bounded(tmp_path):
    """Sequence ids far apart, a rank in pg_config beyond any job: quick, one line, no loop
    over the gap and no list of a trillion ranks."""
    folder = tmp_path / "job"
    folder.mkdir()
    for rank, seqs in ((0, [1, 10**15]), (1, [1])):
        entries = [
            nccl_entry(i, s, "all_reduce", "completed" if s == 1 else "started")
            for i, s in enumerate(seqs)
        ]
        doc = nccl_dump("2.10", entries, "[0, 1]")
        (folder / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(doc, protocol=2))
    root = diagnosis(folder)
    assert (root["initiating_rank"], root["collateral_ranks"]) == (1, [0])
    huge = nccl_dump("2.10", [nccl_entry(0, 1, "all_reduce", "started")], f"[0, {10**12}]")
    dump = tmp_path / "nccl_trace_rank_5"
    dump.write_bytes(pickle.dumps(huge, protocol=2))
    out = denpex(dump)
    assert out.returncode == 2 and "beyond any job's size" in out.stderr
    # int() itself refuses a 5,000-digit string: bounded before it is asked
    long = nccl_dump("2.10", [], "[0, " + "9" * 5000 + "]")
    dump.write_bytes(pickle.dumps(long, protocol=2))
    out = denpex(dump)
    assert out.returncode == 2 and "beyond any job's size" in out.stderr
    named = tmp_path / ("nccl_trace_rank_" + "9" * 200)
    named.write_bytes(pickle.dumps(nccl_dump("2.10", [], "[0]"), protocol=2))
    out = denpex(named)
    assert out.returncode == 2 and "beyond any job's size" in out.stderr


def test_nccl_op_mismatch_same_culprit_as_fr_trace(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    for rank in range(4):
        op = "all_gather" if rank == 1 else "all_reduce"
        entries = [nccl_entry(0, 1, "all_reduce", "completed"), nccl_entry(1, 2, op, "started")]
        doc = nccl_dump("2.10", entries, "[0, 1, 2, 3]")
        (folder / f"nccl_trace_rank_{rank}").write_bytes(pickle.dumps(doc, protocol=2))
    root = diagnosis(folder)
    assert (root["id"], root["initiating_rank"], root["collateral_ranks"]) == (
        "collective-mismatch",
        1,
        [0, 2, 3],
    )
    assert "op: all_reduce on ranks 0,2-3, all_gather on rank 1" in root["root_cause"]
    out = subprocess.run(
        [*FR_TRACE, str(folder), "-p", "nccl_trace_rank_"], capture_output=True, text=True
    )
    assert "Culprit rank 1; Error type: COLLECTIVE_TYPE_MISMATCH" in out.stdout + out.stderr


def test_oversized_and_malformed_dumps_get_one_line(tmp_path):
    big = tmp_path / "nccl_trace_rank_0"
    with open(big, "wb") as f:
        f.write(b"\x80\x02")
        f.truncate(65 << 20)
    out = denpex(big)
    assert out.returncode == 2 and "too large for a dump" in out.stderr
    bad = tmp_path / "nccl_trace_rank_1"
    doc = nccl_dump("2.10", [nccl_entry(0, 1, "all_reduce", "started")], "[0, 1]")
    doc["entries"][0]["collective_seq_id"] = "1"
    bad.write_bytes(pickle.dumps(doc, protocol=2))
    out = denpex(bad)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "'collective_seq_id' is not int" in out.stderr and "Traceback" not in out.stderr


def test_verification_commands_quote_the_dump_folder(jobs, tmp_path):
    folder = tmp_path / "job $(touch pwned)"
    folder.mkdir()
    for dump in jobs["skip"].glob(f"{PREFIX}*"):
        shutil.copy(dump, folder / dump.name)
    root = diagnosis(folder)
    fr_trace = next(v for v in root["verification"] if "fr_trace" in v)
    assert f"fr_trace '{folder}' -p {PREFIX} " in fr_trace


def test_json_lines_log_that_starts_like_a_dump_is_read_as_a_log(tmp_path):
    log = tmp_path / "train.jsonl"
    line = '{"version": "1.0", "msg": "step done"}\n'
    oom = "torch.cuda.OutOfMemoryError: CUDA out of memory.\n"  # a plain line among them
    log.write_text(line * 10 + oom)
    out = denpex("--json", log)
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["findings"][0]["id"] == "cuda-oom"

"""The catalog fields that steer attribution (catalog-entry.schema.json): the signal's
``after_bad_exit``, ``swallowed_after``, ``traceback_frame`` and ``ends_traceback`` and the
entry's ``hang`` and ``exit_report``.
Each test runs a copy of the real catalog with the field's carriers renamed, so the field,
not a name the engine knows, is what makes the answer; and the same copy without the field,
to show it matters.
"""

from __future__ import annotations

import copy
from typing import Any

from denpex import catalog
from denpex.diagnosis import LogScanner
from denpex.diagnosis.context import EXTRACTOR_LITERALS
from denpex.diagnosis.frames import FRAME_LINES, PENDING_MAX
from denpex.diagnosis.matcher import compile_catalog
from denpex.diagnosis.scanner import ANNOUNCED_MAX

Entries = dict[str, dict[str, Any]]

# srun --kill-on-bad-exit: task 5 exits with a code of its own, srun ends the step, Slurm
# prints its bare cancellation, the other tasks are Killed.
SRUN_LOG = """\
srun: error: node1: task 5: Exited with exit code 1
srun: launch/slurm: _step_signal: Terminating StepId=4242.0
slurmstepd: error: *** STEP 4242.0 ON node1 CANCELLED AT 2021-07-14T08:00:36 ***
srun: error: node1: tasks 3,7: Killed
srun: error: node2: task 8: Killed
srun: error: node1: tasks 0-2,4,6: Killed
srun: Force Terminated StepId=4242.0
"""

# Ranks 0-6 of 8 time out on the same collective; rank 7 never reported.
HANG_LOG = "WORLD_SIZE=8\n" + "".join(
    f"[rank{r}]:[E1103 04:12:54.873645 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=184, OpType=ALLREDUCE, NumelIn=8, "
    "NumelOut=8, Timeout(ms)=600000) ran for 600043 milliseconds before timing out.\n"
    for r in range(7)
)

# Rank 3 raises, then aborts on its way out.
EXIT_LOG = """\
[rank3]: Traceback (most recent call last):
[rank3]:   File "train.py", line 10, in <module>
[rank3]: RuntimeError: boom
[rank3]: Fatal Python error: Aborted
"""

# A DataLoader's destructor raising at interpreter exit, after training finished (as pasted
# in ultralytics/yolov5#8406); Python reports it and carries on.
SWALLOWED = """\
Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f4972feac10>
Traceback (most recent call last):
  File "/opt/lib/torch/utils/data/dataloader.py", line 1328, in __del__
  File "/opt/lib/torch/utils/data/dataloader.py", line 1262, in _shutdown_workers
AttributeError: 'NoneType' object has no attribute 'python_exit_status'
"""
RAISED = """\
Traceback (most recent call last):
  File "train.py", line 10, in <module>
RuntimeError: boom
"""


def _diagnose(entries: Entries, text: str) -> list[tuple[str, int | None, list[int]]]:
    scanner = LogScanner(compile_catalog(entries, EXTRACTOR_LITERALS))
    scanner.feed_lines("job.log", text.splitlines())
    return [(f.id, f.initiating_rank, f.suspect_ranks) for f in scanner.findings()]


def _copy() -> Entries:
    return copy.deepcopy(catalog.entries())


def _rename_signal(entries: Entries, entry_id: str, name: str, new: str) -> dict[str, Any]:
    spec = next(s for s in entries[entry_id]["signals"] if s["name"] == name)
    spec["name"] = new
    return spec


def _rename_entry(entries: Entries, old: str, new: str) -> dict[str, Any]:
    entry = entries.pop(old)
    entry["id"] = new
    entries[new] = entry
    for other in entries.values():
        for spec in other["signals"]:
            spec["not_with"] = [new if i == old else i for i in spec.get("not_with", [])]
    return entry


def test_after_bad_exit_makes_renamed_launcher_lines_teardown() -> None:
    assert _diagnose(_copy(), SRUN_LOG) == [("rank-exception", 5, [])]
    entries = _copy()
    carriers = [
        _rename_signal(entries, "slurm-job-terminated", "cancelled_other", "bare_step_cancel"),
        _rename_signal(entries, "process-killed-signal", "srun_task_killed", "srun_killed_list"),
    ]
    assert all(spec["after_bad_exit"] for spec in carriers)
    assert _diagnose(entries, SRUN_LOG) == [("rank-exception", 5, [])]
    for spec in carriers:
        del spec["after_bad_exit"]
    # Without the field the bare cancellation is a cancellation of its own.
    assert _diagnose(entries, SRUN_LOG)[0][0] == "slurm-job-terminated"


def test_hang_field_makes_missing_ranks_suspects() -> None:
    assert _diagnose(_copy(), HANG_LOG) == [("nccl-timeout", None, [7])]
    entries = _copy()
    entry = _rename_entry(entries, "nccl-timeout", "collective-hang")
    assert entry["hang"] is True
    assert _diagnose(entries, HANG_LOG) == [("collective-hang", None, [7])]
    entry["hang"] = False
    # Not a hang: the ranks that did not report say nothing.
    assert _diagnose(entries, HANG_LOG) == [("collective-hang", None, [])]


def test_exit_report_field_keeps_the_exit_from_naming_the_incident() -> None:
    assert _diagnose(_copy(), EXIT_LOG) == [("rank-exception", 3, [])]
    entries = _copy()
    entry = _rename_entry(entries, "process-killed-signal", "process-ended")
    assert entry["exit_report"] is True
    assert _diagnose(entries, EXIT_LOG) == [("rank-exception", 3, [])]
    del entry["exit_report"]
    # Without the field the abort, the more specific line, takes the incident's name.
    assert _diagnose(entries, EXIT_LOG) == [("process-ended", 3, [])]


def test_an_exception_python_ignored_is_no_failure_but_the_next_one_is() -> None:
    assert _diagnose(_copy(), SWALLOWED) == []
    # Only the exception right under the header is swallowed: a later one is a failure.
    assert _diagnose(_copy(), SWALLOWED + RAISED) == [("rank-exception", None, [])]
    # A header without its exception, far above the failure, swallows nothing.
    far = SWALLOWED.splitlines()[0] + "\n" + "step ok\n" * 300 + RAISED
    assert _diagnose(_copy(), far) == [("rank-exception", None, [])]
    entries = _copy()
    spec = _rename_signal(entries, "rank-exception", "exception_ignored", "caught_header")
    final = next(s for s in entries["rank-exception"]["signals"] if s.get("swallowed_after"))
    final["swallowed_after"] = ["caught_header"]
    assert spec["role"] == "context"
    assert _diagnose(entries, SWALLOWED) == []
    del final["swallowed_after"]
    # Without the field the destructor's exception reads as a rank's failure.
    assert _diagnose(entries, SWALLOWED) == [("rank-exception", None, [])]


def test_pending_announcements_stay_bounded_on_endless_rank_prefixes() -> None:
    # A hostile log can announce under a new rank prefix on every line: what is remembered
    # stays capped, and the latest announcement still swallows its exception.
    scanner = LogScanner(compile_catalog(_copy(), EXTRACTOR_LITERALS))
    header = SWALLOWED.splitlines()[0]
    lines = [f"[rank{r}]:{header}" for r in range(5000)]
    lines += [f"[rank4999]:{line}" for line in SWALLOWED.splitlines()[1:]]
    scanner.feed_lines("job.log", lines)
    assert len(scanner._announced) <= ANNOUNCED_MAX
    assert scanner.findings() == []


# An exception of no known kind raised inside torch.save (the frames of a real 2.x traceback).
SAVE_TRACEBACK = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/work/train.py", line 88, in <module>
[rank1]:     torch.save(state, path)
[rank1]:   File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 628, in save
[rank1]:     _save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)
[rank1]:   File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 840, in _save
[rank1]:     pickler.dump(obj)
[rank1]: AttributeError: Can't pickle local object 'build.<locals>.hook'
"""


def test_a_traceback_frame_names_the_generic_exception_under_it() -> None:
    assert _diagnose(_copy(), SAVE_TRACEBACK) == [("checkpoint-save-error", 1, [])]
    lines = SAVE_TRACEBACK.splitlines()
    # The frame alone is only a place; an exception the catalog knows keeps its own name.
    assert _diagnose(_copy(), "\n".join(lines[:-1])) == []
    oom = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert _diagnose(_copy(), "\n".join([*lines[:-1], oom]))[0][0] == "cuda-oom"
    # Another rank's exception, or one too far below, is not this traceback's.
    other = [*lines[:-1], lines[-1].replace("[rank1]", "[rank2]")]
    assert _diagnose(_copy(), "\n".join(other)) == [("rank-exception", 2, [])]
    far = lines[:-1] + ["[rank1]: step ok"] * (FRAME_LINES + 1) + lines[-1:]
    assert _diagnose(_copy(), "\n".join(far)) == [("rank-exception", 1, [])]
    entries = _copy()
    frame = _rename_signal(entries, "checkpoint-save-error", "raised_in_checkpoint_save", "place")
    final = next(s for s in entries["rank-exception"]["signals"] if s.get("ends_traceback"))
    assert frame["traceback_frame"] and final["name"] == "exception_final_line"
    assert _diagnose(entries, SAVE_TRACEBACK) == [("checkpoint-save-error", 1, [])]
    del final["ends_traceback"]
    assert _diagnose(entries, SAVE_TRACEBACK) == [("rank-exception", 1, [])]
    final["ends_traceback"] = True
    del frame["traceback_frame"]
    # Without the field the frame line would be a failure of its own.
    assert _diagnose(entries, "\n".join(lines[:-1])) == [("checkpoint-save-error", 1, [])]


def test_waiting_frames_stay_bounded_on_endless_rank_prefixes() -> None:
    scanner = LogScanner(compile_catalog(_copy(), EXTRACTOR_LITERALS))
    frame = SAVE_TRACEBACK.splitlines()[3].removeprefix("[rank1]:")
    scanner.feed_lines("job.log", [f"[rank{r}]:{frame}" for r in range(5000)])
    assert len(scanner._frames._pending) <= PENDING_MAX
    assert scanner.findings() == []
    scanner.feed_lines("job.log", ["[rank4999]: ValueError: bad value"], first_line=5001)
    assert [f.id for f in scanner.findings()] == ["checkpoint-save-error"]

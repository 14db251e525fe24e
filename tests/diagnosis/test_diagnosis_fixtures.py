"""Each required catalog failure, in a realistic multi-rank log, diagnosed end to end
(library level): the right entry, the rank that started it, the ranks that only reported it."""

from __future__ import annotations

import pytest

from denpex.diagnosis import diagnose_paths
from paths import LOGS

# (files, catalog id, initiating rank, collateral ranks or None to skip, host, gpu)
CASES = [
    (["oom_then_watchdog_timeouts.log"], "cuda-oom", 5, [0, 1, 2, 3, 4, 6, 7], "gpu-node-07", 5),
    (
        ["xid79_job.out", "xid79_node-b.syslog"],
        "gpu-hardware-fault",
        11,
        [*range(11), 12, 13, 14, 15],
        "node-b",
        3,
    ),
    (["elastic_wrong_root_cause.log"], "rank-exception", 2, [0, 1, 3, 4, 5, 6, 7], "dgx-14", None),
    (["ib_link_error_mpirun.log"], "nccl-network-error", 6, [0, 1, 2, 3, 4, 5, 7], "trn-04", 6),
    (["host_oom/job.log", "host_oom/kern.log"], "host-oom", 3, [0, 1, 2], "cpu-rich-2", 3),
    (["nan_loss_deepspeed.log"], "nan-inf-loss", 1, None, None, None),
    (["fp16_overflow_deepspeed.log"], "loss-scale-overflow", 0, [], None, None),
    (["loss_spike_megatron.log"], "loss-spike", 15, [], None, None),
    (["grad_norm_explosion_megatron.log"], "gradient-explosion", 15, [], None, None),
    (
        ["illegal_memory_access.log"],
        "cuda-illegal-memory-access",
        4,
        [0, 1, 2, 3, 5, 6, 7],
        None,
        None,
    ),
    (["device_assert_srun.log"], "cuda-device-assert", 1, [0, 2, 3], None, None),
    # Every rank prints the same "no kernel image": the build they share, no rank's own.
    (["no_kernel_image_srun.log"], "cuda-environment-mismatch", None, [], None, None),
    (["dataloader_bus_error.log"], "dataloader-worker-killed", 2, [0, 1, 3], None, None),
    (
        [f"ckpt_load/rank_{r}.log" for r in range(4)],
        "checkpoint-load-error",
        0,
        [1, 2, 3],
        None,
        None,
    ),
    (["save_no_space.log"], "checkpoint-save-error", 0, [1], None, None),
    (["segfault_rank5.log"], "process-killed-signal", 5, None, "hpc-9", 5),
    # A real 4-process gloo job under torchrun (tests/fr_job.py's "died"): rank 3 raised, then
    # gloo aborted it at interpreter exit (-6 in the Root Cause table); the abort is its exit.
    (["raised_then_gloo_abort.log"], "rank-exception", 3, [0, 1, 2], "localhost", None),
]


@pytest.mark.parametrize(
    ("files", "entry", "rank", "collateral", "host", "gpu"),
    CASES,
    ids=[c[1] for c in CASES],
)
def test_fixture_diagnosis(files, entry, rank, collateral, host, gpu):
    findings = diagnose_paths([str(LOGS / f) for f in files])
    assert findings, "no finding"
    root = findings[0]
    assert root.id == entry
    assert root.initiating_rank == rank
    if collateral is not None:
        assert root.collateral_ranks == collateral
    assert root.host == host
    assert root.gpu == gpu
    initiating = [e for e in root.evidence if e.role == "initiating"]
    assert initiating, "the initiating line is part of the evidence"
    assert all(e.line >= 1 and e.text for e in root.evidence)


def test_torchelastic_root_cause_is_only_a_hint():
    """The table's "Root Cause" names rank 6 (the first exit its agent noticed); the log shows
    rank 2 raising first, and rank 6 aborting later because of the watchdog."""
    text = (LOGS / "elastic_wrong_root_cause.log").read_text()
    assert "rank      : 6 (local_rank: 6)" in text.split("Root Cause")[1]
    root = diagnose_paths([str(LOGS / "elastic_wrong_root_cause.log")])[0]
    assert root.initiating_rank == 2
    assert 6 in root.collateral_ranks
    assert any("KeyError" in e.text and e.role == "initiating" for e in root.evidence)


def test_only_collateral_names_the_silent_rank_as_suspect():
    root = diagnose_paths([str(LOGS / "timeouts_one_rank_silent.log")])[0]
    assert root.id == "nccl-timeout"
    assert root.initiating_rank is None
    assert root.collateral_ranks == list(range(7))
    assert root.suspect_ranks == [7]
    assert all(e.role == "collateral" for e in root.evidence)
    # {log} is filled with the file the evidence came from
    assert any(str(LOGS / "timeouts_one_rank_silent.log") in cmd for cmd in root.verification)


def test_five_hundred_ranks_are_grouped():
    root = diagnose_paths([str(LOGS / "timeouts_500_ranks.log")])[0]
    assert root.initiating_rank is None
    assert root.suspect_ranks == [317]
    assert len(root.collateral_ranks) == 499
    assert len(root.evidence) <= 12  # bounded: a few examples, not 499 lines


def test_healthy_log_has_no_findings():
    assert diagnose_paths([str(LOGS / "healthy_run.log")]) == []


def test_verification_commands_are_filled_from_the_evidence():
    root = diagnose_paths([str(LOGS / "xid79_job.out"), str(LOGS / "xid79_node-b.syslog")])[0]
    joined = "\n".join(root.verification)
    assert "node-b" in joined or "-i 3" in joined
    assert "{" not in joined  # every placeholder rendered (known value or <name>)
